// Who may create sessions: client keys, verified user ids, and rate limits per client address.
import Crypto
import Foundation
import HTTPServer
import Locking

/// How strictly session creation is guarded. Everything is off by default, so the README's
/// first session works; docs/configuration.md's production checklist turns them on.
public struct AccessOptions: Sendable {
    /// `POST /v1/sessions` needs a live client key (`X-API-Key` or `Authorization: Bearer`).
    public var requireClientKey = false
    /// With a secret, `POST /v1/sessions` needs `userHash` = lowercase hex HMAC-SHA256(secret, userId).
    public var userSecret: String?
    /// Session creations, and failed checks of session tokens, client keys and stream tickets,
    /// per client address (each kind of credential counted apart).
    public var sessionRate: RateLimit?
    /// Failed admin token and admin key checks per client address; on by default (see
    /// `RateLimit.defaultAdminFailures`), nil turns it off.
    public var adminFailureRate: RateLimit? = .defaultAdminFailures
    /// Proxies whose `X-Forwarded-For` is believed: the client is the nearest address in it that
    /// is not one of them. A request from anywhere else is its connection's address.
    public var trustedProxies: [IPNetwork] = []

    public init() {}
}

/// A token bucket's settings: `rate` tokens a second, at most `burst` saved up.
public struct RateLimit: Sendable, Equatable, CustomStringConvertible {
    public var rate: Double
    public var burst: Double

    /// `rate` tokens a second, at most `burst` (at least 1) saved up.
    public init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = max(1, burst)
    }

    /// `RATE` or `RATE/BURST`, such as `20/100` (the burst defaults to the rate); nil otherwise.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let rate = Double(parts[0]), rate > 0, rate.isFinite else { return nil }
        let burst = parts.count == 2 ? Double(parts[1]) : rate
        guard let burst, burst >= 1, burst.isFinite else { return nil }
        self.rate = rate
        self.burst = burst
    }

    public var description: String { "\(rate)/\(burst)" }
}

/// Token buckets by client address, in bounded memory: at most `capacity` addresses are kept,
/// and a new address in a full table takes the place of the one heard from least recently.
/// A bucket refills within `burst / rate` seconds, so forgetting one idle for longer loses
/// nothing; one forgotten sooner (after `capacity` other addresses came since its last request,
/// 65,536 by default) starts full again, which no address can make happen to another's bucket
/// without sending from that many addresses itself.
final class RateLimiter: Sendable {
    struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    let limit: RateLimit
    let capacity: Int
    private let buckets: PThreadMutex<LRUTable<IPAddress, Bucket>>

    init(_ limit: RateLimit, capacity: Int = 65_536) {
        self.limit = limit
        self.capacity = max(1, capacity)
        buckets = PThreadMutex(LRUTable(capacity: capacity))
    }

    var count: Int { buckets.withLock { $0.count } }

    /// Addresses held now, the most held, and how many were evicted to make room (for `/metrics`).
    var figures: CacheFigures { buckets.withLock { $0.figures } }

    /// Takes one token for `address`; when there is none, the seconds until there is one.
    func take(_ address: IPAddress, now: ContinuousClock.Instant = .now) -> Double? {
        buckets.withLock { buckets in
            if let held = buckets.modify(address, { take(from: &$0, now: now) }) { return held }
            var bucket = Bucket(tokens: limit.burst, updated: now)
            let wait = take(from: &bucket, now: now)
            buckets.updateValue(bucket, forKey: address)  // the least recently heard from goes when full
            return wait
        }
    }

    /// Whether `address` has a token left, without taking it. A refused address counts as
    /// heard from, so that it keeps its empty bucket while it keeps trying.
    func hasTokens(_ address: IPAddress, now: ContinuousClock.Instant = .now) -> Bool {
        buckets.withLock { buckets in
            buckets.modify(address) { bucket in
                var refilled = bucket
                refill(&refilled, now: now)
                return refilled.tokens >= 1
            } ?? true
        }
    }

    private func take(from bucket: inout Bucket, now: ContinuousClock.Instant) -> Double? {
        refill(&bucket, now: now)
        guard bucket.tokens >= 1 else { return (1 - bucket.tokens) / limit.rate }
        bucket.tokens -= 1
        return nil
    }

    private func refill(_ bucket: inout Bucket, now: ContinuousClock.Instant) {
        let elapsed = now - bucket.updated
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        bucket.tokens = min(limit.burst, bucket.tokens + max(0, seconds) * limit.rate)
        bucket.updated = now
    }
}

/// The checks of `AccessOptions`, applied by the application.
final class AccessPolicy: Sendable {
    let options: AccessOptions
    let clientKeys: ClientKeys
    /// Session creations per address.
    let creations: RateLimiter?
    /// Failed credential checks (401 answers) per kind of credential and address; a failure
    /// past the limit is answered 429, a valid credential never is.
    let failures: FailedCredentialLimit?
    private let userSecret: [UInt8]?

    init(options: AccessOptions, clientKeys: ClientKeys) {
        self.options = options
        self.clientKeys = clientKeys
        creations = options.sessionRate.map { RateLimiter($0) }
        failures = FailedCredentialLimit(admin: options.adminFailureRate, others: options.sessionRate)
        userSecret = options.userSecret.map { Array($0.utf8) }
    }

    /// The client's address: the connection's, or, from a trusted proxy, the nearest address in
    /// `X-Forwarded-For` that is not a trusted proxy. Nil for requests made without a socket.
    func clientAddress(_ request: Request) -> IPAddress? {
        guard let peer = request.peer else { return nil }
        guard !options.trustedProxies.isEmpty, isTrusted(peer) else { return peer }
        let forwarded = request.headers.values("X-Forwarded-For").flatMap { $0.split(separator: ",") }
        var client = peer
        for hop in forwarded.reversed() {
            guard let address = IPAddress(hop) else { break }  // garbage: stop at the last hop believed
            client = address
            if !isTrusted(address) { break }
        }
        return client
    }

    private func isTrusted(_ address: IPAddress) -> Bool {
        options.trustedProxies.contains { $0.contains(address) }
    }

    /// Refuses with 429 when `address` has no token in `limiter`; else takes one.
    func take(_ limiter: RateLimiter?, _ address: IPAddress?, what: String) throws(ResponseError) {
        guard let limiter, let address, let wait = limiter.take(address) else { return }
        throw Self.tooMany(what, wait: wait)
    }

    static func tooMany(_ what: String, wait: Double) -> ResponseError {
        var response = Response.problem(429, "Too many \(what) from this address; try again in \(Int(wait.rounded(.up))) s.",
                                        title: "Too Many Requests", type: ProblemType.rateLimited)
        response.headers["Retry-After"] = String(max(1, Int(wait.rounded(.up))))
        return ResponseError(response)
    }

    /// The checks of `POST /v1/sessions` that read nothing, made before anything is read: the
    /// rate, a client key where one is required and its form, the user hash. Returns the client
    /// key presented, which `checkCreationKey` looks up; nil when none was.
    func checkCreation(_ request: Request, userId: String, userHash: String?) throws(ResponseError) -> String? {
        try take(creations, clientAddress(request), what: "sessions created")
        let key = ClientKeys.presented(in: request)
        if let key {
            guard ClientKeys.isWellFormed(key) else { throw Self.unknownClientKey }
        } else if options.requireClientKey {
            throw SessionService.unauthorized("Creating a session needs a client key: X-API-Key: <key> (or Authorization: Bearer <key>).")
        }
        if let userSecret {
            guard let userHash else {
                throw SessionService.unauthorized("This server verifies user ids: send userHash, the lowercase hex HMAC-SHA256 of the userId with the app's user secret, computed by the app's backend.")
            }
            let expected = Array(Self.hex(HMAC<SHA256>.authenticationCode(for: Data(userId.utf8), using: SymmetricKey(data: userSecret))).utf8)
            guard BearerToken.constantTimeEquals(expected, Array(userHash.lowercased().utf8)) else {
                throw SessionService.unauthorized("userHash does not verify userId \(userId).")
            }
        }
        return key
    }

    /// The last check of `POST /v1/sessions` before anything is made: its client key is live.
    /// Trusted as kept when `checkedAt` is the definitions' revision read for this creation
    /// (`ClientKeys`).
    func checkCreationKey(_ key: String, checkedAt: String?) throws(ResponseError) {
        guard try clientKeys.lookup(key, checkedAt: checkedAt) != nil else { throw Self.unknownClientKey }
    }

    private static var unknownClientKey: ResponseError { SessionService.unauthorized("The client key is unknown or revoked.") }

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
