// LogRebuildRowTests: a logged `row.id` rebuilds as a row tap only where the catalog has lists; in a catalog from before lists it is the client's own param, as it was applied.
import FlowEngine
@testable import FlowServer
import FlowStore
import JSON
import Testing

struct LogRebuildRowTests {
    static func catalog(_ text: String) throws -> FlowCatalog {
        FlowCatalog([try FlowDefinition.parse(Array(text.utf8))])
    }

    /// One logged entry, judged with an empty user state.
    static func entry(_ type: String, params: String) -> (action: ActionRecord, tree: [UInt8]?) {
        (ActionRecord(version: 1, type: type, source: nil, params: params, interactive: false, handledBy: nil, transition: nil,
                      createdAt: "2026-01-01T00:00:00.000Z", userState: "{}"), nil)
    }

    /// Before lists a client could post a param named `row.id`; such an entry, in a catalog with
    /// no list, rebuilds as the plain action that was applied, not as a tap on a row no screen has.
    @Test func oldParamNamedRowIdIsNotATap() throws {
        let catalog = try Self.catalog(#"{"name": "app", "kind": "stacked", "initial": ["a"], "on": {"go": [{"from": "a", "do": [{"push": "b"}]}]}}"#)
        #expect(!catalog.hasLists)
        let context = FlowContext(userId: "u")
        let start = try FlowEngine.start(catalog: catalog, context: context)
        let rebuilt = LogRebuild(catalog: catalog, context: context)
            .rebuild(from: start.storageBytes(), entries: [Self.entry("go", params: #"{"row.id":"x","n":1}"#)])
        let tree = try #require(rebuilt?.last?.tree, "the entry did not rebuild")
        #expect(tree.top?.feature == "b")
        #expect(rebuilt?.last?.action.handledBy == "app")
    }

    /// Where the catalog has lists, `row.id` in the log is the tapped row, as the log wrote it.
    @Test func rowTapsRebuildAsTaps() throws {
        let catalog = try Self.catalog(#"""
            {"name": "app", "kind": "stacked", "initial": [{"screen": "list", "sections": [{"id": "s", "rows": [{"id": "r", "kind": "cell"}]}]}],
             "on": {"open": [{"from": "list", "row": "cell", "do": [{"push": {"screen": "detail", "params": {"id": {"$param": "row.id"}}}}]}]}}
            """#)
        #expect(catalog.hasLists)
        let context = FlowContext(userId: "u")
        let start = try FlowEngine.start(catalog: catalog, context: context)
        let tap = FlowAction(type: "open", row: "r")
        let rebuilt = LogRebuild(catalog: catalog, context: context)
            .rebuild(from: start.storageBytes(), entries: [Self.entry("open", params: JSONValue.object(tap.loggedParams).jsonText)])
        let tree = try #require(rebuilt?.last?.tree, "the tap did not rebuild")
        #expect(tree.top?.feature == "detail" && tree.top?.params == ["id": "r"])
    }
}
