// Why the session service did not do what was asked, in its own terms; the HTTP edge
// (SessionError+problem.swift) turns each case into a problem response.
import FlowEngine
import Foundation

/// A request about a session that the service refused or could not complete. The service
/// throws these (and completes waiting requests with them); only the edge knows statuses,
/// problem types and headers.
///
/// ```swift
/// do {
///     let (version, document, _) = try sessions.stateDocument(id, token: token)
/// } catch {
///     error.response   // 401, 404, 503, … as a problem document (SessionError+problem.swift)
/// }
/// ```
enum SessionError: Error {
    /// Which credential failed a session's token check.
    enum Credential: Sendable, Equatable {
        /// The request presented no bearer token.
        case missing
        /// The token presented does not open session `id`.
        case wrong(session: String)
        /// The event stream of session `id` was asked for with neither a token nor a ticket.
        case missingForEvents(session: String)
        /// A stream ticket that is not one this server makes.
        case malformedTicket
        /// A stream ticket unknown, for another session than `session`, expired, or past its
        /// reconnection window of `window` seconds.
        case ticketRefused(session: String, window: Int)
    }

    /// Why a batch ended with only some of its actions known to be applied.
    enum BatchIncompleteReason: Sendable, Equatable {
        /// The session `id` kept changing under the batch (conflicts ran out).
        case contention(session: String)
        /// The database did not confirm the batch's writes.
        case outcomeUnknown
        /// The database failed the batch.
        case failed
    }

    /// No token, or a token that does not open the session.
    case unauthorized(Credential)
    /// The session has been idle for longer than `idle` (its token holder is told, not a guesser).
    case expired(String, idle: Duration)
    /// There is no session with this id (or it is not a plausible id).
    case notFound(String)
    /// `If-Match` names other versions (`asked`, as sent) than session `session`'s `version`.
    case versionMismatch(session: String, version: Int, asked: String)
    /// Item `index` (key `key`) of a batch was made on `itemVersion`, not the session's `version`.
    case batchVersionMismatch(index: Int, key: String, itemVersion: Int, session: String, version: Int)
    /// The engine did not apply the action (or follow the link); rollouts count these.
    case refused(FlowError)
    /// An `Idempotency-Key` already used with another request body.
    case idempotencyKeyReused(String)
    /// The action would leave session `session` (nil: a new session, by its link) holding a
    /// stored tree of `bytes` bytes, more than the server's `limit` (`--max-session-bytes`):
    /// params and lists that actions keep adding to (a push with a large param, again and
    /// again) would otherwise grow one session without bound, and every answer, commit and
    /// cached copy with it.
    case sessionTooLarge(session: String?, bytes: Int, limit: Int)
    /// A client that renders no activated version of `flows` (it lacks `missing`).
    case unsupportedClient(ClientCapabilities, missing: [String], flows: [String])
    /// Session `id` changed too often to read it (`reading`) or to apply an action.
    case contention(String, reading: Bool)
    /// A batch of which `applied` actions are known to be applied, the rest not.
    case batchIncomplete(BatchIncompleteReason, applied: Int)
    /// Flow `flow` version `version` is not loaded on this node yet.
    case definitionsLoading(flow: String, version: Int)
    /// The database failed the request (`StoreError.outcomeUnknown`: it may have been applied).
    case storage(any Error)
    /// The flow versions a new session would run are not all stored.
    case flowVersionsNotStored
    /// The flow definitions cannot build a new session's first screen (the engine's message).
    case cannotStart(String)
    /// Session `id`'s stored tree does not decode.
    case unreadable(String)
    /// Session `id` runs flow versions this server does not have.
    case unknownFlowVersions(String)
    /// The session's first action (its link) was answered otherwise than applied, and why is
    /// not known here (the link's answer was lost).
    case linkNotApplied(String)

    /// The engine's refusal this error is, if it is one (rollout guardrails count them).
    var refusal: FlowError? {
        if case .refused(let error) = self { return error }
        return nil
    }

    /// Whether the session's state may have moved on since this was judged on a cached state
    /// (a stale `from`, `If-Match`, an action the state does not accept): on a shared database
    /// such refusals are checked against the stored state before they are answered.
    var dependsOnState: Bool {
        switch self {
        case .versionMismatch, .batchVersionMismatch, .idempotencyKeyReused, .sessionTooLarge: return true
        case .refused(let error):
            switch error {
            case .corruptTree, .invalidParams: return false
            default: return true
            }
        default: return false
        }
    }

    /// Whether the database failed (the request may be retried); a batch's item failing so
    /// fails the whole batch rather than being its refusal.
    var isServerFailure: Bool {
        switch self {
        case .refused(.corruptTree): return true
        case .refused, .unauthorized, .expired, .notFound, .versionMismatch, .batchVersionMismatch, .idempotencyKeyReused,
             .unsupportedClient, .sessionTooLarge: return false
        default: return true
        }
    }
}
