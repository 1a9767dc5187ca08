// The compressed-body cache: bounded, least recently used out, never emptied all at once.
@testable import HTTPServer
import Locking
import Synchronization
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
            // Kept as written: not in a buffer of zlib's bound, which is larger than the input.
            #expect(bytes.capacity <= bytes.count + 64, "\(bytes.count) bytes in \(bytes.capacity)")
        }
        let kept = try #require(cache.compressed(large, tag: "\"3\""))
        #expect(kept[8] == 0)
        #expect(ContentCoding.gunzip(kept) == large && perRequest.map { $0.flatMap { ContentCoding.gunzip($0) } } == [small, large, large])
    }

    /// A form makes its body's compressed form once and serves it to every answer with those
    /// bytes; given other bytes (an answer it was attached to by mistake) it compresses those
    /// instead, never serving one body's compressed form for another.
    @Test func aFormIsMadeOnceForItsBody() throws {
        let form = CompressedForm()
        let first = Array(String(repeating: #"{"version":1,"screen":"home.first"},"#, count: 60).utf8)
        let second = Array(String(repeating: #"{"version":2,"screen":"home.second"},"#, count: 60).utf8)
        let made = Mutex(0)
        let compress: ([UInt8]) -> [UInt8]? = { body in
            made.withLock { $0 += 1 }
            return ContentCoding.gzip(body, level: CompressedBodies.levelPerRequest)
        }
        #expect(!form.isMade)
        for _ in 0..<3 { #expect(form.value(for: first, make: compress).flatMap { ContentCoding.gunzip($0) } == first) }
        #expect(made.withLock { $0 } == 1)
        #expect(form.value(for: Array(first), make: compress).flatMap { ContentCoding.gunzip($0) } == first, "equal bytes in another array")
        #expect(made.withLock { $0 } == 1)
        #expect(form.value(for: second, make: compress).flatMap { ContentCoding.gunzip($0) } == second)
        #expect(made.withLock { $0 } == 2)

        // Through negotiation: the first answer that asks for gzip makes it, a 304 standing for
        // the same body takes its length from it, and an answer without gzip leaves it be.
        let other = CompressedForm()
        var response = Response.json(first)
        response.headers["ETag"] = "\"1\""
        response.compressedForm = other
        let plain = ContentCoding.negotiated(response, acceptEncoding: nil, threshold: 1024)
        #expect(plain.headers["Content-Encoding"] == nil && !other.isMade)
        let coded = ContentCoding.negotiated(response, acceptEncoding: "gzip", threshold: 1024)
        #expect(coded.headers["Content-Encoding"] == "gzip" && other.isMade)
        #expect(ContentCoding.gunzip(coded.body) == first)
        let notModified = ContentCoding.negotiated(.notModified(response), acceptEncoding: "gzip", threshold: 1024)
        #expect(notModified.representation?.body == coded.body)
    }
}
