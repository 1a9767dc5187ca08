// The filter of a cached session's committed idempotency keys: never a key forgotten, rarely a
// new key taken for a used one.
@testable import FlowServer
import Foundation
import Testing

struct UsedKeysTests {
    /// Every key inserted is found, however many: a forgotten key would apply a retried tap twice.
    @Test func neverForgetsAKey() {
        var keys = UsedKeys()
        var inserted: [String] = []
        for _ in 0..<2_000 {
            let key = UUID().uuidString
            keys.insert(key)
            inserted.append(key)
            #expect(keys.mayContain(key))
        }
        #expect(inserted.allSatisfy(keys.mayContain))
    }

    /// An empty filter holds nothing; after 20 keys, few new keys look used (about 1 in 740
    /// expected; each one that does is only looked up in the database).
    @Test func newKeysRarelyLookUsed() {
        var keys = UsedKeys()
        #expect((0..<1_000).allSatisfy { !keys.mayContain("key-\($0)") })
        for index in 0..<20 { keys.insert("tap-\(index)") }
        let lookLikeUsed = (0..<20_000).filter { keys.mayContain("other-\($0)") }.count
        #expect(lookLikeUsed < 200, "\(lookLikeUsed) of 20,000 new keys look used after 20 taps")
        // And after 100 taps, still far from every key (about 1 in 11 expected).
        for index in 20..<100 { keys.insert("tap-\(index)") }
        let after100 = (0..<20_000).filter { keys.mayContain("other-\($0)") }.count
        #expect(after100 < 4_000, "\(after100) of 20,000 new keys look used after 100 taps")
    }

    /// Copies are values: a key inserted into the next version's filter is not in the one
    /// before it (whose commit may still fail).
    @Test func isAValue() {
        let before = UsedKeys()
        var after = before
        after.insert("tap")
        #expect(after.mayContain("tap"))
        #expect(!before.mayContain("tap"))
    }
}
