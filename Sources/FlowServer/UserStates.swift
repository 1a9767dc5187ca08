// Per-user state as the flows read it, shared by every session of a user.
import FlowStore
import JSON
import Locking

/// The state of users with live sessions, kept in step with the users table: commits and the
/// admin routes update it after they write, and a miss reads the database. Every session of a
/// user therefore sees the same state, whether or not it was cached, when this process is the
/// only writer of its database; on a shared one (several nodes) it holds nothing.
final class UserStates: Sendable {
    private struct Table {
        var states: [String: [String: JSONValue]] = [:]
        /// Bumped by every change, held or not, so a read from the database that raced with a
        /// commit is not kept.
        var generations: [String: UInt64] = [:]
        /// Bumped when the table starts over, so generations can be forgotten with the states.
        var epoch: UInt64 = 0
    }

    private let table = PThreadMutex(Table())
    private let capacity: Int
    /// Other nodes change users too: nothing is held, every read asks the database.
    private let shared: Bool

    init(capacity: Int, shared: Bool = false) {
        self.capacity = max(1, capacity)
        self.shared = shared
    }

    /// The state of `userId`, read from the database when it is not held (always, on a
    /// database other nodes write).
    func state(of userId: String, store: any FlowStore) throws -> [String: JSONValue] {
        if shared { return try store.user(id: userId).map { Self.decode($0.state) } ?? [:] }
        for _ in 0..<3 {
            let (held, generation, epoch) = table.withLock { ($0.states[userId], $0.generations[userId] ?? 0, $0.epoch) }
            if let held { return held }
            let read = try store.user(id: userId).map { Self.decode($0.state) } ?? [:]
            let kept = table.withLock { table -> Bool in
                guard table.epoch == epoch, (table.generations[userId] ?? 0) == generation else { return false }
                // A crude bound: when full, start over; misses read the database again.
                if table.states.count >= capacity {
                    table.states.removeAll(keepingCapacity: true)
                    table.generations.removeAll(keepingCapacity: true)
                    table.epoch &+= 1
                }
                table.states[userId] = read
                return true
            }
            if kept { return read }
        }
        // The user's state keeps changing under us: use what the database says now, uncached.
        return try store.user(id: userId).map { Self.decode($0.state) } ?? [:]
    }

    /// Applies committed changes (RFC 7396: a null removes the key, as json_patch does).
    func apply(_ changes: [(key: String, value: JSONValue)], to userId: String) {
        table.withLock { table in
            table.generations[userId, default: 0] &+= 1
            guard var state = table.states[userId] else { return }
            for change in changes {
                if change.value.isNull { state[change.key] = nil } else { state[change.key] = change.value }
            }
            table.states[userId] = state
        }
    }

    /// Forgets `userId`, after a change written around the commit path (the admin reset).
    func forget(_ userId: String) {
        table.withLock { table in
            table.generations[userId, default: 0] &+= 1
            table.states.removeValue(forKey: userId)
        }
    }

    static func decode(_ text: String) -> [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        for member in (try? JSONParser.parse(text, limits: .storedData))?.objectValue ?? JSONObject() { result[member.key] = member.value }
        return result
    }
}
