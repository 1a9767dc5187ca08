// Admin routes for a user's data: erasure (DELETE /v1/users/{userId}) and export.
import FlowStore
import HTTPServer
import JSON
import Logging

extension Application {
    /// Erasure and export read or destroy everything about a person: `admin` only. The roles
    /// below manage flows and releases and have no need of one person's whole history (`read`
    /// still reads a user's state, `GET /v1/users/{userId}`).
    static let userDataRole = AdminRole.admin

    static func addUserDataRoutes(to router: inout Router, userData: UserDataService, admin: AdminAuthorization, logger: Logger) {
        router.adminRoute("DELETE", "/v1/users/{userId}", admin, role: userDataRole) { request throws(ResponseError) in
            let userId = request.pathParameters["userId"] ?? ""
            let (erased, subject): (UserErasure, String)
            do throws(UserDataError) {
                (erased, subject) = try userData.erase(userId, by: admin.audit)
            } catch {
                throw problem(error, logger: logger)
            }
            return .json(erasureDocument(userId: userId, subject: subject, erased))
        }
        router.adminRoute("GET", "/v1/users/{userId}/export", admin, role: userDataRole) { request throws(ResponseError) in
            let userId = request.pathParameters["userId"] ?? ""
            let export: UserExport
            do throws(UserDataError) {
                export = try userData.export(userId)
            } catch {
                throw problem(error, logger: logger)
            }
            return .json(exportDocument(userId: userId, export, limits: userData.limits, state: userData.stateDocument(of:)))
        }
    }

    static func problem(_ error: UserDataError, logger: Logger) -> ResponseError {
        switch error {
        case .invalidUserId:
            return ResponseError(.problem(
                400, "A user id is 1 to \(SessionInput.maxUserIdLength) characters with no control characters: this one names no user.",
                type: ProblemType.malformed, errors: [.init(pointer: "userId", detail: "must be 1 to \(SessionInput.maxUserIdLength) characters with no control characters")]))
        case .notFound(let userId):
            return ResponseError(.problem(404, "Nothing is stored about user \(userId).", type: ProblemType.notFound))
        case .storage(let error):
            return SessionService.storageFailure(error, logger: logger)
        }
    }

    /// `{"userId", "auditSubject", "erased": {"users": 1, "sessions": 2, …}}`.
    static func erasureDocument(userId: String, subject: String, _ erased: UserErasure) -> [UInt8] {
        var writer = JSONWriter()
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
        return writer.takeBytes()
    }

    /// The export document (see README, "Erasure and export"). Stored JSON texts are parsed
    /// before they are written, so a damaged one is `null` rather than a broken document.
    static func exportDocument(userId: String, _ export: UserExport, limits: UserExportLimits,
                               state: (SessionRecord) -> [UInt8]?) -> [UInt8] {
        var writer = JSONWriter(capacity: 4096 + export.sessions.count * 4096)
        writer.beginObject()
        writer.writeKey("userId")
        writer.writeString(userId)
        writer.writeKey("exportedAt")
        writer.writeString(Timestamp.string())
        writer.writeKey("user")
        if let user = export.user {
            writer.beginObject()
            writer.writeKey("state")
            writeStoredJSON(user.state, into: &writer)
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
            writeSession(exported, state: state(exported.session), into: &writer)
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
        return writer.takeBytes()
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
        writeStoredJSON(session.client, into: &writer)
        for key in ["attributes", "traits"] {
            writer.writeKey(key)
            writer.writeValue(context?[key] ?? .object(JSONObject()))
        }
        writer.writeKey("flags")
        writeStoredJSON(session.flags, into: &writer)
        writer.writeKey("experiments")
        writeStoredJSON(session.experiments, into: &writer)
        writer.writeKey("flowVersions")
        writeStoredJSON(session.flowVersions, into: &writer)
        writer.writeKey("state")
        if let state { writer.writeRawValue(state) } else { writer.writeNull() }
        writer.writeKey("actions")
        writer.beginArray()
        for action in exported.actions {
            writeLogEntry(action, checked: true, into: &writer)
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
