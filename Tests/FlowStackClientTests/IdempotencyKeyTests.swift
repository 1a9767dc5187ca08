// The Swift client's idempotency keys: UUIDv7 bits and text, their order by time, and the key a tap posts.
import FlowEngine
@testable import FlowStackClient
import Foundation
import Testing

struct IdempotencyKeyTests {
    /// Whether `key` is a version 7 UUID with the RFC 9562 variant, in the canonical lowercase
    /// 8-4-4-4-12 form.
    static func isCanonicalV7(_ key: String) -> Bool {
        key.wholeMatch(of: /[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/) != nil
    }

    /// A key's 16 bytes, read back from its text.
    static func bytes(_ key: String) -> [UInt8] {
        let hex = Array(key.utf8.filter { $0 != UInt8(ascii: "-") })
        return stride(from: 0, to: hex.count, by: 2).compactMap { UInt8(String(decoding: hex[$0...$0 + 1], as: UTF8.self), radix: 16) }
    }

    /// Every key has the version nibble 7 in byte 6 and the variant bits `10` on top of byte 8.
    @Test func versionAndVariant() {
        let keys = (0..<1000).map { _ in Self.bytes(IdempotencyKey.make()) }
        #expect(Set(keys.map(\.count)) == [16])
        #expect(Set(keys.map { $0[6] >> 4 }) == [7])
        #expect(Set(keys.map { $0[8] >> 6 }) == [0b10])
    }

    /// The first 48 bits are the clock's milliseconds, big-endian.
    @Test(arguments: [0, 1, 0x0123_4567_89AB, 1_767_225_600_123, 0xFFFF_FFFF_FFFF] as [UInt64])
    func timePrefix(milliseconds: UInt64) {
        let bytes = Self.bytes(IdempotencyKey.make(at: milliseconds))
        #expect(bytes.prefix(6).reduce(0) { $0 << 8 | UInt64($1) } == milliseconds)
    }

    /// A key made a millisecond later sorts after, as text and as bytes (over a carry into
    /// every byte of the time).
    @Test(arguments: [1_767_225_600_123, 0xFF, 0xFFFF, 0xFF_FFFF, 0xFFFF_FFFF, 0xFF_FFFF_FFFF] as [UInt64])
    func laterMillisecondSortsAfter(milliseconds: UInt64) {
        let pairs = (0..<100).map { _ in (IdempotencyKey.make(at: milliseconds), IdempotencyKey.make(at: milliseconds + 1)) }
        let unordered = pairs.first { !($0 < $1) }
        #expect(unordered == nil)
        let unorderedBytes = pairs.first { !Self.bytes($0).lexicographicallyPrecedes(Self.bytes($1)) }
        #expect(unorderedBytes == nil)
    }

    /// 10,000 keys made now are distinct, each in the canonical lowercase form.
    @Test func distinctAndCanonical() {
        let keys = (0..<10_000).map { _ in IdempotencyKey.make() }
        #expect(Set(keys).count == keys.count)
        let malformed = keys.first { !Self.isCanonicalV7($0) }
        #expect(malformed == nil)
    }

    /// The text is Foundation's for the same 128 bits, lowercased.
    @Test func sameTextAsFoundation() throws {
        for _ in 0..<100 {
            let key = IdempotencyKey.make()
            let uuid = try #require(UUID(uuidString: key))
            #expect(uuid.uuidString.lowercased() == key)
        }
        #expect(IdempotencyKey.canonicalText(high: 0x0123_4567_89AB_CDEF, low: 0xFEDC_BA98_7654_3210)
                == "01234567-89ab-cdef-fedc-ba9876543210")
    }

    /// A tap that `FlowSession.send` posts carries a v7 key made while it was sent.
    @Test func sendPostsAV7Key() async throws {
        let transport = RecordingTransport(server: SimulatedServer(catalog: SimulatedServer.sampleCatalog))
        let session = try await FlowSession.start(FlowSession.Configuration(
            server: URL(string: "http://sim.test")!, userId: "ada", transport: transport))
        let before = IdempotencyKey.currentUnixMilliseconds()
        _ = try await session.send(FlowAction(type: "onboarding.showSecond"))
        let after = IdempotencyKey.currentUnixMilliseconds()
        await session.settled()
        await session.close()
        let keys = transport.requests.compactMap { $0.headers["Idempotency-Key"] }
        #expect(Set(keys).count == 1, "one tap, one key: \(keys)")
        let key = try #require(keys.first)
        #expect(Self.isCanonicalV7(key), "\(key)")
        let made = Self.bytes(key).prefix(6).reduce(0) { $0 << 8 | UInt64($1) }
        #expect((before...after).contains(made))
    }
}

/// FlowSession's requests, kept, each answered by a SimulatedServer with no fault.
final class RecordingTransport: FlowTransport, @unchecked Sendable {
    private let lock = NSLock()
    private let server: SimulatedServer
    private var sent: [FlowRequest] = []

    init(server: SimulatedServer) { self.server = server }

    var requests: [FlowRequest] { lock.withLock { sent } }

    func send(_ request: FlowRequest) async throws -> FlowAnswer {
        lock.withLock { sent.append(request) }
        return server.handle(request)
    }
}
