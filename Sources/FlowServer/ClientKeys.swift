// Client keys: what ships inside an app. They may create sessions and evaluate flags, nothing else.
import FlowStore
import HTTPServer
import Logging
import Synchronization

/// A live client key, as a route that accepts one sees it.
struct ClientKey: Sendable, Equatable {
    let id: String
    let name: String
}

/// Checks client keys against the database: a revoked key opens nothing from the moment its
/// revocation is committed, on every node. On PostgreSQL, a flag evaluation is answered after a
/// read of the definitions' revision begun after it came (`checkedAt`), on a node among several
/// and on a lone one (`--single-node`) alike, and a new session's key is checked after its user
/// was read with that revision (on a lone node, a user it does not hold); every change to a
/// client key raises it (migration 19). A key looked up under that revision is kept, live or not,
/// and trusted by later requests checked at the same revision (or at an earlier one, which
/// another thread read before it), without a round trip. Everywhere else (SQLite, and a lone
/// node's creation for a user it holds), every use reads the key.
///
/// ```swift
/// if let key = ClientKeys.presented(in: request), let live = try keys.lookup(key) { … }
/// ```
final class ClientKeys: Sendable {
    let store: any KeyStore
    let logger: Logger
    /// Keys looked up while the definitions' revision was `revision`, by their hashes: the live
    /// ones, and those that open nothing (so that a key repeated by a client that lost its own is
    /// not a round trip each).
    private let kept = Mutex<(revision: String, live: [[UInt8]: ClientKey], refused: Set<[UInt8]>)>(("", [:], []))

    /// The definitions' revision (`r` and its number, as the fingerprint reads it) that a read
    /// begun after the current request came found: set while a flag evaluation is answered on
    /// PostgreSQL. Nil elsewhere, and when the fingerprint was not a revision (then every use
    /// reads the key).
    @TaskLocal static var checkedAt: String?

    /// The most keys kept under one revision, live and refused each; past it, keys are looked up.
    static let keptLimit = 10_000

    init(store: any KeyStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// The key in `X-API-Key`, or else in `Authorization: Bearer` when that is a client key (it
    /// may carry a session or admin token instead, which are not keys presented).
    static func presented(in request: Request) -> String? {
        if let key = request.headers["X-API-Key"] { return key.trimmingCharacters(in: .whitespaces) }
        guard let bearer = BearerToken.presented(in: request), bearer.hasPrefix(keyPrefix) else { return nil }
        return bearer
    }

    /// The key's record when `key` is a live client key; a 503 problem when the database fails.
    /// `checkedAt`: the definitions' revision a read begun after the request came found (a new
    /// session's, read with its user), when not the task's.
    func lookup(_ key: String, checkedAt: String? = nil) throws(ResponseError) -> ClientKey? {
        guard Self.isWellFormed(key) else { return nil }
        let hash = BearerToken.hash(key)
        let revision = (checkedAt ?? Self.checkedAt).flatMap { $0.hasPrefix("r") ? $0 : nil }
        // The revision the keys are kept under, when this request's is earlier (read by another
        // thread before the kept one was, and handed over later): what is true at a later read
        // is true for a request that came before its own earlier one, and a key looked up now
        // is looked up after the kept revision was read.
        var keptAt = revision
        if let revision {
            let known: ClientKey?? = kept.withLock { kept in
                if kept.revision != revision {
                    if DefinitionsRevision.isEarlier(revision, than: kept.revision) {
                        keptAt = kept.revision
                    } else {
                        kept = (revision, [:], [])  // whatever is looked up next
                    }
                }
                if let live = kept.live[hash] { return .some(live) }
                return kept.refused.contains(hash) ? .some(nil) : nil
            }
            if let known { return known }
        }
        let live: ClientKey?
        do {
            live = try store.liveClientKey(hash: hash).map { ClientKey(id: $0.id, name: $0.name) }
        } catch {
            throw SessionService.storageFailure(error, logger: logger)
        }
        if let keptAt {
            // Read after the revision was: true for as long as the revision stays.
            kept.withLock { kept in
                guard kept.revision == keptAt else { return }
                if let live {
                    if kept.live.count < Self.keptLimit { kept.live[hash] = live }
                } else if kept.refused.count < Self.keptLimit {
                    kept.refused.insert(hash)
                }
            }
        }
        return live
    }

    /// Makes a key named `name`; returns its record and the key itself (shown once).
    func create(name: String, audit: AuditStamp?) throws(ResponseError) -> (record: ClientKeyRecord, key: String) {
        let key = Self.keyPrefix + BearerToken.generate()
        var generator = SystemRandomNumberGenerator()
        let id = "ck_" + BearerToken.base64URL((0..<9).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let record = ClientKeyRecord(id: id, name: name, keyHash: BearerToken.hash(key), createdAt: Timestamp.string())
        do {
            try store.insertClientKey(record, audit: audit)
        } catch {
            throw SessionService.storageFailure(error, logger: logger)
        }
        return (record, key)
    }

    /// Every client key starts so, which tells it from a session token or the admin token.
    static let keyPrefix = "fsk_"

    /// Whether `key` could be a client key at all (anything else opens nothing, unread).
    static func isWellFormed(_ key: String) -> Bool {
        key.hasPrefix(keyPrefix) && key.utf8.count <= 128
    }

    /// Whether a flag evaluation (OFREP, or the GrowthBook payload with the key in its path)
    /// presents something that could be a client key. One that does not is refused unread, so it
    /// need not wait for the definitions' shared read either: a client without a key, or with a
    /// session or admin token where a key belongs, costs the database nothing.
    static func mayBePresented(in request: Request) -> Bool {
        if request.path.hasPrefix(Application.growthBookPrefix) {
            let inPath = request.path.dropFirst(Application.growthBookPrefix.count)
            // Escaped, it is read as the route decodes it.
            return inPath.contains("%") || isWellFormed(String(inPath))
        }
        return presented(in: request).map(isWellFormed) ?? false
    }

    /// Every client key, live and revoked, oldest first.
    func all() throws(ResponseError) -> [ClientKeyRecord] {
        try Application.store(logger) { try store.clientKeys() }
    }

    /// Revokes key `id` (recorded in the audit log); nil when there is no such key.
    func revoke(_ id: String, audit: AuditStamp?) throws(ResponseError) -> ClientKeyRecord? {
        // Ids are short and URL-safe, like session ids: anything else names no key and is not
        // worth a look-up (a NUL would not even reach PostgreSQL).
        guard SessionService.isPlausibleId(id) else { return nil }
        return try Application.store(logger) { try store.revokeClientKey(id: id, at: Timestamp.string(), audit: audit) }
    }
}
