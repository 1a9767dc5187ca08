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

    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Stores `definition` as a new, not live, version of onboarding; returns the version.
    static func storeVersion(_ test: TestApp, _ definition: String) throws -> Int {
        let put = try test.direct.send("PUT", "/v1/flows/onboarding", body: definition, headers: admin)
        try #require(put.status == 201, "\(put.text)")
        return try #require(put.json["version"].integerValue)
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
        let version = try Self.storeVersion(test, Self.plantedRegression)
        let rolledBack = Mutex<[(Int, String, String)]>([])
        test.app.rollouts.setHooks { $0.rollBack = { id, reason, detail in rolledBack.withLock { $0.append((id, reason, detail)) } } }
        let plan = RolloutPlan(percentage: 50, guardrails: .init(metric: "onboarded", alpha: 0.05, minSessions: 10, tuning: 200))
        _ = try test.app.rollouts.begin(releaseId: 1, flows: ["onboarding": version], plan: plan)

        var sides = (new: 0, old: 0)
        var bound: Int?
        var rolledBackAt: Int?
        for index in 1...200 where rolledBackAt == nil {
            let user = "planted-\(index)"
            let onRelease = Self.onRelease(user, release: 1, percentage: 50)
            let completed = try Self.walk(client, user)
            #expect(completed == !onRelease, "\(user): on the release \(onRelease), completed \(completed)")
            if onRelease { sides.new += 1 } else { sides.old += 1 }
            if bound == nil, sides.new >= 10, sides.old >= 10 { bound = index }
            test.app.rollouts.drain()
            test.app.rollouts.check()
            if try test.store.rollout(releaseId: 1)?.state == RolloutRecord.rolledBack { rolledBackAt = index }
        }
        let expected = try #require(bound)
        #expect(rolledBackAt == expected, "rolled back after session \(rolledBackAt ?? -1), bound \(expected)")

        let document = try test.direct.send("GET", "/v1/releases/1/rollout", headers: Self.admin).json
        #expect(document["state"] == "rolled-back")
        let verdict = document["verdict"].stringValue ?? ""
        #expect(verdict.hasPrefix("rolled back: refused actions 100% vs 0%"), "\(verdict)")
        let arms: JSONValue = document["arms"]
        let new: JSONValue = arms["new"], old: JSONValue = arms["old"]
        #expect(new["refused"].integerValue == new["sessions"].integerValue)
        #expect(old["refused"].integerValue == 0)
        let calls = rolledBack.withLock { $0 }
        #expect(calls.count == 1)
        #expect(calls.first?.0 == 1)
        #expect(calls.first?.2.contains("guardrail refused") == true, "\(calls.first?.2 ?? "")")
        // Rolled back: every new session runs the live onboarding, the release's users too.
        let later = try #require((1...50).map { "later-\($0)" }.first { Self.onRelease($0, release: 1, percentage: 50) })
        #expect(try Self.walk(client, later))
        // Checking again, here or on another node, does nothing more.
        test.app.rollouts.check()
        #expect(rolledBack.withLock { $0.count } == 1)
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
}
