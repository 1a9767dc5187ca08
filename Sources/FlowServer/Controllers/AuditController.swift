// The audit route: every admin change, oldest first, paged by id.
import FlowStore
import HTTPServer
import Logging

/// `GET /v1/audit?after=&limit=`.
struct AuditController: Controller {
    static let defaultPage = 100
    static let maxPage = 1000

    let store: any AuditStore
    let admin: AdminAuthorization
    let limits: BodyLimits
    let logger: Logger

    func register(on router: inout Router) {
        router.adminRoute("GET", "/v1/audit", admin, limits: limits, log)
    }

    func log(_ request: AuditRequest) throws(ResponseError) -> AuditLogAnswer {
        let entries = try Application.store(logger) { try store.auditLog(after: request.after, limit: request.limit) }
        return AuditLogAnswer(entries: entries, limit: request.limit)
    }
}

/// A page of the audit log: `?after=` (an entry id) and `?limit=`.
struct AuditRequest: RouteRequest {
    let after: Int
    let limit: Int

    init(_ request: Request, limits: BodyLimits) throws(ResponseError) {
        after = try request.integerQuery("after", default: 0, range: 0...Int.max)
        limit = try request.integerQuery("limit", default: AuditController.defaultPage, range: 1...AuditController.maxPage)
    }
}
