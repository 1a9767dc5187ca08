// ListPlanTests: lists on the client — read from state documents, planned as list steps addressed to their screen, applied by RenderedTree.
import FlowEngine
import FlowStackClient
import JSON
import Testing
import TestSupport

/// A list screen whose list is replaced from params (`list.load`), or from a form pushed over it
/// that pops back and sets the list below (`form.saved`), so lists change on top and under.
enum ListShop {
    static let catalog: FlowCatalog = {
        let app = #"""
            {"name": "app", "kind": "stacked", "initial": [{"screen": "list", "sections": []}],
             "on": {
               "list.load": [{"from": "list", "params": {"sections": "array"}, "do": [{"setSections": {"sections": {"$param": "sections"}}}]}],
               "list.open": [{"from": "list", "row": "cell", "do": [{"push": {"screen": "form", "params": {"id": {"$param": "row.id"}}}}]}],
               "form.saved": [{"from": "form", "params": {"sections": "array"},
                               "do": [{"setSections": {"screen": "list", "sections": {"$param": "sections"}}}, {"pop": {}}]}]}}
            """#
        let (catalog, problems) = FlowCatalog.parse([("app", Array(app.utf8))])
        if !problems.isEmpty { Issue.record("the list flows have problems: \(problems)") }
        return catalog
    }()

    static func start() throws -> SessionState {
        let context = FlowContext(userId: "u-list")
        let tree = try FlowEngine.start(catalog: catalog, context: context)
        return SessionState(sessionId: "s_list", userId: "u-list", version: 0, tree: tree, context: context, catalog: catalog,
                            flagsJSON: Array("{}".utf8), experimentsJSON: Array("{}".utf8))
    }

    /// A random list drawn from small id pools, so consecutive lists share sections and rows.
    static func randomSections(_ random: inout SeededGenerator) -> JSONValue {
        var sectionIds = (0..<6).map { "s\($0)" }
        sectionIds.shuffle(using: &random)
        var rowIds = (0..<30).map { "r\($0)" }
        rowIds.shuffle(using: &random)
        var sections: [JSONValue] = []
        for id in sectionIds.prefix(Int.random(in: 0...5, using: &random)) {
            var rows: [JSONValue] = []
            for _ in 0..<Int.random(in: 0...6, using: &random) {
                guard let row = rowIds.popLast() else { break }
                rows.append(["id": .string(row), "kind": "cell", "values": ["v": .integer(Int.random(in: 0...2, using: &random))]])
            }
            var section: JSONObject = ["id": .string(id), "rows": .array(rows)]
            if Bool.random(using: &random) { section["title"] = .string("T\(Int.random(in: 0...1, using: &random))") }
            sections.append(.object(section))
        }
        return .array(sections)
    }
}

struct ListPlanTests {
    /// The list of screen `id` in a state.
    func sections(_ id: String, in state: NavigationState) -> [ListSection]? {
        var found: [ListSection]??
        state.root.forEachScreenForTests { screen in if screen.id == id { found = .some(screen.sections) } }
        return found ?? nil
    }

    /// Thousands of seeded random list changes, on top and under a pushed form: each plan turns
    /// what the renderer shows into the next state (every list by id), with the server's changes
    /// as list steps addressed to the list's screen; and jumps over several versions, planned
    /// with changes computed on the client, do too.
    @Test(arguments: 0..<4)
    func randomListChangesRender(seed: Int) throws {
        var random = SeededGenerator(seed: UInt64(seed))
        var session = try ListShop.start()
        var states = [try NavigationState(session)]
        var listSteps = 0
        for step in 0..<500 {
            let top = session.tree.top
            let action: FlowAction
            if top?.feature == "form" {
                action = FlowAction(type: "form.saved", from: top?.entryId, params: ["sections": ListShop.randomSections(&random)])
            } else if Int.random(in: 0...3, using: &random) == 0,
                let rows = session.tree.screen(id: top?.id ?? 0)?.sections?.flatMap(\.rows), let row = rows.randomElement(using: &random)
            {
                action = FlowAction(type: "list.open", from: top?.entryId, row: row.id)
            } else {
                action = FlowAction(type: "list.load", from: top?.entryId, params: ["sections": ListShop.randomSections(&random)])
            }
            session = try session.applying(action).next
            let next = try NavigationState(session)
            let shown = states[states.count - 1]
            let plan = NavigationPlan(from: shown, to: next)
            var rendered = RenderedTree(shown)
            do throws(RenderError) {
                try rendered.apply(plan)
            } catch {
                Issue.record("seed \(seed) step \(step) (\(action.type)): \(error)")
                return
            }
            #expect(rendered == RenderedTree(next), "seed \(seed) step \(step) (\(action.type))")
            for planned in plan.steps {
                guard case .updateList(let screen, let changes, _) = planned.operation else { continue }
                listSteps += 1
                #expect(changes == next.transition?.lists[screen], "a plan that follows the transition uses the server's changes")
            }
            states.append(next)
        }
        #expect(listSteps > 300)
        // Jumps: a client that missed versions plans with changes of its own.
        for _ in 0..<200 {
            let from = Int.random(in: 0..<(states.count - 2), using: &random)
            let to = Int.random(in: (from + 2)..<states.count, using: &random)
            var rendered = RenderedTree(states[from])
            do throws(RenderError) {
                try rendered.apply(NavigationPlan(from: states[from], to: states[to]))
            } catch {
                Issue.record("seed \(seed) jump \(from) → \(to): \(error)")
                continue
            }
            #expect(rendered == RenderedTree(states[to]), "seed \(seed) jump \(from) → \(to)")
        }
    }

    /// A row tap posts its row, and reads back as posted (a queued tap keeps it).
    @Test func rowTapsArePostedWithTheirRow() throws {
        let tap = FlowAction(type: "list.open", from: "e2", row: "x", params: ["n": 1])
        #expect(tap.json.jsonText == #"{"type":"list.open","from":"e2","row":"x","params":{"n":1}}"#)
        #expect(try FlowAction(json: tap.json) == tap)
    }

    /// A list-only version is one list step on the screen's stack, animated; the state reads
    /// the screen's list and the transition's changes.
    @Test func aListOnlyVersionIsOneListStep() throws {
        var session = try ListShop.start()
        let load: JSONValue = [["id": "a", "rows": [["id": "x", "kind": "cell"], ["id": "y", "kind": "cell"]]]]
        session = try session.applying(FlowAction(type: "list.load", from: "e2", params: ["sections": load])).next
        let shown = try NavigationState(session)
        #expect(sections("e2", in: shown)?.first?.rows.map(\.id) == ["x", "y"])
        let swap: JSONValue = [["id": "a", "rows": [["id": "y", "kind": "cell"], ["id": "x", "kind": "cell", "values": ["n": 1]]]]]
        session = try session.applying(FlowAction(type: "list.load", from: "e2", params: ["sections": swap])).next
        let next = try NavigationState(session)
        #expect(next.transition?.type == "list")
        let plan = NavigationPlan(from: shown, to: next)
        #expect(plan.steps.map(\.description) == ["updateList e2 (-0 +0 ~1 ↻1 rows) on stack f1, animated"])
        // Of two rows swapped, the later one in the new order stays (the stay run is found left to right).
        #expect(next.transition?.lists["e2"]?.rows.moved == [.init(id: "y", from: RowPath(section: 0, row: 1), to: RowPath(section: 0, row: 0))])
    }

    /// A row tap reads back from a pending action's document; a stale row in a plan that does not
    /// fit is a render error, not a silent rebuild.
    @Test func changesThatDoNotFitAreRefused() throws {
        var session = try ListShop.start()
        let shown = try NavigationState(session)
        session = try session.applying(FlowAction(type: "list.load", from: "e2", params: ["sections": [["id": "a", "rows": [["id": "x", "kind": "cell"]]]]])).next
        let next = try NavigationState(session)
        var plan = NavigationPlan(from: shown, to: next)
        guard case .updateList(let screen, var changes, let sections) = plan.steps.first?.operation else {
            Issue.record("no list step: \(plan.steps)")
            return
        }
        changes.sections.inserted = []  // a wrong change set
        plan.steps[0].operation = .updateList(screen: screen, changes: changes, sections: sections)
        var rendered = RenderedTree(shown)
        #expect(throws: RenderError.self) { try rendered.apply(plan) }
    }
}

extension NavigationState.Node {
    /// Every screen of the tree, presented ones included.
    func forEachScreenForTests(_ body: (NavigationState.Screen) -> Void) {
        for entry in entries {
            switch entry {
            case .screen(let screen): body(screen)
            case .flow(let child): child.forEachScreenForTests(body)
            }
        }
        presented?.node.forEachScreenForTests(body)
    }
}
