// ScreenFeaturesTests: what each flow can put on screen, and what a client must list to render it.

import JSON
import Testing

import FlowEngine

struct ScreenFeaturesTests {
    static let everySampleScreen: Set<String> = [
        "onboarding.first", "onboarding.second", "onboarding.faceScan", "home.first", "home.second", "modal",
        "login.form", "checkout.cart", "checkout.review", "address.list", "address.form", "paywall.offer", "purchase",
    ]

    /// The root of the sample app reaches every screen: onboarding's (the face scan behind its
    /// flag included), home's tabs, and the modal app presents.
    @Test func sampleAppShowsEveryScreen() {
        let shown = Fixtures.sampleCatalog.screenFeatures()
        #expect(shown.features == Self.everySampleScreen)
        #expect(shown.flows == ["address", "app", "checkout", "home", "login", "modal", "onboarding", "paywall"])
        #expect(shown.undefinedFlows.isEmpty)
    }

    /// Each flow on its own: a flow's screens and its children's, never its parent's.
    @Test(arguments: [
        ("onboarding", ["onboarding.faceScan", "onboarding.first", "onboarding.second"]),
        ("home", ["home.first", "home.second"]),
        ("modal", ["modal"]),
        ("login", ["login.form"]),
        ("paywall", ["paywall.offer", "purchase"]),
    ])
    func sampleFlowsShowTheirOwnScreens(flow: String, features: [String]) {
        let shown = Fixtures.sampleCatalog.screenFeatures(of: flow)
        #expect(shown.features.sorted() == features)
        #expect(shown.flows == [flow])
    }

    /// `app` names no screen itself; its children are onboarding, home (initial entries and
    /// replaceRoot) and modal (present).
    @Test func ownScreensOfTheRoot() throws {
        let app = try #require(Fixtures.sampleCatalog["app"])
        #expect(app.ownScreens.features.isEmpty)
        #expect(app.ownScreens.childFlows == ["home", "modal", "onboarding", "checkout", "login", "paywall"], "login: the else of checkout's guard")
    }

    /// A client lacking one screen misses exactly it; a client listing no features renders all.
    @Test func missingFeaturesOfAClient() {
        let shown = Fixtures.sampleCatalog.screenFeatures()
        let old = ClientCapabilities(platform: "ios", appVersion: "1.0", features: Self.everySampleScreen.union(["address.row"]).subtracting(["onboarding.faceScan"]))
        #expect(!old.canRender(shown))
        #expect(old.missing(shown) == ["onboarding.faceScan"])
        #expect(ClientCapabilities(platform: "ios").canRender(shown))
        #expect(ClientCapabilities(features: Self.everySampleScreen.union(["address.row", "extra"])).canRender(shown))
    }

    /// Flows that reach each other (a presents b, b pushes a) are each followed once; the
    /// screens of every effect count (push, setRoot, replaceRoot of a screen, conditional initial entries).
    @Test func cyclesBetweenFlowsFinish() throws {
        let a = try FlowDefinition.parse(Array("""
            {"name": "a", "kind": "stacked", "initial": [{"screen": "a.one", "when": {"flag": "x", "is": true}}, "a.two"],
             "on": {"a.go": [{"do": [{"present": {"flow": "b"}}]}],
                    "a.reset": [{"do": [{"setRoot": "a.root"}]}],
                    "a.swap": [{"do": [{"replaceRoot": {"screen": "a.swapped"}}]}]}}
            """.utf8))
        let b = try FlowDefinition.parse(Array("""
            {"name": "b", "kind": "stacked", "initial": ["b.one"],
             "on": {"b.back": [{"do": [{"push": {"flow": "a"}}]}], "b.more": [{"do": [{"push": "b.two"}]}]}}
            """.utf8))
        let catalog = FlowCatalog([a, b])
        let fromA = catalog.screenFeatures(of: "a")
        #expect(fromA.features == ["a.one", "a.two", "a.root", "a.swapped", "b.one", "b.two"])
        #expect(fromA.flows == ["a", "b"])
        #expect(catalog.screenFeatures(of: "b").features == fromA.features)
    }

    /// A child flow the catalog lacks is named, not guessed; the known screens are still listed.
    @Test func missingChildFlowIsReported() throws {
        let a = try FlowDefinition.parse(Array("""
            {"name": "a", "kind": "stacked", "initial": ["a.one"], "on": {"a.go": [{"do": [{"present": {"flow": "ghost"}}]}]}}
            """.utf8))
        let shown = FlowCatalog([a]).screenFeatures(of: "a")
        #expect(shown.features == ["a.one"])
        #expect(shown.flows == ["a"])
        #expect(shown.undefinedFlows == ["ghost"])
        #expect(FlowCatalog([a]).screenFeatures(of: "nothing") == ScreenFeatures(undefinedFlows: ["nothing"]))
    }
}

struct ClientCapabilitiesTests {
    /// A full client reads; features are a set; the canonical text sorts them and leaves out absent fields.
    @Test func readsAndWritesCanonically() throws {
        let json = try JSONParser.parse(#"{"platform":"ios","appVersion":"2.3.1","features":["b","a","b"]}"#)
        let client = try ClientCapabilities(json: json, at: JSONPointer(["client"]))
        #expect(client == ClientCapabilities(platform: "ios", appVersion: "2.3.1", features: ["a", "b"]))
        #expect(client.jsonText == #"{"platform":"ios","appVersion":"2.3.1","features":["a","b"]}"#)
        #expect(ClientCapabilities(platform: "web").jsonText == #"{"platform":"web"}"#)
        let empty = try ClientCapabilities(json: try JSONParser.parse("{}"), at: JSONPointer())
        #expect(empty.features == nil)
    }

    /// Every problem is located by a JSON Pointer under the path given.
    @Test(arguments: [
        (#"[]"#, ["/client"]),
        (#"{"platfrom":"ios"}"#, ["/client/platfrom"]),
        (#"{"platform":5,"appVersion":""}"#, ["/client/platform", "/client/appVersion"]),
        (#"{"appVersion":"2\"1"}"#, ["/client/appVersion"]),
        (#"{"features":"home.first"}"#, ["/client/features"]),
        (#"{"features":["ok", 3, "", null]}"#, ["/client/features/1", "/client/features/2", "/client/features/3"]),
    ])
    func problemsArePointed(body: String, pointers: [String]) throws {
        let json = try JSONParser.parse(body)
        #expect(throws: DefinitionProblems.self) { try ClientCapabilities(json: json, at: JSONPointer(["client"])) }
        do throws(DefinitionProblems) {
            _ = try ClientCapabilities(json: json, at: JSONPointer(["client"]))
        } catch {
            #expect(error.problems.map(\.path) == pointers)
        }
    }

    /// More than 1,000 features is refused at the array; a long feature name at its element.
    @Test func limits() throws {
        let many = JSONValue.object(["features": .array((0...ClientCapabilities.maxFeatures).map { .string("f\($0)") })])
        #expect(throws: DefinitionProblems([DefinitionProblem(path: "/features", message: "at most 1000 features; found 1001")])) {
            try ClientCapabilities(json: many, at: JSONPointer())
        }
        let long = JSONValue.object(["features": .array([.string(String(repeating: "x", count: 201))])])
        #expect(throws: DefinitionProblems.self) { try ClientCapabilities(json: long, at: JSONPointer()) }
        let fits = JSONValue.object(["features": .array((1...ClientCapabilities.maxFeatures).map { .string("f\($0)") })])
        #expect(try ClientCapabilities(json: fits, at: JSONPointer()).features?.count == 1000)
    }

    /// Names are limited in characters, as JSON Schema's `maxLength` counts them (the spec says
    /// what the server takes): 200 `é` (400 bytes) are a feature, and an action type; 201 are not.
    @Test func limitsCountCharactersNotBytes() throws {
        let wide = String(repeating: "é", count: 200)
        let features = JSONValue.object(["features": .array([.string(wide)])])
        #expect(try ClientCapabilities(json: features, at: JSONPointer()).features?.count == 1)
        #expect(try FlowAction(json: .object(["type": .string(wide)])).type == wide)
        #expect(throws: FlowError.self) { try FlowAction(json: .object(["type": .string(wide + "é")])) }
        let tooWide = JSONValue.object(["features": .array([.string(wide + "é")])])
        #expect(throws: DefinitionProblems.self) { try ClientCapabilities(json: tooWide, at: JSONPointer()) }
    }
}
