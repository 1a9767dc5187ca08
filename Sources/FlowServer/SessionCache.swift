// Hot sessions in memory: a bounded map of per-session slots, each with its own lock.
import Synchronization

/// One session's place in the cache. Its lock serializes the session's actions: while one is
/// applied and committed, the next waits; other sessions' slots are untouched.
final class SessionSlot: Sendable {
    /// nil until loaded from the database, and again after the session is deleted.
    let state = Mutex<LiveSession?>(nil)
    /// Set on every use; the eviction clock gives a used slot a second chance.
    let referenced = Atomic<Bool>(true)
}

/// A bounded cache of session slots with CLOCK (second-chance) eviction.
///
/// The cache only holds committed states: a slot's state is replaced after its commit, under
/// its lock. An evicted slot may still be in use by a request in flight; a new slot for the
/// same session then loads from the database, and the version check of every commit keeps
/// the two from overwriting each other.
final class SessionCache: Sendable {
    let capacity: Int
    private let table = Mutex<Table>(Table())

    private struct Table: ~Copyable {
        var slots: [String: SessionSlot] = [:]
        /// The clock: session ids in insertion order; `hand` is the next candidate to evict.
        var ring: [String] = []
        var hand = 0
    }

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// The slot of session `id`, made empty (to be loaded) when it is not cached.
    func slot(for id: String) -> SessionSlot {
        table.withLock { table in
            if let slot = table.slots[id] {
                slot.referenced.store(true, ordering: .relaxed)
                return slot
            }
            let slot = SessionSlot()
            if table.ring.count < capacity {
                table.ring.append(id)
            } else {
                table.ring[Self.claimPosition(&table)] = id
            }
            table.slots[id] = slot
            return slot
        }
    }

    /// Forgets session `id` (after it is deleted); its ring position is reclaimed later.
    func remove(_ id: String) {
        table.withLock { table in _ = table.slots.removeValue(forKey: id) }
    }

    /// Sessions cached now.
    var count: Int { table.withLock { $0.slots.count } }

    /// Moves the clock hand to a ring position that is free (its session was removed, or its
    /// id has a newer position) or holds a slot unused since the hand last passed, evicting
    /// that slot. Every live slot has a position, so at most `capacity` slots live.
    private static func claimPosition(_ table: inout Table) -> Int {
        let count = table.ring.count
        for _ in 0..<(2 * count + 1) {
            let position = table.hand
            table.hand = (table.hand + 1) % count
            let id = table.ring[position]
            guard let slot = table.slots[id] else { return position }
            if slot.referenced.exchange(false, ordering: .relaxed) { continue }
            table.slots.removeValue(forKey: id)
            return position
        }
        // Unreachable: the first pass clears every flag, the second finds one clear.
        let position = table.hand
        table.slots.removeValue(forKey: table.ring[position])
        return position
    }
}
