// Who may create sessions: client keys (shown once, hashed, revoked at once, refused elsewhere),
// verified user ids, and rate limits per client address (bounded, behind trusted proxies only).
@testable import FlowServer
import Crypto
import FlowStore
import Foundation
import HTTPServer
import HTTPTestClient
import JSON
import Locking
import StoreTestSupport
import Testing

struct AccessTests {
    static let admin = FlowAdminTests.admin

    static func makeKey(_ test: TestApp, name: String = "ios app") throws -> (id: String, key: String) {
        let response = try test.direct.send("POST", "/v1/client-keys", body: #"{"name":"\#(name)"}"#, headers: Self.admin)
        try #require(response.status == 201, "\(response.text)")
        return (try #require(response.json["id"].stringValue), try #require(response.json["key"].stringValue))
    }

    static func create(_ test: TestApp, _ body: String, headers: [(String, String)] = [], peer: String? = nil) -> Response {
        var request = Request(method: "POST", path: "/v1/sessions", body: Array(body.utf8))
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.peer = peer.flatMap { IPAddress($0) }
        return test.app.handle(request).settled()
    }

    /// A key is shown once, stored only as its SHA-256, listed without it, and revoked at once.
    @Test func clientKeysAreShownOnceAndRevokedAtOnce() throws {
        var options = AccessOptions()
        options.requireClientKey = true
        let test = try TestApp(access: options)
        let (id, key) = try Self.makeKey(test)
        #expect(key.hasPrefix("fsk_"))
        let listed = try test.direct.send("GET", "/v1/client-keys", headers: Self.admin)
        #expect(listed.json["clientKeys"][0]["id"] == .string(id))
        #expect(listed.json["clientKeys"][0]["key"] == .null)
        #expect(!listed.text.contains(key))
        let stored = try test.store.clientKeys()
        #expect(stored.count == 1)
        #expect(stored[0].keyHash == Array(SHA256.hash(data: Data(key.utf8))))

        #expect(Self.create(test, #"{"userId":"ada"}"#).status == 401)
        #expect(Self.create(test, #"{"userId":"ada"}"#, headers: [("X-API-Key", "fsk_made-up")]).status == 401)
        #expect(Self.create(test, #"{"userId":"ada"}"#, headers: [("X-API-Key", key)]).status == 201)
        #expect(Self.create(test, #"{"userId":"ada"}"#, headers: [("Authorization", "Bearer \(key)")]).status == 201)

        #expect(try test.direct.send("DELETE", "/v1/client-keys/\(id)", headers: Self.admin).status == 204)
        let revoked = Self.create(test, #"{"userId":"ada"}"#, headers: [("X-API-Key", key)])
        #expect(revoked.status == 401)
        #expect(revoked.headers["Content-Type"] == "application/problem+json")
        #expect(try test.direct.send("GET", "/v1/client-keys", headers: Self.admin).json["clientKeys"][0]["revokedAt"].stringValue != nil)
        #expect(try test.direct.send("DELETE", "/v1/client-keys/ck_nope", headers: Self.admin).status == 404)
        #expect(try test.direct.send("POST", "/v1/client-keys", body: #"{"name":""}"#, headers: Self.admin).status == 400)
        #expect(try test.direct.send("POST", "/v1/client-keys", body: #"{"name":"x","scope":"all"}"#, headers: Self.admin).status == 400)
        #expect(try test.direct.send("POST", "/v1/client-keys", body: #"{"name":"x"}"#).status == 401)
    }

    /// A key revoked through one node is refused by the other at once (no cache to go stale).
    @Test(.enabled(if: TestStoreKind.isPostgreSQL)) func revocationHoldsOnEveryNode() throws {
        var options = AccessOptions()
        options.requireClientKey = true
        let first = try TestApp(access: options)
        let second = try TestApp(beside: first)
        let (id, key) = try Self.makeKey(first)
        #expect(try second.direct.send("POST", "/v1/sessions", body: #"{"userId":"n"}"#, headers: [("X-API-Key", key)]).status == 201)
        #expect(try first.direct.send("DELETE", "/v1/client-keys/\(id)", headers: Self.admin).status == 204)
        #expect(try second.direct.send("POST", "/v1/sessions", body: #"{"userId":"n"}"#, headers: [("X-API-Key", key)]).status == 401)
    }

    /// A client key opens nothing but session creation: not an admin route, not a session.
    @Test func clientKeysOpenNothingElse() throws {
        let test = try TestApp()
        let (_, key) = try Self.makeKey(test)
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "owner")
        let bearer = [("Authorization", "Bearer \(key)")]
        #expect(try test.direct.send("GET", "/v1/flags", headers: bearer).status == 401)
        #expect(try test.direct.send("GET", "/v1/client-keys", headers: bearer).status == 401)
        #expect(try test.direct.send("GET", "/v1/sessions/\(session.id)", headers: bearer).status == 401)
        #expect(try test.direct.send("POST", "/v1/sessions/\(session.id)/actions", body: #"{"type":"back"}"#, headers: bearer).status == 401)
        // Without --require-client-key a wrong key is still refused, never ignored.
        #expect(Self.create(test, #"{"userId":"ada"}"#, headers: [("X-API-Key", "fsk_wrong")]).status == 401)
        #expect(Self.create(test, #"{"userId":"ada"}"#).status == 201)
    }

    /// With a user secret, a session needs the HMAC of its user id: right passes; wrong,
    /// missing, another user's, or malformed are 401.
    @Test func userHashesVerifyUserIds() throws {
        var options = AccessOptions()
        options.userSecret = "backend-secret"
        let test = try TestApp(access: options)
        func hash(_ user: String) -> String {
            AccessPolicy.hex(HMAC<SHA256>.authenticationCode(for: Data(user.utf8), using: SymmetricKey(data: Data("backend-secret".utf8))))
        }
        #expect(Self.create(test, #"{"userId":"ada","userHash":"\#(hash("ada"))"}"#).status == 201)
        #expect(Self.create(test, #"{"userId":"ada","userHash":"\#(hash("ada").uppercased())"}"#).status == 201)
        for body in [#"{"userId":"ada"}"#, #"{"userId":"ada","userHash":"\#(hash("bob"))"}"#,
                     #"{"userId":"ada","userHash":"00"}"#, #"{"userId":"ada","userHash":""}"#] {
            let response = Self.create(test, body)
            #expect(response.status == 401, "\(body)")
            #expect(response.headers["Content-Type"] == "application/problem+json")
        }
        #expect(Self.create(test, #"{"userId":"ada","userHash":5}"#).status == 400)
        #expect(try test.store.sessionCount() == 2)
    }

    /// Past the burst, creations from one address are 429 with Retry-After; other addresses are
    /// not affected; repeated wrong tokens from an address are 429 too.
    @Test func rateLimitsPerAddress() throws {
        var options = AccessOptions()
        options.sessionRate = RateLimit("0.01/3")  // one more every 100 s: none within the test
        let test = try TestApp(access: options)
        let statuses = (0..<5).map { _ in Self.create(test, #"{"userId":"flood"}"#, peer: "198.51.100.7").status }
        #expect(statuses == [201, 201, 201, 429, 429])
        let refused = Self.create(test, #"{"userId":"flood"}"#, peer: "198.51.100.7")
        #expect(refused.headers["Retry-After"] != nil)
        #expect(refused.json["status"] == 429)
        #expect(Self.create(test, #"{"userId":"other"}"#, peer: "198.51.100.8").status == 201)

        let session = try SessionClient(sender: test.direct).create(userId: "target")
        var guesses: [Int] = []
        for _ in 0..<5 {
            var request = Request(method: "GET", path: "/v1/sessions/\(session.id)")
            request.headers.add(name: "Authorization", value: "Bearer guess")
            request.peer = IPAddress("203.0.113.9")
            guesses.append(test.app.handle(request).settled().status)
        }
        #expect(guesses == [401, 401, 401, 429, 429], "three failures are the burst; then the address waits")
    }

    /// Keys looked up under one revision are trusted by requests checked at it, and at an
    /// earlier one (another thread's read, before it, handed over late), without a look-up, and
    /// are not dropped by them; a later revision, or another epoch, looks them up again.
    @Test func keysKeptUnderARevisionServeEarlierOnes() throws {
        let database = try TestDatabase()
        let base = try database.migratedStore()
        defer { try? base.close() }
        let store = StallingStore(base: base)
        let keys = ClientKeys(store: store, logger: .init(label: "t"))
        let made = try keys.create(name: "app", audit: nil)
        let unknown = ClientKeys.keyPrefix + "not-a-key-anyone-made"
        var lookups: Int { store.keyLookups.load(ordering: .sequentiallyConsistent) }

        #expect(try keys.lookup(made.key, checkedAt: "r8.e1")?.id == made.record.id)
        #expect(try keys.lookup(unknown, checkedAt: "r8.e1") == nil)
        #expect(lookups == 2)
        #expect(try keys.lookup(made.key, checkedAt: "r7.e1")?.id == made.record.id)
        #expect(try keys.lookup(unknown, checkedAt: "r7.e1") == nil)
        #expect(lookups == 2, "kept under r8, read after r7")
        let other = try keys.create(name: "web", audit: nil)
        #expect(try keys.lookup(other.key, checkedAt: "r7.e1")?.id == other.record.id)
        #expect(lookups == 3)
        #expect(try keys.lookup(other.key, checkedAt: "r8.e1")?.id == other.record.id)
        #expect(try keys.lookup(made.key, checkedAt: "r8.e1") != nil)
        #expect(lookups == 3, "looked up for r7 after r8 was read: kept under r8, which r7 did not drop")
        #expect(try keys.lookup(made.key, checkedAt: "r9.e1") != nil)
        #expect(lookups == 4, "a later revision")
        #expect(try keys.lookup(made.key, checkedAt: "r3.e2") != nil)
        #expect(lookups == 5, "another epoch")
    }

    /// X-Forwarded-For is believed only from a trusted proxy, and then only up to the first
    /// address that is not a trusted proxy.
    @Test func forwardedForOnlyFromTrustedProxies() throws {
        var options = AccessOptions()
        options.trustedProxies = [IPNetwork("10.0.0.0/8"), IPNetwork("::1")].compactMap { $0 }
        let policy = AccessPolicy(options: options, clientKeys: ClientKeys(store: try TestDatabase().migratedStore(), logger: .init(label: "t")))
        func address(peer: String, forwarded: String?) -> String? {
            var request = Request(method: "POST", path: "/v1/sessions")
            if let forwarded { request.headers.add(name: "X-Forwarded-For", value: forwarded) }
            request.peer = IPAddress(peer)
            return policy.clientAddress(request)?.description
        }
        #expect(address(peer: "10.1.2.3", forwarded: "203.0.113.5") == "203.0.113.5")
        #expect(address(peer: "10.1.2.3", forwarded: "198.51.100.1, 203.0.113.5, 10.9.9.9") == "203.0.113.5")
        #expect(address(peer: "192.0.2.1", forwarded: "203.0.113.5") == "192.0.2.1", "an untrusted peer's header is ignored")
        #expect(address(peer: "10.1.2.3", forwarded: "nonsense") == "10.1.2.3")
        #expect(address(peer: "::1", forwarded: "2001:db8::7") == "2001:db8::7")
        #expect(address(peer: "10.1.2.3", forwarded: nil) == "10.1.2.3")
    }

    /// However many addresses flood it, the table stays at its capacity: each new address takes
    /// the place of the one heard from least recently (counted as an eviction), so an address
    /// that keeps coming keeps its empty bucket and stays refused.
    @Test func bucketsAreBounded() {
        let limiter = RateLimiter(RateLimit("1/2")!, capacity: 100)
        let now = ContinuousClock.now
        let busy = IPAddress(high: 0x2001_0db8_ffff_0000, low: 1)
        #expect(limiter.take(busy, now: now) == nil && limiter.take(busy, now: now) == nil)
        #expect(limiter.take(busy, now: now) != nil, "the busy address spent its burst")
        for index in 0..<10_000 {
            let address = IPAddress(high: 0x2001_0db8_0000_0000, low: UInt64(index))
            #expect(limiter.take(address, now: now) == nil, "a new address starts with a full bucket")
            if index % 50 == 0 { #expect(!limiter.hasTokens(busy, now: now)) }  // it keeps trying
        }
        #expect(limiter.count == 100)
        #expect(limiter.figures == CacheFigures(entries: 100, capacity: 100, evictions: 10_000 + 1 - 100))
        #expect(limiter.take(busy, now: now) != nil, "the most recently refused address kept its empty bucket")
        #expect(RateLimit("20/100") == RateLimit("20/100"))
        #expect(RateLimit("0") == nil && RateLimit("x/2") == nil && RateLimit("5/0") == nil)
    }
}
