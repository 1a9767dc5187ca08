// JSONWriter: appends compact, canonical JSON to a byte buffer; every engine output goes through it.

/// Writes compact JSON into a growing byte buffer.
///
/// Commas are placed automatically: call ``beginObject()``, then ``writeKey(_:)`` and a value
/// for each member, then ``endObject()``. Strings are escaped as RFC 8259 requires (quote,
/// backslash and every control character); numbers are written canonically (integral values
/// without a fraction, other values in the shortest form that reads back to the same
/// `Double`; non-finite values, which JSON cannot carry, become `null`).
///
/// ```swift
/// var writer = JSONWriter()
/// writer.beginObject()
/// writer.writeKey("type"); writer.writeString("back")
/// writer.writeKey("progress"); writer.writeNumber(0.25)
/// writer.endObject()
/// String(decoding: writer.takeBytes(), as: UTF8.self)   // {"type":"back","progress":0.25}
/// ```
///
/// A writer owns its buffer and cannot be copied (`~Copyable`): each write checks the room left
/// and stores its bytes, with no check that the buffer is shared, as an `Array` makes at every
/// append. A state document writes some 40 keys; through an `[UInt8]` each cost about 200
/// instructions, five appends and a copy (callgrind, an action's answer). Pass a writer `inout`;
/// take what it wrote with ``takeBytes()``.
public struct JSONWriter: ~Copyable {
    /// The buffer, `capacity` bytes of which the first `used` are written.
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private var used = 0
    /// Whether the next value or key needs a comma before it; keys and container starts reset
    /// it, values set it, which is all the state commas need.
    private var needsComma = false

    /// A writer whose buffer reserves `capacity` bytes up front (it grows as needed).
    public init(capacity: Int = 256) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit {
        base.deallocate()
    }

    /// A copy of the JSON written so far.
    public var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: used)) }

    /// The number of bytes written so far (a value written next starts here, or one byte later
    /// after its comma).
    public var count: Int { used }

    /// Takes the written bytes, in an array of their own size, leaving the writer empty (its
    /// buffer kept for what it writes next).
    public mutating func takeBytes() -> [UInt8] {
        defer {
            used = 0
            needsComma = false
        }
        return bytes
    }

    /// Starts an object.
    public mutating func beginObject() {
        opening(0x7B)
    }

    /// Ends the innermost object.
    public mutating func endObject() {
        append(0x7D)
        needsComma = true
    }

    /// Starts an array.
    public mutating func beginArray() {
        opening(0x5B)
    }

    /// Ends the innermost array.
    public mutating func endArray() {
        append(0x5D)
        needsComma = true
    }

    /// Writes an object key and the colon; the value comes next.
    public mutating func writeKey(_ key: String) {
        separate()
        appendQuoted(key)
        append(0x3A)
        needsComma = false
    }

    /// Writes an object key spelled in the program, and the colon, as ``writeKey(_:)`` does,
    /// copying its bytes as they are: a key the program spells needs no escaping (checked in
    /// debug builds).
    ///
    /// ```swift
    /// writer.writeKey(literal: "flowId")
    /// ```
    public mutating func writeKey(literal key: StaticString) {
        guard key.hasPointerRepresentation else {
            // A one-scalar literal held as its scalar, not as bytes.
            writeKey(key.description)
            return
        }
        let length = key.utf8CodeUnitCount
        assert(UnsafeBufferPointer(start: key.utf8Start, count: length).allSatisfy { $0 >= 0x20 && $0 != 0x22 && $0 != 0x5C },
               "a literal key that needs escaping")
        let comma = needsComma ? 1 : 0
        let target = room(for: length + 3 + comma)
        if comma == 1 { target[0] = 0x2C }
        target[comma] = 0x22
        (target + comma + 1).initialize(from: key.utf8Start, count: length)
        target[comma + 1 + length] = 0x22
        target[comma + 2 + length] = 0x3A
        used += length + 3 + comma
        needsComma = false
    }

    /// Writes a string value.
    public mutating func writeString(_ value: String) {
        separate()
        appendQuoted(value)
        needsComma = true
    }

    /// Writes an integer value.
    public mutating func writeInteger(_ value: Int) {
        separate()
        appendDigits(value)
        needsComma = true
    }

    /// Writes a number: integral values that fit in `Int` as integers, others in their shortest
    /// round-trip form, non-finite values as `null`.
    public mutating func writeNumber(_ value: Double) {
        guard value.isFinite else {
            writeNull()
            return
        }
        // 2^63 bounds the values `Int(value)` can hold.
        if value.rounded(.towardZero) == value, value > -9.2e18, value < 9.2e18 {
            writeInteger(Int(value))
            return
        }
        separate()
        var text = value.description
        text.withUTF8 { append($0) }
        needsComma = true
    }

    /// Writes a boolean value.
    public mutating func writeBool(_ value: Bool) {
        separate()
        appendASCII(value ? "true" : "false")
        needsComma = true
    }

    /// Writes `null`.
    public mutating func writeNull() {
        separate()
        appendASCII("null")
        needsComma = true
    }

    /// Writes `value`, or `null` when it is nil.
    public mutating func writeOptionalInteger(_ value: Int?) {
        if let value { writeInteger(value) } else { writeNull() }
    }

    /// Writes a string value or `null`.
    public mutating func writeOptionalString(_ value: String?) {
        if let value { writeString(value) } else { writeNull() }
    }

    /// Writes any JSON value.
    public mutating func writeValue(_ value: JSONValue) {
        switch value {
        case .null: writeNull()
        case .bool(let flag): writeBool(flag)
        case .integer(let number): writeInteger(number)
        case .number(let number): writeNumber(number)
        case .string(let string): writeString(string)
        case .array(let elements):
            beginArray()
            for element in elements { writeValue(element) }
            endArray()
        case .object(let object): writeObject(object)
        }
    }

    /// Writes an object value.
    public mutating func writeObject(_ object: JSONObject) {
        beginObject()
        for member in object.members {
            writeKey(member.key)
            writeValue(member.value)
        }
        endObject()
    }

    /// Writes an already-encoded JSON value verbatim (for fragments cached by the caller).
    /// The caller guarantees the bytes are one valid JSON value.
    public mutating func writeRawValue(_ fragment: some Sequence<UInt8>) {
        separate()
        let copied: Void? = fragment.withContiguousStorageIfAvailable { append($0) }
        if copied == nil {
            for byte in fragment { append(byte) }
        }
        needsComma = true
    }

    /// Writes an already-encoded JSON value verbatim; as ``writeRawValue(_:)``, without the
    /// generic path.
    public mutating func writeRawValue(_ fragment: [UInt8]) {
        separate()
        fragment.withUnsafeBufferPointer { append($0) }
        needsComma = true
    }

    /// Writes a string made of one ASCII prefix byte and a number, such as `"e7"`, without
    /// building a `String` (entry ids are written this way on every answer).
    public mutating func writeEntryId(prefix: UInt8, _ number: Int) {
        separate()
        append(0x22)
        append(prefix)
        appendDigits(number)
        append(0x22)
        needsComma = true
    }

    // MARK: the buffer

    /// The first byte of `count` bytes of room after what was written, growing the buffer when
    /// there is not that much; the caller writes them, then adds what it wrote to `used`.
    @inline(__always)
    private mutating func room(for count: Int) -> UnsafeMutablePointer<UInt8> {
        if capacity &- used < count { grow(toHold: count) }
        return base + used
    }

    /// Moves what was written into a buffer with room for `count` more bytes, at least twice
    /// the size, so appends cost amortized constant time.
    @inline(never)
    private mutating func grow(toHold count: Int) {
        let needed = used + count
        let larger = max(capacity * 2, needed)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.initialize(from: base, count: used)
        base.deallocate()
        base = moved
        capacity = larger
    }

    @inline(__always)
    private mutating func append(_ byte: UInt8) {
        if used == capacity { grow(toHold: 1) }
        base[used] = byte
        used &+= 1
    }

    private mutating func append(_ source: UnsafeBufferPointer<UInt8>) {
        guard let start = source.baseAddress, !source.isEmpty else { return }
        room(for: source.count).initialize(from: start, count: source.count)
        used += source.count
    }

    // MARK: encoding

    private mutating func separate() {
        if needsComma { append(0x2C) }
    }

    /// A container's opening bracket, after a comma when one is due.
    private mutating func opening(_ bracket: UInt8) {
        let target = room(for: 2)
        if needsComma {
            target[0] = 0x2C
            target[1] = bracket
            used &+= 2
        } else {
            target[0] = bracket
            used &+= 1
        }
        needsComma = false
    }

    private mutating func appendASCII(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private mutating func appendDigits(_ value: Int) {
        if value >= 0 && value < 10 {
            append(0x30 &+ UInt8(value))
            return
        }
        var magnitude = value.magnitude
        var digits = 1
        var rest = magnitude
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        let sign = value < 0 ? 1 : 0
        let target = room(for: digits + sign)
        if sign == 1 { target[0] = 0x2D }
        var position = sign + digits
        repeat {
            position -= 1
            target[position] = 0x30 &+ UInt8(magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
        used += digits + sign
    }

    private mutating func appendQuoted(_ string: String) {
        append(0x22)
        let handled: Void? = string.utf8.withContiguousStorageIfAvailable { appendEscaped($0) }
        if handled == nil {
            for byte in string.utf8 { appendEscaped(byte) }
        }
        append(0x22)
    }

    /// Copies runs that need no escaping in one call, which is most of every string.
    private mutating func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        let clean = Self.plainPrefixCount(utf8)
        guard clean < utf8.count else {
            append(utf8)
            return
        }
        var runStart = 0
        for position in clean..<utf8.count {
            let byte = utf8[position]
            if byte >= 0x20 && byte != 0x22 && byte != 0x5C { continue }
            if runStart < position {
                append(UnsafeBufferPointer(rebasing: utf8[runStart..<position]))
            }
            appendEscaped(byte)
            runStart = position + 1
        }
        if runStart < utf8.count {
            append(UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count]))
        }
    }

    /// How many bytes at the start of `utf8` need no escaping (no control character, quote or
    /// backslash), read eight at a time: a word holds one when one of its bytes is below 0x20,
    /// or is 0 once XORed with a word of quotes or of backslashes (bytes of 0x80 and above,
    /// UTF-8's multi-byte sequences, never count).
    static func plainPrefixCount(_ utf8: UnsafeBufferPointer<UInt8>) -> Int {
        guard let base = utf8.baseAddress else { return 0 }
        let raw = UnsafeRawPointer(base)
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var offset = 0
        while offset &+ 8 <= utf8.count {
            let word = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            let quotes = word ^ (ones &* 0x22)
            let backslashes = word ^ (ones &* 0x5C)
            let found = ((word &- ones &* 0x20) & ~word) | ((quotes &- ones) & ~quotes) | ((backslashes &- ones) & ~backslashes)
            if found & highs != 0 { break }
            offset &+= 8
        }
        while offset < utf8.count {
            let byte = utf8[offset]
            if byte < 0x20 || byte == 0x22 || byte == 0x5C { break }
            offset &+= 1
        }
        return offset
    }

    private mutating func appendEscaped(_ byte: UInt8) {
        switch byte {
        case 0x22: appendEscape(0x22)
        case 0x5C: appendEscape(0x5C)
        case 0x0A: appendEscape(0x6E)
        case 0x0D: appendEscape(0x72)
        case 0x09: appendEscape(0x74)
        case 0x08: appendEscape(0x62)
        case 0x0C: appendEscape(0x66)
        case 0..<0x20:
            let hex: StaticString = "0123456789abcdef"
            appendASCII("\\u00")
            append(hex.utf8Start[Int(byte >> 4)])
            append(hex.utf8Start[Int(byte & 0xF)])
        default: append(byte)
        }
    }

    /// A backslash and `letter`.
    private mutating func appendEscape(_ letter: UInt8) {
        append(0x5C)
        append(letter)
    }
}

// A writer holds the only pointer to its buffer and cannot be copied, so handing it to another
// thread hands the buffer over whole.
extension JSONWriter: @unchecked Sendable {}
