// An ordered list of HTTP header fields with case-insensitive look-up.

/// HTTP header fields in the order they were added; names compare case-insensitively.
///
/// ```swift
/// var headers = HTTPHeaders()
/// headers["Content-Type"] = "application/json"
/// headers["content-type"] // "application/json"
/// ```
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    /// The fields as sent or added, names in their original case.
    public private(set) var fields: [(name: String, value: String)] = []

    public init() {}

    /// Headers with room for `capacity` fields before the storage grows (each growth copies).
    public init(capacity: Int) {
        fields.reserveCapacity(capacity)
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { add(name: name, value: value) }
    }

    /// Appends a field, keeping any earlier one with the same name.
    public mutating func add(name: String, value: String) {
        fields.append((name, value))
    }

    /// The first value for `name`; setting replaces every field of that name (nil removes them).
    public subscript(name: String) -> String? {
        get {
            guard let index = firstIndex(named: name) else { return nil }
            return fields[index].value
        }
        set {
            fields.removeAll { Self.equalNames($0.name, name) }
            if let newValue { fields.append((name, newValue)) }
        }
    }

    /// Every value for `name`, in the order sent.
    public func values(_ name: String) -> [String] {
        fields.compactMap { Self.equalNames($0.name, name) ? $0.value : nil }
    }

    /// Every value for `name` joined with commas, as one field would carry them (RFC 9110
    /// §5.3); nil when none is sent. One field, the common case, is returned as it is.
    public func combinedValue(_ name: String) -> String? {
        var combined: String?
        forEachIndex(named: name) { index in
            if let earlier = combined { combined = earlier + "," + fields[index].value } else { combined = fields[index].value }
            return true
        }
        return combined
    }

    /// Whether a field named `name` holds `lowercase` anywhere in its value, ignoring ASCII
    /// case (`Vary: Origin, accept-encoding` holds `accept-encoding`); as `values(name)` and a
    /// lowercased search, without copying either.
    public func contains(_ name: String, valueContaining lowercase: StaticString) -> Bool {
        contains(name) { value in
            var value = value
            return value.withUTF8 { Self.contains($0, lowercase) }
        }
    }

    /// The index in `fields` of the first field named `name`. Looking fields up by index reads
    /// them in place: iterating the fields copies each one, retaining its name and value.
    public func firstIndex(named name: String) -> Int? {
        var found: Int?
        forEachIndex(named: name) { index in
            found = index
            return false
        }
        return found
    }

    /// Whether a field named `name` has a value that `matches`.
    public func contains(_ name: String, where matches: (String) -> Bool) -> Bool {
        var found = false
        forEachIndex(named: name) { index in
            found = matches(fields[index].value)
            return !found
        }
        return found
    }

    /// How many fields are named `name`.
    public func count(named name: String) -> Int {
        var count = 0
        forEachIndex(named: name) { _ in
            count += 1
            return true
        }
        return count
    }

    /// Calls `body` with the index of each field named `name`, in order, while it returns true.
    /// The name's bytes are taken once and each field's are read in place: a request's look-ups
    /// compared some fifty names, each a call that retained and released the field's name
    /// (callgrind: 3,400 instructions a request in `firstIndex` alone).
    private func forEachIndex(named name: String, _ body: (Int) -> Bool) {
        var name = name
        name.withUTF8 { wanted in
            fields.withUnsafeBufferPointer { fields in
                for index in fields.indices where fields[index].name.utf8.count == wanted.count {
                    let matches = fields[index].name.utf8.withContiguousStorageIfAvailable { Self.equalBytes($0, wanted) }
                        ?? Self.equalNames(fields[index].name, String(decoding: wanted, as: UTF8.self))
                    if matches && !body(index) { return }
                }
            }
        }
    }

    /// ASCII case-insensitive comparison of two names' bytes of the same length.
    private static func equalBytes(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        for index in 0..<a.count where a[index] != b[index] {
            if a[index].lowercasedASCII != b[index].lowercasedASCII { return false }
        }
        return true
    }

    private static func contains(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercase: StaticString) -> Bool {
        let length = lowercase.utf8CodeUnitCount
        guard length <= bytes.count else { return false }
        return (0...(bytes.count - length)).contains { bytes.matchesIgnoringCase(lowercase, at: $0) }
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }

    /// ASCII case-insensitive comparison, without allocating lowercased copies.
    static func equalNames(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        // Native strings lend their bytes; the fallback walks the views.
        let compared = a.utf8.withContiguousStorageIfAvailable { a in
            b.utf8.withContiguousStorageIfAvailable { b in equalBytes(a, b) }
        }
        if let compared = compared ?? nil { return compared }
        for (x, y) in zip(a.utf8, b.utf8) where x != y {
            if x.lowercasedASCII != y.lowercasedASCII { return false }
        }
        return true
    }
}

extension UnsafeBufferPointer<UInt8> {
    /// Whether the bytes from `offset` on start with `lowercase` (ASCII letters in any case);
    /// the caller keeps `offset` and the text's length within the buffer.
    func matchesIgnoringCase(_ lowercase: StaticString, at offset: Int) -> Bool {
        let expected = UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        for index in expected.indices where self[offset + index].lowercasedASCII != expected[index] {
            return false
        }
        return true
    }
}

extension UInt8 {
    /// The byte with an ASCII capital letter lowercased; any other byte as it is.
    var lowercasedASCII: UInt8 {
        (self >= UInt8(ascii: "A") && self <= UInt8(ascii: "Z")) ? self | 0x20 : self
    }
}
