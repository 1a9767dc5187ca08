// An experiment's lifecycle over the API: draft, running, stopped, concluded; PATCH without
// resending the definition; what new and existing sessions get; activation warnings.
import FeatureFlags
import FlowServer
import Foundation
import HTTPServer
import HTTPTestClient
import JSON
import StoreTestSupport
import Testing

struct ExperimentLifecycleTests {
    static let admin = FlowAdminTests.admin
    static let path = "/v1/experiments/onboarding-length"
    static let mergePatch = admin + [("Content-Type", "application/merge-patch+json")]

    /// Onboarding version 2 (one screen) uploaded, not live, and the 50/50 experiment pinning it to `short`.
    static func running(_ test: TestApp, status: String? = nil) throws {
        #expect(try test.direct.send("PUT", "/v1/flows/onboarding", body: FlowAdminTests.shortOnboarding, headers: admin).status == 201)
        var body = ExperimentAPITests.experiment
        if let status { body = body.replacingOccurrences(of: #""coverage""#, with: #""status": "\#(status)", "coverage""#) }
        #expect(try test.direct.send("PUT", path, body: body, headers: admin).status == 201)
    }

    /// A user the experiment puts in `variant` (hash v2, as GrowthBook does).
    static func user(in variant: String, _ prefix: String = "u") -> String {
        (0...).lazy.map { "\(prefix)-\($0)" }.first { ExperimentAPITests.expectedVariant($0) == variant } ?? ""
    }

    static func patch(_ sender: some RequestSender, _ body: String, headers: [(String, String)] = mergePatch,
                      key: String = "onboarding-length") throws -> Response {
        try sender.send("PATCH", "/v1/experiments/\(key)", body: body, headers: headers)
    }

    /// The issue's story: rolling back by activating version 1 while the experiment pins version
    /// 2 says so in the activation's `warnings`; `PATCH {"status": "stopped"}` (no definition
    /// resent) stops it: a new session of a `short` user gets the live version and no variant,
    /// while a session made before the stop keeps its variant and its pinned version 2.
    @Test func stopWithoutResendingTheDefinition() throws {
        let test = try TestApp()
        try Self.running(test)
        let client = SessionClient(sender: test.direct)
        let shortUser = Self.user(in: "short")
        let before = try client.create(userId: shortUser)
        #expect(before.state["experiments"]["onboarding-length"] == "short")

        let rollback = try test.direct.send("POST", "/v1/flows/onboarding/versions/1/activate", headers: Self.admin)
        #expect(rollback.status == 200)
        let warnings: JSONValue = rollback.json["warnings"]
        #expect(warnings.arrayValue?.count == 1)
        #expect(warnings[0]["experiment"] == "onboarding-length")
        #expect(warnings[0]["flow"] == "onboarding")
        #expect(warnings[0]["live"] == 1)
        #expect(warnings[0]["pins"] == ["short": 2])
        #expect(warnings[0]["detail"].stringValue?.contains(#"PATCH /v1/experiments/onboarding-length {"status": "stopped"}"#) == true)
        // Still running: the short user's next session is still on version 2.
        #expect(try client.create(userId: shortUser).state["experiments"]["onboarding-length"] == "short")

        let stopped = try Self.patch(test.direct, #"{"status": "stopped"}"#)
        #expect(stopped.status == 200, "\(stopped.text)")
        #expect(stopped.json["status"] == "stopped")
        #expect(stopped.json["revision"] == 2)
        #expect(stopped.json["variants"][1]["flows"] == ["onboarding": 2])
        #expect(stopped.headers["ETag"] == "\"2\"")

        let after = try client.create(userId: shortUser)
        #expect(after.state["experiments"] == [:])
        #expect(try client.act(after, #"{"type":"onboarding.completed"}"#).status == 422)  // live version 1: two screens
        #expect(try client.apply(before, #"{"type":"onboarding.completed"}"#).features == ["home.first"])  // kept version 2

        #expect(try test.direct.send("POST", "/v1/flows/onboarding/versions/1/activate", headers: Self.admin).json["warnings"] == [])
        #expect(Array(AuditAPITests.summary(try AuditAPITests.log(test)).suffix(3)) == [
            "flow.activate onboarding 1→1", "experiment.stop onboarding-length 1→2", "flow.activate onboarding 1→1"])
    }

    /// Stop, restart (the same buckets: a user lands where they did), conclude with `short`:
    /// version 2 becomes live in the same change, the experiment assigns nobody, and the audit
    /// log shows each move by name with its revisions.
    @Test func restartAndConclude() throws {
        let test = try TestApp()
        try Self.running(test)
        let client = SessionClient(sender: test.direct)
        let users = (0..<12).map { "r-\($0)" }
        let first = try users.map { try client.create(userId: $0).state["experiments"]["onboarding-length"] }
        #expect(try Self.patch(test.direct, #"{"status": "stopped"}"#).status == 200)
        #expect(try Self.patch(test.direct, #"{"status": "running"}"#).json["revision"] == 3)
        #expect(try users.map { try client.create(userId: $0).state["experiments"]["onboarding-length"] } == first)

        let concluded = try Self.patch(test.direct, #"{"status": "concluded", "winner": "short"}"#)
        #expect(concluded.status == 200, "\(concluded.text)")
        #expect(concluded.json["winner"] == "short")
        #expect(try test.direct.send("GET", "/v1/flows/onboarding", headers: Self.admin).json["version"] == 2)
        let controlUser = Self.user(in: "control")
        let late = try client.create(userId: controlUser)
        #expect(late.state["experiments"] == [:])
        #expect(try client.apply(late, #"{"type":"onboarding.completed"}"#).features == ["home.first"])  // live version 2

        let report = try test.direct.send("GET", "\(Self.path)/report", headers: Self.admin).json
        #expect(report["status"] == "concluded")
        #expect(report["winner"] == "short")
        #expect(AuditAPITests.summary(try AuditAPITests.log(test)) == [
            "flow.put onboarding 1→2", "experiment.put onboarding-length -→1",
            "experiment.stop onboarding-length 1→2", "experiment.start onboarding-length 2→3",
            "experiment.conclude onboarding-length 3→4", "flow.activate onboarding 1→2",
        ])
        // Concluded is final: neither PATCH nor PUT moves it again.
        for body in [#"{"status": "running"}"#, #"{"status": "stopped"}"#, #"{"winner": "control"}"#] {
            let refused = try Self.patch(test.direct, body)
            #expect(refused.status == 409, "\(body): \(refused.text)")
            #expect(refused.json["code"] == "invalid-transition")
            #expect(refused.json["currentStatus"] == "concluded")
            #expect(refused.headers["Content-Type"] == "application/problem+json")
        }
        #expect(try test.direct.send("PUT", Self.path, body: ExperimentAPITests.experiment, headers: Self.admin).status == 409)
        // A retried conclusion (the answer was lost) changes nothing and says so with a 200.
        let retried = try Self.patch(test.direct, #"{"status": "concluded", "winner": "short"}"#)
        #expect(retried.status == 200, "\(retried.text)")
        #expect(retried.json["revision"] == 4)
        #expect(try test.direct.send("GET", Self.path, headers: Self.admin).json["revision"] == 4)
    }

    /// A draft is stored and reported but assigns nobody, and is served to SDKs with no rules;
    /// starting it (PATCH running) assigns as PUT would have; OFREP and the GrowthBook payload
    /// agree with sessions at each step.
    @Test func draftAssignsNobodyUntilStarted() throws {
        let test = try TestApp()
        try Self.running(test, status: "draft")
        let client = SessionClient(sender: test.direct)
        let shortUser = Self.user(in: "short")
        let key = try OFREPTests.clientKey(test.direct).key
        func ofrep() throws -> JSONValue {
            try test.direct.send("POST", OFREPTests.single + "experiment:onboarding-length",
                                 body: OFREPTests.body(#"{"targetingKey":"\#(shortUser)"}"#), headers: [("X-API-Key", key)]).json
        }
        func growthBookRules() throws -> Int? {
            try test.direct.send("GET", "/api/features/\(key)").json["features"]["experiment:onboarding-length"]["rules"].arrayValue?.count
        }
        #expect(try client.create(userId: shortUser).state["experiments"] == [:])
        #expect(try ofrep()["reason"] == "DISABLED")
        #expect(try growthBookRules() == 0)
        #expect(try test.direct.send("GET", "\(Self.path)/report", headers: Self.admin).json["status"] == "draft")
        // A draft pinning version 2 is no trap: activating leaves it quiet.
        #expect(try test.direct.send("POST", "/v1/flows/onboarding/versions/1/activate", headers: Self.admin).json["warnings"] == [])

        #expect(try Self.patch(test.direct, #"{"status": "running"}"#).status == 200)
        #expect(try client.create(userId: shortUser).state["experiments"]["onboarding-length"] == "short")
        #expect(try ofrep()["variant"] == "short")
        #expect(try growthBookRules() == 1)
        #expect(Array(AuditAPITests.summary(try AuditAPITests.log(test)).suffix(1)) == ["experiment.start onboarding-length 1→2"])

        #expect(try Self.patch(test.direct, #"{"status": "stopped"}"#).status == 200)
        #expect(try ofrep()["reason"] == "DISABLED")
        #expect(try growthBookRules() == 0)
    }

    /// Every refusal is a problem with its code: unknown experiment 404, bodies 400, a JSON
    /// Patch 415 (with Accept-Patch), a stale If-Match 412 (a current one passes), invalid
    /// results 422 with pointers, illegal moves 409; none changes the stored revision. A repeated
    /// stop changes nothing and makes no revision.
    @Test func refusals() throws {
        let test = try TestApp()
        try Self.running(test)
        func expectProblem(_ response: Response, _ status: Int, _ code: String, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(response.status == status, "\(response.text)", sourceLocation: sourceLocation)
            #expect(response.json["code"].stringValue == code, "\(response.text)", sourceLocation: sourceLocation)
            #expect(response.headers["Content-Type"] == "application/problem+json", sourceLocation: sourceLocation)
        }
        expectProblem(try Self.patch(test.direct, #"{"status": "stopped"}"#, key: "missing"), 404, "not-found")
        expectProblem(try Self.patch(test.direct, #"{"status": "stopped"}"#, key: "bad%20key"), 400, "malformed-request")
        expectProblem(try Self.patch(test.direct, "{"), 400, "malformed-request")
        expectProblem(try Self.patch(test.direct, #"["stopped"]"#), 400, "malformed-request")
        expectProblem(try Self.patch(test.direct, #"{"status": "stopped"}"#, headers: Self.admin + [("If-Match", "3")]), 400, "malformed-request")
        let jsonPatch = try Self.patch(test.direct, #"[{"op": "replace", "path": "/status", "value": "stopped"}]"#,
                                       headers: Self.admin + [("Content-Type", "application/json-patch+json")])
        expectProblem(jsonPatch, 415, "unsupported-media-type")
        #expect(jsonPatch.headers["Accept-Patch"] == "application/merge-patch+json, application/json")
        let stale = try Self.patch(test.direct, #"{"status": "stopped"}"#, headers: Self.mergePatch + [("If-Match", #""7""#)])
        expectProblem(stale, 412, "version-mismatch")
        #expect(stale.json["currentRevision"] == 1)
        for (body, pointer) in [(#"{"status": "concluded"}"#, "/winner"), (#"{"status": "concluded", "winner": "long"}"#, "/winner"),
                                (#"{"winner": "short"}"#, "/winner"), (#"{"status": "paused"}"#, "/status"),
                                (#"{"coverage": 2}"#, "/coverage"), (#"{"variants": null}"#, "/variants")] {
            let invalid = try Self.patch(test.direct, body)
            expectProblem(invalid, 422, "invalid-definition")
            #expect(invalid.json["errors"][0]["pointer"].stringValue == pointer, "\(body): \(invalid.text)")
        }
        let toDraft = try Self.patch(test.direct, #"{"status": "draft"}"#)
        expectProblem(toDraft, 409, "invalid-transition")
        #expect(toDraft.json["allowed"] == ["stopped", "concluded"])
        expectProblem(try test.direct.send("PUT", "/v1/experiments/new", body: #"{"variants":[{"key":"a"}],"status":"concluded","winner":"a"}"#,
                                           headers: Self.admin), 409, "invalid-transition")
        #expect(try test.direct.send("PATCH", Self.path, body: #"{"status": "stopped"}"#).status == 401)
        #expect(try test.direct.send("GET", Self.path, headers: Self.admin).json["revision"] == 1)

        let current = try test.direct.send("GET", Self.path, headers: Self.admin)
        #expect(current.headers["ETag"] == "\"1\"")
        let stopped = try Self.patch(test.direct, #"{"status": "stopped", "revision": 1, "updatedAt": "x"}"#,
                                     headers: Self.mergePatch + [("If-Match", current.headers["ETag"] ?? "")])
        #expect(stopped.json["revision"] == 2)
        let again = try Self.patch(test.direct, #"{"status": "stopped"}"#, headers: Self.admin)  // plain JSON is read alike
        #expect(again.status == 200)
        #expect(again.json["revision"] == 2)
        #expect(Array(AuditAPITests.summary(try AuditAPITests.log(test)).suffix(1)) == ["experiment.stop onboarding-length 1→2"])
        // Other members patch as RFC 7396 says: set one, remove one with null.
        let edited = try Self.patch(test.direct, #"{"description": "shorter onboarding", "hashAttribute": null}"#)
        #expect(edited.json["description"] == "shorter onboarding")
        #expect(edited.json["hashAttribute"] == nil)
        #expect(edited.json["status"] == "stopped")
        #expect(Array(AuditAPITests.summary(try AuditAPITests.log(test)).suffix(1)) == ["experiment.put onboarding-length 2→3"])
    }

    /// A PUT that changes `status` is the same move, checked and audited by its name; but a PUT
    /// does not conclude (that makes flows live: PATCH, the publishing route, does), and a
    /// refused one changes nothing.
    @Test func putMovesAlongTheLifecycle() throws {
        let test = try TestApp()
        try Self.running(test)
        let stopped = ExperimentAPITests.experiment.replacingOccurrences(of: #""coverage""#, with: #""status": "stopped", "coverage""#)
        #expect(try test.direct.send("PUT", Self.path, body: stopped, headers: Self.admin).status == 200)
        #expect(try test.direct.send("PUT", Self.path, body: ExperimentAPITests.experiment, headers: Self.admin).status == 200)
        let concluded = ExperimentAPITests.experiment.replacingOccurrences(
            of: #""coverage""#, with: #""status": "concluded", "winner": "short", "coverage""#)
        let refused = try test.direct.send("PUT", Self.path, body: concluded, headers: Self.admin)
        #expect(refused.status == 409)
        #expect(refused.json["code"] == "invalid-transition")
        #expect(refused.json["detail"].stringValue?.contains("PATCH /v1/experiments/onboarding-length") == true)
        #expect(try test.direct.send("GET", "/v1/flows/onboarding", headers: Self.admin).json["version"] == 1)
        #expect(Array(AuditAPITests.summary(try AuditAPITests.log(test)).suffix(2)) == [
            "experiment.stop onboarding-length 1→2", "experiment.start onboarding-length 2→3"])
    }

    /// Through libmicrohttpd: PATCH is routed, OPTIONS/405 name it, and a stop answers 200.
    @Test func patchThroughASocket() throws {
        let test = try TestApp()
        try Self.running(test)
        try test.withLiveServer { sender in
            let stopped = try Self.patch(sender, #"{"status": "stopped"}"#)
            #expect(stopped.status == 200)
            #expect(stopped.json["status"] == "stopped")
            let wrong = try sender.send("POST", Self.path, body: "{}", headers: Self.admin)
            #expect(wrong.status == 405)
            #expect(wrong.headers["Allow"]?.contains("PATCH") == true)
        }
    }

    /// Two nodes on one database: a stop through one is what the other serves next.
    @Test(.enabled(if: TestStoreKind.isPostgreSQL, "several nodes share a PostgreSQL database"))
    func otherNodesFollowAStop() throws {
        let a = try TestApp()
        let b = try TestApp(beside: a)
        try Self.running(a)
        let shortUser = Self.user(in: "short")
        #expect(try b.direct.send("GET", Self.path, headers: Self.admin).json["status"] == nil)
        #expect(try SessionClient(sender: b.direct).create(userId: shortUser).state["experiments"]["onboarding-length"] == "short")
        #expect(try Self.patch(a.direct, #"{"status": "stopped"}"#).status == 200)
        #expect(try b.direct.send("GET", Self.path, headers: Self.admin).json["status"] == "stopped")
        #expect(try SessionClient(sender: b.direct).create(userId: shortUser).state["experiments"] == [:])
        // b's copy said running; the PATCH through b reads the store, so it sees stopped and restarts.
        #expect(try Self.patch(b.direct, #"{"status": "running"}"#).json["revision"] == 3)
    }
}
