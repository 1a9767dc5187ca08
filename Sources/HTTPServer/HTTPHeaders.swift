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
        for index in fields.indices where Self.equalNames(fields[index].name, name) {
            if let earlier = combined { combined = earlier + "," + fields[index].value } else { combined = fields[index].value }
        }
        return combined
    }

    /// Whether a field named `name` holds `lowercase` anywhere in its value, ignoring ASCII
    /// case (`Vary: Origin, accept-encoding` holds `accept-encoding`); as `values(name)` and a
    /// lowercased search, without copying either.
    public func contains(_ name: String, valueContaining lowercase: StaticString) -> Bool {
        for index in fields.indices where Self.equalNames(fields[index].name, name) {
            var value = fields[index].value
            if value.withUTF8({ Self.contains($0, lowercase) }) { return true }
        }
        return false
    }

    /// The index in `fields` of the first field named `name`. Looking fields up by index reads
    /// them in place: iterating the fields copies each one, retaining its name and value.
    public func firstIndex(named name: String) -> Int? {
        for index in fields.indices where Self.equalNames(fields[index].name, name) { return index }
        return nil
    }

    /// How many fields are named `name`.
    public func count(named name: String) -> Int {
        var count = 0
        for index in fields.indices where Self.equalNames(fields[index].name, name) { count += 1 }
        return count
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
            b.utf8.withContiguousStorageIfAvailable { b in
                for index in 0..<a.count where a[index] != b[index] {
                    if a[index].lowercasedASCII != b[index].lowercasedASCII { return false }
                }
                return true
            }
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
