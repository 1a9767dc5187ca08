// The keys role of a store: client keys, named admin keys and the bootstrap admin token, each
// kept as its SHA-256, never as the key.

/// Credentials as stored: client keys (what an app sends as `X-API-Key`), named admin keys
/// with a role, and the bootstrap admin token's hash. A key is live until revoked; revoking
/// keeps its row, so the audit log's names stay meaningful. Client and admin keys are kept
/// alike (see ``StoredKey``): the stores write their SQL once for both.
///
/// ```swift
/// try store.insertClientKey(ClientKeyRecord(id: "ck_1", name: "ios", keyHash: sha, createdAt: now))
/// try store.liveClientKey(hash: sha)?.name                 // "ios"
/// try store.revokeClientKey(id: "ck_1", at: now)           // then liveClientKey answers nil
/// ```
public protocol KeyStore: AnyObject, Sendable {
    /// Stores a new client key; with `audit`, appends `clientKey.create` to the audit log in
    /// the same transaction.
    func insertClientKey(_ key: ClientKeyRecord, audit: AuditStamp?) throws
    /// Every client key, live and revoked, oldest first.
    func clientKeys() throws -> [ClientKeyRecord]
    /// The live (not revoked) key whose SHA-256 is `hash`, or nil.
    func liveClientKey(hash: [UInt8]) throws -> ClientKeyRecord?
    /// Revokes key `id` at `at` (a key revoked before keeps its time); nil when there is no such
    /// key, else the key as it stands. With `audit`, a revocation (not a repeated one) appends
    /// `clientKey.revoke` to the audit log in the same transaction.
    func revokeClientKey(id: String, at: String, audit: AuditStamp?) throws -> ClientKeyRecord?

    /// Stores a new admin key unless a live key has its name (then false, nothing stored);
    /// with `audit`, appends `adminKey.create` in the same transaction.
    func insertAdminKey(_ key: AdminKeyRecord, audit: AuditStamp?) throws -> Bool
    /// Every admin key, live and revoked, oldest first.
    func adminKeys() throws -> [AdminKeyRecord]
    /// The live (not revoked) admin key whose SHA-256 is `hash`, or nil.
    func liveAdminKey(hash: [UInt8]) throws -> AdminKeyRecord?
    /// Revokes admin key `id` at `at` (a key revoked before keeps its time); nil when there is
    /// no such key, else the key as it stands. With `audit`, a revocation (not a repeated one)
    /// appends `adminKey.revoke` in the same transaction.
    func revokeAdminKey(id: String, at: String, audit: AuditStamp?) throws -> AdminKeyRecord?
    /// The SHA-256 of the bootstrap admin token kept in the database, or nil when none was made.
    func adminTokenHash() throws -> [UInt8]?
    /// Keeps `hash` as the bootstrap admin token's: always when `replace` (with `audit`,
    /// appending `adminToken.reset`), else only when none is kept yet. Returns the hash kept
    /// afterwards: a node that lost the race to make the first one gets the winner's.
    func keepAdminTokenHash(_ hash: [UInt8], at: String, replace: Bool, audit: AuditStamp?) throws -> [UInt8]
}

extension KeyStore {
    /// Stores a client key without an audit entry.
    public func insertClientKey(_ key: ClientKeyRecord) throws {
        try insertClientKey(key, audit: nil)
    }

    /// Revokes a client key without an audit entry.
    public func revokeClientKey(id: String, at: String) throws -> ClientKeyRecord? {
        try revokeClientKey(id: id, at: at, audit: nil)
    }
}

/// A key as its table keeps it. Client keys and admin keys are stored alike (a SHA-256 in
/// `key_hash`, live until `revoked_at` is set, made and revoked each with an audit entry) and
/// differ only in their table, a column or two and the names of their audit actions, which a
/// conformance says. Each store writes the SQL of keys once, for any `StoredKey` (see
/// ``StoredKeyTables``).
///
/// ```swift
/// ClientKeyRecord.table                       // "client_keys"
/// ClientKeyRecord.columns                     // ["id", "name", "key_hash", "created_at"]
/// try ClientKeyRecord(storedValues: [.text("ck_1"), .text("ios"), .bytes(sha), .text(now), nil])
/// ```
public protocol StoredKey: Sendable {
    /// Its table: `client_keys`, `admin_keys`.
    static var table: String { get }
    /// The columns a new key writes, in the order of ``storedValues``; a read adds `revoked_at`.
    /// `key_hash` holds bytes, every other column text.
    static var columns: [String] { get }
    /// The audit actions of making and of revoking one.
    static var createAction: String { get }
    static var revokeAction: String { get }
    /// Whether a live key's name must be unique (admin keys: the audit log names a key by it):
    /// a new key whose name a live key has is then not stored.
    static var liveNamesAreUnique: Bool { get }
    var id: String { get }
    var name: String { get }
    var createdAt: String { get }
    /// Its values of ``columns``, in order.
    var storedValues: [StoredKeyValue] { get }
    /// A key read back from the values of ``columns`` then `revoked_at`, in order (nil for
    /// NULL); nil when a value it needs is missing or of the other kind.
    init?(storedValues values: [StoredKeyValue?])
}

/// One value of a stored key's row: text, or the bytes of its hash.
public enum StoredKeyValue: Sendable, Equatable {
    case text(String)
    case bytes([UInt8])

    /// Whether column `name` of a key's table holds bytes (`key_hash`) rather than text.
    public static func holdsBytes(_ column: String) -> Bool { column == "key_hash" }

    public var text: String? { if case let .text(text) = self { text } else { nil } }
    public var bytes: [UInt8]? { if case let .bytes(bytes) = self { bytes } else { nil } }
}

extension StoredKey {
    /// The columns a read selects: ``columns``, then `revoked_at`.
    public static var readColumns: [String] { columns + ["revoked_at"] }
}

/// A store that writes the SQL of keys once, for any ``StoredKey``: the client-key and
/// admin-key methods of ``KeyStore`` follow from these four.
public protocol StoredKeyTables: KeyStore {
    /// Stores `key` (unless its kind keeps live names unique and a live key has its name: then
    /// false, nothing stored), with its audit entry in the same transaction when `audit` is given.
    func insertKey<Key: StoredKey>(_ key: Key, audit: AuditStamp?) throws -> Bool
    /// Every key of a kind, live and revoked, oldest first.
    func keys<Key: StoredKey>() throws -> [Key]
    /// The live key of a kind whose SHA-256 is `hash`, or nil.
    func liveKey<Key: StoredKey>(hash: [UInt8]) throws -> Key?
    /// Revokes key `id` at `at` (a key revoked before keeps its time), auditing a revocation
    /// that happened; the key as it stands, or nil when there is none.
    func revokeKey<Key: StoredKey>(id: String, at: String, audit: AuditStamp?) throws -> Key?
}

extension StoredKeyTables {
    public func insertClientKey(_ key: ClientKeyRecord, audit: AuditStamp?) throws {
        _ = try insertKey(key, audit: audit)
    }

    public func clientKeys() throws -> [ClientKeyRecord] { try keys() }

    public func liveClientKey(hash: [UInt8]) throws -> ClientKeyRecord? { try liveKey(hash: hash) }

    public func revokeClientKey(id: String, at: String, audit: AuditStamp?) throws -> ClientKeyRecord? {
        try revokeKey(id: id, at: at, audit: audit)
    }

    public func insertAdminKey(_ key: AdminKeyRecord, audit: AuditStamp?) throws -> Bool {
        try insertKey(key, audit: audit)
    }

    public func adminKeys() throws -> [AdminKeyRecord] { try keys() }

    public func liveAdminKey(hash: [UInt8]) throws -> AdminKeyRecord? { try liveKey(hash: hash) }

    public func revokeAdminKey(id: String, at: String, audit: AuditStamp?) throws -> AdminKeyRecord? {
        try revokeKey(id: id, at: at, audit: audit)
    }
}

extension ClientKeyRecord: StoredKey {
    public static let table = "client_keys"
    public static let columns = ["id", "name", "key_hash", "created_at"]
    public static let createAction = AuditAction.clientKeyCreate
    public static let revokeAction = AuditAction.clientKeyRevoke
    public static let liveNamesAreUnique = false

    public var storedValues: [StoredKeyValue] { [.text(id), .text(name), .bytes(keyHash), .text(createdAt)] }

    public init?(storedValues values: [StoredKeyValue?]) {
        guard values.count == 5, let id = values[0]?.text, let name = values[1]?.text, let hash = values[2]?.bytes,
              let created = values[3]?.text else { return nil }
        self.init(id: id, name: name, keyHash: hash, createdAt: created, revokedAt: values[4]?.text)
    }
}

extension AdminKeyRecord: StoredKey {
    public static let table = "admin_keys"
    public static let columns = ["id", "name", "role", "key_hash", "created_at", "created_by"]
    public static let createAction = AuditAction.adminKeyCreate
    public static let revokeAction = AuditAction.adminKeyRevoke
    public static let liveNamesAreUnique = true

    public var storedValues: [StoredKeyValue] {
        [.text(id), .text(name), .text(role), .bytes(keyHash), .text(createdAt), .text(createdBy)]
    }

    public init?(storedValues values: [StoredKeyValue?]) {
        guard values.count == 7, let id = values[0]?.text, let name = values[1]?.text, let role = values[2]?.text,
              let hash = values[3]?.bytes, let created = values[4]?.text, let by = values[5]?.text else { return nil }
        self.init(id: id, name: name, role: role, keyHash: hash, createdAt: created, createdBy: by, revokedAt: values[6]?.text)
    }
}
