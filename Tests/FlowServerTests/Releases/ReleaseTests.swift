// Releases over the admin API, on the run's store: several flows (new ones and new versions)
// validated against each other and the live rest, tested on the set, activated in one
// transaction and rolled back in one call; review, conflicts, and bad input.
@testable import FlowServer
import FlowStore
import Foundation
import GRDB
import Logging
import HTTPServer
import HTTPTestClient
import JSON
import StoreTestSupport
import Synchronization
import Testing

struct ReleaseTests {
    static let admin = FlowAdminTests.admin

    // The new user's basket (issue 24; named basket and signin since the sample app ships a
    // checkout and a login of its own): three new flows and a new `app` that opens basket
    // over home. `home` does not know `basket.open`, so it goes up to `app` via home.
    static let signin = #"""
        {"name": "signin", "kind": "stacked", "initial": ["signin.form"],
         "on": {"signin.succeeded": [{"from": "signin.form", "do": [{"dismiss": {}}]}]}}
        """#
    static let payment = #"""
        {"name": "payment", "kind": "stacked", "initial": ["payment.card"],
         "on": {"payment.confirmed": [{"from": "payment.card", "do": [{"dismiss": {}}]}]}}
        """#
    static let basket = #"""
        {"name": "basket", "kind": "stacked", "initial": ["basket.cart"],
         "on": {"basket.signIn": [{"from": "basket.cart", "do": [{"present": {"flow": "signin", "style": "formSheet"}}]}],
                "basket.pay": [{"from": "basket.cart", "do": [{"present": {"flow": "payment", "style": "pageSheet"}}]}],
                "basket.close": [{"from": "basket.cart", "do": [{"dismiss": {}}]}]}}
        """#
    static let app = #"""
        {"name": "app", "kind": "stacked",
         "initial": [{"flow": "home", "when": {"user": "onboarded", "is": true}},
                     {"flow": "onboarding", "when": {"user": "onboarded", "isNot": true}}],
         "on": {"onboarding.completed": [{"via": "onboarding", "do": [{"replaceRoot": "home"}, {"setUser": {"onboarded": true}}]}],
                "onboarding.faceScanVerified": [{"via": "onboarding", "do": [{"replaceRoot": "home"}, {"setUser": {"onboarded": true}}]}],
                "home.presentModal": [{"via": "home", "params": {"content": "any"},
                                       "do": [{"present": {"flow": "modal", "style": "fullScreen", "params": {"content": {"$param": "content"}}}}]}],
                "basket.open": [{"via": "home", "do": [{"present": {"flow": "basket", "style": "fullScreen"}}]}],
                "home.checkout": [{"via": "home", "do": [{"present": {"flow": "checkout", "style": "fullScreen"}}]}],
                "home.upgrade": [{"via": "home", "do": [{"present": {"flow": "paywall", "style": "pageSheet"}}]}]}}
        """#
    static let basketTests = #"""
        {"scenarios": [{"name": "basket over home: sign in, pay, close",
          "context": {"user": {"onboarded": true}},
          "steps": [{"action": {"type": "basket.open"}, "expect": {"screens": ["home.first", "basket.cart"]}},
                    {"action": {"type": "basket.signIn"}, "expect": {"screens": ["home.first", "basket.cart", "signin.form"]}},
                    {"action": {"type": "signin.succeeded"}, "expect": {"screens": ["home.first", "basket.cart"]}},
                    {"action": {"type": "basket.pay"}, "expect": {"top": "payment.card"}},
                    {"action": {"type": "payment.confirmed"}, "expect": {"top": "basket.cart"}},
                    {"action": {"type": "basket.close"}, "expect": {"screens": ["home.first"]}}]}]}
        """#

    /// A session of a user who completed onboarding (two screens), now at home.
    static func onboarded(_ client: SessionClient, _ user: String) throws -> CreatedSession {
        let session = try client.create(userId: user)
        try client.apply(session, #"{"type":"onboarding.showSecond"}"#)
        try client.apply(session, #"{"type":"onboarding.completed"}"#)
        return session
    }

    static func basketRelease(tests: String? = basketTests, extra: String = "") -> String {
        #"{"description": "basket", "flows": {"signin": \#(signin), "payment": \#(payment), "basket": \#(basket), "app": \#(app)}"#
            + (tests.map { #", "tests": [\#($0)]"# } ?? "") + extra + "}"
    }

    /// The new user's case: the new `app` cannot be PUT alone (basket is not live), but the
    /// four flows go in as one release, tested on the set, live together, and back in one call.
    @Test func basketGoesLiveAsOneReleaseAndRollsBack() throws {
        let test = try TestApp()
        let alone = try test.direct.send("PUT", "/v1/flows/app", body: Self.app, headers: Self.admin)
        #expect(alone.status == 422)

        let made = try test.direct.send("POST", "/v1/releases", body: Self.basketRelease(), headers: Self.admin)
        #expect(made.status == 201, "\(made.text)")
        #expect(made.headers["Location"] == "/v1/releases/1")
        #expect(made.json["state"] == "ready")
        #expect(made.json["flows"] == ["app": 2, "basket": 1, "signin": 1, "payment": 1])
        #expect(made.json["previous"] == ["app": .null, "basket": .null, "signin": .null, "payment": .null])
        #expect(made.json["tests"]["passed"] == 1 && made.json["tests"]["failed"] == 0)
        #expect(made.json["createdBy"].stringValue?.hasPrefix("admin") == true)
        // Stored, not live: new sessions still run app 1.
        #expect(try test.direct.send("GET", "/v1/flows/app", headers: Self.admin).json["version"] == 1)
        let client = SessionClient(sender: test.direct)
        let before = try Self.onboarded(client, "before")
        #expect(try client.act(before, #"{"type":"basket.open"}"#).status == 422)

        let activated = try test.direct.send("POST", "/v1/releases/1/activate", headers: Self.admin)
        #expect(activated.status == 200, "\(activated.text)")
        #expect(activated.json["state"] == "live")
        #expect(activated.json["previous"] == ["app": 1, "basket": .null, "signin": .null, "payment": .null])
        #expect(activated.json["activatedAt"] != .null)
        for (name, version) in [("app", 2), ("basket", 1), ("signin", 1), ("payment", 1)] {
            #expect(try test.direct.send("GET", "/v1/flows/\(name)", headers: Self.admin).json["version"] == JSONValue.number(Double(version)))
        }
        let after = try Self.onboarded(client, "after")
        #expect(try client.apply(after, #"{"type":"basket.open"}"#).features == ["home.first", "basket.cart"])
        // The session made before keeps its versions.
        #expect(try client.act(before, #"{"type":"basket.open"}"#).status == 422)
        let list = try test.direct.send("GET", "/v1/releases", headers: Self.admin).json
        #expect(list["releases"].arrayValue?.count == 1 && list["releases"][0]["state"] == "live")

        let rolledBack = try test.direct.send("POST", "/v1/releases/1/rollback", body: #"{"reason": "payment errors"}"#, headers: Self.admin)
        #expect(rolledBack.status == 200, "\(rolledBack.text)")
        #expect(rolledBack.json["state"] == "rolled-back" && rolledBack.json["reason"] == "payment errors")
        #expect(try test.direct.send("GET", "/v1/flows/app", headers: Self.admin).json["version"] == 1)
        #expect(try test.direct.send("GET", "/v1/flows/basket", headers: Self.admin).status == 404)
        let fresh = try Self.onboarded(client, "fresh")
        #expect(try client.act(fresh, #"{"type":"basket.open"}"#).status == 422)
        // Who, what and why are in the audit log.
        let audit = try test.direct.send("GET", "/v1/audit", headers: Self.admin).json["entries"].arrayValue ?? []
        let actions = audit.compactMap { $0["action"].stringValue }
        #expect(actions.filter { $0 == "flow.put" }.count == 4)
        #expect(actions.contains("release.create") && actions.contains("release.activate"))
        #expect(audit.last?["action"] == "release.rollback" && audit.last?["detail"] == "payment errors")
        // Rolled back is final.
        #expect(try test.direct.send("POST", "/v1/releases/1/activate", headers: Self.admin).json["code"] == "release-state")
        #expect(try test.direct.send("POST", "/v1/releases/1/rollback", headers: Self.admin).status == 409)
    }

    /// Bad input: 400 malformed with pointers, 422 invalid definitions with `/flows/<name>/…`
    /// pointers (checked against each other), 404 unknown release, 400 bad id.
    @Test func badReleasesAreProblems() throws {
        let test = try TestApp()
        func post(_ body: String) throws -> Response { try test.direct.send("POST", "/v1/releases", body: body, headers: Self.admin) }
        #expect(try post("[1]").status == 400)
        #expect(try post("{").status == 400)
        let noFlows = try post(#"{"description": "x"}"#)
        #expect(noFlows.status == 400 && noFlows.headers["Content-Type"] == "application/problem+json")
        #expect(noFlows.json["errors"][0]["pointer"] == "/flows")
        #expect(try post(#"{"flows": {"a": {}}, "extra": 1}"#).json["errors"].arrayValue?.contains { $0["pointer"] == "/extra" } == true)
        // The app without its basket: the pointer names the release's app.
        let missing = try post(#"{"flows": {"app": \#(Self.app)}}"#)
        #expect(missing.status == 422 && missing.json["code"] == "invalid-definition")
        #expect(missing.json["errors"].arrayValue?.contains { $0["pointer"].stringValue?.hasPrefix("/flows/app/") == true } == true,
                "\(missing.text)")
        let misnamed = try post(#"{"flows": {"signin": \#(Self.payment)}}"#)
        #expect(misnamed.status == 422)
        #expect(misnamed.json["errors"][0]["pointer"].stringValue?.hasPrefix("/flows/signin") == true)
        let badFlag = try post(#"{"flows": {"signin": \#(Self.signin)}, "flags": {"f": {"type": "nope"}}}"#)
        #expect(badFlag.status == 422 && badFlag.json["errors"][0]["pointer"].stringValue?.hasPrefix("/flags/f") == true)
        let badPin = try post(#"{"flows": {"signin": \#(Self.signin)}, "experiments": {"e": {"variants": [{"key": "a", "weight": 1, "flows": {"signin": 7}}]}}}"#)
        #expect(badPin.status == 422 && badPin.json["errors"][0]["pointer"].stringValue?.hasPrefix("/experiments/e/") == true, "\(badPin.text)")
        let concluded = try post(#"{"flows": {"signin": \#(Self.signin)}, "experiments": {"e": {"status": "concluded", "winner": "a", "variants": [{"key": "a", "weight": 1}]}}}"#)
        #expect(concluded.status == 422 && concluded.json["errors"][0]["pointer"] == "/experiments/e/status", "\(concluded.text)")
        let badTests = try post(#"{"flows": {"signin": \#(Self.signin)}, "tests": [{"scenarios": 3}]}"#)
        #expect(badTests.status == 422 && badTests.json["code"] == "invalid-scenarios")
        // Nothing was stored by the refused ones.
        #expect(try test.direct.send("GET", "/v1/releases", headers: Self.admin).json == ["releases": []])
        #expect(try test.direct.send("GET", "/v1/flows/signin/versions/1", headers: Self.admin).status == 404)
        #expect(try test.direct.send("GET", "/v1/releases/9", headers: Self.admin).status == 404)
        #expect(try test.direct.send("GET", "/v1/releases/x", headers: Self.admin).status == 400)
        #expect(try test.direct.send("POST", "/v1/releases/9/activate", headers: Self.admin).status == 404)
        #expect(try test.direct.send("GET", "/v1/releases").status == 401)
        let made = try post(Self.basketRelease())
        #expect(made.status == 201)
        #expect(try test.direct.send("POST", "/v1/releases/1/rollback", body: #"{"reason": 5}"#, headers: Self.admin).status == 400)
        #expect(try test.direct.send("POST", "/v1/releases/1/activate", body: #"{"now": true}"#, headers: Self.admin).status == 400)
        #expect(try test.direct.send("POST", "/v1/releases/1/rollback", headers: Self.admin).json["code"] == "release-state")
    }

    /// A failing test makes the release `failed` and activation refuses it (409 tests-failed); a
    /// release without tests is `draft` and goes live only with ?untested=true; re-running the
    /// tests with a fixed suite makes it ready.
    @Test func testsGateActivation() throws {
        let test = try TestApp()
        let wrong = Self.basketTests.replacingOccurrences(of: #""expect": {"screens": ["home.first"]}"#,
                                                            with: #""expect": {"screens": ["home.second"]}"#)
        let failed = try test.direct.send("POST", "/v1/releases", body: Self.basketRelease(tests: wrong), headers: Self.admin)
        #expect(failed.status == 201 && failed.json["state"] == "failed" && failed.json["tests"]["failed"] == 1)
        let refused = try test.direct.send("POST", "/v1/releases/1/activate?untested=true", headers: Self.admin)
        #expect(refused.status == 409 && refused.json["code"] == "tests-failed")
        let rerun = try test.direct.send("POST", "/v1/releases/1/test", body: #"{"tests": [\#(Self.basketTests)]}"#, headers: Self.admin)
        #expect(rerun.status == 200 && rerun.json["state"] == "ready", "\(rerun.text)")
        // The stored suite is re-run when no body is sent: it still fails.
        #expect(try test.direct.send("POST", "/v1/releases/1/test", headers: Self.admin).json["state"] == "failed")

        let untested = try test.direct.send("POST", "/v1/releases", body: Self.basketRelease(tests: nil), headers: Self.admin)
        #expect(untested.status == 201 && untested.json["state"] == "draft" && untested.json["tests"] == .null)
        #expect(untested.json["flows"] == ["app": 3, "basket": 2, "signin": 2, "payment": 2])
        #expect(try test.direct.send("POST", "/v1/releases/2/test", headers: Self.admin).status == 422)
        let notYet = try test.direct.send("POST", "/v1/releases/2/activate", headers: Self.admin)
        #expect(notYet.status == 409 && notYet.json["code"] == "release-untested")
        #expect(try test.direct.send("POST", "/v1/releases/2/activate?untested=true", headers: Self.admin).json["state"] == "live")
        #expect(try test.direct.send("POST", "/v1/releases/2/test", body: #"{"tests": [\#(Self.basketTests)]}"#,
                                     headers: Self.admin).json["code"] == "release-state")
    }

    /// Activation refuses when what is live moved since the tests ran (409 release-stale), until
    /// they run again; a rollback refuses when a later change moved its flows (409 release-superseded).
    @Test func staleAndSupersededReleases() throws {
        let test = try TestApp()
        #expect(try test.direct.send("POST", "/v1/releases", body: Self.basketRelease(), headers: Self.admin).status == 201)
        #expect(try test.direct.send("PUT", "/v1/flows/onboarding?activate=true", body: FlowAdminTests.shortOnboarding,
                                     headers: Self.admin).status == 201)
        let stale = try test.direct.send("POST", "/v1/releases/1/activate", headers: Self.admin)
        #expect(stale.status == 409 && stale.json["code"] == "release-stale" && stale.json["detail"].stringValue?.contains("onboarding") == true)
        #expect(try test.direct.send("POST", "/v1/releases/1/test", headers: Self.admin).json["state"] == "ready")
        #expect(try test.direct.send("POST", "/v1/releases/1/activate", headers: Self.admin).status == 200)

        let second = #"{"flows": {"signin": \#(Self.signin)}}"#
        #expect(try test.direct.send("POST", "/v1/releases", body: second, headers: Self.admin).json["flows"] == ["signin": 2])
        #expect(try test.direct.send("POST", "/v1/releases/2/activate?untested=true", headers: Self.admin).status == 200)
        let superseded = try test.direct.send("POST", "/v1/releases/1/rollback", headers: Self.admin)
        #expect(superseded.status == 409 && superseded.json["code"] == "release-superseded")
        #expect(superseded.json["detail"].stringValue?.contains("flow signin") == true)
        // Rolling back the later one first, then the first, restores everything.
        #expect(try test.direct.send("POST", "/v1/releases/2/rollback", headers: Self.admin).json["state"] == "rolled-back")
        #expect(try test.direct.send("GET", "/v1/flows/signin", headers: Self.admin).json["version"] == 1)
        #expect(try test.direct.send("POST", "/v1/releases/1/rollback", headers: Self.admin).json["state"] == "rolled-back")
        #expect(try test.direct.send("GET", "/v1/flows/signin", headers: Self.admin).status == 404)
        #expect(try test.direct.send("GET", "/v1/flows/app", headers: Self.admin).json["version"] == 1)
    }

    /// A release's flags and experiments go live with it; its experiment pins its own new
    /// version; rollback removes a flag it added and stores its experiment as stopped.
    @Test func flagsAndExperimentsFollowTheRelease() throws {
        let test = try TestApp()
        let body = #"""
            {"flows": {"onboarding": \#(FlowAdminTests.shortOnboarding)},
             "flags": {"basket-banner": {"variants": {"on": true, "off": false}, "defaultVariant": "on"}},
             "experiments": {"onboarding-length": \#(ExperimentAPITests.experiment)}}
            """#
        let made = try test.direct.send("POST", "/v1/releases", body: body, headers: Self.admin)
        #expect(made.status == 201, "\(made.text)")
        #expect(made.json["flags"] == ["basket-banner"] && made.json["experiments"] == ["onboarding-length"])
        #expect(try test.direct.send("GET", "/v1/experiments/onboarding-length", headers: Self.admin).status == 404)
        #expect(try test.direct.send("POST", "/v1/releases/1/activate?untested=true", headers: Self.admin).status == 200)
        #expect(try test.direct.send("GET", "/v1/flags/basket-banner", headers: Self.admin).status == 200)
        let running = try test.direct.send("GET", "/v1/experiments/onboarding-length", headers: Self.admin)
        #expect(running.status == 200 && running.json["status"] != "stopped")
        let client = SessionClient(sender: test.direct)
        #expect(try client.create(userId: "during").state["experiments"]["onboarding-length"] != .null)

        #expect(try test.direct.send("POST", "/v1/releases/1/rollback", headers: Self.admin).status == 200)
        #expect(try test.direct.send("GET", "/v1/flags/basket-banner", headers: Self.admin).status == 404)
        let stopped = try test.direct.send("GET", "/v1/experiments/onboarding-length", headers: Self.admin)
        #expect(stopped.status == 200 && stopped.json["status"] == "stopped", "\(stopped.text)")
        // Only a running experiment assigns: a new user gets none.
        #expect(try client.create(userId: "after").state["experiments"]["onboarding-length"] == .null)
        #expect(try test.direct.send("GET", "/v1/flows/onboarding", headers: Self.admin).json["version"] == 1)
    }

    /// With --require-review, activation needs an approval (409 review-required), the maker
    /// cannot approve (403 self-approval), another identity (a named publish key) can; an edit
    /// key makes releases but neither approves nor activates them.
    @Test func reviewNeedsAnotherIdentity() throws {
        let test = try TestApp(requireReview: true)
        let reviewerKey = try #require(try AdminKeyAPITests.make(test.direct, "reviewer", "publish")["key"].stringValue)
        let author = try #require(try AdminKeyAPITests.make(test.direct, "author", "edit")["key"].stringValue)
        // An edit key makes releases but cannot approve or activate them.
        let byAuthor = try test.direct.send("POST", "/v1/releases", body: Self.basketRelease(), headers: AdminKeyAPITests.bearer(author))
        #expect(byAuthor.status == 201 && byAuthor.json["createdBy"] == "key:author")
        #expect(try test.direct.send("POST", "/v1/releases/1/activate", headers: AdminKeyAPITests.bearer(author)).json["code"] == "insufficient-role")
        #expect(try test.direct.send("POST", "/v1/releases/1/approve", headers: AdminKeyAPITests.bearer(author)).status == 403)
        #expect(try test.direct.send("POST", "/v1/releases", body: Self.basketRelease(tests: nil), headers: Self.admin).status == 201)
        #expect(try test.direct.send("POST", "/v1/releases/2/test", body: #"{"tests": [\#(Self.basketTests)]}"#, headers: Self.admin).status == 200)
        let unreviewed = try test.direct.send("POST", "/v1/releases/2/activate", headers: Self.admin)
        #expect(unreviewed.status == 409 && unreviewed.json["code"] == "review-required")
        let selfApproval = try test.direct.send("POST", "/v1/releases/2/approve", headers: Self.admin)
        #expect(selfApproval.status == 403 && selfApproval.json["code"] == "self-approval")
        let approved = try test.direct.send("POST", "/v1/releases/2/approve", headers: AdminKeyAPITests.bearer(reviewerKey))
        #expect(approved.status == 200 && approved.json["approvedBy"] == "key:reviewer" && approved.json["createdBy"] == "admin",
                "\(approved.text)")
        let live = try test.direct.send("POST", "/v1/releases/2/activate", headers: Self.admin)
        #expect(live.status == 200 && live.json["state"] == "live")
        let actions = try test.direct.send("GET", "/v1/audit", headers: Self.admin).json["entries"].arrayValue?.compactMap { $0["action"].stringValue }
        #expect(actions?.contains("release.approve") == true)
        // Without the option, no approval is needed.
        let open = try TestApp()
        #expect(try open.direct.send("POST", "/v1/releases", body: Self.basketRelease(), headers: Self.admin).status == 201)
        #expect(try open.direct.send("POST", "/v1/releases/1/activate", headers: Self.admin).status == 200)
    }

    /// A failure in the middle of an activation (a trigger refuses the release's own update,
    /// after its flows were made live and its flag put) leaves everything as it was.
    @Test(.enabled(if: TestStoreKind.isSQLite)) func failedActivationChangesNothing() throws {
        let test = try TestApp()
        let body = #"{"flows": {"signin": \#(Self.signin), "onboarding": \#(FlowAdminTests.shortOnboarding)}, "flags": {"f": {"variants": {"on": true, "off": false}, "defaultVariant": "on"}}}"#
        #expect(try test.direct.send("POST", "/v1/releases", body: body, headers: Self.admin).status == 201)
        let fingerprint = try test.store.definitionsFingerprint()
        let queue = try DatabaseQueue(path: test.database.path)
        try queue.write { db in
            try db.execute(sql: """
                CREATE TRIGGER refuse_activation BEFORE UPDATE OF state ON releases
                BEGIN SELECT RAISE(ABORT, 'planted failure'); END
                """)
        }
        let failed = try test.direct.send("POST", "/v1/releases/1/activate?untested=true", headers: Self.admin)
        #expect(failed.status >= 500, "\(failed.text)")
        #expect(try test.store.liveFlowVersions()["onboarding"] == 1)
        #expect(try test.store.liveFlowVersions()["signin"] == nil)
        #expect(try test.store.allDefinitions(.flag).contains { $0.key == "f" } == false)
        #expect(try test.store.release(id: 1)?.state == .draft)
        #expect(try test.store.definitionsFingerprint() == fingerprint)
        #expect(try test.direct.send("GET", "/v1/flows/onboarding", headers: Self.admin).json["version"] == 1)
        try queue.write { db in try db.execute(sql: "DROP TRIGGER refuse_activation") }
        #expect(try test.direct.send("POST", "/v1/releases/1/activate?untested=true", headers: Self.admin).status == 200)
        #expect(try test.store.liveFlowVersions()["signin"] == 1)
    }

    /// Another node (another application on the same database) serves an activation and a
    /// rollback: its fingerprint check reloads the definitions.
    @Test(.enabled(if: TestStoreKind.isPostgreSQL, "several nodes share a PostgreSQL database"))
    func anotherNodeSeesActivationAndRollback() throws {
        let test = try TestApp()
        let other = try TestApp(beside: test)
        let before = try test.store.definitionsFingerprint()
        #expect(try test.direct.send("POST", "/v1/releases", body: Self.basketRelease(), headers: Self.admin).status == 201)
        #expect(try test.direct.send("POST", "/v1/releases/1/activate", headers: Self.admin).status == 200)
        let activated = try test.store.definitionsFingerprint()
        #expect(activated != before)
        let client = SessionClient(sender: other.direct)
        let session = try Self.onboarded(client, "other-node")
        #expect(try client.apply(session, #"{"type":"basket.open"}"#).features == ["home.first", "basket.cart"])
        #expect(try test.direct.send("POST", "/v1/releases/1/rollback", headers: Self.admin).status == 200)
        #expect(try test.store.definitionsFingerprint() != activated)
        #expect(try other.direct.send("GET", "/v1/flows/app", headers: Self.admin).json["version"] == 1)
    }

    /// The seam of the rollouts branch: a release marked rolling out makes nothing live; the
    /// hook a rollout reaching 100 % calls activates it fully, the one a failed guardrail calls
    /// rolls it back with the verdict as reason and the figures in the audit log's detail.
    @Test func rolloutHooksActivateAndRollBack() throws {
        let test = try TestApp()
        let hooks = ReleaseService.rolloutHooks(store: test.store, registry: test.app.registry, logger: Logger(label: "test"))
        #expect(try test.direct.send("POST", "/v1/releases", body: Self.basketRelease(), headers: Self.admin).status == 201)
        let rolling = try #require(try test.store.beginReleaseRollout(id: 1, rules: ReleaseActivationRules(), audit: AuditStamp(credential: "admin")))
        #expect(rolling.state == .rollingOut && rolling.previous == nil)
        #expect(try test.direct.send("GET", "/v1/flows/app", headers: Self.admin).json["version"] == 1)
        #expect(try test.direct.send("GET", "/v1/releases/1", headers: Self.admin).json["state"] == "rolling-out")
        #expect(throws: ReleaseConflict.self) { try test.store.beginReleaseRollout(id: 1, rules: ReleaseActivationRules(), audit: AuditStamp(credential: "admin")) }
        try hooks.activate(1)
        let live = try test.direct.send("GET", "/v1/releases/1", headers: Self.admin).json
        #expect(live["state"] == "live" && live["previous"]["app"] == 1)
        #expect(try test.direct.send("GET", "/v1/flows/app", headers: Self.admin).json["version"] == 2)

        let second = #"{"flows": {"signin": \#(Self.signin)}}"#
        #expect(try test.direct.send("POST", "/v1/releases", body: second, headers: Self.admin).status == 201)
        // Untested: refused as an activation would be.
        #expect(throws: ReleaseConflict.self) { try test.store.beginReleaseRollout(id: 2, rules: ReleaseActivationRules(), audit: AuditStamp(credential: "admin")) }
        _ = try test.store.beginReleaseRollout(id: 2, rules: ReleaseActivationRules(allowUntested: true), audit: AuditStamp(credential: "admin"))
        try hooks.rollBack(2, "guardrail refusals is worse", "refusals 12/100 on the release vs 2/100 before")
        let back = try test.direct.send("GET", "/v1/releases/2", headers: Self.admin).json
        #expect(back["state"] == "rolled-back" && back["reason"] == "guardrail refusals is worse")
        #expect(try test.direct.send("GET", "/v1/flows/signin", headers: Self.admin).json["version"] == 1)
        let last = try #require(try test.store.auditLog(after: 0, limit: 1000).last)
        #expect(last.action == "release.rollback" && last.credential == "rollout:2" && last.detail == "refusals 12/100 on the release vs 2/100 before")
        // A rollout of a release rolled back is refused as its activation would be.
        let again = try test.direct.send("POST", "/v1/releases/2/activate", body: #"{"rollout": {"percentage": 10}}"#, headers: Self.admin)
        #expect(again.status == 409 && again.json["code"] == "release-state", "\(again.text)")
    }

    /// Sessions created while a release goes live, through a real socket from another thread,
    /// run all the old versions or all the new ones, never a mix: the store's transaction and the
    /// registry's swap are each one step.
    @Test func sessionsDuringActivationSeeOneSide() throws {
        let test = try TestApp()
        #expect(try test.direct.send("POST", "/v1/releases", body: Self.basketRelease(), headers: Self.admin).status == 201)
        let ids = try test.withLiveServer { (sender: SocketSender) throws -> [String] in
            let client = SessionClient(sender: sender)
            let made = Mutex<[String]>([])
            let stop = Atomic<Bool>(false)
            let creator = Thread {
                var index = 0
                while !stop.load(ordering: .acquiring) || index < 5 {
                    if let session = try? client.create(userId: "during-\(index)") { made.withLock { $0.append(session.id) } }
                    index += 1
                }
            }
            creator.start()
            while made.withLock({ $0.count }) < 5 { Thread.sleep(forTimeInterval: 0.005) }
            #expect(try sender.send("POST", "/v1/releases/1/activate", headers: Self.admin).status == 200)
            let after = made.withLock { $0.count }
            while made.withLock({ $0.count }) < after + 5 { Thread.sleep(forTimeInterval: 0.005) }
            stop.store(true, ordering: .releasing)
            while !creator.isFinished { Thread.sleep(forTimeInterval: 0.005) }
            return made.withLock { $0 }
        }
        let old = ["app": 1, "home": 1, "modal": 1, "onboarding": 1]
        let new = ["app": 2, "basket": 1, "home": 1, "signin": 1, "modal": 1, "onboarding": 1, "payment": 1]
        var sides = (old: 0, new: 0)
        for id in ids {
            let versions = try #require(try test.store.session(id: id)).flowVersions
            let decoded = DefinitionRegistry.decode(versions) ?? [:]
            let known = decoded.filter { old.keys.contains($0.key) || new.keys.contains($0.key) }
            #expect(known == old || known == new, "session \(id) runs \(versions)")
            if known == old { sides.old += 1 } else if known == new { sides.new += 1 }
        }
        #expect(sides.old >= 5 && sides.new >= 5, "\(sides)")
    }
}
