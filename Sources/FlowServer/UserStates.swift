// Per-user state as the flows read it, shared by every session of a user.
import FlowEngine
import FlowStore
import JSON
import Locking

/// The state of users with live sessions, kept in step with the users table: commits and the
/// admin routes update it after they write, and a miss reads the database. Every session of a
/// user therefore sees the same state, whether or not it was cached, when this process is the
/// only writer of its database. On a shared one (several nodes) a held state may be behind:
/// each is held with its revision, an action's commit requires that revision (so an action is
/// never committed on a state another node changed: it is judged again), and a new session
/// reads the user afresh.
final class UserStates: Sendable {
    /// A user's state as held, with the revision it was read or last committed at.
    struct Held: Sendable {
        var state: [String: JSONValue]
        var revision: Int
    }

    /// A user id compared and hashed by its UTF-8 bytes, as the stores compare ids: Swift's
    /// `String` equality would make `café` composed (NFC) and decomposed (NFD) one user, where
    /// SQLite and PostgreSQL keep two, and one would be served the other's state.
    struct UserKey: Hashable {
        let id: String

        init(_ id: String) { self.id = id }

        static func == (lhs: UserKey, rhs: UserKey) -> Bool { lhs.id.utf8.elementsEqual(rhs.id.utf8) }

        func hash(into hasher: inout Hasher) {
            var id = id
            id.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }
    }

    private struct Table {
        /// Held states, the least recently used evicted when full.
        var states: LRUTable<UserKey, Held>
        /// When each user last changed (a tick of `clock`), held or not, so a read from the
        /// database that raced with a commit is not kept. Bounded like `states`: a change
        /// forgotten here raises `forgotten`, which then stands for every user's.
        var changed: LRUTable<UserKey, UInt64>
        var clock: UInt64 = 0
        /// The latest tick of a change no longer in `changed`.
        var forgotten: UInt64 = 0

        init(capacity: Int) {
            states = LRUTable(capacity: capacity)
            changed = LRUTable(capacity: capacity)
        }

        /// Records a change of `userId` now.
        mutating func tick(_ userId: UserKey) {
            clock &+= 1
            if let evicted = changed.updateValue(clock, forKey: userId) { forgotten = max(forgotten, evicted.value) }
        }

        /// Whether `userId` changed after tick `since` (or may have: its change was forgotten).
        func mayHaveChanged(_ userId: UserKey, since: UInt64) -> Bool {
            (changed.peek(userId) ?? forgotten) > since
        }
    }

    private let table: PThreadMutex<Table>
    private let capacity: Int
    /// Other nodes change users too.
    let shared: Bool

    init(capacity: Int, shared: Bool = false) {
        self.capacity = max(1, capacity)
        self.shared = shared
        table = PThreadMutex(Table(capacity: self.capacity))
    }

    /// Users held now, the most held, and how many were evicted to make room (for `/metrics`).
    var figures: CacheFigures { table.withLock { $0.states.figures } }

    /// The users held, the most recently used first (for tests).
    var heldByRecency: [String] { table.withLock { $0.states.keysByRecency.map(\.id) } }

    /// The state of `userId`, read from the database when it is not held.
    func state(of userId: String, store: any UserDataStore) throws -> [String: JSONValue] {
        try held(userId, store: store).state
    }

    /// The state of `userId` and its revision, read from the database when it is not held, or
    /// always when `fresh` (a new session on a shared database: another node may have changed it).
    func held(_ userId: String, store: any UserDataStore, fresh: Bool = false) throws -> Held {
        try held(userId, fresh: fresh) { try Self.read($0, store: store) }
    }

    /// `held(_:store:fresh:)` read afresh, for a new session on a shared database, with the
    /// definitions' fingerprint the store read in the same round trip (nil when it reads none:
    /// the caller reads it itself).
    func heldAfresh(_ userId: String, store: any UserDataStore) throws -> (held: Held, definitions: String?) {
        var fingerprint: String?
        let held = try held(userId, fresh: true) { userId in
            let (record, seen) = try store.userAndDefinitionsFingerprint(id: userId)
            fingerprint = seen
            return Self.held(record)
        }
        return (held, fingerprint)
    }

    private func held(_ userId: String, fresh: Bool, reading read: (String) throws -> Held) throws -> Held {
        let key = UserKey(userId)
        for _ in 0..<3 {
            let (held, since) = table.withLock { table in
                (fresh ? nil : table.states.value(forKey: key), table.clock)
            }
            if let held { return held }
            let stored = try read(userId)
            let kept = table.withLock { table -> Bool in
                guard !table.mayHaveChanged(key, since: since) else { return false }
                table.states.updateValue(stored, forKey: key)  // the least recently used goes when full
                return true
            }
            if kept { return stored }
        }
        // The user's state keeps changing under us: use what the database says now, uncached.
        return try read(userId)
    }

    /// The state of `userId` when it is held, without reading the database (under a slot's
    /// lock, where no database call is made); nil when it must be read.
    func cached(_ userId: String) -> Held? {
        table.withLock { $0.states.value(forKey: UserKey(userId)) }
    }

    /// Applies committed changes key by key, as the stores do (a null removes the key); the
    /// commit that wrote them raised the revision by one.
    func apply(_ changes: [(key: String, value: JSONValue)], to userId: String) {
        let key = UserKey(userId)
        table.withLock { table in
            table.tick(key)
            table.states.modify(key) { held in
                for change in changes { UserChange.apply(key: change.key, value: change.value, to: &held.state) }
                held.revision += 1
            }
        }
    }

    /// Forgets `userId`, after a change written around the commit path (the admin reset), or
    /// a commit refused because another node changed the user.
    func forget(_ userId: String) {
        let key = UserKey(userId)
        table.withLock { table in
            table.tick(key)
            table.states.removeValue(forKey: key)
        }
    }

    private static func read(_ userId: String, store: any UserDataStore) throws -> Held {
        held(try store.user(id: userId))
    }

    private static func held(_ record: UserRecord?) -> Held {
        guard let record else { return Held(state: [:], revision: 0) }
        return Held(state: decode(record.state), revision: record.revision)
    }

    static func decode(_ text: String) -> [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        for member in (try? JSONParser.parse(text, limits: .storedData))?.objectValue ?? JSONObject() { result[member.key] = member.value }
        return result
    }
}
