// The LRU table: eviction order, capacity 1, updates and reads move to the front, removal, and
// the order checked against a plain model over many random operations.
import Locking
import Testing

struct LRUTableTests {
    /// A full table evicts the least recently used entry, one at a time, and counts it.
    @Test func evictsLeastRecentlyUsedFirst() {
        var table = LRUTable<String, Int>(capacity: 3)
        for (offset, key) in ["a", "b", "c"].enumerated() { #expect(table.updateValue(offset, forKey: key) == nil) }
        #expect(table.keysByRecency == ["c", "b", "a"])
        let evicted = table.updateValue(3, forKey: "d")
        #expect(evicted?.key == "a" && evicted?.value == 0)
        #expect(table.keysByRecency == ["d", "c", "b"])
        #expect(table.updateValue(4, forKey: "e")?.key == "b")
        #expect(table.count == 3 && table.evictions == 2)
        #expect(table.figures == CacheFigures(entries: 3, capacity: 3, evictions: 2))
    }

    /// A read through `value(forKey:)` or `modify` saves an entry from eviction; `peek` does not.
    @Test func readsMoveToFront() {
        var table = LRUTable<String, Int>(capacity: 3)
        for (offset, key) in ["a", "b", "c"].enumerated() { table.updateValue(offset, forKey: key) }
        #expect(table.value(forKey: "a") == 0)
        #expect(table.peek("b") == 1)
        #expect(table.keysByRecency == ["a", "c", "b"])
        #expect(table.modify("b") { $0 += 10 } != nil)
        #expect(table.peek("b") == 11)
        #expect(table.keysByRecency == ["b", "a", "c"])
        #expect(table.modify("zz") { $0 += 1 } == nil)
        #expect(table.updateValue(9, forKey: "d")?.key == "c")
    }

    /// Updating a held key replaces its value and moves it to the front, evicting nothing.
    @Test func updateMovesToFront() {
        var table = LRUTable<String, Int>(capacity: 2)
        table.updateValue(1, forKey: "a")
        table.updateValue(2, forKey: "b")
        #expect(table.updateValue(10, forKey: "a") == nil)
        #expect(table.keysByRecency == ["a", "b"] && table.evictions == 0)
        #expect(table.updateValue(3, forKey: "c")?.key == "b")
        #expect(table.peek("a") == 10)
    }

    /// Capacity 1 keeps the last key put; a capacity below 1 is taken as 1.
    @Test func capacityOne() {
        var table = LRUTable<Int, String>(capacity: 0)
        #expect(table.capacity == 1)
        #expect(table.updateValue("x", forKey: 1) == nil)
        #expect(table.updateValue("y", forKey: 2)?.key == 1)
        #expect(table.updateValue("z", forKey: 2) == nil)
        #expect(table.keysByRecency == [2] && table.peek(2) == "z" && table.evictions == 1)
        #expect(table.removeValue(forKey: 2) == "z")
        #expect(table.isEmpty && table.keysByRecency.isEmpty)
        #expect(table.updateValue("w", forKey: 3) == nil)
        #expect(table.keysByRecency == [3])
    }

    /// Removing the head, the tail or a middle entry keeps the others in order; removals are
    /// not evictions.
    @Test func removeKeepsOrder() {
        var table = LRUTable<String, Int>(capacity: 5)
        for (offset, key) in ["a", "b", "c", "d", "e"].enumerated() { table.updateValue(offset, forKey: key) }
        #expect(table.removeValue(forKey: "c") == 2)
        #expect(table.removeValue(forKey: "e") == 4)
        #expect(table.removeValue(forKey: "a") == 0)
        #expect(table.removeValue(forKey: "a") == nil)
        #expect(table.keysByRecency == ["d", "b"])
        #expect(table.entriesOldestFirst.map(\.key) == ["b", "d"])
        table.updateValue(5, forKey: "f")
        #expect(table.keysByRecency == ["f", "d", "b"] && table.evictions == 0)
        table.removeAll()
        #expect(table.isEmpty && !table.contains("f"))
    }

    /// Thousands of random puts, reads and removals agree with a plain array model of recency.
    @Test func agreesWithModel() {
        var table = LRUTable<Int, Int>(capacity: 16)
        var model: [(key: Int, value: Int)] = []  // most recent first
        var evictions = 0
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Int((seed >> 33) % UInt64(bound))
        }
        for step in 0..<20_000 {
            let key = next(40)
            switch next(4) {
            case 0, 1:
                table.updateValue(step, forKey: key)
                if let found = model.firstIndex(where: { $0.key == key }) {
                    model.remove(at: found)
                } else if model.count == 16 {
                    model.removeLast()
                    evictions += 1
                }
                model.insert((key, step), at: 0)
            case 2:
                let value = table.value(forKey: key)
                if let found = model.firstIndex(where: { $0.key == key }) {
                    #expect(value == model[found].value)
                    model.insert(model.remove(at: found), at: 0)
                } else {
                    #expect(value == nil)
                }
            default:
                let value = table.removeValue(forKey: key)
                let found = model.firstIndex(where: { $0.key == key })
                #expect(value == found.map { model[$0].value })
                if let found { model.remove(at: found) }
            }
        }
        #expect(table.keysByRecency == model.map(\.key))
        #expect(table.evictions == evictions)
    }
}
