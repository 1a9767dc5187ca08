// Client keys: what ships inside an app. They may create sessions and evaluate flags, nothing else.
import FlowStore
import HTTPServer
import JSON
import Logging

/// A live client key, as a route that accepts one sees it.
struct ClientKey: Sendable, Equatable {
    let id: String
    let name: String
}

/// Checks client keys against the database, on every use: a revoked key opens nothing from the
/// moment its revocation is committed, on every node (no cache to go stale).
///
/// ```swift
/// if let key = ClientKeys.presented(in: request), let live = try keys.lookup(key) { … }
/// ```
final class ClientKeys: Sendable {
    let store: any KeyStore
    let logger: Logger

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
    func lookup(_ key: String) throws(ResponseError) -> ClientKey? {
        guard key.hasPrefix(Self.keyPrefix), key.utf8.count <= 128 else { return nil }
        do {
            return try store.liveClientKey(hash: BearerToken.hash(key)).map { ClientKey(id: $0.id, name: $0.name) }
        } catch {
            throw SessionService.storageFailure(error, logger: logger)
        }
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

    static func document(_ record: ClientKeyRecord, key: String? = nil) -> JSONValue {
        var object: JSONObject = ["id": .string(record.id), "name": .string(record.name)]
        if let key { object["key"] = .string(key) }
        object["createdAt"] = .string(record.createdAt)
        object["revokedAt"] = record.revokedAt.map { .string($0) } ?? .null
        return .object(object)
    }
}

extension Application {
    static func addClientKeyRoutes(to router: inout Router, keys: ClientKeys, admin: AdminAuthorization, limits: BodyLimits) {
        router.adminRoute("POST", "/v1/client-keys", admin, role: .admin) { request throws(ResponseError) in
            let json = try request.jsonBody(limits).get()
            guard let object = json.objectValue else {
                throw ResponseError(.problem(400, "The body must be an object {name}; found \(json.typeName).", type: ProblemType.malformed))
            }
            var errors: [ProblemDetails.FieldError] = []
            for key in object.keys where key != "name" {
                errors.append(.init(pointer: JSONPointer([key]).description, detail: "unknown field; expected name"))
            }
            let name = object["name"]?.stringValue ?? ""
            if name.isEmpty || name.unicodeScalars.count > 100 || name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                errors.append(.init(pointer: "/name", detail: "is required: 1 to 100 characters with no control characters, such as \"ios app\""))
            }
            guard errors.isEmpty else {
                throw ResponseError(.problem(400, "The client key request has \(errors.count) invalid field\(errors.count == 1 ? "" : "s").",
                                             type: ProblemType.malformed, errors: errors))
            }
            let (record, key) = try keys.create(name: name, audit: admin.audit)
            var response = Response.json(Array(ClientKeys.document(record, key: key).jsonText.utf8), status: 201)
            response.headers["Location"] = "/v1/client-keys/\(record.id)"
            response.headers["Cache-Control"] = "no-store"
            return response
        }

        router.adminRoute("GET", "/v1/client-keys", admin) { _ throws(ResponseError) in
            let records: [ClientKeyRecord]
            do {
                records = try keys.store.clientKeys()
            } catch {
                throw SessionService.storageFailure(error, logger: keys.logger)
            }
            let document = JSONValue.object(["clientKeys": .array(records.map { ClientKeys.document($0) })])
            return .json(Array(document.jsonText.utf8))
        }

        router.adminRoute("DELETE", "/v1/client-keys/{id}", admin, role: .admin) { request throws(ResponseError) in
            let id = request.pathParameters["id"] ?? ""
            let revoked: ClientKeyRecord?
            do {
                // Ids are short and URL-safe, like session ids: anything else names no key and is
                // not worth a look-up (a NUL would not even reach PostgreSQL).
                revoked = SessionService.isPlausibleId(id) ? try keys.store.revokeClientKey(id: id, at: Timestamp.string(), audit: admin.audit) : nil
            } catch {
                throw SessionService.storageFailure(error, logger: keys.logger)
            }
            guard revoked != nil else {
                throw ResponseError(.problem(404, "There is no client key \(id).", type: ProblemType.notFound))
            }
            return Response(status: 204)
        }
    }
}
