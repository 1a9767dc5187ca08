// The compressed-body cache: bounded, least recently used out, never emptied all at once.
@testable import HTTPServer
import Locking
import Testing

struct CompressedBodiesTests {
    /// Past its capacity the cache drops the least recently used body (a hit counts as a use)
    /// and counts it; what it keeps is still served compressed from memory.
    @Test func evictsLeastRecentlyUsed() {
        let cache = CompressedBodies(capacity: 2)
        let bodies = (0..<3).map { Array(String(repeating: #"{"body":\#($0)},"#, count: 1_000).utf8) }
        for index in [0, 1, 0, 2] {
            let compressed = cache.compressed(bodies[index], tag: "\"\(index)\"")
            #expect(compressed.flatMap { ContentCoding.gunzip($0) } == bodies[index])
        }
        #expect(cache.tagsByRecency == ["\"2\"", "\"0\""], "body 0 was used again; body 1 went")
        #expect(cache.figures == CacheFigures(entries: 2, capacity: 2, evictions: 1))
    }
}
