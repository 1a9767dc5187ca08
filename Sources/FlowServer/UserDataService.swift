// Requests about one user's data: erase everything stored about them, or export it.
import Crypto
import FlowEngine
import FlowStore
import Foundation
import Logging

/// Why a request about a user's data was not done; the routes turn each into a problem.
enum UserDataError: Error {
    /// Not a user id any session could have been made for (see `SessionInput.isValidUserId`).
    case invalidUserId(String)
    /// Nothing is stored about the user.
    case notFound(String)
    /// The database failed the request.
    case storage(any Error)
}

/// Erasure and export of one user's data, for erasure and access requests.
///
/// ```swift
/// let (erased, subject) = try service.erase("u-1", by: AuditStamp(credential: "admin"))
/// erased.sessions    // the sessions removed; the audit log has `user.erase` on `subject`
/// try service.export("u-1")   // throws .notFound once erased
/// ```
final class UserDataService: Sendable {
    let store: any UserDataStore
    /// The sessions of this node, whose caches and streams forget an erased user.
    let sessions: SessionService
    let limits: UserExportLimits

    init(store: any UserDataStore, sessions: SessionService, limits: UserExportLimits = UserExportLimits()) {
        self.store = store
        self.sessions = sessions
        self.limits = limits
    }

    /// Erases user `userId` in one transaction (see `UserDataStore.eraseUser`), then evicts
    /// their sessions and state from this node's caches; on nodes that own sessions under leases,
    /// it answers after a lease's length, once no other node answers their reads from memory.
    /// Erasing a user with nothing stored
    /// erases nothing and is recorded all the same: the audit log shows every request.
    /// Returns the counts and the subject of the audit entry.
    func erase(_ userId: String, by audit: AuditStamp) throws(UserDataError) -> (erased: UserErasure, subject: String) {
        guard SessionInput.isValidUserId(userId) else { throw .invalidUserId(userId) }
        let subject = Self.auditSubject(userId)
        let erased: UserErasure
        do {
            erased = try store.eraseUser(id: userId, auditSubject: subject, audit: audit)
        } catch {
            throw .storage(error)
        }
        sessions.evictErased(userId: userId, sessionIds: erased.sessionIds)
        if !erased.sessionIds.isEmpty {
            sessions.waitOutOtherOwners()  // the erasure is answered once no node answers them from memory
        }
        return (erased, subject)
    }

    /// Everything stored about user `userId`, within `limits`; `.notFound` when nothing is.
    func export(_ userId: String) throws(UserDataError) -> UserExport {
        guard SessionInput.isValidUserId(userId) else { throw .invalidUserId(userId) }
        let export: UserExport
        do {
            export = try store.exportUser(id: userId, limits: limits)
        } catch {
            throw .storage(error)
        }
        guard !export.isEmpty else { throw .notFound(userId) }
        var rebuilt = export
        rebuilt.sessions = export.sessions.map(rebuildingLog)
        return rebuilt
    }

    /// The session with the handlers and transitions its log does not keep rebuilt (see
    /// `LogRebuild`); as stored when its flow versions are unknown here or it does not rebuild
    /// (the export then still has everything that is stored).
    func rebuildingLog(_ exported: ExportedSession) -> ExportedSession {
        let trees = exported.actionTrees.count == exported.actions.count ? exported.actionTrees : exported.actions.map { _ in nil }
        let later = zip(exported.actions, trees).filter { $0.0.version > exported.startVersion }.map { (action: $0.0, tree: $0.1) }
        guard later.contains(where: { $0.tree == nil }) else { return exported }
        let record = exported.session
        guard let versions = DefinitionRegistry.decode(record.flowVersions), let catalog = sessions.registry.catalog(for: versions),
              let entries = LogRebuild(catalog: catalog, context: SessionCodecs.decodeContext(record.context, userId: record.userId))
                  .rebuild(from: exported.startTree, entries: later) else { return exported }
        var result = exported
        let earlier = exported.actions.count - entries.count
        result.actions = Array(exported.actions.prefix(earlier)) + entries.map(\.action)
        return result
    }

    /// The state document of an exported session, as `GET /v1/sessions/{id}` shows it; nil when
    /// its stored tree does not decode (the export then still has everything else).
    func stateDocument(of record: SessionRecord) -> [UInt8]? {
        guard let tree = try? FlowTree(storage: record.tree) else { return nil }
        return SessionState.document(sessionId: record.id, userId: record.userId, version: record.version, tree: tree,
                                     transitionJSON: record.lastTransition.map { Array($0.utf8) }, handledBy: record.handledBy,
                                     flagsJSON: Array(record.flags.utf8), experimentsJSON: Array(record.experiments.utf8))
    }

    /// What the audit log names an erased user by: `sha256:` and the hex SHA-256 of the id's
    /// UTF-8 bytes. Whoever holds the id can tell that it was erased, and when (a repeated
    /// request is matched); the log alone does not give the id back. It is pseudonymous, not
    /// anonymous: ids that can be guessed (e-mail addresses, small numbers) can be found by
    /// hashing guesses, so give users opaque ids.
    static func auditSubject(_ userId: String) -> String {
        let digest = SHA256.hash(data: Array(userId.utf8))
        return "sha256:" + digest.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
