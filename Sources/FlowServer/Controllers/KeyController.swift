// The key routes: client keys (what ships inside an app) and named admin keys (who may change
// what), made, listed and revoked by an admin-role credential. A key is shown once, at creation.
import FlowStore
import HTTPServer
import JSON

/// `POST/GET /v1/client-keys`, `DELETE /v1/client-keys/{id}`, and the same for `/v1/admin-keys`.
struct KeyController: Controller {
    let clientKeys: ClientKeys
    let adminKeys: AdminKeys
    let admin: AdminAuthorization
    let limits: BodyLimits

    func register(on router: inout Router) {
        router.adminRoute("POST", "/v1/client-keys", admin, role: .admin, limits: limits, createClientKey)
        router.adminRoute("GET", "/v1/client-keys", admin, limits: limits, clientKeyList)
        router.adminRoute("DELETE", "/v1/client-keys/{id}", admin, role: .admin, limits: limits, revokeClientKey)
        router.adminRoute("POST", "/v1/admin-keys", admin, role: .admin, limits: limits, createAdminKey)
        router.adminRoute("GET", "/v1/admin-keys", admin, role: .admin, limits: limits, adminKeyList)
        router.adminRoute("DELETE", "/v1/admin-keys/{id}", admin, role: .admin, limits: limits, revokeAdminKey)
    }

    func createClientKey(_ request: NewKeyRequest) throws(ResponseError) -> KeyAnswer {
        let (record, key) = try clientKeys.create(name: request.name, audit: admin.audit)
        return KeyAnswer(client: record, key: key)
    }

    func clientKeyList(_ request: Request) throws(ResponseError) -> KeyListAnswer {
        KeyListAnswer(client: try clientKeys.all())
    }

    func revokeClientKey(_ request: KeyByID) throws(ResponseError) -> NoContent {
        guard try clientKeys.revoke(request.id, audit: admin.audit) != nil else {
            throw ResponseError(.problem(404, "There is no client key \(request.id).", type: ProblemType.notFound))
        }
        return NoContent()
    }

    func createAdminKey(_ request: NewKeyRequest) throws(ResponseError) -> KeyAnswer {
        guard let role = request.role else { throw ResponseError(.problem(500, "An admin key request without its role.")) }
        guard let (record, key) = try adminKeys.create(name: request.name, role: role, by: admin.credential, audit: admin.audit) else {
            throw ResponseError(.problem(409, "A live admin key is named \(request.name) already: revoke it first, or choose another name.",
                                         type: ProblemType.nameInUse, errors: [.init(pointer: "/name", detail: "is the name of a live key")]))
        }
        return KeyAnswer(admin: record, key: key)
    }

    func adminKeyList(_ request: Request) throws(ResponseError) -> KeyListAnswer {
        KeyListAnswer(admin: try adminKeys.all())
    }

    func revokeAdminKey(_ request: KeyByID) throws(ResponseError) -> NoContent {
        guard try adminKeys.revoke(request.id, audit: admin.audit) != nil else {
            throw ResponseError(.problem(404, "There is no admin key \(request.id).", type: ProblemType.notFound))
        }
        return NoContent()
    }
}

/// The body of a new key: `{name}` for a client key, `{name, role}` for an admin key; a 400
/// lists every invalid field at once.
struct NewKeyRequest: RouteRequest {
    let name: String
    /// The admin key's role; nil for a client key.
    let role: AdminRole?

    init(_ request: Request, limits: BodyLimits) throws(ResponseError) {
        let forAdmin = request.path.hasPrefix("/v1/admin-keys")
        let json = try request.jsonBody(limits).get()
        let fields = forAdmin ? "{name, role}" : "{name}"
        guard let object = json.objectValue else {
            throw ResponseError(.problem(400, "The body must be an object \(fields); found \(json.typeName).", type: ProblemType.malformed))
        }
        var errors: [ProblemDetails.FieldError] = []
        let known: Set<String> = forAdmin ? ["name", "role"] : ["name"]
        for key in object.keys where !known.contains(key) {
            errors.append(.init(pointer: JSONPointer([key]).description,
                                detail: forAdmin ? "unknown field; expected name or role" : "unknown field; expected name"))
        }
        let name = object["name"]?.stringValue ?? ""
        if name.isEmpty || name.unicodeScalars.count > 100 || name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            let example = forAdmin ? "ci-deploy" : "ios app"
            errors.append(.init(pointer: "/name", detail: "is required: 1 to 100 characters with no control characters, such as \"\(example)\""))
        }
        var role: AdminRole?
        if forAdmin {
            role = object["role"]?.stringValue.flatMap(AdminRole.init(rawValue:))
            if role == nil {
                let roles = AdminRole.allCases.map(\.rawValue).joined(separator: ", ")
                errors.append(.init(pointer: "/role", detail: "is required: one of \(roles)"))
            }
        }
        guard errors.isEmpty else {
            let kind = forAdmin ? "admin" : "client"
            throw ResponseError(.problem(400, "The \(kind) key request has \(errors.count) invalid field\(errors.count == 1 ? "" : "s").",
                                         type: ProblemType.malformed, errors: errors))
        }
        self.name = name
        self.role = role
    }
}

/// A key named by its id in the path.
struct KeyByID: RouteRequest {
    let id: String

    init(_ request: Request, limits: BodyLimits) {
        id = request.parameter("id")
    }
}
