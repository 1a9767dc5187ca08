// Creates sessions, applies actions one at a time per session, and keeps the cache and the
// database in step: nothing is acknowledged before it is committed.
//
// DESIGN: the service is split by job.
// - SessionService+creating.swift: a new session's start (flags, experiments, pins, rollout side).
// - SessionService+reading.swift: reads (state, predictions, the action log); the database is
//   read before the slot's lock is taken, never under it.
// - SessionService+acting.swift: actions, batches (+batch) and deletions, in the session's turn:
//   SessionTurn.swift is the turn as a state machine, and says which thread does what (HTTP
//   threads, the fs-commit writer thread, the read threads, event streams, the rollout queue).
// - SessionService+loading.swift and SessionCodecs.swift: a stored session and its stored forms.
// - SessionService+edge.swift, +capabilities, +users: predictions, dry runs, bundles; client
//   capabilities; the admin user routes' work. Routes call the service, never the store.
// - SessionError.swift: why the service refused or failed, in its own terms; it throws these and
//   answers waiting requests with TurnAnswer through a SessionReply. SessionError+problem.swift
//   is the HTTP edge: each case's problem response, and DeferredResponse as a SessionReply.
import JSON
import FeatureFlags
import FlowEngine
import FlowStore
import Foundation
import Logging

/// The session side of the application, independent of HTTP routing.
final class SessionService: Sendable {
    let store: any SessionRecordStore & UserDataStore
    let registry: DefinitionRegistry
    let cache: SessionCache
    let users: UserStates
    let logger: Logger
    let counters: ClusterCounters
    /// The event streams that get each version this node commits.
    let events: SessionEvents
    /// Other nodes write the database too: a cached session is checked against it before a
    /// read is answered, and a refusal made on a cached state is checked before it is sent.
    let shared: Bool
    /// Reads the definitions again from the database now (a session of a flow version another
    /// node just stored).
    let refreshDefinitions: @Sendable () -> Void
    /// Told the definitions' fingerprint a new session's user was read with (nil: the store
    /// read none), on a shared database: the definitions are read again first when it moved.
    let definitionsSeen: @Sendable (String?) -> Void
    /// The rollout in progress, if any: new sessions are put on one of its sides, and their
    /// refusals, dead ends and conversions counted (off the action's path).
    let rollouts: RolloutService?
    /// The idle limit (see `SessionExpiry`).
    let expiry: SessionExpiry
    /// Where reads go that must not run on the thread that needs them: a conflict's reload and
    /// a waiting request's reads after a commit (never on the group-commit writer thread), an
    /// older key's replay made again from the log.
    let readThreads = ReadThreads(name: "fs-session-read")
    /// This node's session leases, on a shared database whose nodes own sessions (nil on SQLite,
    /// with --single-node, or without leases): a session whose lease this node holds is read
    /// from memory, and only its owner commits it (see `SessionLeases`).
    let leases: SessionLeases?
    /// The largest stored tree (`FlowTree.storageBytes()`) an action may leave a session with.
    let maxSessionBytes: Int

    init(store: any SessionRecordStore & UserDataStore, registry: DefinitionRegistry, cacheCapacity: Int, logger: Logger, shared: Bool,
         counters: ClusterCounters = ClusterCounters(), events: SessionEvents? = nil,
         refreshDefinitions: @escaping @Sendable () -> Void = {}, definitionsSeen: @escaping @Sendable (String?) -> Void = { _ in },
         rollouts: RolloutService? = nil,
         expiry: SessionExpiry = SessionExpiry(), leases: SessionLeases? = nil,
         maxSessionBytes: Int = Application.defaultMaxSessionBytes) {
        self.leases = shared ? leases : nil
        self.maxSessionBytes = maxSessionBytes
        self.expiry = expiry
        self.rollouts = rollouts
        self.events = events ?? SessionEvents(logger: logger)
        self.store = store
        self.registry = registry
        self.cache = SessionCache(capacity: cacheCapacity)
        self.users = UserStates(capacity: cacheCapacity, shared: shared)
        self.logger = logger
        self.counters = counters
        self.shared = shared
        self.refreshDefinitions = refreshDefinitions
        self.definitionsSeen = definitionsSeen
    }

    // MARK: Helpers

    /// Runs a store call; a database failure is logged and thrown as `.storage` (a 503 that
    /// reveals no internals at the edge).
    func storage<T>(_ call: () throws -> T) throws(SessionError) -> T {
        do {
            return try call()
        } catch {
            throw Self.storageError(error, logger: logger)
        }
    }

    static func storageError(_ error: any Error, logger: Logger) -> SessionError {
        logger.error("database error", metadata: ["error": "\(error)"])
        return .storage(error)
    }

    static func etag(_ version: Int) -> String { "\"\(version)\"" }

    /// Ids are short and URL-safe; anything else is not worth a database look-up.
    static func isPlausibleId(_ id: String) -> Bool {
        // Over the string's own bytes: through the UTF-8 view's iterator this was some 1,000
        // instructions on every session request.
        var id = id
        return id.withUTF8 { bytes in
            bytes.count <= 64 && bytes.allSatisfy { byte in
                (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122) || byte == 45 || byte == 95
            }
        }
    }

    static func notFound(_ id: String) -> SessionError {
        .notFound(id)
    }
}

/// Who reads a session: a client with the bearer token it presented, or the server itself.
enum SessionAccess: Sendable {
    case bearer(String?)
    /// The server's own reads, whose caller was checked otherwise (an event stream opened with
    /// a ticket, versions another node committed).
    case server

    /// Refuses a client that presented no token at all.
    func checkPresented() throws(SessionError) {
        if case .bearer(nil) = self {
            throw .unauthorized(.missing)
        }
    }

    /// Whether this access opens a session whose token hashes to `hash`.
    func opens(_ hash: [UInt8]) -> Bool {
        switch self {
        case .server: return true
        case .bearer(let token): return token.map { BearerToken.matches($0, hash: hash) } ?? false
        }
    }

    /// Whether this access opens `session`: the token that opened it last is compared first,
    /// and a token that hashes to the session's is kept for the next request (`OpenedToken`).
    func opens(_ session: inout LiveSession) -> Bool {
        switch self {
        case .server:
            return true
        case .bearer(nil):
            return false
        case .bearer(let token?):
            if let opened = session.openedBy, opened.matches(token) { return true }
            guard BearerToken.matches(token, hash: session.tokenHash) else { return false }
            session.openedBy = OpenedToken(token)
            return true
        }
    }

    func refusal(_ id: String) -> SessionError {
        .unauthorized(.wrong(session: id))
    }
}

/// A parsed `If-Match` or `If-None-Match` header: `*`, or a list of entity tags such as `"4"`.
struct IfMatch: CustomStringConvertible {
    let any: Bool
    /// Versions of the strong tags; weak tags (`W/"4"`) are kept apart, since `If-Match` compares
    /// strongly (RFC 9110 §13.1.1) and `If-None-Match` weakly (§13.1.2).
    let versions: [Int]
    let weakVersions: [Int]
    /// The tags as sent, for messages: a tag that names no version of ours is shown as it came.
    let tags: [String]

    /// Nil when the header is not `*` or a list of quoted entity tags.
    init?(_ header: String) {
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        if trimmed == "*" {
            any = true
            versions = []
            weakVersions = []
            tags = []
            return
        }
        var strong: [Int] = []
        var weak: [Int] = []
        var sent: [String] = []
        for part in trimmed.split(separator: ",", omittingEmptySubsequences: false) {
            var tag = Substring(part.trimmingCharacters(in: .whitespaces))
            sent.append(String(tag))
            let isWeak = tag.hasPrefix("W/")
            if isWeak { tag = tag.dropFirst(2) }
            guard tag.count >= 3, tag.hasPrefix("\""), tag.hasSuffix("\"") else { return nil }
            let inner = tag.dropFirst().dropLast()
            // Another server's tag is well-formed but matches no version of ours.
            guard inner.utf8.allSatisfy({ $0 >= 0x21 && $0 != 0x22 && $0 != 0x7F }) else { return nil }
            let version = inner.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) && inner.count <= 18 ? Int(inner) ?? -1 : -1
            if isWeak { weak.append(version) } else { strong.append(version) }
        }
        any = false
        versions = strong
        weakVersions = weak
        tags = sent
    }

    /// Strong comparison, for `If-Match`.
    func matches(_ version: Int) -> Bool { any || versions.contains(version) }

    /// Weak comparison, for `If-None-Match`.
    func matchesWeakly(_ version: Int) -> Bool { any || versions.contains(version) || weakVersions.contains(version) }

    var description: String {
        any ? "*" : tags.joined(separator: ", ")
    }
}
