// The answer of the audit route: a page of the audit log.
import FlowStore
import JSON

/// `{entries: [{id, at, action, subject, oldVersion, newVersion, credential, detail}], next}`:
/// `next` is the `after` of the following page, null when this page is the last.
struct AuditLogAnswer: JSONAnswer {
    let entries: [AuditRecord]
    let limit: Int

    var capacity: Int { 64 + entries.count * 160 }

    func encode(into writer: inout JSONWriter) {
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
    }
}
