// Failed credential checks, counted per kind of credential and client address; a valid credential is never refused.
import HTTPServer
import Locking

/// The credentials whose failed checks are counted apart: a client guessing session tokens
/// spends nothing of what the same address may get wrong with an admin token, and the other way
/// round.
enum CredentialKind: String, Sendable, CaseIterable {
    /// The bootstrap admin token or a named admin key, on an admin route.
    case admin
    /// A session's own token.
    case session
    /// A client key: `POST /v1/sessions`, OFREP, the GrowthBook payload (`X-API-Key`, or in the path).
    case clientKey
    /// An event-stream ticket (`?ticket=`).
    case ticket

    /// The credential a request presents, by the route it reached: an admin route's is an admin
    /// credential; elsewhere a ticket, a client key or a session token, by where it is carried.
    static func of(_ request: Request, isAdminRoute: Bool) -> CredentialKind {
        if isAdminRoute { return .admin }
        if !request.query.isEmpty, request.queryValue("ticket") != nil { return .ticket }
        if request.path.hasPrefix("/v1/sessions/") { return .session }  // the session routes, at once
        if request.headers["X-API-Key"] != nil || request.path.hasPrefix(Application.growthBookPrefix)
            || request.path.hasPrefix("/ofrep/") || (request.method == "POST" && request.path == "/v1/sessions") {
            return .clientKey
        }
        return .session
    }
}

/// Token buckets of failed credential checks, one table per `CredentialKind`, keyed by the
/// client's address.
///
/// A credential is checked first and a valid one is always served: only a check that fails
/// (a 401 that is not `session-expired`) takes a token, and one that fails when the bucket is
/// empty is answered 429 with `Retry-After` instead of 401. So a client behind the same load
/// balancer, or the same NAT, as a guesser keeps working with its own token, as GitHub's and
/// Stripe's APIs do; the guesser learns nothing more than a 401 would tell, and no sooner.
///
/// ```swift
/// let limit = FailedCredentialLimit(admin: .defaultAdminFailures, others: nil)
/// let answer = limit?.answer(response, kind: .admin, address: address)  // 401, or 429 past the limit
/// ```
final class FailedCredentialLimit: Sendable {
    private let limiters: [CredentialKind: RateLimiter]

    /// Nil when neither kind of limit is set: `admin` for admin credentials, `others` for
    /// session tokens, client keys and tickets (`--session-rate`). Each kind's table holds a
    /// quarter of `capacity` addresses, so all four together are bounded as one table was.
    init?(admin: RateLimit?, others: RateLimit?, capacity: Int = 65_536) {
        var limiters: [CredentialKind: RateLimiter] = [:]
        for kind in CredentialKind.allCases {
            if let limit = kind == .admin ? admin : others {
                limiters[kind] = RateLimiter(limit, capacity: capacity / CredentialKind.allCases.count)
            }
        }
        guard !limiters.isEmpty else { return nil }
        self.limiters = limiters
    }

    /// The limit on failed checks of `kind`, nil when they are not limited.
    func limit(_ kind: CredentialKind) -> RateLimit? { limiters[kind]?.limit }

    /// Whether `address` may fail a check of `kind` once more now (no token is taken).
    func allowsFailure(_ kind: CredentialKind, from address: IPAddress) -> Bool {
        limiters[kind]?.hasTokens(address) ?? true
    }

    /// The answer to give once a credential of `kind` was checked: `response` itself unless
    /// it is a counted failure (a 401 other than an expired session's, whose holder is not
    /// guessing), which takes a token from the address's bucket; past the limit, a 429 with
    /// `Retry-After` in its place.
    func answer(_ response: Response, kind: CredentialKind, address: IPAddress) -> Response {
        guard response.status == 401, let limiter = limiters[kind], response.credentialRefusal != .expired,
              let wait = limiter.take(address) else { return response }
        return AccessPolicy.tooMany("failed \(kind.described) checks", wait: wait).response
    }

    /// Addresses held in every table, the most they may hold, evictions (for `/metrics`).
    var figures: CacheFigures {
        limiters.values.reduce(CacheFigures(entries: 0, capacity: 0, evictions: 0)) { sum, limiter in
            let figures = limiter.figures
            return CacheFigures(entries: sum.entries + figures.entries, capacity: sum.capacity + figures.capacity,
                                evictions: (sum.evictions ?? 0) + (figures.evictions ?? 0))
        }
    }
}

extension CredentialKind {
    /// As a 429's detail names it.
    var described: String {
        switch self {
        case .admin: "admin token"
        case .session: "session token"
        case .clientKey: "client key"
        case .ticket: "stream ticket"
        }
    }
}

extension RateLimit {
    /// Failed admin checks allowed by default: 10 at once, then one more every 6 seconds (10 a
    /// minute), per address. A real admin token is 32 bytes or more (`flowstack serve` refuses
    /// a shorter one), so the limit is not what keeps it from being guessed: it keeps a
    /// script with a wrong token, or a scanner, from filling the logs and the database's
    /// admin-key look-ups.
    public static let defaultAdminFailures = RateLimit(rate: 1.0 / 6, burst: 10)
}
