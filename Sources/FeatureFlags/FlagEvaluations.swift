// FlagEvaluations: the evaluation of many flags, kept in key order, as a session's "flags" member.

import JSON

/// Evaluation results keyed by flag key, always in key order (by UTF-8 bytes, the order
/// SQLite's default collation gives), so a session's `flags` member reads the same on every
/// answer.
///
/// ```swift
/// var writer = JSONWriter()
/// evaluations.write(to: &writer)
/// // {"eu-face-scan":{"value":false,"variant":"off","reason":"DEFAULT"},"new-home":{…}}
/// ```
public struct FlagEvaluations: Sendable, Equatable, RandomAccessCollection {
    /// One flag's result.
    public struct Entry: Sendable, Equatable {
        public var key: String
        public var details: EvaluationDetails

        public init(key: String, details: EvaluationDetails) {
            self.key = key
            self.details = details
        }
    }

    /// The results in key order.
    public private(set) var entries: [Entry]

    /// No results.
    public init() { entries = [] }

    /// Results from entries in any order; a repeated key keeps its last result.
    public init(_ entries: [Entry]) {
        self.entries = []
        for entry in entries { self[entry.key] = entry.details }
    }

    public var startIndex: Int { entries.startIndex }
    public var endIndex: Int { entries.endIndex }
    public subscript(position: Int) -> Entry { entries[position] }

    /// The keys in order.
    public var keys: [String] { entries.map(\.key) }

    /// The result for `key`; assigning inserts it in key order, replaces it, or (with `nil`)
    /// removes it.
    public subscript(key: String) -> EvaluationDetails? {
        get {
            let index = insertionIndex(of: key)
            guard index < entries.count, Self.same(entries[index].key, key) else { return nil }
            return entries[index].details
        }
        set {
            let index = insertionIndex(of: key)
            let found = index < entries.count && Self.same(entries[index].key, key)
            switch (found, newValue) {
            case (true, let details?): entries[index].details = details
            case (true, nil): entries.remove(at: index)
            case (false, let details?): entries.insert(Entry(key: key, details: details), at: index)
            case (false, nil): break
            }
        }
    }

    /// Whether `a` sorts before `b`: by UTF-8 bytes, which no locale or Unicode version changes.
    static func precedes(_ a: String, _ b: String) -> Bool {
        a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    /// Whether two keys are the same bytes (Swift's `==` would also match other Unicode
    /// spellings of the same text, which the byte order above keeps apart).
    static func same(_ a: String, _ b: String) -> Bool {
        a.utf8.elementsEqual(b.utf8)
    }

    /// The first index whose key does not sort before `key` (binary search).
    private func insertionIndex(of key: String) -> Int {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = low + (high - low) / 2
            if Self.precedes(entries[middle].key, key) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Writes `{key: details, …}` in key order.
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        for entry in entries {
            writer.writeKey(entry.key)
            entry.details.write(to: &writer)
        }
        writer.endObject()
    }

    /// The results as the JSON object ``write(to:)`` writes.
    public var jsonValue: JSONValue {
        .object(JSONObject(uniqueMembers: entries.map { JSONObject.Member(key: $0.key, value: $0.details.jsonValue) }))
    }
}
