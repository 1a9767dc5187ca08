// ListActionsTests: row taps among the available actions and predictions, and lists a screen entry takes from the showing action's params.

import JSON
import Testing

import FlowEngine

struct ListActionsTests {
    /// An entry as `type` or `type[kind,kind]@flow` for a row tap, so a table reads at a glance.
    private func listed(_ session: Session) -> [String] {
        FlowEngine.availableActions(in: session.tree, catalog: session.catalog, context: session.context).map { action in
            guard let kinds = action.rowKinds else { return action.type }
            return "\(action.type)[\(kinds.joined(separator: ","))]@\(action.handledBy)"
        }
    }

    /// One entry per rule a row kind of the list reaches, with the kinds it takes, after the
    /// type's plain entry; a rule for any action is listed once, plainly.
    @Test func rowTapsAreListedPerRule() throws {
        var session = try Session(catalog: ListTests.contacts)
        #expect(listed(session) == [
            "contact.open[contact.vip]@app", "contact.open[contact]@app", "contact.delete[contact,contact.vip]@app",
            "contact.star[contact]@app", "contacts.load", "contacts.setB", "contact.add",
        ])
        // Only the kinds the list holds now are offered.
        try session.send("contacts.load", params: ["sections": Fixtures.json(#"[{"id": "V", "rows": [{"id": "v", "kind": "contact.vip"}]}]"#)])
        #expect(listed(session) == ["contact.open[contact.vip]@app", "contact.delete[contact.vip]@app", "contacts.load", "contacts.setB", "contact.add"])
        // An empty list offers no row taps; a screen without a list neither.
        try session.send("contacts.load", params: ["sections": []])
        #expect(listed(session) == ["contacts.load", "contacts.setB", "contact.add"])
        try session.send("contact.add")
        #expect(listed(session) == ["contact.saved", "back"])
    }

    /// Every row tap listed is accepted for every row of its kinds, and refused for a row of a
    /// kind it does not list.
    @Test func listedRowTapsAreAccepted() throws {
        let session = try Session(catalog: ListTests.contacts)
        let list = try #require(session.topId)
        let rows = [("ada", "contact"), ("bob", "contact"), ("ben", "contact.vip")]
        let actions = FlowEngine.availableActions(in: session.tree, catalog: session.catalog, context: session.context)
        for action in actions {
            guard let kinds = action.rowKinds else { continue }
            for (row, kind) in rows {
                var copy = session
                if kinds.contains(kind) {
                    #expect(throws: Never.self) { try copy.send(action.type, from: list, row: row) }
                    #expect(copy.last?.handledBy == action.handledBy)
                } else if !actions.contains(where: { $0.type == action.type && $0.rowKinds?.contains(kind) == true }) {
                    #expect(copy.failure(action.type, from: list, row: row)?.code == "refused")
                }
            }
        }
    }

    static let picker = Fixtures.catalog(
        #"""
        {"name": "app", "kind": "stacked", "initial": [{"flow": "picker"}],
         "on": {"pick": [{"via": "picker", "row": ["a", "c"], "do": [{"push": "done"}]}],
                "peek": [{"row": "c", "interactive": true, "do": [{"push": "preview"}]}]}}
        """#,
        #"""
        {"name": "picker", "kind": "stacked",
         "initial": [{"screen": "list", "sections": [{"id": "s", "rows": [
            {"id": "a1", "kind": "a"}, {"id": "b1", "kind": "b"}, {"id": "c1", "kind": "c"}, {"id": "a2", "kind": "a"}]}]}],
         "on": {"pick": [{"from": "list", "row": "a", "do": [{"bubble": {}}]},
                         {"from": "list", "row": "b", "params": {"note": "string?"}, "do": [{"push": "detail"}]}]}}
        """#)

    /// A kind the nearest flow bubbles is offered by the parent that takes it; a kind the
    /// nearest owning flow refuses is not offered by a parent, as the engine would refuse it.
    @Test func rowTapsFollowTheDelegateChain() throws {
        let session = try Session(catalog: Self.picker)
        #expect(listed(session) == ["pick[b]@picker", "pick[a]@app", "peek[c]@app"])
        let actions = FlowEngine.availableActions(in: session.tree, catalog: session.catalog, context: session.context)
        #expect(actions[0].params == [FlowRule.Param(name: "note", type: .string, required: false)])
        #expect(actions.map(\.interactive) == [false, false, true])
        let list = try #require(session.topId)
        var copy = session
        #expect(copy.failure("pick", from: list, row: "c1")?.code == "refused")  // picker owns pick
        try copy.send("pick", from: list, row: "a2")
        #expect(copy.last?.handledBy == "app")
    }

    private func state(_ session: Session) -> SessionState {
        SessionState(sessionId: "s", userId: "u", version: 3, tree: session.tree, context: session.context, catalog: session.catalog,
                     flagsJSON: Array("{}".utf8), experimentsJSON: Array("{}".utf8))
    }

    /// A row tap is not predicted (its state depends on the row); the available actions answer
    /// says which kinds it takes, with `next` null, while the type's plain entry keeps its own.
    @Test func rowTapsInTheAnswers() throws {
        let catalog = Fixtures.catalog(
            #"""
            {"name": "app", "kind": "stacked",
             "initial": [{"screen": "list", "sections": [{"id": "s", "rows": [{"id": "r1", "kind": "k"}, {"id": "r2", "kind": "other"}]}]}],
             "on": {"open": [{"from": "list", "row": "k", "interactive": true, "do": [{"push": {"screen": "detail", "params": {"id": {"$param": "row.id"}}}}]},
                             {"from": "list", "do": [{"push": "overview"}]}]}}
            """#)
        let session = try Session(catalog: catalog)
        let state = state(session)
        #expect(state.predictions().map(\.action) == [FlowAction(type: "open", from: "e2")])
        let text = String(decoding: state.availableActionsDocument(), as: UTF8.self)
        #expect(text.contains(#"{"type":"open","handledBy":"app","from":"e2","params":[],"interactive":false,"next":{"#))
        #expect(text.contains(#"{"type":"open","handledBy":"app","from":"e2","rowKinds":["k"],"params":[],"interactive":true,"next":null,"nextInteractive":null}"#))
        #expect(text.components(separatedBy: "rowKinds").count == 2)
        // A list of many rows of one kind answers one entry, whatever its length.
        let rows = (0..<500).map { JSONValue.object(["id": .string("r\($0)"), "kind": "k"]) }
        var grown = try Session(catalog: Fixtures.catalog(
            #"{"name": "app", "kind": "stacked", "initial": [{"screen": "list", "sections": [{"id": "s", "rows": [{"id": "x", "kind": "k"}]}]}], "on": {"more": [{"from": "list", "params": {"rows": "array"}, "do": [{"setRows": {"section": "s", "rows": {"$param": "rows"}}}]}], "open": [{"from": "list", "row": "k", "do": [{"push": "detail"}]}]}}"#))
        try grown.send("more", params: ["rows": .array(rows)])
        #expect(listed(grown) == ["more", "open[k]@app"])
    }

    // MARK: sections from the showing action's params

    static let shown = Fixtures.catalog(
        #"""
        {"name": "app", "kind": "stacked", "initial": ["home"],
         "on": {"show": [{"from": "home", "params": {"addresses": "array"},
                          "do": [{"push": {"screen": "picker", "sections": {"$param": "addresses"}}}]}],
                "showOne": [{"from": "home", "params": {"rows": "array", "title": "string"},
                             "do": [{"push": {"screen": "picker", "sections": [{"id": "all", "title": {"$param": "title"}, "rows": {"$param": "rows"}}]}}]}],
                "choose": [{"from": "picker", "row": "address", "do": [{"pop": {}}, {"result": {"into": "address", "value": {"$param": "row.values"}}}]}]}}
        """#)

    /// A pushed screen takes its whole list, or a section's rows, from the action's params; the
    /// rows are then tapped like written ones.
    @Test func sectionsFromParams() throws {
        var session = try Session(catalog: Self.shown)
        let addresses = Fixtures.json(#"[{"id": "FR", "title": "France", "rows": [{"id": "home", "kind": "address", "values": {"city": "Lyon"}}]}]"#)
        try session.send("show", params: ["addresses": addresses])
        let shown = try #require(session.tree.screens.last)
        #expect(shown.feature == "picker")
        #expect(listed(session) == ["choose[address]@app", "back"])
        try session.send("choose", from: session.topId, row: "home")
        #expect(session.topFeature == "home")
        #expect(session.top?.params == ["address": ["city": "Lyon"]])
        try session.send("showOne", params: ["title": "Saved", "rows": Fixtures.json(#"[{"id": "a", "kind": "address"}, {"id": "b", "kind": "address"}]"#)])
        #expect(listed(session) == ["choose[address]@app", "back"])
        let text = String(decoding: state(session).document(), as: UTF8.self)
        #expect(text.contains(#""feature":"picker","params":{},"sections":[{"id":"all","title":"Saved","rows":[{"id":"a","kind":"address","values":{}},{"id":"b","kind":"address","values":{}}]}]"#))
    }

    /// A list from params gets the checks a written one gets, refused as the action's fault at
    /// the param, and the session does not move.
    @Test func sectionsFromParamsAreChecked() throws {
        var session = try Session(catalog: Self.shown)
        let cases: [(JSONValue, String)] = [
            (Fixtures.json(#"[{"id": "A", "rows": [{"id": "x", "kind": "address"}]}, {"id": "B", "rows": [{"id": "x", "kind": "address"}]}]"#), "/1/rows/0/id"),
            (Fixtures.json(#"[{"id": "A", "rows": []}, {"id": "A", "rows": []}]"#), "/1/id"),
            (Fixtures.json(#"[{"id": "A", "rows": [{"id": "x"}]}]"#), "/0/rows/0/kind"),
            (Fixtures.json(#"[{"id": "A", "rows": [{"id": "x", "kind": "address", "values": 3}]}]"#), "/0/rows/0/values"),
            (Fixtures.json(#"[{"id": "A"}]"#), "/0"),
            (Fixtures.json(#"[{"id": "", "rows": []}]"#), "/0/id"),
            (Fixtures.json(#"[7]"#), "/0"),
        ]
        for (sections, pointer) in cases {
            let error = session.failure("show", params: ["addresses": sections])
            guard case .invalidParams(let path, let message)? = error else {
                Issue.record("\(sections.jsonText): expected invalid params, got \(String(describing: error))")
                continue
            }
            #expect(path == "/params/addresses")
            #expect(message.hasPrefix("show's push effect: at \(pointer) of the value: "), "\(message)")
        }
        // A problem in a section's rows is the rows param's, not that of the title written before them.
        let rows = session.failure("showOne", params: ["title": "T", "rows": Fixtures.json(#"[{"id": "a", "kind": "address"}, {"id": "a", "kind": "address"}]"#)])
        guard case .invalidParams(let path, let message)? = rows else { Issue.record("expected invalid params, got \(String(describing: rows))"); return }
        #expect(path == "/params/rows")
        #expect(message.hasPrefix("showOne's push effect: at /0/rows/1/id of the value: "), "\(message)")
        let title = session.failure("showOne", params: ["title": "T", "rows": Fixtures.json(#"[{"id": "a", "kind": "address", "values": []}]"#)])
        #expect(title == .invalidParams(path: "/params/rows", message: "showOne's push effect: at /0/rows/0/values of the value: values must be an object; found array"))
        #expect(session.screenFeatures == ["home"])
    }

    // MARK: row kinds from params

    /// A row a param supplies must carry a kind the catalog declares (written in a list, or
    /// matched by a rule's `row`), or a client that renders the declared kinds would get a cell
    /// it cannot draw: the action's fault at the param holding the row, the session unmoved.
    @Test func rowsFromParamsCarryOnlyDeclaredKinds() throws {
        var session = try Session(catalog: Self.shown)
        let show = session.failure("show", params: ["addresses": Fixtures.json(#"[{"id": "A", "rows": [{"id": "a", "kind": "address"}, {"id": "g", "kind": "ghost"}]}]"#)])
        #expect(show == .invalidParams(path: "/params/addresses", message: #"show's push effect: at /0/rows/1/kind of the value: row kind "ghost" is not declared; a row from params may carry only a kind the definitions declare (written in a list, or matched by a rule's "row")"#))
        let one = session.failure("showOne", params: ["title": "T", "rows": Fixtures.json(#"[{"id": "g", "kind": "ghost"}]"#)])
        guard case .invalidParams(let path, let message)? = one else { Issue.record("expected invalid params, got \(String(describing: one))"); return }
        #expect(path == "/params/rows")
        #expect(message.hasPrefix(#"showOne's push effect: at /0/rows/0/kind of the value: row kind "ghost" is not declared"#), "\(message)")
        #expect(session.screenFeatures == ["home"])

        // Every list effect that takes rows whole is held to it; a kind any flow declares passes.
        var contacts = try Session(catalog: ListTests.contacts)
        let ghost = Fixtures.json(#"[{"id": "g", "kind": "ghost"}]"#)
        #expect(contacts.failure("contacts.setB", params: ["rows": ghost]) == .invalidParams(
            path: "/params/rows", message: #"contacts.setB's setRows effect: at /0/kind of the value: row kind "ghost" is not declared; a row from params may carry only a kind the definitions declare (written in a list, or matched by a rule's "row")"#))
        #expect(contacts.failure("contacts.load", params: ["sections": .array([["id": "V", "rows": ghost]])])?.code == "invalid-params")
        try contacts.send("contacts.setB", params: ["rows": Fixtures.json(#"[{"id": "v", "kind": "contact.vip"}, {"id": "c", "kind": "contact"}]"#)])
        #expect(listed(contacts).first == "contact.open[contact.vip]@app")
    }

    static let kinds = Fixtures.catalog(
        #"""
        {"name": "app", "kind": "stacked", "initial": [{"screen": "list", "sections": [{"id": "s", "rows": []}]}],
         "on": {"add": [{"from": "list", "params": {"row": "object"}, "do": [{"insertRow": {"section": "s", "row": {"$param": "row"}}}]}],
                "more": [{"from": "list", "do": [{"present": {"flow": "other"}}]}]}}
        """#,
        #"""
        {"name": "other", "kind": "stacked", "initial": [{"screen": "menu", "sections": [{"id": "m", "rows": [{"id": "c", "kind": "café"}]}]}]}
        """#)

    /// The declared kinds are the catalog's, compared as names are (canonical equivalence), and
    /// kept up to date as definitions change; rows already in a list are never checked again,
    /// so a session whose catalog dropped a kind carries on.
    @Test func declaredKindsAreTheCatalogs() throws {
        #expect(Self.kinds.declaredRowKinds == ["café"])
        var session = try Session(catalog: Self.kinds)
        let list = try #require(session.topId)
        try session.send("add", from: list, params: ["row": ["id": "d", "kind": "cafe\u{301}"]])  // declared by another flow, decomposed
        #expect(session.failure("add", from: list, params: ["row": ["id": "e", "kind": "tea"]])?.code == "invalid-params")

        var changed = Self.kinds
        let other = try #require(changed["other"])
        changed.removeDefinition(named: "other")
        #expect(changed.declaredRowKinds.isEmpty)
        changed.insert(other)
        #expect(changed.declaredRowKinds == ["café"])
        changed.removeDefinition(named: "other")
        let stored = try FlowTree(storage: session.tree.storageBytes())
        #expect(stored == session.tree)
        let add = FlowAction(type: "add", from: list, params: ["row": ["id": "x", "kind": "café"]])
        #expect(throws: FlowError.self) { try FlowEngine.apply(add, to: stored, catalog: changed, context: session.context) }
        let mixed = FlowAction(type: "add", from: list, params: ["row": ["id": "x", "kind": "tea"]])
        var declaring = changed
        declaring.insert(try FlowDefinition.parse(Array(#"{"name": "tea", "kind": "stacked", "initial": [{"screen": "t", "sections": [{"id": "s", "rows": [{"id": "t", "kind": "tea"}]}]}]}"#.utf8)))
        let outcome = try FlowEngine.apply(mixed, to: stored, catalog: declaring, context: session.context)
        guard case .screen(let screen)? = outcome.tree.root.entries.first else { Issue.record("the list is not the root's first entry"); return }
        #expect(screen.sections?.first?.rows.map(\.kind) == ["café", "tea"])
    }

    /// `hasLists` (whether a logged `row.id` can be a row tap) follows the definitions as they
    /// are inserted, replaced and removed: the catalog keeps it instead of walking every rule.
    @Test func hasListsFollowsTheDefinitions() throws {
        let listing = try FlowDefinition.parse(Array(#"{"name": "tea", "kind": "stacked", "initial": [{"screen": "t", "sections": [{"id": "s", "rows": []}]}]}"#.utf8))
        let plainTea = try FlowDefinition.parse(Array(#"{"name": "tea", "kind": "stacked", "initial": ["t"]}"#.utf8))
        var catalog = FlowCatalog([try FlowDefinition.parse(Array(#"{"name": "app", "kind": "stacked", "initial": ["a"]}"#.utf8))])
        #expect(!catalog.hasLists)
        catalog.insert(listing)
        #expect(catalog.hasLists)
        catalog.insert(plainTea)
        #expect(!catalog.hasLists, "the only flow with a list was replaced by one without")
        catalog.insert(listing)
        catalog.removeDefinition(named: "tea")
        #expect(!catalog.hasLists)
        #expect(FlowCatalog([listing]).hasLists)
    }
}
