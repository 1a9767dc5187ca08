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
            for field in fields where Self.equalNames(field.name, name) { return field.value }
            return nil
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

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }

    /// ASCII case-insensitive comparison, without allocating lowercased copies.
    static func equalNames(_ a: String, _ b: String) -> Bool {
        let a = a.utf8, b = b.utf8
        guard a.count == b.count else { return false }
        for (x, y) in zip(a, b) where x != y {
            let lx = (x >= 65 && x <= 90) ? x | 0x20 : x
            let ly = (y >= 65 && y <= 90) ? y | 0x20 : y
            if lx != ly { return false }
        }
        return true
    }
}
