// A bounded table that forgets its least recently used entry when full: O(1) every operation.

/// A dictionary with a capacity: inserting into a full table evicts the entry used least
/// recently, never the whole table. Reading through `value(forKey:)` or `modify` counts as a
/// use. Every operation is O(1): a dictionary from key to slot, and a doubly linked list of
/// slots by recency kept as indices in one array (no node allocations; a removed slot is
/// filled with the last one, so the array stays dense).
///
/// ```swift
/// var recent = LRUTable<String, Int>(capacity: 2)
/// recent.updateValue(1, forKey: "a")
/// recent.updateValue(2, forKey: "b")
/// _ = recent.value(forKey: "a")        // "a" is now the most recent
/// recent.updateValue(3, forKey: "c")   // evicts "b"
/// recent.keysByRecency                 // ["c", "a"]
/// ```
/// A value type with no lock of its own: keep it inside the lock that guards its owner (a
/// `PThreadMutex`), so a hit costs one dictionary look-up and a few index writes, no allocation.
///
/// Inlinable, so that a module using it gets code specialized for its key and value: unspecialized,
/// every slot access went through the generic value witnesses, and a session action's user-state
/// look-up (`UserStates.cached`) cost twice the plain dictionary it replaced.
public struct LRUTable<Key: Hashable, Value> {
    @usableFromInline
    struct Slot {
        @usableFromInline let key: Key
        @usableFromInline var value: Value
        /// Toward the most recent (`head`); -1 at the head.
        @usableFromInline var newer: Int
        /// Toward the least recent (`tail`); -1 at the tail.
        @usableFromInline var older: Int

        @inlinable
        init(key: Key, value: Value, newer: Int, older: Int) {
            self.key = key
            self.value = value
            self.newer = newer
            self.older = older
        }
    }

    @usableFromInline var slots: [Slot] = []
    @usableFromInline var index: [Key: Int] = [:]
    /// The most recently used slot, or -1 when empty.
    @usableFromInline var head = -1
    /// The least recently used slot (the next to go), or -1 when empty.
    @usableFromInline var tail = -1

    /// The most entries kept (at least 1).
    public let capacity: Int
    /// Entries evicted to make room since the table was made (removals are not counted).
    public var evictions: Int { evictionCount }
    @usableFromInline var evictionCount = 0

    @inlinable
    public init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    @inlinable
    public var count: Int { slots.count }
    @inlinable
    public var isEmpty: Bool { slots.isEmpty }

    /// Whether `key` is held; does not count as a use.
    @inlinable
    public func contains(_ key: Key) -> Bool { index[key] != nil }

    /// The value of `key`, without counting it as a use.
    @inlinable
    public func peek(_ key: Key) -> Value? {
        guard let position = index[key] else { return nil }
        return slots[position].value
    }

    /// The value of `key`, which becomes the most recently used.
    @inlinable
    public mutating func value(forKey key: Key) -> Value? {
        guard let position = index[key] else { return nil }
        moveToFront(position)
        return slots[position].value
    }

    /// Runs `body` on the value of `key` in place (it becomes the most recently used); nil, and
    /// `body` not run, when `key` is not held.
    @inlinable
    public mutating func modify<Result>(_ key: Key, _ body: (inout Value) throws -> Result) rethrows -> Result? {
        guard let position = index[key] else { return nil }
        moveToFront(position)
        return try body(&slots[position].value)
    }

    /// Sets the value of `key`, which becomes the most recently used; when the key is new and
    /// the table full, the least recently used entry goes first and is returned.
    @inlinable @discardableResult
    public mutating func updateValue(_ value: Value, forKey key: Key) -> (key: Key, value: Value)? {
        if let position = index[key] {
            slots[position].value = value
            moveToFront(position)
            return nil
        }
        var evicted: (key: Key, value: Value)?
        if slots.count >= capacity, tail >= 0 {
            let last = slots[tail]
            evicted = (last.key, last.value)
            remove(at: tail)
            evictionCount += 1
        }
        let position = slots.count
        slots.append(Slot(key: key, value: value, newer: -1, older: head))
        if head >= 0 { slots[head].newer = position }
        head = position
        if tail < 0 { tail = position }
        index[key] = position
        return evicted
    }

    /// Removes `key`; returns its value, or nil when it was not held.
    @inlinable @discardableResult
    public mutating func removeValue(forKey key: Key) -> Value? {
        guard let position = index[key] else { return nil }
        let value = slots[position].value
        remove(at: position)
        return value
    }

    /// Removes every entry (the eviction count stays).
    @inlinable
    public mutating func removeAll() {
        slots.removeAll()
        index.removeAll()
        head = -1
        tail = -1
    }

    /// The keys from the most to the least recently used (for tests and tools: O(n)).
    @inlinable
    public var keysByRecency: [Key] {
        var keys: [Key] = []
        keys.reserveCapacity(slots.count)
        var position = head
        while position >= 0 {
            keys.append(slots[position].key)
            position = slots[position].older
        }
        return keys
    }

    /// The entries from the least to the most recently used (to copy a table in the same order).
    @inlinable
    public var entriesOldestFirst: [(key: Key, value: Value)] {
        var entries: [(key: Key, value: Value)] = []
        entries.reserveCapacity(slots.count)
        var position = tail
        while position >= 0 {
            entries.append((slots[position].key, slots[position].value))
            position = slots[position].newer
        }
        return entries
    }

    /// The figures `/metrics` shows.
    @inlinable
    public var figures: CacheFigures { CacheFigures(entries: count, capacity: capacity, evictions: evictions) }

    @inlinable
    mutating func moveToFront(_ position: Int) {
        guard position != head else { return }
        unlink(position)
        slots[position].older = head
        slots[position].newer = -1
        if head >= 0 { slots[head].newer = position }
        head = position
        if tail < 0 { tail = position }
    }

    @inlinable
    mutating func unlink(_ position: Int) {
        let newer = slots[position].newer, older = slots[position].older
        if newer >= 0 { slots[newer].older = older } else { head = older }
        if older >= 0 { slots[older].newer = newer } else { tail = newer }
    }

    /// Unlinks the slot at `position` and fills its place with the last slot.
    @inlinable
    mutating func remove(at position: Int) {
        unlink(position)
        index.removeValue(forKey: slots[position].key)
        let last = slots.count - 1
        if position != last {
            let moved = slots[last]
            slots[position] = moved
            index[moved.key] = position
            if moved.newer >= 0 { slots[moved.newer].older = position } else { head = position }
            if moved.older >= 0 { slots[moved.older].newer = position } else { tail = position }
        }
        slots.removeLast()
    }
}

extension LRUTable: Sendable where Key: Sendable, Value: Sendable {}
extension LRUTable.Slot: Sendable where Key: Sendable, Value: Sendable {}

/// What `/metrics` shows of one bounded in-memory table.
public struct CacheFigures: Sendable, Equatable {
    public var entries: Int
    public var capacity: Int
    /// Nil when the table does not count them.
    public var evictions: Int?

    public init(entries: Int, capacity: Int, evictions: Int?) {
        self.entries = entries
        self.capacity = capacity
        self.evictions = evictions
    }
}
