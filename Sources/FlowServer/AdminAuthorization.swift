// Who makes an admin request: the bootstrap admin token or a named admin key, its role, and the
// role each admin route needs.
import FlowStore
import HTTPServer
import Locking
import Logging

/// What an admin credential may do; each role may do what the roles below it may.
///
/// - `read`: admin GETs (definitions, reports, the audit log), and evaluating flags.
/// - `edit`: store flow versions that are not live, run flow tests, create and test releases,
///   reset a user's onboarding.
/// - `publish`: anything that changes what users get: make a flow version live (also
///   `PUT …?activate=true`), store a flag or an experiment (both apply to the next session at
///   once), activate, approve or roll back a release, conclude an experiment, rollouts.
/// - `admin`: manage admin keys and client keys; the bootstrap admin token has it.
public enum AdminRole: String, Sendable, CaseIterable, Comparable {
    case read, edit, publish, admin

    private var rank: Int { Self.allCases.firstIndex(of: self) ?? 0 }

    public static func < (lhs: AdminRole, rhs: AdminRole) -> Bool { lhs.rank < rhs.rank }

    /// The role a route needs unless it says otherwise: reading for GET, editing for the rest.
    static func defaultRole(for method: String) -> AdminRole {
        method == "GET" || method == "HEAD" ? .read : .edit
    }
}

/// The credential of the admin request being handled, as the audit log names it.
struct AdminIdentity: Sendable, Equatable {
    /// `admin` for the bootstrap admin token, `key:<name>` for a named admin key (names are
    /// unique among live keys, so the name and the entry's time name one key).
    let credential: String
    let role: AdminRole
    /// The key's id (`ak_…`), nil for the bootstrap token.
    let keyId: String?

    static let bootstrap = AdminIdentity(credential: "admin", role: .admin, keyId: nil)

    /// Set by `Router.adminRoute` around its handler.
    @TaskLocal static var current: AdminIdentity?
}

/// The admin routes and the role each needs, as registered (for tests and documentation).
final class AdminRouteTable: Sendable {
    private let entries = PThreadMutex<[(method: String, pattern: String, role: AdminRole)]>([])

    func add(_ method: String, _ pattern: String, _ role: AdminRole) {
        entries.withLock { $0.append((method, pattern, role)) }
    }

    var all: [(method: String, pattern: String, role: AdminRole)] { entries.withLock { $0 } }
}

/// The admin routes as a set, made once they are all registered: looked up without a lock on
/// the requests whose credential failures are counted.
struct AdminRouteSet: Sendable {
    private struct Route: Hashable {
        let method: String
        let pattern: String
    }

    private let routes: Set<Route>

    init(_ routes: [(method: String, pattern: String)]) {
        self.routes = Set(routes.map { Route(method: $0.method, pattern: $0.pattern) })
    }

    /// Whether `method` on `pattern` is an admin route (HEAD as its GET): its credential is an
    /// admin one, whose failures are counted apart (`CredentialKind.admin`).
    func contains(_ method: String, _ pattern: String) -> Bool {
        routes.contains(Route(method: method == "HEAD" ? "GET" : method, pattern: pattern))
    }
}

/// Checks the credential of admin routes: the bootstrap admin token (FLOWSTACK_ADMIN_TOKEN, or
/// the one kept hashed in the database) or a live named admin key, and its role.
///
/// Named keys and the kept bootstrap token are read from the database at every admin request
/// (one look-up by key): a revoked key, or a token replaced by `flowstack admin-token --reset`,
/// opens nothing from the moment that change is committed, on every node.
struct AdminAuthorization: Sendable {
    /// The SHA-256 of FLOWSTACK_ADMIN_TOKEN; nil when the bootstrap token is the one kept in the database.
    let configuredHash: [UInt8]?
    let store: any KeyStore
    let logger: Logger
    let routes = AdminRouteTable()

    init(token: String?, store: any KeyStore, logger: Logger) {
        configuredHash = token.map(BearerToken.hash)
        self.store = store
        self.logger = logger
    }

    /// Who is making the admin request being handled, as the audit log names it: `admin` or
    /// `key:<name>` (what releases record as their author and approver).
    var credential: String { (AdminIdentity.current ?? .bootstrap).credential }

    /// The stamp of a change made by this request's credential, for the audit log.
    var audit: AuditStamp { AuditStamp(credential: credential) }

    /// The credential presented, when it is the admin token or a live admin key; else a 401.
    func identify(_ request: Request) throws(ResponseError) -> AdminIdentity {
        guard let token = BearerToken.presented(in: request) else {
            throw SessionService.unauthorized("This admin route needs Authorization: Bearer <admin token or admin key>.")
        }
        guard let identity = try identity(of: token) else {
            throw SessionService.unauthorized(token.hasPrefix(AdminKeys.keyPrefix) ? "The admin key is not live: it was revoked, or never made."
                                                                                   : "The token is not the admin token.")
        }
        return identity
    }

    /// The admin credential `token` is: the bootstrap admin token or a live admin key; nil when
    /// it is neither (a 503 when the database cannot tell).
    func identity(of token: String) throws(ResponseError) -> AdminIdentity? {
        if token.hasPrefix(AdminKeys.keyPrefix), token.utf8.count <= 128 {
            let key: AdminKeyRecord?
            do {
                key = try store.liveAdminKey(hash: BearerToken.hash(token))
            } catch {
                throw SessionService.storageFailure(error, logger: logger)
            }
            if let key {
                return AdminIdentity(credential: "key:" + key.name, role: AdminRole(rawValue: key.role) ?? .read, keyId: key.id)
            }
        }
        // Not a live key: it may still be the bootstrap token (FLOWSTACK_ADMIN_TOKEN may be any text).
        let hash: [UInt8]?
        if let configuredHash {
            hash = configuredHash
        } else {
            do {
                hash = try store.adminTokenHash()
            } catch {
                throw SessionService.storageFailure(error, logger: logger)
            }
        }
        guard let hash, BearerToken.matches(token, hash: hash) else { return nil }
        return .bootstrap
    }

    /// The credential presented when its role is `role` or above; a 401 or a 403 otherwise.
    func authorize(_ request: Request, role: AdminRole) throws(ResponseError) -> AdminIdentity {
        let identity = try identify(request)
        guard identity.role >= role else {
            throw Self.insufficientRole(identity, needed: role, for: "\(request.method) \(request.path)")
        }
        return identity
    }

    /// Within an admin route's handler: a 403 unless this request's credential has `role`
    /// (a route whose role depends on what it is asked, as `PUT /v1/flows/{name}?activate=true`).
    func require(_ role: AdminRole, for what: String) throws(ResponseError) {
        let identity = AdminIdentity.current ?? .bootstrap
        guard identity.role >= role else { throw Self.insufficientRole(identity, needed: role, for: what) }
    }

    /// 403 `insufficient-role`, naming the role needed and the role held.
    static func insufficientRole(_ identity: AdminIdentity, needed: AdminRole, for what: String) -> ResponseError {
        ResponseError(.problem(
            403, "\(what) needs an admin key with role \(needed.rawValue) or above; \(identity.credential) has role \(identity.role.rawValue).",
            type: ProblemType.insufficientRole,
            extensions: [("requiredRole", "\"\(needed.rawValue)\""), ("role", "\"\(identity.role.rawValue)\"")]))
    }
}

extension Application {
    /// The fewest bytes a configured admin token (FLOWSTACK_ADMIN_TOKEN) may have: 32 random
    /// bytes cannot be guessed at any rate, while a short word falls to a dictionary even at
    /// the default limit of failed attempts. `flowstack serve` refuses a shorter one at start;
    /// the token it makes itself has 64.
    public static let minimumAdminTokenBytes = 32

    /// Why `token` cannot be the admin token, nil when it can.
    public static func adminTokenProblem(_ token: String) -> String? {
        let bytes = token.utf8.count
        guard bytes < minimumAdminTokenBytes else { return nil }
        return "FLOWSTACK_ADMIN_TOKEN has \(bytes) bytes; an admin token needs at least \(minimumAdminTokenBytes), "
            + "such as the 64 hex digits of `openssl rand -hex 32`, or leave it unset and serve makes one at the first start."
    }

    /// A new bootstrap admin token: 256 random bits as 64 hex digits.
    public static func newAdminToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    /// For a server started without FLOWSTACK_ADMIN_TOKEN: makes the bootstrap admin token when
    /// the database keeps none yet, keeps its SHA-256 there, and returns it (to print once);
    /// nil when one was kept already (by an earlier start, or by another node starting at the
    /// same time), which stays the token.
    public static func makeAdminTokenIfNone(store: any KeyStore) throws -> String? {
        if try store.adminTokenHash() != nil { return nil }
        let token = newAdminToken()
        let hash = BearerToken.hash(token)
        let kept = try store.keepAdminTokenHash(hash, at: Timestamp.string(), replace: false, audit: nil)
        return kept == hash ? token : nil
    }

    /// Replaces the bootstrap admin token kept in the database (the old one opens nothing from
    /// now on, on every node) and returns the new one; the audit log records `adminToken.reset`
    /// by `credential`.
    public static func resetAdminToken(store: any KeyStore, credential: String) throws -> String {
        let token = newAdminToken()
        _ = try store.keepAdminTokenHash(BearerToken.hash(token), at: Timestamp.string(), replace: true,
                                         audit: AuditStamp(credential: credential))
        return token
    }
}
