// Reading JSON request bodies with limits, and the 400 answers for those that are not.
import JSON
import FlowEngine
import HTTPServer

/// Limits on what a request body may hold, on top of the server's byte limit.
public struct BodyLimits: Sendable {
    /// Nesting of arrays and objects.
    public var maxDepth = 32
    /// Bytes in one string (keys included).
    public var maxStringBytes = 64 * 1024

    public init() {}

    var parser: JSONParser.Limits {
        JSONParser.Limits(maxDepth: maxDepth, maxStringLength: maxStringBytes, maxInputSize: Int.max)
    }
}

extension Request {
    /// The body parsed as JSON, or a 400 problem that says where it went wrong.
    func jsonBody(_ limits: BodyLimits) -> Result<JSONValue, ResponseError> {
        guard !body.isEmpty else {
            return .failure(ResponseError(.problem(400, "The request needs a JSON body.", type: ProblemType.malformed)))
        }
        // Content-Type is not checked: the body is JSON whatever the client labelled it (curl's
        // -d says form-urlencoded), and a body that is not JSON gets a 400 that says why.
        do throws(JSONParseError) {
            return .success(try JSONParser.parse(body, limits: limits.parser))
        } catch {
            return .failure(ResponseError(.problem(400, "The body is not valid JSON: \(error.description).",
                                                   type: ProblemType.malformed)))
        }
    }
}

/// A response that ends a handler early: `try body.get()` in a handler that catches it.
struct ResponseError: Error {
    let response: Response
    /// The engine's refusal this answers, when it answers one (rollout guardrails count them).
    var refusal: FlowError?
    init(_ response: Response, refusal: FlowError? = nil) {
        self.response = response
        self.refusal = refusal
    }
}

/// The `type` URIs of FlowStack's problem documents (RFC 9457 §3.1.1).
enum ProblemType {
    static let prefix = "urn:flowstack:problem:"
    static let malformed = prefix + "malformed-request"
    static let unauthorized = prefix + "unauthorized"
    static let notFound = prefix + "not-found"
    static let versionMismatch = prefix + "version-mismatch"
    static let idempotencyKeyReused = prefix + "idempotency-key-reused"
    /// 422: an action that would grow a session past `--max-session-bytes`.
    static let sessionTooLarge = prefix + "session-too-large"
    static let invalidDefinition = prefix + "invalid-definition"
    static let invalidScenarios = prefix + "invalid-scenarios"
    static let rateLimited = prefix + "rate-limited"
    /// A name a route already uses (`PUT /v1/flags/evaluate`).
    static let reservedName = prefix + "reserved-name"
    /// 409: an experiment's status cannot move there (`concluded` → `running`).
    static let invalidTransition = prefix + "invalid-transition"
    /// 409: what a write was based on changed meanwhile, again and again.
    static let concurrentChange = prefix + "concurrent-change"
    /// 415: a body of a media type the route does not read.
    static let unsupportedMediaType = prefix + "unsupported-media-type"
    /// 503s: the database did not answer or failed the request.
    static let databaseUnavailable = prefix + "database-unavailable"
    /// 503: a write the database did not confirm, which may or may not be applied.
    static let outcomeUnknown = prefix + "outcome-unknown"
    /// 503: a batch of which only part is known to be applied.
    static let batchIncomplete = prefix + "batch-incomplete"
    /// 503: a session changed by other nodes faster than this one could apply an action.
    static let sessionContention = prefix + "session-contention"
    /// 503: a flow version another node stored is not loaded on this node yet.
    static let definitionsLoading = prefix + "definitions-loading"
    /// 403: an admin key whose role is below the one the route needs.
    static let insufficientRole = prefix + "insufficient-role"
    /// 409: a live admin key has this name already.
    static let nameInUse = prefix + "name-in-use"
    /// 409s of releases (ReleaseConflict's codes): a change its state does not allow, tests
    /// failed or never run, a review missing, live versions moved since its tests, or a
    /// rollback that would undo later changes; 403 an approval by the release's own creator.
    static let releaseState = prefix + "release-state"
    static let testsFailed = prefix + "tests-failed"
    static let releaseUntested = prefix + "release-untested"
    static let reviewRequired = prefix + "review-required"
    static let releaseStale = prefix + "release-stale"
    static let releaseSuperseded = prefix + "release-superseded"
    static let selfApproval = prefix + "self-approval"
    /// 400: a rollout plan that does not read (`POST /v1/releases/{id}/activate`, `…/rollout`).
    static let invalidRollout = prefix + "invalid-rollout"
    /// 409: a rollout that cannot move that way now (another in progress, not rolling out, not a raise).
    static let rolloutConflict = prefix + "rollout-conflict"

    /// 422: a replay names a flow version that is not stored.
    static let unknownFlowVersion = prefix + "unknown-flow-version"
    /// 401: a session idle for longer than `--session-idle` (see `SessionExpiry`).
    static let sessionExpired = prefix + "session-expired"

    /// Every type above, for the test that each has its code.
    static let all = [malformed, unauthorized, notFound, versionMismatch, idempotencyKeyReused, invalidDefinition,
                      invalidScenarios, rateLimited, reservedName, databaseUnavailable, outcomeUnknown, batchIncomplete,
                      sessionContention, definitionsLoading, insufficientRole, nameInUse, invalidTransition, concurrentChange,
                      unsupportedMediaType, releaseState, testsFailed, releaseUntested, reviewRequired, releaseStale,
                      releaseSuperseded, selfApproval, invalidRollout, rolloutConflict, unknownFlowVersion,
                      sessionExpired, sessionTooLarge]

    /// The type of an engine error, from its stable code (`urn:flowstack:problem:stale-source`).
    static func of(_ error: FlowError) -> String { prefix + error.code }
}
