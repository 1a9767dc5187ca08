// Named admin keys: made, listed and revoked over the API by an admin-role credential.
import FlowStore
import HTTPServer
import Logging

/// Named admin keys: each has a role (see `AdminRole`), is shown once at creation, and is kept
/// only as its SHA-256 (the routes are `KeyController`'s).
///
/// ```sh
/// curl -s localhost:8080/v1/admin-keys -H "Authorization: Bearer $ADMIN" -d '{"name":"ci-deploy","role":"publish"}'
/// ```
struct AdminKeys: Sendable {
    /// Every admin key starts so, which tells it from the bootstrap token, a client key or a session token.
    static let keyPrefix = "fsa_"

    let store: any KeyStore
    let logger: Logger

    /// Makes a key named `name` with `role`, made by `credential`; returns its record and the
    /// key itself (shown once), or nil when a live key has that name already.
    func create(name: String, role: AdminRole, by credential: String,
                audit: AuditStamp?) throws(ResponseError) -> (record: AdminKeyRecord, key: String)? {
        let key = Self.keyPrefix + BearerToken.generate()
        var generator = SystemRandomNumberGenerator()
        let id = "ak_" + BearerToken.base64URL((0..<9).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let record = AdminKeyRecord(id: id, name: name, role: role.rawValue, keyHash: BearerToken.hash(key),
                                    createdAt: Timestamp.string(), createdBy: credential)
        let made = try Application.store(logger) { try store.insertAdminKey(record, audit: audit) }
        return made ? (record, key) : nil
    }

    /// Every admin key, live and revoked, oldest first.
    func all() throws(ResponseError) -> [AdminKeyRecord] {
        try Application.store(logger) { try store.adminKeys() }
    }

    /// Revokes key `id` (recorded in the audit log); nil when there is no such key.
    func revoke(_ id: String, audit: AuditStamp?) throws(ResponseError) -> AdminKeyRecord? {
        guard SessionService.isPlausibleId(id) else { return nil }
        return try Application.store(logger) { try store.revokeAdminKey(id: id, at: Timestamp.string(), audit: audit) }
    }
}
