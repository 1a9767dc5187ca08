// The keys role of a store: client keys, named admin keys and the bootstrap admin token, each
// kept as its SHA-256, never as the key.

/// Credentials as stored: client keys (what an app sends as `X-Client-Key`), named admin keys
/// with a role, and the bootstrap admin token's hash. A key is live until revoked; revoking
/// keeps its row, so the audit log's names stay meaningful.
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

