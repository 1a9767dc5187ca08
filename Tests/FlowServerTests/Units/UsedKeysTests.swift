// The filter of a cached session's committed idempotency keys: never a key forgotten, rarely a
// new key taken for a used one, however long the session.
@testable import FlowServer
import Foundation
import Testing

struct UsedKeysTests {
    /// Every key inserted is found, however many, past the last segment too: a forgotten key
    /// would apply a retried tap twice.
    @Test func neverForgetsAKey() {
        var keys = UsedKeys()
        var inserted: [String] = []
        for _ in 0..<(UsedKeys.maximumKeys + 500) {
            let key = UUID().uuidString
            keys.insert(key)
            inserted.append(key)
            #expect(keys.mayContain(key))
        }
        #expect(inserted.allSatisfy(keys.mayContain))
    }

    /// How many of 20,000 keys never inserted look used after `taps` keys were.
    private func falseHits(after taps: Int) -> Int {
        var keys = UsedKeys()
        for index in 0..<taps { keys.insert("tap-\(index)") }
        return (0..<20_000).filter { keys.mayContain("other-\($0)") }.count
    }

    /// An empty filter holds nothing; new keys rarely look used, and no more often as the
    /// session grows: about 1 in 740 after 20 taps, 1 in 110 after 40 (the inline segment full),
    /// 1 in 48 after 1,000, 1 in 37 with every segment full (each one that does is only looked
    /// up in the database). The filter of fixed size took 1 new key in 3 for used after 200.
    @Test func newKeysRarelyLookUsedHoweverLongTheSession() {
        let empty = UsedKeys()
        #expect((0..<1_000).allSatisfy { !empty.mayContain("key-\($0)") })
        for (taps, most) in [(20, 80), (40, 400), (200, 700), (1_000, 900), (UsedKeys.maximumKeys - 1, 1_100)] {
            let hits = falseHits(after: taps)
            #expect(hits < most, "\(hits) of 20,000 new keys look used after \(taps) taps")
        }
    }

    /// Past its last segment it cannot tell: every key looks used, and is looked up.
    @Test func fullSaysMaybeToEveryKey() {
        var keys = UsedKeys()
        for index in 0..<UsedKeys.maximumKeys { keys.insert("tap-\(index)") }
        #expect((0..<1_000).allSatisfy { keys.mayContain("other-\($0)") })
    }

    /// Keys go into segments twice the size of the one before: 40, then 80, 160, ...
    @Test func segmentsDouble() {
        #expect(UsedKeys.segment(ofKey: 0) == 0)
        #expect(UsedKeys.segment(ofKey: 39) == 0)
        #expect(UsedKeys.segment(ofKey: 40) == 1)
        #expect(UsedKeys.segment(ofKey: 119) == 1)
        #expect(UsedKeys.segment(ofKey: 120) == 2)
        #expect(UsedKeys.segment(ofKey: UsedKeys.maximumKeys - 1) == UsedKeys.segments - 1)
    }

    /// Copies are values: a key inserted into the next version's filter is not in the one
    /// before it (whose commit may still fail), in the inline segment and in the later ones.
    @Test func isAValue() {
        var before = UsedKeys()
        for index in 0..<100 { before.insert("tap-\(index)") }
        var after = before
        let added = (0..<50).map { "added-\($0)" }
        for key in added { after.insert(key) }
        #expect(added.allSatisfy(after.mayContain))
        // Each may look used in `before` by chance (about 1 in 80); not most of them.
        #expect(added.filter(before.mayContain).count < 10)
        let fresh = UsedKeys()
        var first = fresh
        first.insert("one")
        #expect(first.mayContain("one"))
        #expect(!fresh.mayContain("one"))
    }
}
