// The session service's errors as the HTTP edge answers them (SessionError+problem.swift): every
// case's status, problem type, code, members and headers; and the service's files stay out of
// HTTP (no `import HTTPServer`).
@testable import FlowServer
import FlowEngine
import FlowStore
import Foundation
import HTTPServer
import JSON
import Testing

struct SessionErrorTests {
    struct Expected: Sendable, CustomStringConvertible {
        let error: SessionError
        let status: Int
        /// The problem type's suffix after `urn:flowstack:problem:`, nil for `about:blank`.
        let type: String?
        var description: String { "\(error)" }
    }

    static let storeFailure = StoreError.outcomeUnknown(location: "commit", detail: "connection lost")

    /// Every case of `SessionError` (and of its `Credential` and `BatchIncompleteReason`).
    static let cases: [Expected] = [
        Expected(error: .unauthorized(.missing), status: 401, type: "unauthorized"),
        Expected(error: .unauthorized(.wrong(session: "s_1")), status: 401, type: "unauthorized"),
        Expected(error: .unauthorized(.missingForEvents(session: "s_1")), status: 401, type: "unauthorized"),
        Expected(error: .unauthorized(.malformedTicket), status: 401, type: "unauthorized"),
        Expected(error: .unauthorized(.ticketRefused(session: "s_1", window: 30)), status: 401, type: "unauthorized"),
        Expected(error: .expired("s_1", idle: .seconds(86_400)), status: 401, type: "session-expired"),
        Expected(error: .notFound("s_1"), status: 404, type: "not-found"),
        Expected(error: .versionMismatch(session: "s_1", version: 4, asked: "\"3\""), status: 412, type: "version-mismatch"),
        Expected(error: .batchVersionMismatch(index: 1, key: "k", itemVersion: 2, session: "s_1", version: 4), status: 412,
                 type: "version-mismatch"),
        Expected(error: .refused(.staleSource(from: "e1", top: "e2")), status: 409, type: "stale-source"),
        Expected(error: .refused(.unhandled(action: "x", chain: ["a", "b"])), status: 422, type: "unhandled"),
        Expected(error: .refused(.invalidParams(path: "/params/index", message: "must be a number")), status: 400,
                 type: "invalid-params"),
        Expected(error: .idempotencyKeyReused("k1"), status: 422, type: "idempotency-key-reused"),
        Expected(error: .unsupportedClient(ClientCapabilities(platform: "ios", appVersion: "1.0", features: []),
                                           missing: ["modal"], flows: ["home"]), status: 422, type: "unsupported-client"),
        Expected(error: .contention("s_1", reading: true), status: 503, type: "session-contention"),
        Expected(error: .contention("s_1", reading: false), status: 503, type: "session-contention"),
        Expected(error: .batchIncomplete(.contention(session: "s_1"), applied: 1), status: 503, type: "batch-incomplete"),
        Expected(error: .batchIncomplete(.outcomeUnknown, applied: 0), status: 503, type: "batch-incomplete"),
        Expected(error: .batchIncomplete(.failed, applied: 2), status: 503, type: "batch-incomplete"),
        Expected(error: .definitionsLoading(flow: "home", version: 2), status: 503, type: "definitions-loading"),
        Expected(error: .storage(storeFailure), status: 503, type: "outcome-unknown"),
        Expected(error: .storage(StoreError.badMigrationSequence("x")), status: 503, type: "database-unavailable"),
        Expected(error: .flowVersionsNotStored, status: 500, type: nil),
        Expected(error: .cannotStart("no entry"), status: 500, type: nil),
        Expected(error: .unreadable("s_1"), status: 500, type: nil),
        Expected(error: .unknownFlowVersions("s_1"), status: 500, type: nil),
        Expected(error: .linkNotApplied("s_1"), status: 500, type: nil),
    ]

    @Test(arguments: cases) func eachCaseIsItsProblem(_ expected: Expected) throws {
        let response = expected.error.response
        #expect(response.status == expected.status)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        let json = try JSONParser.parse(response.body)
        #expect(json["status"].integerValue == expected.status)
        #expect(json["type"].stringValue == expected.type.map { ProblemType.prefix + $0 } ?? "about:blank")
        if let type = expected.type {
            #expect(json["code"].stringValue == type, "the code is the type's name")
        }
        #expect(json["detail"].stringValue?.isEmpty == false)
        // 401s ask for a bearer token, and only 401s do.
        #expect((response.headers["WWW-Authenticate"] == "Bearer") == (expected.status == 401))
        // The failed-token limiter skips exactly the expired session's 401: every 401 says why as
        // a value (no reading of the body), and only the expiry says `.expired`.
        if case .expired = expected.error {
            #expect(response.credentialRefusal == .expired)
        } else {
            #expect(response.credentialRefusal == (expected.status == 401 ? .unknown : nil))
        }
        // A route's ResponseError carries the same answer, and the engine's refusal for rollouts.
        let routed = ResponseError(expected.error)
        #expect(routed.response.status == expected.status && routed.response.body == response.body)
        if case .refused(let refusal) = expected.error { #expect(routed.refusal == refusal) } else { #expect(routed.refusal == nil) }
    }

    /// The members beside `type`, `code` and `detail` that clients read.
    @Test func membersAndHeaders() throws {
        let mismatch = SessionError.versionMismatch(session: "s_1", version: 4, asked: "\"3\"").response
        #expect(mismatch.headers["ETag"] == "\"4\"")
        #expect(try JSONParser.parse(mismatch.body)["currentVersion"].integerValue == 4)
        #expect(try JSONParser.parse(mismatch.body)["detail"].stringValue
                == "If-Match asks for version \"3\" but session s_1 is at version 4; reload the state.")

        let item = try JSONParser.parse(SessionError.batchVersionMismatch(index: 1, key: "k", itemVersion: 2, session: "s_1",
                                                                           version: 4).response.body)
        #expect(item["currentVersion"].integerValue == 4)
        #expect(item["errors"][0]["pointer"].stringValue == "/actions/1/version")

        let chain = try JSONParser.parse(SessionError.refused(.unhandled(action: "x", chain: ["a", "b"])).response.body)
        #expect(chain["chain"] == ["a", "b"])
        let flow = try JSONParser.parse(SessionError.refused(.refused(flow: "home", action: "x", reason: "no rule")).response.body)
        #expect(flow["flow"].stringValue == "home")
        let link = try JSONParser.parse(SessionError.refused(
            .linkRefused(pattern: "/modal/{c}", step: 2, action: "x", underlying: .noInteraction(action: "x"))).response.body)
        #expect(link["link"].stringValue == "/modal/{c}")
        #expect(link["step"].integerValue == 2)
        let params = try JSONParser.parse(SessionError.refused(.invalidParams(path: "/params/index", message: "must be a number"))
            .response.body)
        #expect(params["errors"][0]["pointer"].stringValue == "/params/index")

        let client = try JSONParser.parse(SessionError.unsupportedClient(
            ClientCapabilities(platform: "ios", appVersion: "1.0", features: []), missing: ["modal"], flows: ["home"]).response.body)
        #expect(client["missing"] == ["modal"])
        #expect(client["flows"] == ["home"])
        #expect(client["title"].stringValue == "Unsupported Client")

        let batch = try JSONParser.parse(SessionError.batchIncomplete(.failed, applied: 2).response.body)
        #expect(batch["applied"].integerValue == 2)

        let expired = try JSONParser.parse(SessionError.expired("s_1", idle: .seconds(86_400)).response.body)
        #expect(expired["title"].stringValue == "Session Expired")
        #expect(expired["detail"].stringValue == "Session s_1 expired after 1d without an action; start a new session.")
    }

    /// The session service's files deal in SessionError and domain answers, not HTTP: none
    /// imports HTTPServer. (The edge is SessionError+problem.swift, PredictionRequest.swift and
    /// the routes.)
    @Test func serviceFilesImportNoHTTP() throws {
        let folder = Repository.path("Sources/FlowServer")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
            ($0.hasPrefix("SessionService") || ["SessionError.swift", "SessionExpiry.swift", "SessionTurn.swift",
                                                "LiveSession.swift", "SessionCodecs.swift", "SessionCache.swift"].contains($0))
                && $0.hasSuffix(".swift")
        }
        #expect(names.count >= 14, "\(names)")
        var importing: [String] = []
        for name in names {
            let text = try String(contentsOf: folder.appending(path: name), encoding: .utf8)
            if text.split(separator: "\n").contains(where: { $0.trimmingCharacters(in: .whitespaces) == "import HTTPServer" }) {
                importing.append(name)
            }
        }
        #expect(importing.sorted() == [], "these service files import HTTPServer")
    }
}
