// Named admin keys: made, listed and revoked over the API by an admin-role credential.
import FlowStore
import HTTPServer
import JSON

/// Named admin keys: each has a role (see `AdminRole`), is shown once at creation, and is kept
/// only as its SHA-256.
///
/// ```sh
/// curl -s localhost:8080/v1/admin-keys -H "Authorization: Bearer $ADMIN" -d '{"name":"ci-deploy","role":"publish"}'
/// ```
enum AdminKeys {
    /// Every admin key starts so, which tells it from the bootstrap token, a client key or a session token.
    static let keyPrefix = "fsa_"

    static func document(_ record: AdminKeyRecord, key: String? = nil) -> JSONValue {
        var object: JSONObject = ["id": .string(record.id), "name": .string(record.name), "role": .string(record.role)]
        if let key { object["key"] = .string(key) }
        object["createdAt"] = .string(record.createdAt)
        object["createdBy"] = .string(record.createdBy)
        object["revokedAt"] = record.revokedAt.map { .string($0) } ?? .null
        return .object(object)
    }

    /// The request `{name, role}` of a new key, or a 400 listing every invalid field.
    static func request(_ json: JSONValue) throws(ResponseError) -> (name: String, role: AdminRole) {
        guard let object = json.objectValue else {
            throw ResponseError(.problem(400, "The body must be an object {name, role}; found \(json.typeName).", type: ProblemType.malformed))
        }
        var errors: [ProblemDetails.FieldError] = []
        for key in object.keys where key != "name" && key != "role" {
            errors.append(.init(pointer: JSONPointer([key]).description, detail: "unknown field; expected name or role"))
        }
        let name = object["name"]?.stringValue ?? ""
        if name.isEmpty || name.unicodeScalars.count > 100 || name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            errors.append(.init(pointer: "/name", detail: "is required: 1 to 100 characters with no control characters, such as \"ci-deploy\""))
        }
        let roles = AdminRole.allCases.map(\.rawValue).joined(separator: ", ")
        let role = object["role"]?.stringValue.flatMap(AdminRole.init(rawValue:))
        if role == nil {
            errors.append(.init(pointer: "/role", detail: "is required: one of \(roles)"))
        }
        guard errors.isEmpty, let role else {
            throw ResponseError(.problem(400, "The admin key request has \(errors.count) invalid field\(errors.count == 1 ? "" : "s").",
                                         type: ProblemType.malformed, errors: errors))
        }
        return (name, role)
    }
}

extension Application {
    static func addAdminKeyRoutes(to router: inout Router, admin: AdminAuthorization, limits: BodyLimits) {
        router.adminRoute("POST", "/v1/admin-keys", admin, role: .admin) { request throws(ResponseError) in
            let (name, role) = try AdminKeys.request(try request.jsonBody(limits).get())
            let key = AdminKeys.keyPrefix + BearerToken.generate()
            var generator = SystemRandomNumberGenerator()
            let id = "ak_" + BearerToken.base64URL((0..<9).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let record = AdminKeyRecord(id: id, name: name, role: role.rawValue, keyHash: BearerToken.hash(key),
                                        createdAt: Timestamp.string(), createdBy: admin.credential)
            let made: Bool
            do {
                made = try admin.store.insertAdminKey(record, audit: admin.audit)
            } catch {
                throw SessionService.storageFailure(error, logger: admin.logger)
            }
            guard made else {
                throw ResponseError(.problem(409, "A live admin key is named \(name) already: revoke it first, or choose another name.",
                                             type: ProblemType.nameInUse, errors: [.init(pointer: "/name", detail: "is the name of a live key")]))
            }
            var response = Response.json(Array(AdminKeys.document(record, key: key).jsonText.utf8), status: 201)
            response.headers["Location"] = "/v1/admin-keys/\(record.id)"
            response.headers["Cache-Control"] = "no-store"
            return response
        }

        router.adminRoute("GET", "/v1/admin-keys", admin, role: .admin) { _ throws(ResponseError) in
            let records: [AdminKeyRecord]
            do {
                records = try admin.store.adminKeys()
            } catch {
                throw SessionService.storageFailure(error, logger: admin.logger)
            }
            let document = JSONValue.object(["adminKeys": .array(records.map { AdminKeys.document($0) })])
            return .json(Array(document.jsonText.utf8))
        }

        router.adminRoute("DELETE", "/v1/admin-keys/{id}", admin, role: .admin) { request throws(ResponseError) in
            let id = request.pathParameters["id"] ?? ""
            let revoked: AdminKeyRecord?
            do {
                revoked = SessionService.isPlausibleId(id)
                    ? try admin.store.revokeAdminKey(id: id, at: Timestamp.string(), audit: admin.audit) : nil
            } catch {
                throw SessionService.storageFailure(error, logger: admin.logger)
            }
            guard revoked != nil else {
                throw ResponseError(.problem(404, "There is no admin key \(id).", type: ProblemType.notFound))
            }
            return Response(status: 204)
        }
    }
}
