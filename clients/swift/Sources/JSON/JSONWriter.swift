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
/// String(decoding: writer.bytes, as: UTF8.self)   // {"type":"back","progress":0.25}
/// ```
public struct JSONWriter: Sendable {
    /// The JSON written so far.
    public private(set) var bytes: [UInt8]
    /// Whether the next value or key needs a comma before it; keys and container starts reset
    /// it, values set it, which is all the state commas need.
    private var needsComma = false

    /// A writer whose buffer reserves `capacity` bytes up front.
    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Takes the written bytes, leaving the writer empty.
    public mutating func takeBytes() -> [UInt8] {
        needsComma = false
        let result = bytes
        bytes = []
        return result
    }

    /// Takes the written bytes in a buffer of their own size, leaving the writer empty: for
    /// bytes kept long, such as what a cached session fixes at creation. ``takeBytes()`` hands
    /// over the buffer itself, with the capacity reserved up front (256 bytes unless told).
    public mutating func takeFittedBytes() -> [UInt8] {
        needsComma = false
        defer { bytes = [] }
        return [UInt8](unsafeUninitializedCapacity: bytes.count) { buffer, count in
            count = buffer.initialize(fromContentsOf: bytes)
        }
    }

    private mutating func separate() {
        if needsComma { bytes.append(0x2C) }
    }

    /// Starts an object.
    public mutating func beginObject() {
        separate()
        bytes.append(0x7B)
        needsComma = false
    }

    /// Ends the innermost object.
    public mutating func endObject() {
        bytes.append(0x7D)
        needsComma = true
    }

    /// Starts an array.
    public mutating func beginArray() {
        separate()
        bytes.append(0x5B)
        needsComma = false
    }

    /// Ends the innermost array.
    public mutating func endArray() {
        bytes.append(0x5D)
        needsComma = true
    }

    /// Writes an object key and the colon; the value comes next.
    public mutating func writeKey(_ key: String) {
        separate()
        appendQuoted(key)
        bytes.append(0x3A)
        needsComma = false
    }

    /// Writes an object key spelled in the program, and the colon, as ``writeKey(_:)`` does,
    /// copying its bytes as they are: a key the program spells needs no escaping (checked in
    /// debug builds). A state document writes some 40 keys, each about 310 instructions through
    /// ``writeKey(_:)``'s escaping and a third of that here (callgrind, an action's answer).
    ///
    /// ```swift
    /// writer.writeKey(literal: "flowId")
    /// ```
    public mutating func writeKey(literal key: StaticString) {
        separate()
        key.withUTF8Buffer { utf8 in
            assert(utf8.allSatisfy { $0 >= 0x20 && $0 != 0x22 && $0 != 0x5C }, "a literal key that needs escaping")
            bytes.append(0x22)
            bytes.append(contentsOf: utf8)
        }
        bytes.append(0x22)
        bytes.append(0x3A)
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
        bytes.append(contentsOf: value.description.utf8)
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
        bytes.append(contentsOf: fragment)
        needsComma = true
    }

    /// Writes an already-encoded JSON value verbatim; as ``writeRawValue(_:)``, without the
    /// generic path.
    public mutating func writeRawValue(_ fragment: [UInt8]) {
        separate()
        bytes.append(contentsOf: fragment)
        needsComma = true
    }

    /// Writes an already-encoded JSON value held in a slice of another output (a part of the last
    /// version's document, reused because it did not change); as ``writeRawValue(_:)``.
    public mutating func writeRawValue(_ fragment: ArraySlice<UInt8>) {
        separate()
        bytes.append(contentsOf: fragment)
        needsComma = true
    }

    /// Writes again, as the next value, the bytes this writer wrote at `range` (a part written
    /// once and shown twice, such as the top screen, last of `screens`). `range` must hold one
    /// whole JSON value written earlier.
    public mutating func writeRawValue(copyOf range: Range<Int>) {
        separate()
        let count = range.count
        guard count > 0, range.lowerBound >= 0, range.upperBound <= bytes.count else { return }
        let start = bytes.count
        // Room first, then a copy within one buffer: appending `bytes[range]` would hold a second
        // reference to the buffer and copy all of it.
        bytes.append(contentsOf: repeatElement(0, count: count))
        bytes.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            (base + start).update(from: base + range.lowerBound, count: count)
        }
        needsComma = true
    }

    /// Appends bytes as they are, with no separator and no change to where commas go: the fixed
    /// start of an object a caller encoded once (`{"sessionId":"…","userId":"…","version":`),
    /// after which a value follows. The caller guarantees the result is valid JSON.
    public mutating func appendRaw(_ fragment: ArraySlice<UInt8>) {
        bytes.append(contentsOf: fragment)
    }

    /// The number of bytes written so far (a value written next starts here, or one byte later
    /// after its comma).
    public var count: Int { bytes.count }

    /// Writes a string made of one ASCII prefix byte and a number, such as `"e7"`, without
    /// building a `String` (entry ids are written this way on every answer).
    public mutating func writeEntryId(prefix: UInt8, _ number: Int) {
        separate()
        bytes.append(0x22)
        bytes.append(prefix)
        appendDigits(number)
        bytes.append(0x22)
        needsComma = true
    }

    // MARK: encoding

    private mutating func appendASCII(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private mutating func appendDigits(_ value: Int) {
        if value >= 0 && value < 10 {
            bytes.append(0x30 &+ UInt8(value))
            return
        }
        if value < 0 { bytes.append(0x2D) }
        var magnitude = value.magnitude
        let start = bytes.count
        while magnitude > 0 {
            bytes.append(0x30 &+ UInt8(magnitude % 10))
            magnitude /= 10
        }
        bytes[start...].reverse()
    }

    private mutating func appendQuoted(_ string: String) {
        bytes.append(0x22)
        let handled: Void? = string.utf8.withContiguousStorageIfAvailable { appendEscaped($0) }
        if handled == nil {
            for byte in string.utf8 { appendEscaped(byte) }
        }
        bytes.append(0x22)
    }

    /// Copies runs that need no escaping in one call, which is most of every string.
    private mutating func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        var runStart = 0
        for position in 0..<utf8.count {
            let byte = utf8[position]
            if byte >= 0x20 && byte != 0x22 && byte != 0x5C { continue }
            if runStart < position {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<position]))
            }
            appendEscaped(byte)
            runStart = position + 1
        }
        if runStart < utf8.count {
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count]))
        }
    }

    private mutating func appendEscaped(_ byte: UInt8) {
        switch byte {
        case 0x22: bytes.append(contentsOf: [0x5C, 0x22])
        case 0x5C: bytes.append(contentsOf: [0x5C, 0x5C])
        case 0x0A: bytes.append(contentsOf: [0x5C, 0x6E])
        case 0x0D: bytes.append(contentsOf: [0x5C, 0x72])
        case 0x09: bytes.append(contentsOf: [0x5C, 0x74])
        case 0x08: bytes.append(contentsOf: [0x5C, 0x62])
        case 0x0C: bytes.append(contentsOf: [0x5C, 0x66])
        case 0..<0x20:
            let hex: [UInt8] = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
        default: bytes.append(byte)
        }
    }
}
