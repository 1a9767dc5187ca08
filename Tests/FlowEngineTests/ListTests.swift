// ListTests: lists as data — sections written in definitions, list effects, row taps, the state document, storage and capabilities.

import JSON
import Testing

import FlowEngine

struct ListTests {
    static let contacts = Fixtures.catalog(
        #"""
        {"name": "app", "kind": "stacked",
         "initial": [{"screen": "contacts", "sections": [
            {"id": "A", "title": "A", "rows": [{"id": "ada", "kind": "contact", "values": {"name": "Ada"}}]},
            {"id": "B", "title": "B", "indexTitle": "B", "rows": [{"id": "bob", "kind": "contact", "values": {"name": "Bob"}},
                                                                    {"id": "ben", "kind": "contact.vip", "values": {"name": "Ben"}}]}]}],
         "on": {
           "contact.open": [{"from": "contacts", "row": "contact.vip", "do": [{"push": {"screen": "vip", "params": {"who": {"$param": "row.values"}}}}]},
                            {"from": "contacts", "row": "contact", "do": [{"push": {"screen": "detail", "params": {"id": {"$param": "row.id"}}}}]}],
           "contact.delete": [{"from": "contacts", "row": ["contact", "contact.vip"], "do": [{"removeRow": {"row": {"$param": "row.id"}}}]}],
           "contact.star": [{"from": "contacts", "row": "contact", "do": [{"updateRow": {"row": {"$param": "row.id"}, "values": {"starred": true}}},
                                                                           {"moveRow": {"row": {"$param": "row.id"}, "section": "A", "at": 0}}]}],
           "contacts.load": [{"from": "contacts", "params": {"sections": "array"}, "do": [{"setSections": {"sections": {"$param": "sections"}}}]}],
           "contacts.setB": [{"from": "contacts", "params": {"rows": "array"}, "do": [{"setRows": {"section": "B", "rows": {"$param": "rows"}}}]}],
           "contact.add": [{"from": "contacts", "do": [{"push": "form"}]}],
           "contact.saved": [{"from": "form", "params": {"id": "string", "name": "string"},
                              "do": [{"pop": {}}, {"insertRow": {"screen": "contacts", "section": "A", "at": 1,
                                     "row": {"id": {"$param": "id"}, "kind": "contact", "values": {"name": {"$param": "name"}}}}}]}]
         }}
        """#)

    /// A row tap is matched by kind, and the row reaches the effects as row.id / row.values.
    @Test func rowTapsMatchByKind() throws {
        var session = try Session(catalog: Self.contacts)
        let list = try #require(session.topId)
        try session.send("contact.open", from: list, row: "ben")
        #expect(session.topFeature == "vip")
        #expect(session.top?.params == ["who": ["name": "Ben"]])
        try session.send("back")
        try session.send("contact.open", from: list, row: "ada")
        #expect(session.top?.params == ["id": "ada"])
    }

    /// A row that is not in the source screen's list is refused as stale (409, /row); a client
    /// cannot forge the row's params.
    @Test func staleRowsAndForgedParamsAreRefused() throws {
        var session = try Session(catalog: Self.contacts)
        let list = try #require(session.topId)
        let error = session.failure("contact.open", from: list, row: "zed")
        #expect(error == .staleRow(row: "zed", screen: list))
        #expect(error?.code == "stale-row")
        #expect(throws: FlowError.self) { try FlowAction(json: Fixtures.json(#"{"type": "x", "params": {"row.id": "ada"}}"#)) }
        let parsed = try FlowAction(json: Fixtures.json(#"{"type": "contact.open", "from": "e2", "row": "ada"}"#))
        #expect(parsed.row == "ada")
        #expect(throws: FlowError.invalidParams(path: "/row", message: "row must be the id of the tapped row, a string of 1 to 200 characters; found 3")) {
            try FlowAction(json: Fixtures.json(#"{"type": "x", "row": 3}"#))
        }
        // A tap on a row whose kind no rule names is refused, not applied by another rule.
        try session.send("contact.delete", from: list, row: "ada")
        #expect(session.last?.transition?.type == .list)
    }

    /// A list-only change is a `list` transition from the top to itself, with the exact changes.
    @Test func listOnlyChangesHaveAListTransition() throws {
        var session = try Session(catalog: Self.contacts)
        let list = try #require(session.topId)
        let outcome = try session.send("contact.star", from: list, row: "bob")
        let transition = try #require(outcome.transition)
        #expect(transition.type == .list)
        #expect(transition.from == transition.to)
        #expect(transition.lists.count == 1)
        let changes = try #require(transition.lists.first?.changes)
        #expect(changes.rows.moved == [.init(id: "bob", from: RowPath(section: 1, row: 0), to: RowPath(section: 0, row: 0))])
        #expect(changes.rows.reloaded == [.init(id: "bob", at: RowPath(section: 0, row: 0))])
        let sections = try #require(session.tree.screen(id: session.top!.id)?.sections)
        #expect(sections[0].rows.map(\.id) == ["bob", "ada"])
        #expect(sections[0].rows[0].values == ["name": "Bob", "starred": true])
    }

    /// A form pushed over the list inserts into it (`screen`), in the same version as the pop.
    @Test func anotherScreenCanChangeTheList() throws {
        var session = try Session(catalog: Self.contacts)
        try session.send("contact.add")
        let outcome = try session.send("contact.saved", params: ["id": "amy", "name": "Amy"])
        #expect(outcome.transition?.type == .pop)
        #expect(outcome.transition?.lists.first?.changes.rows.inserted == [.init(id: "amy", at: RowPath(section: 0, row: 1))])
        try session.send("contact.add")
        let duplicate = session.failure("contact.saved", params: ["id": "amy", "name": "Amy"])
        guard case .refused? = duplicate else {
            Issue.record("a row id used twice must be refused; got \(String(describing: duplicate))")
            return
        }
        let badId = session.failure("contact.saved", params: ["id": "", "name": "Amy"])
        #expect(badId?.code == "invalid-params")
    }

    /// setSections and setRows take whole lists from params, checked as the engine reads lists.
    @Test func listsFromParams() throws {
        var session = try Session(catalog: Self.contacts)
        let sections = Fixtures.json(#"[{"id": "Z", "rows": [{"id": "zed", "kind": "contact"}]}]"#)
        let outcome = try session.send("contacts.load", params: ["sections": sections])
        let changes = try #require(outcome.transition?.lists.first?.changes)
        #expect(changes.sections.deleted.map(\.id) == ["A", "B"])
        #expect(changes.sections.inserted.map(\.id) == ["Z"])
        let duplicate = Fixtures.json(#"[{"id": "Z", "rows": [{"id": "a", "kind": "c"}, {"id": "a", "kind": "c"}]}]"#)
        #expect(session.failure("contacts.load", params: ["sections": duplicate]) == .invalidParams(
            path: "/params/sections",
            message: "contacts.load's setSections effect: at /0/rows/1/id of the value: row id \"a\" is used twice; row ids are unique within a screen's list"))
        #expect(session.failure("contacts.setB", params: ["rows": []])?.code == "refused")  // no section B any more
    }

    /// The state document shows the list with the screen in `root` (not in `screens` or
    /// `top`), and the transition's `lists`; storage keeps lists and a pending row tap.
    @Test func stateDocumentAndStorage() throws {
        var session = try Session(catalog: Self.contacts)
        let list = try #require(session.topId)
        let outcome = try session.send("contact.delete", from: list, row: "ada")
        let text = String(decoding: outcome.tree.navigationJSON(transition: outcome.transition, handledBy: outcome.handledBy), as: UTF8.self)
        #expect(text.contains(#""entries":[{"id":"e2","feature":"contacts","params":{},"sections":[{"id":"A","title":"A","rows":[]},{"id":"B","title":"B","indexTitle":"B","rows":[{"id":"bob","kind":"contact","values":{"name":"Bob"}},"#))
        #expect(text.contains(#""screens":[{"id":"e2","feature":"contacts","params":{},"flow":"app","flowId":"f1"}]"#))
        #expect(text.contains(#""transition":{"type":"list","from":{"id":"e2","#))
        #expect(text.contains(#""lists":[{"id":"e2","sections":{"deleted":[],"inserted":[],"moved":[],"reloaded":[]},"rows":{"deleted":[{"id":"ada","at":[0,0]}],"inserted":[],"moved":[],"reloaded":[]}}]"#))
        let again = try FlowTree(storage: outcome.tree.storageBytes())
        #expect(again == outcome.tree)
    }

    /// Definitions: ids unique, kinds written out, list effects only where a list can be, row
    /// params need no declaration in a row rule.
    @Test func definitionsAreChecked() {
        let duplicate = Fixtures.problems(#"{"name": "a", "kind": "stacked", "initial": [{"screen": "l", "sections": [{"id": "s", "rows": [{"id": "r", "kind": "k"}]}, {"id": "s", "rows": [{"id": "r", "kind": "k"}]}]}]}"#)
        #expect(duplicate.map(\.path) == ["/initial/0/sections/1/id", "/initial/0/sections/1/rows/0/id"])
        let noKind = Fixtures.problems(#"{"name": "a", "kind": "stacked", "initial": [{"screen": "l", "sections": [{"id": "s", "rows": [{"id": "r"}]}]}]}"#)
        #expect(noKind.map(\.path) == ["/initial/0/sections/0/rows/0"])
        let paramKind = Fixtures.problems(#"{"name": "a", "kind": "stacked", "initial": ["l"], "on": {"x": [{"from": "l", "do": [{"insertRow": {"section": "s", "row": {"id": "r", "kind": {"$param": "k"}}}}]}]}}"#)
        #expect(paramKind.map(\.path) == ["/on/x/0/do/0/insertRow/row/kind"])
        let typoKey = Fixtures.problems(#"{"name": "a", "kind": "stacked", "initial": ["l"], "on": {"x": [{"from": "l", "do": [{"removeRow": {"rwo": "r"}}]}]}}"#)
        #expect(typoKey.map(\.path).contains("/on/x/0/do/0/removeRow/rwo"))
        let rowParams = Fixtures.problems(#"{"name": "a", "kind": "stacked", "initial": [{"screen": "l", "sections": []}], "on": {"x": [{"from": "l", "row": "k", "params": {"n": "string"}, "do": [{"pop": {}}, {"result": {"into": "v", "value": {"$param": "row.values"}}}]}]}}"#)
        #expect(rowParams.isEmpty)
        let shadowed = Fixtures.problems(#"{"name": "a", "kind": "stacked", "initial": [{"screen": "l", "sections": []}], "on": {"x": [{"from": "l", "do": [{"pop": {}}]}, {"from": "l", "row": "k", "do": [{"pop": {}}]}]}}"#)
        #expect(shadowed.map(\.path) == ["/on/x/1"])
        let notShadowed = Fixtures.problems(#"{"name": "a", "kind": "stacked", "initial": [{"screen": "l", "sections": []}], "on": {"x": [{"from": "l", "row": "k", "do": [{"pop": {}}]}, {"from": "l", "do": [{"pop": {}}]}]}}"#)
        #expect(notShadowed.isEmpty)
    }

    /// The catalog refuses list effects and row rules on screens that never hold a list.
    @Test func listEffectsNeedListScreens() throws {
        let definition = try FlowDefinition.parse(Array(#"""
            {"name": "app", "kind": "stacked", "initial": ["plain", {"screen": "list", "sections": []}],
             "on": {"a": [{"from": "plain", "do": [{"removeRow": {"row": "r"}}]}],
                    "b": [{"do": [{"removeRow": {"row": "r"}}]}],
                    "c": [{"from": "list", "do": [{"removeRow": {"row": "r", "screen": "plain"}}]}],
                    "d": [{"from": "plain", "row": "k", "do": [{"pop": {}}]}],
                    "e": [{"from": "list", "row": "k", "do": [{"removeRow": {"row": {"$param": "row.id"}}}]}]}}
            """#.utf8))
        let problems = FlowCatalog([definition]).validate()
        #expect(problems.map(\.path) == ["/app/on/a/0/do/0/removeRow", "/app/on/b/0/do/0/removeRow", "/app/on/c/0/do/0/removeRow/screen", "/app/on/d/0/row"])
    }

    /// Row kinds are features for capabilities, apart from the screens `from` may name.
    @Test func rowKindsAreFeatures() {
        let shown = Self.contacts.screenFeatures()
        #expect(shown.rowKinds == ["contact", "contact.vip"])
        #expect(!shown.features.contains("contact"))
        #expect(shown.missing(from: ["contacts", "vip", "detail", "form", "contact"]) == ["contact.vip"])
        let sample = Fixtures.sampleCatalog.screenFeatures()
        #expect(sample.rowKinds == ["address.row"])
    }

    /// The sample app's picker: a tap on a row returns the address below, a new address joins
    /// its section first.
    @Test func sampleAddressPicker() throws {
        var session = try Session(context: FlowContext(userId: "u", user: ["onboarded": true, "loggedIn": true]))
        try session.send("home.checkout")
        try session.send("checkout.review")
        try session.send("checkout.chooseAddress")
        try session.send("address.add")
        let added = try session.send("address.added", params: ["id": "new", "country": "FR", "address": ["city": "Nice"]])
        #expect(added.transition?.lists.first?.changes.rows.inserted == [.init(id: "new", at: RowPath(section: 0, row: 0))])
        let list = try #require(session.topId)
        let chosen = try session.send("address.chosen", from: list, row: "new")
        #expect(chosen.transition?.result?.feature == "checkout.review")
        #expect(session.top?.params["address"] == ["city": "Nice"])
    }
}
