// Rollouts end to end on the run's store: a release with a planted regression rolls itself back
// within a bounded number of sessions; a healthy one over many sessions does not; the routes.
import FeatureFlags
@testable import FlowServer
import FlowStore
import Foundation
import HTTPServer
import HTTPTestClient
import JSON
import Synchronization
import StoreTestSupport
import Testing
import TestSupport

struct RolloutTests {
    static let admin = FlowAdminTests.admin

    /// Onboarding whose new screen refuses its only action: `onboarding.showSecond` pushes
    /// `onboarding.review`, whose `onboarding.completed` needs a user state no flow sets.
    static let plantedRegression = #"""
        {"name": "onboarding", "kind": "stacked", "initial": ["onboarding.first"],
         "on": {"onboarding.showSecond": [{"from": "onboarding.first", "do": [{"push": "onboarding.review"}]}],
                "onboarding.completed": [{"from": "onboarding.review", "when": {"user": "termsAccepted", "is": true},
                                          "do": [{"bubble": {}}]}]}}
        """#

    /// The shipped onboarding again, as a new version: nothing worse on either side.
    static var sameOnboarding: String {
        get throws { try String(contentsOf: Self.repo.appending(path: "flows/onboarding.json"), encoding: .utf8) }
    }

    static let repo = Repository.root

    /// Stores `definition` as a new, not live, version of onboarding; returns the version.
    static func storeVersion(_ test: TestApp, _ definition: String) throws -> Int {
        let put = try test.direct.send("PUT", "/v1/flows/onboarding", body: definition, headers: admin)
        try #require(put.status == 201, "\(put.text)")
        return try #require(put.json["version"].integerValue)
    }

    /// Makes a release of `definition` as the next onboarding version (not live); its id and
    /// that version.
    static func release(_ test: TestApp, _ definition: String) throws -> (id: Int, version: Int) {
        let made = try test.direct.send("POST", "/v1/releases", body: #"{"description": "onboarding change", "flows": {"onboarding": \#(definition)}}"#,
                                        headers: admin)
        try #require(made.status == 201, "\(made.text)")
        return (try #require(made.json["id"].integerValue), try #require(made.json["flows"]["onboarding"].integerValue))
    }

    /// Activates release `id` with a rollout of `plan` (JSON); the release document.
    @discardableResult
    static func rollOut(_ test: TestApp, _ id: Int, _ plan: String) throws -> JSONValue {
        let answer = try test.direct.send("POST", "/v1/releases/\(id)/activate?untested=true", body: #"{"rollout": \#(plan)}"#, headers: admin)
        try #require(answer.status == 200, "\(answer.text)")
        return answer.json
    }

    /// The audit log's entries.
    static func audit(_ test: TestApp) throws -> [JSONValue] {
        try test.direct.send("GET", "/v1/audit?limit=1000", headers: admin).json["entries"].arrayValue ?? []
    }

    /// Whether `userId` lands on the release's side of release `id` at `percentage`.
    static func onRelease(_ userId: String, release id: Int, percentage: Int) -> Bool {
        (Bucketing.hash(seed: "release-\(id)", value: userId, version: 2) ?? 1) < Double(percentage) / 100
    }

    /// A new user walks onboarding as far as the screens let them: show the second screen, then
    /// complete. Returns whether completing was applied.
    static func walk(_ client: SessionClient, _ userId: String) throws -> Bool {
        let session = try client.create(userId: userId)
        try client.apply(session, #"{"type":"onboarding.showSecond"}"#)
        return try client.act(session, #"{"type":"onboarding.completed"}"#).status == 200
    }

    /// The planted regression rolls itself back at the first look where both sides have
    /// minSessions (10) sessions: 100 % refused against 0 % is significant there (gbstats'
    /// sequential test, alpha 0.05, tuning 200, needs 9 per side; see
    /// SequentialProportionTestTests.plantedRegressionBound). Looked at after every session, the
    /// bound is that session, and not one before it: nothing is judged below minSessions.
    @Test func plantedRegressionRollsItselfBack() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let (id, _) = try Self.release(test, Self.plantedRegression)
        let started = try Self.rollOut(test, id, #"{"percentage": 50, "guardrails": {"minSessions": 10, "tuning": 200}}"#)
        #expect(started["state"] == "rolling-out")
        #expect(started["rollout"]["percentage"] == 50)
        #expect(try test.direct.send("GET", "/v1/flows/onboarding", headers: Self.admin).json["version"] == 1)

        var sides = (new: 0, old: 0)
        var bound: Int?
        var rolledBackAt: Int?
        for index in 1...200 where rolledBackAt == nil {
            let user = "planted-\(index)"
            let onRelease = Self.onRelease(user, release: id, percentage: 50)
            let completed = try Self.walk(client, user)
            #expect(completed == !onRelease, "\(user): on the release \(onRelease), completed \(completed)")
            if onRelease { sides.new += 1 } else { sides.old += 1 }
            if bound == nil, sides.new >= 10, sides.old >= 10 { bound = index }
            test.app.rollouts.drain()
            test.app.rollouts.check()
            if try test.store.rollout(releaseId: id)?.state == RolloutRecord.rolledBack { rolledBackAt = index }
        }
        let expected = try #require(bound)
        #expect(rolledBackAt == expected, "rolled back after session \(rolledBackAt ?? -1), bound \(expected)")

        let document = try test.direct.send("GET", "/v1/releases/\(id)/rollout", headers: Self.admin).json
        #expect(document["state"] == "rolled-back")
        let verdict = document["verdict"].stringValue ?? ""
        #expect(verdict.hasPrefix("rolled back: refused actions 100% vs 0%"), "\(verdict)")
        let arms: JSONValue = document["arms"]
        let new: JSONValue = arms["new"], old: JSONValue = arms["old"]
        #expect(new["refused"].integerValue == new["sessions"].integerValue)
        #expect(old["refused"].integerValue == 0)
        // The release is rolled back, its document says so, and so does the audit log.
        let release = try test.direct.send("GET", "/v1/releases/\(id)", headers: Self.admin).json
        #expect(release["state"] == "rolled-back")
        #expect(release["rollout"]["state"] == "rolled-back")
        #expect((release["reason"].stringValue ?? "").hasPrefix("rolled back: refused actions 100% vs 0%"), "\(release["reason"])")
        let rollbacks = try Self.audit(test).filter { $0["action"] == "release.rollback" }
        #expect(rollbacks.count == 1)
        #expect(rollbacks.first?["credential"].stringValue == "rollout:\(id)")
        let detail = rollbacks.first?["detail"].stringValue ?? ""
        #expect(detail.contains("guardrail refused: 10/10 on the release vs 0/14 before"), "\(detail)")
        // Rolled back: every new session runs the live onboarding, the release's users too.
        let later = try #require((1...50).map { "later-\($0)" }.first { Self.onRelease($0, release: id, percentage: 50) })
        #expect(try Self.walk(client, later))
        // Checking again, here or on another node, does nothing more.
        test.app.rollouts.check()
        #expect(try Self.audit(test).filter { $0["action"] == "release.rollback" }.count == 1)
    }

    /// A release no worse than what is live, looked at after every one of 400 sessions where
    /// some users stop before completing, is never rolled back and its verdict says healthy.
    @Test func healthyRolloutIsNotRolledBack() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let version = try Self.storeVersion(test, try Self.sameOnboarding)
        let plan = RolloutPlan(percentage: 50, guardrails: .init(metric: "onboarded", alpha: 0.05, minSessions: 10, tuning: 200))
        _ = try test.app.rollouts.begin(releaseId: 2, flows: ["onboarding": version], plan: plan)
        var random = SeededGenerator(seed: 24)
        for index in 1...400 {
            let session = try client.create(userId: "healthy-\(index)")
            // Three users in ten stop on the first screen, whichever side they are on.
            if Double.random(in: 0..<1, using: &random) < 0.3 { continue }
            try client.apply(session, #"{"type":"onboarding.showSecond"}"#)
            try client.apply(session, #"{"type":"onboarding.completed"}"#)
            test.app.rollouts.drain()
            test.app.rollouts.check()
        }
        test.app.rollouts.drain()
        test.app.rollouts.check()
        let document = try test.direct.send("GET", "/v1/releases/2/rollout", headers: Self.admin).json
        #expect(document["state"] == "rolling-out")
        #expect((document["verdict"].stringValue ?? "").hasPrefix("healthy: "), "\(document["verdict"])")
        let arms: JSONValue = document["arms"]
        let new: JSONValue = arms["new"], old: JSONValue = arms["old"]
        #expect((new["sessions"].integerValue ?? 0) + (old["sessions"].integerValue ?? 0) == 400)
        #expect(new["refused"].integerValue == 0)
    }

    /// The routes: 404 without a rollout, a raise by hand, to the next step, never down (409),
    /// bad bodies 400 `invalid-rollout`; at 100 the release's versions are live and the rollout
    /// completed, after which it does not move.
    @Test func raisingByHand() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        #expect(try test.direct.send("GET", "/v1/releases/4/rollout", headers: Self.admin).status == 404)
        #expect(try test.direct.send("GET", "/v1/releases/x/rollout", headers: Self.admin).status == 400)
        #expect(try test.direct.send("GET", "/v1/releases/4/rollout").status == 401)
        #expect(try test.direct.send("POST", "/v1/releases/4/rollout", body: "{}", headers: Self.admin).status == 404)
        let (id, version) = try Self.release(test, Self.plantedRegression)
        try Self.rollOut(test, id, #"{"percentage": 10, "steps": [25, 60]}"#)
        // One rollout at a time: a second release's is refused and leaves it as it was.
        let (second, _) = try Self.release(test, try Self.sameOnboarding)
        let refused = try test.direct.send("POST", "/v1/releases/\(second)/activate?untested=true", body: #"{"rollout": {"percentage": 5}}"#,
                                           headers: Self.admin)
        #expect(refused.status == 409)
        #expect(refused.json["code"] == "rollout-conflict")
        #expect(try test.direct.send("GET", "/v1/releases/\(second)", headers: Self.admin).json["state"] == "draft")
        let badPlan = try test.direct.send("POST", "/v1/releases/\(second)/activate?untested=true", body: #"{"rollout": {"percentage": 500}}"#,
                                           headers: Self.admin)
        #expect(badPlan.json["code"] == "invalid-rollout")
        #expect(badPlan.json["errors"][0]["pointer"] == "/rollout/percentage")
        let next = try test.direct.send("POST", "/v1/releases/\(id)/rollout", headers: Self.admin)
        #expect(next.status == 200, "\(next.text)")
        #expect(next.json["percentage"] == 25)
        let raised = try test.direct.send("POST", "/v1/releases/\(id)/rollout", body: #"{"percentage": 40}"#, headers: Self.admin)
        #expect(raised.json["percentage"] == 40)
        // Each raise is in the audit log: who, and the share before and after.
        let raises = try Self.audit(test).filter { $0["action"] == "rollout.raise" }
        #expect(raises.map { "\($0["oldVersion"])→\($0["newVersion"]) \($0["credential"])" } == ["10→25 \"admin\"", "25→40 \"admin\""],
                "\(raises)")
        let lower = try test.direct.send("POST", "/v1/releases/\(id)/rollout", body: #"{"percentage": 20}"#, headers: Self.admin)
        #expect(lower.status == 409)
        #expect(lower.json["code"] == "rollout-conflict")
        for body in [#"{"percentage": 0}"#, #"{"percentage": "50"}"#, #"{"percent": 50}"#, "[50]"] {
            let bad = try test.direct.send("POST", "/v1/releases/\(id)/rollout", body: body, headers: Self.admin)
            #expect(bad.status == 400, "\(body)")
            #expect(bad.json["code"] == "invalid-rollout", "\(body)")
        }
        #expect(try test.direct.send("POST", "/v1/releases/\(id)/rollout", body: "{", headers: Self.admin).json["code"] == "malformed-request")
        // Users on the release at 40 % are a superset of those at 25 %: raising moves users one way.
        let users = (1...200).map { "u\($0)" }
        let at25 = Set(users.filter { Self.onRelease($0, release: id, percentage: 25) })
        let at40 = Set(users.filter { Self.onRelease($0, release: id, percentage: 40) })
        #expect(at25.isSubset(of: at40) && at25.count < at40.count)
        let onIt = try #require(at40.sorted().first)
        #expect(try client.create(userId: onIt).state.features == ["onboarding.first"])
        #expect(try Self.walk(client, onIt) == false)
        // A plain activation of a release rolling out would leave its rollout running: refused,
        // saying how to take it to everybody.
        let plain = try test.direct.send("POST", "/v1/releases/\(id)/activate", headers: Self.admin)
        #expect(plain.status == 409)
        #expect(plain.json["code"] == "release-state")
        #expect(try test.store.rollout(releaseId: id)?.state == RolloutRecord.rollingOut)
        let full = try test.direct.send("POST", "/v1/releases/\(id)/rollout", body: #"{"percentage": 100}"#, headers: Self.admin)
        #expect(full.json["state"] == "completed")
        #expect(full.json["percentage"] == 100)
        #expect(test.app.registry.liveVersions["onboarding"] == version)
        #expect(try test.direct.send("GET", "/v1/releases/\(id)", headers: Self.admin).json["state"] == "live")
        #expect(try test.direct.send("POST", "/v1/releases/\(id)/rollout", headers: Self.admin).status == 409)
        let everyone = try #require(users.first { !at40.contains($0) })
        #expect(try Self.walk(client, everyone) == false)
    }

    /// A client that lists its features and lacks a screen of the release stays on what is live
    /// although its user hashed onto the release, and is left out of the guardrails' counts.
    @Test func clientsThatCannotDrawTheReleaseStayOnTheOldSide() throws {
        let test = try TestApp()
        let (id, version) = try Self.release(test, Self.plantedRegression)
        try Self.rollOut(test, id, #"{"percentage": 50}"#)
        let users = (1...200).map { "draw-\($0)" }.filter { Self.onRelease($0, release: id, percentage: 50) }
        let (oldBuildUser, newBuildUser) = (try #require(users.first), try #require(users.last))
        func onboardingVersion(_ created: Response) throws -> Int? {
            let json: JSONValue = created.json
            let token = json["session"]["token"].stringValue ?? ""
            let session = json["session"]["id"].stringValue ?? ""
            let bundle: JSONValue = try test.direct.send("GET", "/v1/sessions/\(session)/bundle",
                                                         headers: [("Authorization", "Bearer \(token)")]).json
            return bundle["flowVersions"]["onboarding"].integerValue
        }
        // A build that draws the shipped screens but not onboarding.review, the release's new one.
        let features = #"["home.first","home.second","modal","onboarding.faceScan","onboarding.first","onboarding.second","login.form","checkout.cart","checkout.review","address.list","address.form","address.row","paywall.offer","purchase"]"#
        let oldBuild = try test.direct.send("POST", "/v1/sessions", body: #"{"userId": "\#(oldBuildUser)", "client": {"platform": "ios", "features": \#(features)}}"#)
        #expect(oldBuild.status == 201, "\(oldBuild.text)")
        #expect(try onboardingVersion(oldBuild) == 1)
        let newBuild = try test.direct.send("POST", "/v1/sessions", body: #"{"userId": "\#(newBuildUser)"}"#)
        #expect(try onboardingVersion(newBuild) == version)
        // Only the session that runs the release counts on its side.
        var counted: [String: GuardrailCounts] = [:]
        for _ in 0..<400 {  // up to 20 s: the counts are written on a queue of their own
            counted = try test.store.rolloutCounts(releaseId: id)
            if counted["new"]?.sessions == 1 { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(counted["new"]?.sessions == 1, "\(counted)")
    }

    /// With an interval, a look after the step is due raises the rollout to its next step (and
    /// schedules the one after); one not yet due does nothing.
    @Test func scheduleRaisesTheShare() throws {
        let test = try TestApp()
        let version = try Self.storeVersion(test, try Self.sameOnboarding)
        let start = Date()
        var guardrails = RolloutPlan.Guardrails()
        guardrails.minSessions = 2
        _ = try test.app.rollouts.begin(releaseId: 6, flows: ["onboarding": version],
                                        plan: RolloutPlan(percentage: 10, steps: [50, 100], interval: 600, guardrails: guardrails), now: start)
        test.app.rollouts.check(now: start.addingTimeInterval(300))
        #expect(try test.store.rollout(releaseId: 6)?.percentage == 10)
        // Due, but nothing judged yet (no session on either side): a quiet rollout waits.
        test.app.rollouts.check(now: start.addingTimeInterval(601))
        #expect(try test.store.rollout(releaseId: 6)?.percentage == 10)
        for (index, arm) in ["new", "new", "old", "old"].enumerated() {
            try test.store.insertRolloutSession(sessionId: "scheduled-\(index)", releaseId: 6, arm: arm, at: Timestamp.string(start))
        }
        test.app.rollouts.check(now: start.addingTimeInterval(602))
        let raised = try #require(try test.store.rollout(releaseId: 6))
        #expect(raised.percentage == 50)
        #expect(raised.nextStepAt == Timestamp.string(start.addingTimeInterval(1202)))
        test.app.rollouts.check(now: start.addingTimeInterval(1203))
        #expect(try test.store.rollout(releaseId: 6)?.state == RolloutRecord.completed)
    }

    /// A plan's problems are 400 `invalid-rollout` with a pointer each; defaults fill the rest.
    @Test func planValidation() throws {
        func problems(_ text: String) -> [String] {
            do throws(ResponseError) {
                _ = try RolloutPlan(json: (try? JSONParser.parse(text)) ?? .null)
                return []
            } catch {
                return error.response.json["errors"].arrayValue?.compactMap { $0["pointer"].stringValue } ?? ["?"]
            }
        }
        #expect(problems(#"{"percentage": 10}"#).isEmpty)
        #expect(problems(#"{"percentage": 10, "steps": [25, 100], "interval": "10m", "guardrails": {"metric": "home.first", "alpha": 0.01, "minSessions": 5, "tuning": 300}}"#).isEmpty)
        #expect(problems(#"{"percentage": 0}"#) == ["/rollout/percentage"])
        // 100 from the start is a plain activation, not a rollout.
        #expect(problems(#"{"percentage": 100}"#) == ["/rollout/percentage"])
        #expect(problems(#"{"percentage": 10, "steps": [25, 20]}"#) == ["/rollout/steps/1"])
        #expect(problems(#"{"percentage": 10, "steps": [101]}"#) == ["/rollout/steps/0"])
        #expect(problems(#"{"percentage": 10, "interval": "10m"}"#) == ["/rollout/interval"])
        #expect(problems(#"{"percentage": 10, "steps": [50], "interval": "soon"}"#) == ["/rollout/interval"])
        #expect(problems(#"{"percentage": 10, "guardrails": {"alpha": 0.9, "minSessions": 0, "metric": "", "x": 1}}"#)
                == ["/rollout/guardrails/x", "/rollout/guardrails/metric", "/rollout/guardrails/alpha", "/rollout/guardrails/minSessions"])
        #expect(problems(#"{"percentage": 10, "speed": 2}"#) == ["/rollout/speed"])
        #expect(problems("[]") == ["/rollout"])
        let plan = try RolloutPlan(json: try JSONParser.parse(#"{"percentage": 5, "guardrails": {"metric": "onboarding.completed"}}"#))
        #expect(plan.guardrails == RolloutPlan.Guardrails())
        #expect(RolloutPlan.stored(plan.json.jsonText) == plan)
    }

    /// Two nodes on one database both look at a failing rollout at once: the release is rolled
    /// back once, by one of them, and both then put every new session on the live versions.
    @Test(.enabled(if: TestStoreKind.isPostgreSQL, "several nodes share a PostgreSQL database"))
    func severalNodesRollBackOnce() throws {
        let a = try TestApp()
        let b = try TestApp(beside: a)
        let (id, _) = try Self.release(a, Self.plantedRegression)
        try Self.rollOut(a, id, #"{"percentage": 50, "guardrails": {"minSessions": 10, "tuning": 200}}"#)
        b.app.rollouts.reload()
        let nodes = [SessionClient(sender: a.direct), SessionClient(sender: b.direct)]
        for index in 1...40 { _ = try Self.walk(nodes[index % 2], "node-user-\(index)") }
        a.app.rollouts.drain()
        b.app.rollouts.drain()
        let together = DispatchGroup()
        for node in [a, b] {
            DispatchQueue.global().async(group: together) { node.app.rollouts.check() }
        }
        together.wait()
        a.app.rollouts.check()
        b.app.rollouts.check()
        #expect(try Self.audit(a).filter { $0["action"] == "release.rollback" }.count == 1)
        #expect(try a.store.rollout(releaseId: id)?.state == RolloutRecord.rolledBack)
        #expect(try b.direct.send("GET", "/v1/releases/\(id)", headers: Self.admin).json["state"] == "rolled-back")
        let later = try #require((1...50).map { "after-\($0)" }.first { Self.onRelease($0, release: id, percentage: 50) })
        #expect(try Self.walk(nodes[1], later))
    }

    /// Taps sent in a batch count like taps posted one by one: a refusal, a conversion, and a
    /// dead end (a screen with no action at all) are each marked on the session's side.
    @Test func batchesAndDeadEndsAreCounted() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let planted = try Self.storeVersion(test, Self.plantedRegression)
        _ = try test.app.rollouts.begin(releaseId: 9, flows: ["onboarding": planted], plan: RolloutPlan(percentage: 50))
        let users = (1...40).map { "batch-\($0)" }
        let onIt = try #require(users.first { Self.onRelease($0, release: 9, percentage: 50) })
        let off = try #require(users.first { !Self.onRelease($0, release: 9, percentage: 50) })
        for user in [onIt, off] {
            let session = try client.create(userId: user)
            _ = try client.batch(session, [Tap(key: "k1", version: 0, action: #"{"type":"onboarding.showSecond"}"#),
                                           Tap(key: "k2", version: 1, action: #"{"type":"onboarding.completed"}"#)])
        }
        test.app.rollouts.drain()
        let counts = try test.store.rolloutCounts(releaseId: 9)
        #expect(counts["new"] == GuardrailCounts(sessions: 1, refused: 1, deadEnds: 0, conversions: 0))
        #expect(counts["old"] == GuardrailCounts(sessions: 1, refused: 0, deadEnds: 0, conversions: 1))
        // A screen that offers nothing at all is a dead end, at creation already.
        let stuck = #"""
            {"name": "onboarding", "kind": "stacked", "initial": ["onboarding.first"],
             "on": {"onboarding.completed": [{"from": "onboarding.first", "when": {"user": "termsAccepted", "is": true},
                                              "do": [{"bubble": {}}]}],
                    "onboarding.faceScanVerified": [{"from": "onboarding.first", "when": {"user": "termsAccepted", "is": true},
                                                     "do": [{"bubble": {}}]}]}}
            """#
        let stuckVersion = try Self.storeVersion(test, stuck)
        _ = try test.app.rollouts.stop(releaseId: 9, reason: "next test")
        _ = try test.app.rollouts.begin(releaseId: 10, flows: ["onboarding": stuckVersion], plan: RolloutPlan(percentage: 50))
        let stuckUser = try #require(users.first { Self.onRelease($0, release: 10, percentage: 50) })
        let stuckSession = try client.create(userId: stuckUser)
        let available = try test.direct.send("GET", "/v1/sessions/\(stuckSession.id)/actions/available", headers: stuckSession.auth)
        #expect(available.json["actions"].arrayValue?.isEmpty == true, "\(available.text)")
        test.app.rollouts.drain()
        #expect(try test.store.rolloutCounts(releaseId: 10)["new"]?.deadEnds == 1)
        #expect(try test.store.rollout(releaseId: 9)?.verdict == "rolled back by hand: next test")
    }

    /// What the releases' activate route calls with its body: no `rollout`, no rollout (nil); a
    /// plan starts one and answers its document; a bad plan is 400 `invalid-rollout` with its
    /// pointer; a second release while one rolls out is 409 `rollout-conflict`.
    @Test func activationBodyStartsARollout() throws {
        let test = try TestApp()
        let version = try Self.storeVersion(test, try Self.sameOnboarding)
        func start(_ id: Int, _ body: String) -> Result<JSONValue?, ResponseError> {
            Result { () throws(ResponseError) in
                try test.app.startRollout(releaseId: id, flows: ["onboarding": version], body: try? JSONParser.parse(body))
            }
        }
        #expect(try start(11, "{}").get() == nil)
        #expect(try start(11, #"{"rollout": null}"#).get() == nil)
        guard case .failure(let bad) = start(11, #"{"rollout": {"percentage": 120}}"#) else { Issue.record("accepted"); return }
        #expect(bad.response.status == 400)
        #expect(bad.response.json["code"] == "invalid-rollout")
        #expect(bad.response.json["errors"][0]["pointer"] == "/rollout/percentage")
        let started = try #require(try start(11, #"{"rollout": {"percentage": 10, "steps": [50], "interval": "1h"}}"#).get())
        #expect(started["state"] == "rolling-out")
        #expect(started["percentage"] == 10)
        #expect(started["flows"]["onboarding"].integerValue == version)
        #expect(started["nextStepAt"].stringValue != nil)
        #expect((started["verdict"].stringValue ?? "").hasPrefix("waiting: 0 of 100 sessions on the release"))
        guard case .failure(let busy) = start(12, #"{"rollout": {"percentage": 10}}"#) else { Issue.record("accepted"); return }
        #expect(busy.response.status == 409)
        #expect(busy.response.json["code"] == "rollout-conflict")
    }

    /// Through a real socket, with nobody calling `check`: the monitor (every 10 sessions of the
    /// rollout, and every second) rolls the planted regression back on its own, within a
    /// second or so of the sessions that show it.
    @Test func monitorActsOnItsOwn() throws {
        let test = try TestApp()
        let (id, _) = try Self.release(test, Self.plantedRegression)
        try Self.rollOut(test, id, #"{"percentage": 50, "guardrails": {"minSessions": 10, "tuning": 200}}"#)
        try test.withLiveServer { sender in
            let client = SessionClient(sender: sender)
            for index in 1...60 { _ = try Self.walk(client, "live-\(index)") }
            var state: JSONValue = .null
            for _ in 0..<300 {  // up to 30 s on a loaded machine; a second or so alone
                state = try sender.send("GET", "/v1/releases/\(id)", headers: Self.admin).json["state"]
                if state == "rolled-back" { break }
                Thread.sleep(forTimeInterval: 0.1)
            }
            #expect(state == "rolled-back")
        }
    }
}
