// Hot sessions in memory: a bounded map of per-session slots, each with its own lock.
import Locking
import Synchronization

/// One session's place in the cache. Its lock guards the committed session and serializes the
/// session's actions: while one is read for or committed, the next ones wait in the slot's turn
/// (without a thread) and run in order once it is over; other sessions' slots are untouched.
final class SessionSlot: Sendable {
    let state = Mutex<SlotContents>(SlotContents())
    /// Set on every use; the eviction clock gives a used slot a second chance.
    let referenced = Atomic<Bool>(true)
    /// Requests holding this slot now. A pinned slot is never evicted, so a session never has
    /// two slots at once, and the state in its slot is always the committed one.
    let pins = Atomic<Int>(0)
}

/// What a slot's lock guards. No database call is made while it is held.
struct SlotContents: ~Copyable {
    /// The committed session: nil until loaded from the database, and again after a delete.
    var session: LiveSession?
    /// Whose turn it is on the session and who waits (see SessionTurn).
    var turn = SessionService.Turn(maxConflictRetries: 2)
}

/// A bounded cache of session slots with CLOCK (second-chance) eviction.
///
/// At most `capacity` slots are kept, plus, briefly, one per request in flight when every
/// slot is in use. Slots are handed out pinned (`pin`) and must be given back (`unpin`).
final class SessionCache: Sendable {
    let capacity: Int
    /// Every request takes this lock, briefly: a pthread mutex, which does not convoy when
    /// there are more HTTP threads than cores (see `PThreadMutex`).
    private let table = PThreadMutex<Table>(Table())

    private struct Table {
        var slots: [String: SessionSlot] = [:]
        /// The clock: session ids by ring position; `hand` is the next candidate to evict.
        var ring: [String] = []
        var hand = 0
    }

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// True when session `id` has a slot now (a look-up that changes nothing).
    func contains(_ id: String) -> Bool {
        table.withLock { $0.slots[id] != nil }
    }

    /// The slot of session `id`, pinned, when it is cached; nil (and nothing changed) when not.
    func pinIfCached(_ id: String) -> SessionSlot? {
        table.withLock { table in
            guard let slot = table.slots[id] else { return nil }
            slot.pins.add(1, ordering: .relaxed)
            slot.referenced.store(true, ordering: .relaxed)
            return slot
        }
    }

    /// The slot of session `id`, pinned; made empty (to be loaded) when it is not cached.
    func pin(_ id: String) -> SessionSlot {
        table.withLock { table in
            if let slot = table.slots[id] {
                slot.pins.add(1, ordering: .relaxed)
                slot.referenced.store(true, ordering: .relaxed)
                return slot
            }
            let slot = SessionSlot()
            slot.pins.store(1, ordering: .relaxed)
            if table.ring.count < capacity {
                table.ring.append(id)
            } else if let position = Self.claimPosition(&table) {
                table.ring[position] = id
            } else {
                table.ring.append(id)  // every slot is in use: grow rather than evict one in use
            }
            table.slots[id] = slot
            return slot
        }
    }

    /// Gives back a slot obtained from `pin`.
    func unpin(_ slot: SessionSlot) {
        slot.pins.subtract(1, ordering: .releasing)
    }

    /// Forgets session `id` (after it is deleted), if `slot` is still its slot.
    func remove(_ id: String, slot: SessionSlot) {
        table.withLock { table in
            if table.slots[id] === slot { table.slots.removeValue(forKey: id) }
        }
    }

    /// Sessions cached now.
    var count: Int { table.withLock { $0.slots.count } }

    /// Moves the clock hand to a ring position that is free (its session was removed, or its id
    /// has a newer position) or holds a slot neither in use nor used since the hand last
    /// passed, evicting that slot. Nil when every slot is in use.
    private static func claimPosition(_ table: inout Table) -> Int? {
        let count = table.ring.count
        for _ in 0..<(2 * count + 1) {
            let position = table.hand
            table.hand = (table.hand + 1) % count
            let id = table.ring[position]
            guard let slot = table.slots[id] else { return position }
            if slot.pins.load(ordering: .acquiring) > 0 { continue }
            if slot.referenced.exchange(false, ordering: .relaxed) { continue }
            table.slots.removeValue(forKey: id)
            return position
        }
        return nil
    }
}
