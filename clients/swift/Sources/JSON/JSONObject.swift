// JSONObject: a JSON object that keeps its members in the order they were written.

/// A JSON object: members in their written order, keys unique, with lookup by key.
///
/// Order is kept so that documents read back the way users wrote them; equality ignores it,
/// as JSON does. Lookup is a linear scan, which beats hashing for the handful of keys that
/// params and definitions carry.
///
/// ```swift
/// var params = JSONObject()
/// params["content"] = "Hello"
/// params["content"]   // .string("Hello")
/// ```
public struct JSONObject: Sendable {
    /// One key/value pair of an object.
    public struct Member: Sendable, Equatable {
        public var key: String
        public var value: JSONValue
        public init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// The members in order; keys are unique.
    public private(set) var members: [Member]

    /// An empty object.
    public init() { members = [] }

    /// An object from members; a repeated key keeps its first position and its last value.
    public init(_ members: [Member]) {
        self.members = []
        self.members.reserveCapacity(members.count)
        for member in members { self[member.key] = member.value }
    }

    /// Members the caller guarantees to have unique keys (the parser checks them itself), kept
    /// without the per-member look-up of `init(_:)`.
    public init(uniqueMembers: [Member]) { members = uniqueMembers }

    /// The value of `key`; assigning `nil` removes the member, assigning a value replaces it in
    /// place or appends it.
    public subscript(key: String) -> JSONValue? {
        get {
            for member in members where member.key == key { return member.value }
            return nil
        }
        set {
            if let index = members.firstIndex(where: { $0.key == key }) {
                if let newValue { members[index].value = newValue } else { members.remove(at: index) }
            } else if let newValue {
                members.append(Member(key: key, value: newValue))
            }
        }
    }

    /// Whether the object has a member named `key`.
    public func contains(key: String) -> Bool {
        members.contains { $0.key == key }
    }

    /// The keys in order.
    public var keys: [String] { members.map(\.key) }
}

extension JSONObject: RandomAccessCollection {
    public var startIndex: Int { members.startIndex }
    public var endIndex: Int { members.endIndex }
    public subscript(position: Int) -> Member { members[position] }
}

extension JSONObject: Equatable {
    /// Two objects are equal when they have the same keys with equal values, in any order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.members.count == rhs.members.count else { return false }
        for member in lhs.members {
            guard let other = rhs[member.key], other == member.value else { return false }
        }
        return true
    }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init()
        for (key, value) in elements { self[key] = value }
    }
}
