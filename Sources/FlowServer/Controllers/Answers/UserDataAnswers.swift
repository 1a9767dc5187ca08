// The answers of the user data routes: what an erasure removed, and a user's export.
import FlowStore
import JSON

/// `{"userId", "auditSubject", "erased": {"users": 1, "sessions": 2, …}}`.
struct UserErasureAnswer: JSONAnswer {
    let userId: String
    let subject: String
    let erased: UserErasure

    func encode(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey("userId")
        writer.writeString(userId)
        writer.writeKey("auditSubject")
        writer.writeString(subject)
        writer.writeKey("erased")
        writer.beginObject()
        for (name, count) in erased.counts {
            writer.writeKey(name)
            writer.writeInteger(count)
        }
        writer.endObject()
        writer.endObject()
    }
}

/// The export document (see README, "Erasure and export"). Stored JSON texts are parsed before
/// they are written, so a damaged one is `null` rather than a broken document.
struct UserExportAnswer: JSONAnswer {
    let userId: String
    let export: UserExport
    let limits: UserExportLimits
    /// The state document of an exported session, when it can be made.
    let state: (SessionRecord) -> [UInt8]?

    var capacity: Int { 4096 + export.sessions.count * 4096 }

    func encode(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey("userId")
        writer.writeString(userId)
        writer.writeKey("exportedAt")
        writer.writeString(Timestamp.string())
        writer.writeKey("user")
        if let user = export.user {
            writer.beginObject()
            writer.writeKey("state")
            Self.writeStoredJSON(user.state, into: &writer)
            writer.writeKey("createdAt")
            writer.writeString(user.createdAt)
            writer.writeKey("updatedAt")
            writer.writeString(user.updatedAt)
            writer.endObject()
        } else {
            writer.writeNull()
        }
        writer.writeKey("sessions")
        writer.beginArray()
        for exported in export.sessions {
            Self.writeSession(exported, state: state(exported.session), into: &writer)
        }
        writer.endArray()
        for (key, rows) in [("exposures", export.exposures), ("exclusions", export.exclusions)] {
            writer.writeKey(key)
            writer.beginArray()
            for row in rows {
                writer.beginObject()
                writer.writeKey("sessionId")
                writer.writeString(row.sessionId)
                writer.writeKey("experiment")
                writer.writeString(row.experiment)
                writer.writeKey("variant")
                writer.writeString(row.variant)
                if key == "exposures" {
                    writer.writeKey("onboarded")
                    writer.writeBool(row.onboarded)
                }
                writer.writeKey("at")
                writer.writeString(row.createdAt)
                writer.endObject()
            }
            writer.endArray()
        }
        writer.writeKey("features")
        writer.beginArray()
        for row in export.features {
            writer.beginObject()
            writer.writeKey("sessionId")
            writer.writeString(row.sessionId)
            writer.writeKey("feature")
            writer.writeString(row.feature)
            writer.endObject()
        }
        writer.endArray()
        writer.writeKey("rollouts")
        writer.beginArray()
        for row in export.rolloutSessions {
            writer.beginObject()
            writer.writeKey("sessionId")
            writer.writeString(row.sessionId)
            writer.writeKey("releaseId")
            writer.writeInteger(row.releaseId)
            writer.writeKey("arm")
            writer.writeString(row.arm)
            writer.writeKey("refused")
            writer.writeBool(row.marks.contains(.refused))
            writer.writeKey("deadEnd")
            writer.writeBool(row.marks.contains(.deadEnd))
            writer.writeKey("converted")
            writer.writeBool(row.marks.contains(.converted))
            writer.writeKey("at")
            writer.writeString(row.createdAt)
            writer.endObject()
        }
        writer.endArray()
        writer.writeKey("truncated")
        writer.writeBool(export.truncated)
        writer.writeKey("limits")
        writer.beginObject()
        writer.writeKey("sessions")
        writer.writeInteger(limits.sessions)
        writer.writeKey("actions")
        writer.writeInteger(limits.actions)
        writer.writeKey("rows")
        writer.writeInteger(limits.rows)
        writer.endObject()
        writer.endObject()
    }

    private static func writeSession(_ exported: ExportedSession, state: [UInt8]?, into writer: inout JSONWriter) {
        let session = exported.session
        let context = (try? JSONParser.parse(session.context, limits: .storedData))?.objectValue
        writer.beginObject()
        writer.writeKey("id")
        writer.writeString(session.id)
        writer.writeKey("createdAt")
        writer.writeString(session.createdAt)
        writer.writeKey("updatedAt")
        writer.writeString(session.updatedAt)
        writer.writeKey("version")
        writer.writeInteger(session.version)
        writer.writeKey("client")
        Self.writeStoredJSON(session.client, into: &writer)
        for key in ["attributes", "traits"] {
            writer.writeKey(key)
            writer.writeValue(context?[key] ?? .object(JSONObject()))
        }
        writer.writeKey("flags")
        Self.writeStoredJSON(session.flags, into: &writer)
        writer.writeKey("experiments")
        Self.writeStoredJSON(session.experiments, into: &writer)
        writer.writeKey("flowVersions")
        Self.writeStoredJSON(session.flowVersions, into: &writer)
        writer.writeKey("state")
        if let state { writer.writeRawValue(state) } else { writer.writeNull() }
        writer.writeKey("actions")
        writer.beginArray()
        for action in exported.actions {
            action.write(into: &writer, checked: true)
        }
        writer.endArray()
        writer.writeKey("actionsTruncated")
        writer.writeBool(exported.actionsTruncated)
        writer.writeKey("idempotencyKeys")
        writer.beginArray()
        for key in exported.idempotencyKeys {
            writer.beginObject()
            writer.writeKey("key")
            writer.writeString(key.key)
            writer.writeKey("status")
            writer.writeInteger(key.status)
            writer.writeKey("version")
            writer.writeInteger(key.version)
            writer.writeKey("at")
            writer.writeString(key.createdAt)
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
    }

    /// A stored JSON text as its value; `null` when absent or not JSON.
    static func writeStoredJSON(_ text: String?, into writer: inout JSONWriter) {
        guard let text, let value = try? JSONParser.parse(text, limits: .storedData) else { return writer.writeNull() }
        writer.writeValue(value)
    }
}
