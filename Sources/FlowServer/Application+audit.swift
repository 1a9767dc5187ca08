// The admin route that reads the audit log: every admin change, oldest first, paged by id.
import FlowStore
import HTTPServer
import JSON
import Logging

extension Application {
    static let defaultAuditPage = 100
    static let maxAuditPage = 1000

    static func addAuditRoutes(to router: inout Router, store: any FlowStore, admin: AdminAuthorization, logger: Logger) {
        router.adminRoute("GET", "/v1/audit", admin) { request throws(ResponseError) in
            let after = try Self.integerQuery(request, "after", default: 0, range: 0...Int.max)
            let limit = try Self.integerQuery(request, "limit", default: Self.defaultAuditPage, range: 1...Self.maxAuditPage)
            let entries = try Self.store(logger) { try store.auditLog(after: after, limit: limit) }
            return .json(Self.auditDocument(entries, limit: limit))
        }
    }

    /// `{entries: [{id, at, action, subject, oldVersion, newVersion, credential, detail}], next}`:
    /// `next` is the `after` of the following page, null when this page is the last.
    static func auditDocument(_ entries: [AuditRecord], limit: Int) -> [UInt8] {
        var writer = JSONWriter(capacity: 64 + entries.count * 160)
        writer.beginObject()
        writer.writeKey("entries")
        writer.beginArray()
        for entry in entries {
            writer.beginObject()
            writer.writeKey("id")
            writer.writeInteger(entry.id)
            writer.writeKey("at")
            writer.writeString(entry.at)
            writer.writeKey("action")
            writer.writeString(entry.action)
            writer.writeKey("subject")
            writer.writeString(entry.subject)
            writer.writeKey("oldVersion")
            writer.writeOptionalInteger(entry.oldVersion)
            writer.writeKey("newVersion")
            writer.writeOptionalInteger(entry.newVersion)
            writer.writeKey("credential")
            writer.writeString(entry.credential)
            writer.writeKey("detail")
            writer.writeOptionalString(entry.detail)
            writer.endObject()
        }
        writer.endArray()
        writer.writeKey("next")
        writer.writeOptionalInteger(entries.count == limit ? entries.last?.id : nil)
        writer.endObject()
        return writer.takeBytes()
    }
}
