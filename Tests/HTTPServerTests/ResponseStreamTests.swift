// The queue of a streamed response: replacing unsent states, the bound, the end.
@testable import HTTPServer
import Synchronization
import Testing

struct ResponseStreamTests {
    /// Reads what the stream would hand libmicrohttpd next, up to `capacity` bytes.
    static func read(_ stream: ResponseStream, capacity: Int = 1024) -> (count: Int, text: String) {
        var buffer = [UInt8](repeating: 0, count: capacity)
        let count = buffer.withUnsafeMutableBytes { stream.read(into: $0) }
        return (count, count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : "")
    }

    /// A newer replacing write takes the place of an older unsent one; other writes stay.
    @Test func replacingWritesKeepOnlyTheNewestUnsent() {
        let stream = ResponseStream()
        stream.write(Array("hello;".utf8))
        stream.write(Array("v1;".utf8), replacingQueued: true)
        stream.write(Array("v2;".utf8), replacingQueued: true)
        #expect(Self.read(stream).text == "hello;v2;")
    }

    /// A state partly sent is never replaced: the client would get half of one and all of another.
    @Test func aPartlySentChunkIsNotReplaced() {
        let stream = ResponseStream()
        stream.write(Array("version-1;".utf8), replacingQueued: true)
        #expect(Self.read(stream, capacity: 4).text == "vers")
        stream.write(Array("version-2;".utf8), replacingQueued: true)
        stream.write(Array("version-3;".utf8), replacingQueued: true)
        #expect(Self.read(stream).text == "ion-1;version-3;")
    }

    /// Past the chunk on its way and the next one, a write past the limit cuts the stream off:
    /// the next read ends it with an error. One chunk larger than the limit is still taken.
    @Test func theQueueIsBounded() {
        let stream = ResponseStream(queueLimit: 10)
        #expect(stream.write(Array("a chunk over the limit".utf8)))
        #expect(stream.write(Array("12345".utf8)))
        #expect(stream.write(Array("1".utf8)) == false)
        #expect(stream.isOpen == false)
        #expect(Self.read(stream).count == ResponseStream.endWithError)
    }

    /// Heartbeats go only to idle streams; finish sends what is queued, then ends.
    @Test func heartbeatsOnlyWhenIdleAndFinishDrains() {
        let stream = ResponseStream()
        stream.write(Array("data;".utf8))
        stream.writeIfIdle(Array(":hb;".utf8))
        stream.finish()
        #expect(stream.write(Array("late;".utf8)) == false)
        #expect(Self.read(stream).text == "data;")
        #expect(Self.read(stream).count == ResponseStream.endOfStream)
    }

    /// The close handler runs once, and a closed stream takes no writes.
    @Test func closeRunsOnce() {
        let closes = Atomic<Int>(0)
        let stream = ResponseStream { closes.add(1, ordering: .relaxed) }
        stream.closed()
        stream.closed()
        #expect(closes.load(ordering: .relaxed) == 1)
        #expect(stream.write([1]) == false)
    }
}
