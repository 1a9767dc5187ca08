// SessionState and SessionBundle: predictions, the bundle's round trip, and a bundle that is wrong.

import JSON
import Testing

import FlowEngine

struct SessionBundleTests {
    static func sampleState(user: [String: JSONValue] = [:]) throws -> SessionState {
        let context = FlowContext(userId: "u-1", attributes: ["country": "DE"], traits: ["horizontalSizeClass": "compact"],
                                  flags: ["eu-face-scan": true], user: user)
        let tree = try FlowEngine.start(catalog: Fixtures.sampleCatalog, context: context)
        return SessionState(sessionId: "s_1", userId: "u-1", version: 0, tree: tree, context: context, catalog: Fixtures.sampleCatalog,
                            flagsJSON: Array(#"{"eu-face-scan":{"value":true,"variant":"on","reason":"TARGETING_MATCH"}}"#.utf8),
                            experimentsJSON: Array("{}".utf8))
    }

    static func bundleBytes(_ state: SessionState) -> [UInt8] {
        var writer = JSONWriter()
        SessionBundle.write(state, flowVersions: ["app": 1, "home": 1, "modal": 1, "onboarding": 1],
                            definitions: Fixtures.sampleNames.map { ($0, Fixtures.sampleBytes($0)) }, into: &writer)
        return writer.takeBytes()
    }

    /// Each prediction is the state applying its action gives, with the next version; the
    /// interactive form opens the interaction and changes no screen.
    @Test func predictionsAreTheNextStates() throws {
        var state = try Self.sampleState()
        let first = state.predictions()
        #expect(first.map(\.action.type) == ["onboarding.showSecond"])
        #expect(first[0].action.from == state.tree.top?.entryId)
        state = first[0].next
        #expect(state.version == 1)
        let second = state.predictions()
        #expect(second.map(\.action.type) == ["onboarding.returnToFirst", "onboarding.returnToFirst", "onboarding.completed", "back", "back"])
        #expect(second.map(\.action.interactive) == [false, true, false, false, true])
        for prediction in second {
            #expect(try state.applying(prediction.action).next.document() == prediction.next.document())
        }
        let opened = second[1].next
        #expect(opened.tree.interaction != nil)
        #expect(opened.tree.screens == state.tree.screens)
        // While an interaction is pending: end and cancel are predicted (posted without from);
        // update needs its progress.
        #expect(opened.predictions().map(\.action.type) == ["interaction.end", "interaction.cancel"])
        #expect(opened.predictions().allSatisfy { $0.action.from == nil })
        // The EU face scan comes before completion, and completing records the user's state.
        let completed = try #require(second.first { $0.action.type == "onboarding.completed" }).next
        #expect(completed.tree.top?.feature == "onboarding.faceScan")
        let home = try #require(completed.predictions().first { $0.action.type == "onboarding.faceScanVerified" }).next
        #expect(home.context.user["onboarded"] == true)
        #expect(home.tree.top?.feature == "home.first")
    }

    /// A bundle written and read back is the same session: same document, tree and context.
    @Test func bundleRoundTrips() throws {
        let state = try Self.sampleState(user: ["onboarded": true])
        let bundle = try SessionBundle(json: try JSONParser.parse(Self.bundleBytes(state)))
        #expect(bundle.state.document() == state.document())
        #expect(bundle.state.tree == state.tree)
        #expect(bundle.state.context == state.context)
        #expect(bundle.flowVersions == ["app": 1, "home": 1, "modal": 1, "onboarding": 1])
        #expect(bundle.state.catalog.names == Fixtures.sampleCatalog.names)
    }

    /// A bundle with a wrong part is refused with the JSON Pointer of that part.
    @Test(arguments: [
        (#"{"format":2}"#, "/format"),
        ("[]", ""),
        ("format", "/format"),
        ("version", "/version"),
        ("definitions", "/definitions"),
        ("tree", "/tree"),
        ("home", "/definitions/home"),
        ("traits", "/context/traits/size"),
    ])
    func wrongBundlesAreRefused(damage: String, path: String) throws {
        var object = try #require(try JSONParser.parse(Self.bundleBytes(try Self.sampleState())).objectValue)
        var members = object.members
        func set(_ key: String, _ value: JSONValue) {
            if let index = members.firstIndex(where: { $0.key == key }) { members[index].value = value }
        }
        var document: JSONValue
        switch damage {
        case "format": set("format", .string("1"))
        case "version": set("version", .integer(-1))
        case "definitions": set("definitions", .array([]))
        case "tree": set("tree", .object(["format": 1, "nextId": 1, "root": "x"]))
        case "home":
            var definitions = members.first { $0.key == "definitions" }?.value.objectValue?.members ?? []
            definitions.removeAll { $0.key == "home" }
            set("definitions", .object(JSONObject(definitions)))
        case "traits": set("context", .object(["attributes": [:], "traits": ["size": 1], "flags": [:], "user": [:]]))
        default: break
        }
        object = JSONObject(members)
        document = .object(object)
        if damage.hasPrefix("{") || damage.hasPrefix("[") { document = try JSONParser.parse(damage) }
        #expect {
            _ = try SessionBundle(json: document)
        } throws: { error in
            (error as? FlowStorageError)?.path.hasPrefix(path) == true
        }
    }
}
