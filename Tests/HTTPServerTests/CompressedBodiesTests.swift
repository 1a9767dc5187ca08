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

    /// A body compressed at each request (under 8 KiB, or untagged) is compressed at zlib's
    /// fastest level; one compressed once and kept, at its default. The gzip header's XFL byte
    /// (RFC 1952 §2.3.1, the ninth) says which: 4 for the fastest, 0 for the levels between.
    @Test func bodiesCompressedAtEachRequestUseTheFastestLevel() throws {
        let cache = CompressedBodies(capacity: 2)
        let small = Array(String(repeating: #"{"screen":"home.first","params":{}},"#, count: 40).utf8)
        let large = Array(String(repeating: #"{"screen":"home.first","params":{}},"#, count: 400).utf8)
        #expect(small.count < CompressedBodies.minimumBytes && large.count >= CompressedBodies.minimumBytes)
        let perRequest = [cache.compressed(small, tag: "\"1\""), cache.compressed(large, tag: nil), cache.compressed(large, tag: "W/\"2\"")]
        for compressed in perRequest {
            let bytes = try #require(compressed)
            #expect(bytes[8] == 4)
        }
        let kept = try #require(cache.compressed(large, tag: "\"3\""))
        #expect(kept[8] == 0)
        #expect(ContentCoding.gunzip(kept) == large && perRequest.map { $0.flatMap { ContentCoding.gunzip($0) } } == [small, large, large])
    }
}
