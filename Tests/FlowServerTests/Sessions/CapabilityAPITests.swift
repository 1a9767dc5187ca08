// Every build in the field: a session's client says what it can render; the server falls back
// per flow to an earlier activated version, keeps old builds out of experiments they cannot
// render (and counts them), refuses a client nothing fits, and says what an activation does to
// the clients of the last 7 days. Through the real store of the run (SQLite file or PostgreSQL).
import FeatureFlags
import FlowEngine
@testable import FlowServer
import FlowStore
import Foundation
import HTTPServer
import HTTPTestClient
import StoreTestSupport
import JSON
import Testing

struct CapabilityAPITests {
    static let admin = FlowAdminTests.admin

    /// The screens of the shipped checkout, login, address picker and paywall (the purchase
    /// hand-off's kind included): every build below has them, and differs in onboarding's.
    static let shopFeatures = ["login.form", "checkout.cart", "checkout.review", "address.list", "address.form", "address.row", "paywall.offer", "purchase"]
    /// What the shipped flows show: a build from before any change renders exactly these.
    static let oldFeatures = ["onboarding.first", "onboarding.second", "onboarding.faceScan", "home.first", "home.second", "modal"] + shopFeatures
    static let newFeatures = oldFeatures + ["onboarding.intro"]

    /// An onboarding that starts at a new screen, `onboarding.intro`, and has no face scan.
    static let introOnboarding = #"""
        {"name": "onboarding", "kind": "stacked", "initial": ["onboarding.intro"],
         "on": {"onboarding.begin": [{"from": "onboarding.intro", "do": [{"push": "onboarding.first"}]}],
                "onboarding.showSecond": [{"from": "onboarding.first", "do": [{"push": "onboarding.second"}]}],
                "onboarding.completed": [{"from": "onboarding.second", "do": [{"bubble": {}}]}]}}
        """#

    static func client(_ features: [String]?, platform: String? = nil, appVersion: String? = nil) -> String {
        var members: [String] = []
        if let platform { members.append(#""platform":"\#(platform)""#) }
        if let appVersion { members.append(#""appVersion":"\#(appVersion)""#) }
        if let features { members.append(#""features":[\#(features.map { "\"\($0)\"" }.joined(separator: ","))]"#) }
        return "{" + members.joined(separator: ",") + "}"
    }

    static func create(_ test: TestApp, _ userId: String, client: String?) throws -> Response {
        let body = client.map { #"{"userId":"\#(userId)","client":\#($0)}"# } ?? #"{"userId":"\#(userId)"}"#
        return try test.direct.send("POST", "/v1/sessions", body: body)
    }

    /// An old build falls back to the newest earlier *activated* version it renders (never to a
    /// version that was only uploaded); a new build, and one that lists no features, get the
    /// live one; a build nothing fits is 422 unsupported-client naming what it lacks. The
    /// session that fell back is otherwise normal (it acts), and its client is stored.
    @Test func fallbackByCapabilities() throws {
        let test = try TestApp()
        // v2: onboarding.first alone, uploaded and never activated; v3: the intro, live.
        #expect(try test.direct.send("PUT", "/v1/flows/onboarding", body: FlowAdminTests.shortOnboarding, headers: Self.admin).status == 201)
        #expect(try test.direct.send("PUT", "/v1/flows/onboarding?activate=true", body: Self.introOnboarding, headers: Self.admin).status == 201)

        let oldClient = Self.client(Self.oldFeatures, platform: "ios", appVersion: "2.1.0")
        let old = try Self.create(test, "old", client: oldClient)
        #expect(old.status == 201, "\(old.text)")
        #expect(old.json["state"].features == ["onboarding.first"])
        let id = old.json["session"]["id"].stringValue ?? ""
        let auth = [("Authorization", "Bearer \(old.json["session"]["token"].stringValue ?? "")")]
        // Version 1 (not the never-activated 2, which does not name showSecond) answers it.
        let second = try test.direct.send("POST", "/v1/sessions/\(id)/actions", body: #"{"type":"onboarding.showSecond"}"#, headers: auth)
        #expect(second.status == 200, "\(second.text)")
        #expect(second.json.features == ["onboarding.first", "onboarding.second"])
        let stored = try #require(try test.store.session(id: id))
        #expect(stored.client == #"{"platform":"ios","appVersion":"2.1.0","features":["address.form","address.list","address.row","checkout.cart","checkout.review","home.first","home.second","login.form","modal","onboarding.faceScan","onboarding.first","onboarding.second","paywall.offer","purchase"]}"#)
        #expect(stored.flowVersions.contains(#""onboarding":1"#))
        // The bundle an app runs offline holds the version it fell back to.
        let bundle = try test.direct.send("GET", "/v1/sessions/\(id)/bundle", headers: auth)
        #expect(bundle.status == 200)
        #expect(bundle.json["flowVersions"]["onboarding"] == 1)

        #expect(try Self.create(test, "new", client: Self.client(Self.newFeatures)).json["state"].features == ["onboarding.intro"])
        #expect(try Self.create(test, "any", client: Self.client(nil, platform: "web")).json["state"].features == ["onboarding.intro"])
        #expect(try Self.create(test, "none", client: nil).json["state"].features == ["onboarding.intro"])
        let noClient = try #require(try test.store.session(id: Self.create(test, "none2", client: nil).json["session"]["id"].stringValue ?? ""))
        #expect(noClient.client == nil)

        // Renders version 2, which was never live; versions 1 and 3 need screens it lacks.
        let tiny = Self.client(["onboarding.first", "home.first", "home.second", "modal"] + Self.shopFeatures, platform: "android", appVersion: "0.9")
        let refused = try Self.create(test, "tiny", client: tiny)
        #expect(refused.status == 422)
        #expect(refused.headers["Content-Type"] == "application/problem+json")
        #expect(refused.json["code"] == "unsupported-client")
        #expect(refused.json["type"] == "urn:flowstack:problem:unsupported-client")
        #expect(refused.json["missing"] == ["onboarding.intro", "onboarding.second"])
        #expect(refused.json["flows"] == ["onboarding"])
        #expect(try test.store.sessionCount() == 5)

        // Once version 2 has been live, it is a fallback: the same build now gets it.
        #expect(try test.direct.send("POST", "/v1/flows/onboarding/versions/2/activate", body: "", headers: Self.admin).status == 200)
        #expect(try test.direct.send("POST", "/v1/flows/onboarding/versions/3/activate", body: "", headers: Self.admin).status == 200)
        let tinyNow = try Self.create(test, "tiny", client: tiny)
        #expect(tinyNow.status == 201, "\(tinyNow.text)")
        #expect(tinyNow.json["state"].features == ["onboarding.first"])
        let tinyStored = try #require(try test.store.session(id: tinyNow.json["session"]["id"].stringValue ?? ""))
        #expect(tinyStored.flowVersions.contains(#""onboarding":2"#))
        // Version 2 is now the newest earlier activated version the old build renders too.
        let old2 = try Self.create(test, "old2", client: oldClient)
        #expect(old2.json["state"].features == ["onboarding.first"])
        let old2Stored = try #require(try test.store.session(id: old2.json["session"]["id"].stringValue ?? ""))
        #expect(old2Stored.flowVersions.contains(#""onboarding":2"#))
        #expect(try test.store.flowActivations()["onboarding"] == [1, 2, 3])
    }

    /// A client that cannot render every variant of an experiment is not enrolled (no
    /// exposure, no pin, `state.experiments` lacks it) whichever variant it hashed into; the
    /// report counts it as excluded under that variant and in a total, and not in `sessions`.
    @Test func experimentExclusionIsCounted() throws {
        let test = try TestApp()
        #expect(try test.direct.send("PUT", "/v1/flows/onboarding", body: Self.introOnboarding, headers: Self.admin).status == 201)
        let experiment = #"{"variants": [{"key": "control", "weight": 0.5}, {"key": "intro", "weight": 0.5, "flows": {"onboarding": 2}}]}"#
        #expect(try test.direct.send("PUT", "/v1/experiments/onboarding-intro", body: experiment, headers: Self.admin).status == 201)
        func variant(_ userId: String) -> String {
            (Bucketing.hash(seed: "onboarding-intro", value: userId, version: 2) ?? -1) < 0.5 ? "control" : "intro"
        }
        var excluded: [String: Int] = [:]
        for index in 0..<12 {
            let user = "old-\(index)"
            let created = try Self.create(test, user, client: Self.client(Self.oldFeatures))
            #expect(created.status == 201)
            #expect(created.json["state"]["experiments"] == [:])
            #expect(created.json["state"].features == ["onboarding.first"])
            excluded[variant(user), default: 0] += 1
        }
        var enrolled: [String: Int] = [:]
        for user in (0..<6).map({ "new-\($0)" }) + ["plain-0", "plain-1"] {
            let created = try Self.create(test, user, client: user.hasPrefix("new") ? Self.client(Self.newFeatures) : nil)
            #expect(created.json["state"]["experiments"]["onboarding-intro"] == .string(variant(user)))
            #expect(created.json["state"].features == [variant(user) == "intro" ? "onboarding.intro" : "onboarding.first"])
            enrolled[variant(user), default: 0] += 1
        }
        #expect(excluded.values.reduce(0, +) == 12 && excluded.count == 2, "the users should hash into both variants: \(excluded)")
        let report = try test.direct.send("GET", "/v1/experiments/onboarding-intro/report", headers: Self.admin)
        #expect(report.status == 200, "\(report.text)")
        #expect(report.json["excluded"] == 12)
        for entry in report.json["variants"].arrayValue ?? [] {
            let key = entry["key"].stringValue ?? ""
            #expect(entry["excluded"] == .integer(excluded[key] ?? 0), "\(key)")
            #expect(entry["sessions"] == .integer(enrolled[key] ?? 0), "\(key)")
        }
    }

    /// Activating a version answers its impact on the clients of the last 7 days: who falls back
    /// (and to which version), and, after a rollback below what a build renders, who is refused.
    @Test func activationImpact() throws {
        let test = try TestApp()
        for index in 0..<3 { #expect(try Self.create(test, "o\(index)", client: Self.client(Self.oldFeatures, platform: "ios", appVersion: "2.1.0")).status == 201) }
        #expect(try Self.create(test, "n", client: Self.client(Self.newFeatures, platform: "ios", appVersion: "2.3.0")).status == 201)
        #expect(try Self.create(test, "p", client: nil).status == 201)

        let put = try test.direct.send("PUT", "/v1/flows/onboarding?activate=true", body: Self.introOnboarding, headers: Self.admin)
        #expect(put.status == 201)
        #expect(put.json["live"] == true)
        let impact: JSONValue = put.json["impact"]
        #expect(impact["sessions"] == 5)
        #expect(impact["affectedSessions"] == 3)
        #expect(impact["share"] == 0.6)
        #expect(impact["partial"] == false)
        #expect(impact["clients"] == [["platform": "ios", "appVersion": "2.1.0", "sessions": 3, "share": 0.6, "outcome": "fallback", "fallbacks": ["onboarding": 1]]])
        #expect(impact["since"].stringValue.map { $0 < Timestamp.string() } == true)
        // A PUT that does not activate answers no impact.
        let quiet = try test.direct.send("PUT", "/v1/flows/home", body: try test.direct.send("GET", "/v1/flows/home/versions/1", headers: Self.admin).text, headers: Self.admin)
        #expect(quiet.status == 201)
        #expect(quiet.json["impact"] == .null && quiet.json.objectValue?["impact"] == nil)

        // A build that renders only version 2 (no face scan), then a rollback to version 1.
        let newest = Self.client(["onboarding.intro", "onboarding.first", "onboarding.second", "home.first", "home.second", "modal"] + Self.shopFeatures, platform: "ios", appVersion: "3.0")
        for index in 0..<2 { #expect(try Self.create(test, "v3-\(index)", client: newest).status == 201) }
        let rollback = try test.direct.send("POST", "/v1/flows/onboarding/versions/1/activate", body: "", headers: Self.admin)
        #expect(rollback.status == 200)
        #expect(rollback.json["impact"]["sessions"] == 7)
        #expect(rollback.json["impact"]["clients"] == [["platform": "ios", "appVersion": "3.0", "sessions": 2, "share": .number(2.0 / 7.0),
                                                         "outcome": "unsupported", "missing": ["onboarding.faceScan"]]])
        #expect(try Self.create(test, "v3-late", client: newest).status == 422)
    }

    /// A parent falls back because of a child: a build that cannot draw a new flow gets the
    /// older `app` that never presents it; activating that flow while nothing reaches it affects
    /// nobody, activating the `app` that presents it shows the fallback of `app`.
    @Test func parentFallsBackForAChild() throws {
        let test = try TestApp()
        let old = Self.client(Self.oldFeatures, platform: "android", appVersion: "5.0")
        for index in 0..<2 { #expect(try Self.create(test, "a\(index)", client: old).status == 201) }
        let promo = #"{"name": "promo", "kind": "stacked", "initial": ["promo"], "on": {"promo.close": [{"from": "promo", "do": [{"dismiss": {}}]}]}}"#
        let promoPut = try test.direct.send("PUT", "/v1/flows/promo?activate=true", body: promo, headers: Self.admin)
        #expect(promoPut.status == 201, "\(promoPut.text)")
        #expect(promoPut.json["impact"]["clients"] == [])
        let app = try test.direct.send("GET", "/v1/flows/app/versions/1", headers: Self.admin).text
            .replacingOccurrences(of: #""home.presentModal":"#, with: #""home.showPromo": [{"via": "home", "do": [{"present": {"flow": "promo"}}]}], "home.presentModal":"#)
        let appPut = try test.direct.send("PUT", "/v1/flows/app?activate=true", body: app, headers: Self.admin)
        #expect(appPut.status == 201, "\(appPut.text)")
        #expect(appPut.json["impact"]["clients"] == [["platform": "android", "appVersion": "5.0", "sessions": 2, "share": 1.0,
                                                       "outcome": "fallback", "fallbacks": ["app": 1]]])
        let created = try Self.create(test, "a2", client: old)
        let stored = try #require(try test.store.session(id: created.json["session"]["id"].stringValue ?? ""))
        #expect(stored.flowVersions.contains(#""app":1"#))
        let modern = try Self.create(test, "m", client: Self.client(Self.oldFeatures + ["promo"]))
        let modernStored = try #require(try test.store.session(id: modern.json["session"]["id"].stringValue ?? ""))
        #expect(modernStored.flowVersions.contains(#""app":2"#))
    }

    /// Flows that present each other resolve (the cycle is followed once); a fallback inside the
    /// cycle is found, and a flow of the cycle that fits in no version refuses the client.
    @Test func cyclesResolve() throws {
        func record(_ name: String, _ version: Int, _ text: String) -> FlowVersionRecord {
            FlowVersionRecord(name: name, version: version, definition: text, createdAt: "2026-01-01T00:00:00.000Z")
        }
        let records = [
            record("app", 1, #"{"name": "app", "kind": "stacked", "initial": ["s.app"], "on": {"x": [{"do": [{"present": {"flow": "b"}}]}]}}"#),
            record("b", 1, #"{"name": "b", "kind": "stacked", "initial": ["s.b1"], "on": {"y": [{"do": [{"present": {"flow": "app"}}]}]}}"#),
            record("b", 2, #"{"name": "b", "kind": "stacked", "initial": ["s.b2"], "on": {"y": [{"do": [{"present": {"flow": "app"}}]}]}}"#),
        ]
        let registry = DefinitionRegistry.load(flows: records, live: ["app": 1, "b": 2], activations: ["app": [1], "b": [1, 2]]).registry
        let live = registry.liveVersions
        #expect(registry.fit(ClientCapabilities(features: ["s.app", "s.b1"]), live: live) == .fits(versions: ["app": 1, "b": 1], fallbacks: ["b": 1]))
        #expect(registry.fit(ClientCapabilities(features: ["s.app", "s.b2"]), live: live) == .fits(versions: ["app": 1, "b": 2], fallbacks: [:]))
        #expect(registry.fit(ClientCapabilities(features: ["s.app"]), live: live) == .unsupported(missing: ["s.b2"], flows: ["b"]))
        #expect(registry.fit(ClientCapabilities(platform: "ios"), live: live) == .fits(versions: live, fallbacks: [:]))
        #expect(!registry.rendersLive("b", client: ClientCapabilities(features: ["s.app", "s.b1"]), live: live))
        #expect(registry.rendersLive("app", client: ClientCapabilities(features: ["s.app", "s.b2"]), live: live))
    }

    /// Sessions older than the window do not count: the impact of the same activation, as if
    /// computed eight days later, sees none.
    @Test func impactWindowIsSevenDays() throws {
        let test = try TestApp()
        #expect(try Self.create(test, "o", client: Self.client(Self.oldFeatures, platform: "ios", appVersion: "2.1.0")).status == 201)
        #expect(try test.direct.send("PUT", "/v1/flows/onboarding?activate=true", body: Self.introOnboarding, headers: Self.admin).status == 201)
        let now = try #require(try JSONParser.parse(#require(Application.activationImpact(
            flow: "onboarding", registry: test.app.registry, store: test.store))))
        #expect(now["affectedSessions"] == 1)
        let later = try #require(try JSONParser.parse(#require(Application.activationImpact(
            flow: "onboarding", registry: test.app.registry, store: test.store,
            now: Date().addingTimeInterval(8 * 24 * 3600)))))
        #expect(later["sessions"] == 0)
        #expect(later["clients"] == [])
    }

    /// The flow test route runs each scenario's client on what a session of it would get once
    /// the version under test is live: the fallback for an old build, a refusal when nothing fits.
    @Test func flowTestsWithAClient() throws {
        let test = try TestApp()
        #expect(try test.direct.send("PUT", "/v1/flows/onboarding", body: Self.introOnboarding, headers: Self.admin).status == 201)
        let scenarios = """
            {"scenarios": [
              {"name": "old build keeps version 1", "client": \(Self.client(Self.oldFeatures)),
               "start": {"expect": {"top": "onboarding.first"}},
               "steps": [{"action": {"type": "onboarding.showSecond"}, "expect": {"top": "onboarding.second"}}]},
              {"name": "new build gets the intro", "client": \(Self.client(Self.newFeatures)), "start": {"expect": {"top": "onboarding.intro"}}, "steps": []},
              {"name": "a build with home only", "client": {"features": ["home.first"]}, "start": {"expect": {"error": "unsupported-client"}}, "steps": []},
              {"name": "wrong: old build expected on the intro", "client": \(Self.client(Self.oldFeatures)), "start": {"expect": {"top": "onboarding.intro"}}, "steps": []}
            ]}
            """
        let response = try test.direct.send("POST", "/v1/flows/onboarding/versions/2/test", body: scenarios, headers: Self.admin)
        #expect(response.status == 200, "\(response.text)")
        #expect(response.json["passed"] == 3)
        #expect(response.json["failed"] == 1)
        #expect(response.json["scenarios"][3]["failures"][0]["actual"] == "onboarding.first")
        let bad = try test.direct.send("POST", "/v1/flows/onboarding/versions/2/test",
                                       body: #"{"scenarios": [{"name": "x", "client": {"features": "all"}, "steps": []}]}"#, headers: Self.admin)
        #expect(bad.status == 422)
        #expect(bad.json["errors"][0]["pointer"] == "/scenarios/0/client/features")
    }

    /// Link resolve takes client.platform, client.appVersion and client.features: an old build
    /// resolves on its fallback (named in `fallbacks`), a build nothing fits is 422, a bad or
    /// unknown client parameter is 400 naming it.
    @Test func linkResolveWithAClient() throws {
        let test = try TestApp()
        #expect(try test.direct.send("PUT", "/v1/flows/onboarding?activate=true", body: Self.introOnboarding, headers: Self.admin).status == 201)
        let base = "/v1/links/resolve?uri=/home&userId=newbie"
        let plain = try test.direct.send("GET", base, headers: Self.admin)
        #expect(plain.status == 200, "\(plain.text)")
        #expect(plain.json.features == ["onboarding.intro"])
        #expect(plain.json["fallbacks"] == [:])
        let old = try test.direct.send("GET", base + "&client.platform=ios&client.features=" + Self.oldFeatures.joined(separator: ","), headers: Self.admin)
        #expect(old.status == 200, "\(old.text)")
        #expect(old.json.features == ["onboarding.first"])
        #expect(old.json["fallbacks"] == ["onboarding": 1])
        #expect(old.json["flowVersions"]["onboarding"] == 1)
        // Repeated parameters add up.
        let repeated = try test.direct.send(
            "GET", base + "&client.features=onboarding.intro,onboarding.first&client.features=onboarding.second,home.first,home.second,modal"
                + "&client.features=" + Self.shopFeatures.joined(separator: ","), headers: Self.admin)
        #expect(repeated.json["fallbacks"] == [:])
        let refused = try test.direct.send("GET", base + "&client.features=home.first", headers: Self.admin)
        #expect(refused.status == 422)
        #expect(refused.json["code"] == "unsupported-client")
        let badLabel = try test.direct.send("GET", base + "&client.platform=" + String(repeating: "x", count: 65), headers: Self.admin)
        #expect(badLabel.status == 400)
        #expect(badLabel.json["errors"][0]["pointer"] == "client.platform")
        let unknown = try test.direct.send("GET", base + "&client.os=ios", headers: Self.admin)
        #expect(unknown.status == 400)
        #expect(unknown.json["errors"][0]["pointer"] == "client.os")
    }

    /// A bad `client` is a 400 problem with a JSON Pointer per field, never a session.
    @Test(arguments: [
        (#""ios""#, ["/client"]),
        (#"{"os":"ios"}"#, ["/client/os"]),
        (#"{"platform":1,"appVersion":true}"#, ["/client/platform", "/client/appVersion"]),
        (#"{"features":"home.first"}"#, ["/client/features"]),
        (#"{"features":[1,"ok",""]}"#, ["/client/features/0", "/client/features/2"]),
        ("{\"features\":[" + (0...1000).map { "\"f\($0)\"" }.joined(separator: ",") + "]}", ["/client/features"]),
    ])
    func badClientIs400(client: String, pointers: [String]) throws {
        let test = try TestApp()
        let response = try test.direct.send("POST", "/v1/sessions", body: #"{"userId":"u","client":\#(client)}"#)
        #expect(response.status == 400)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        #expect(response.json["errors"].arrayValue?.compactMap { $0["pointer"].stringValue } == pointers)
        #expect(try test.store.sessionCount() == 0)
    }
}

@Suite(.enabled(if: TestStoreKind.isPostgreSQL, "several nodes share a PostgreSQL database"))
struct CapabilityMultiNodeTests {
    /// A version made live and replaced again through one node, between two polls of the other
    /// (so the live versions look unchanged there), still becomes a fallback on the other: the
    /// activation history is part of what nodes watch.
    @Test func activationHistoryReachesTheOtherNode() throws {
        let a = try TestApp()
        let b = try TestApp(beside: a)
        let admin = CapabilityAPITests.admin
        let original = try a.direct.send("GET", "/v1/flows/onboarding/versions/1", headers: admin).text
        #expect(try a.direct.send("PUT", "/v1/flows/onboarding", body: FlowAdminTests.shortOnboarding, headers: admin).status == 201)
        #expect(try a.direct.send("PUT", "/v1/flows/onboarding?activate=true", body: original, headers: admin).status == 201)
        let seen = ContinuousClock.now
        while try b.direct.send("GET", "/v1/flows/onboarding", headers: admin).json["version"] != 3 && seen.duration(to: .now) < .seconds(2) {
            Thread.sleep(forTimeInterval: 0.02)
        }
        #expect(try a.direct.send("POST", "/v1/flows/onboarding/versions/2/activate", headers: admin).status == 200)
        #expect(try a.direct.send("POST", "/v1/flows/onboarding/versions/3/activate", headers: admin).status == 200)
        // Renders version 2 (onboarding.first alone) but not version 3 (which pushes onboarding.second).
        let client = CapabilityAPITests.client(["onboarding.first", "home.first", "home.second", "modal"] + CapabilityAPITests.shopFeatures)
        let started = ContinuousClock.now
        var status = 0
        while status != 201 && started.duration(to: .now) < .seconds(10) {
            status = try CapabilityAPITests.create(b, "tiny-\(UUID().uuidString.prefix(8))", client: client).status
            if status != 201 { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(status == 201, "node b did not learn that version 2 was once live")
    }
}
