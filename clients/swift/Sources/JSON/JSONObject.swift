// JSONObject: a JSON object that keeps its members in the order they were written.

/// A JSON object: members in their written order, keys unique, with lookup by key.
///
/// Order is kept so that documents read back the way users wrote them; equality ignores it,
/// as JSON does. Lookup is a linear scan, which beats hashing for the handful of keys that
/// params and definitions carry; past ``indexThreshold`` members a dictionary of positions takes
/// over, so building, updating or comparing an object a hostile body made huge (a row's
/// `values` with 100,000 keys) stays linear rather than quadratic.
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

    /// Each key's index in `members`, kept once the object has more than ``indexThreshold``
    /// members (`nil` below: a scan of a few keys is cheaper than hashing them). `String`'s
    /// hashing follows its `==` (canonical equivalence), so the index finds what the scan would.
    private var positions: [String: Int]?

    /// Above this many members, look-ups go through a dictionary of positions.
    static let indexThreshold = 16

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
    public init(uniqueMembers: [Member]) {
        members = uniqueMembers
        if uniqueMembers.count > Self.indexThreshold { positions = Self.positions(of: uniqueMembers) }
    }

    private static func positions(of members: [Member]) -> [String: Int] {
        var positions: [String: Int] = [:]
        positions.reserveCapacity(members.count)
        for (index, member) in members.enumerated() { positions[member.key] = index }
        return positions
    }

    /// The index of `key` in `members`.
    private func index(of key: String) -> Int? {
        if let positions { return positions[key] }
        return members.firstIndex { $0.key == key }
    }

    /// The value of `key`; assigning `nil` removes the member, assigning a value replaces it in
    /// place or appends it.
    public subscript(key: String) -> JSONValue? {
        get { index(of: key).map { members[$0].value } }
        set {
            if let index = index(of: key) {
                if let newValue {
                    members[index].value = newValue
                } else {
                    members.remove(at: index)
                    // Removal shifts the later members: as linear as the removal itself.
                    positions = members.count > Self.indexThreshold ? Self.positions(of: members) : nil
                }
            } else if let newValue {
                members.append(Member(key: key, value: newValue))
                if positions != nil {
                    positions?[key] = members.count - 1
                } else if members.count > Self.indexThreshold {
                    positions = Self.positions(of: members)
                }
            }
        }
    }

    /// Whether the object has a member named `key`.
    public func contains(key: String) -> Bool {
        index(of: key) != nil
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
    ///
    /// Members are compared in order while their keys line up (the common case: a value compared
    /// with its own copy, or with what the same writer wrote); from the first key that differs,
    /// the rest are looked up by key, through `rhs`'s index when it is big. Linear either way.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.members.count == rhs.members.count else { return false }
        var index = 0
        while index < lhs.members.count, lhs.members[index].key == rhs.members[index].key {
            guard lhs.members[index].value == rhs.members[index].value else { return false }
            index += 1
        }
        for member in lhs.members[index...] {
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
