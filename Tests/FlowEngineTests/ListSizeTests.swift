// ListSizeTests: a screen's list is capped in depth and bytes on every path (params, effects, updateRow fed its own values, definitions), refused as list-too-large.

import JSON
import Testing

import FlowEngine

struct ListSizeTests {
    /// A list whose taps feed a row's values back into it: `nest` one level deeper per tap,
    /// `double` twice over per tap; `load` takes a whole list from params.
    static let feedback = Fixtures.catalog(
        #"""
        {"name": "app", "kind": "stacked",
         "initial": [{"screen": "list", "sections": [{"id": "s", "rows": [{"id": "r", "kind": "cell", "values": {"n": 1}}]}]}],
         "on": {
           "nest": [{"from": "list", "row": "cell", "do": [{"updateRow": {"row": {"$param": "row.id"}, "values": {"inner": {"$param": "row.values"}}}}]}],
           "double": [{"from": "list", "row": "cell", "do": [{"updateRow": {"row": {"$param": "row.id"}, "values": {"a": {"$param": "row.values"}, "b": {"$param": "row.values"}}}}]}],
           "load": [{"from": "list", "params": {"sections": "array"}, "do": [{"setSections": {"sections": {"$param": "sections"}}}]}],
           "add": [{"from": "list", "params": {"values": "object"}, "do": [{"insertRow": {"section": "s", "row": {"id": "new", "kind": "cell", "values": {"$param": "values"}}}}]}]
         }}
        """#)

    /// `{"v": {"v": … 1}}`, `levels` objects deep.
    static func nested(_ levels: Int) -> JSONValue {
        (1..<levels).reduce(JSONValue.object(["v": 1])) { inner, _ in .object(["v": inner]) }
    }

    /// A row's values fed back into `updateRow` nest one level per tap: the tap that would make
    /// them 17 levels deep is refused as list-too-large, and the session is unchanged.
    @Test func feedbackNestingIsCapped() throws {
        var session = try Session(catalog: Self.feedback)
        let list = try #require(session.topId)
        for _ in 1..<ScreenList.maxValuesDepth { try session.send("nest", from: list, row: "r") }
        let before = session.tree
        let error = session.failure("nest", from: list, row: "r")
        #expect(error?.code == "list-too-large")
        guard case .listTooLarge(let flow, let action, let reason)? = error else {
            Issue.record("expected list-too-large; got \(String(describing: error))")
            return
        }
        #expect(flow == "app" && action == "nest")
        #expect(reason == "updateRow: at /0/rows/0/values of the list: the values of row \"r\" nest more than 16 levels deep; a row's values nest at most 16")
        #expect(session.tree == before)
    }

    /// Values fed back twice double on every tap: within a dozen taps the row would pass 64 KiB,
    /// and that tap is refused (the session still takes other actions).
    @Test func feedbackDoublingIsCapped() throws {
        var session = try Session(catalog: Self.feedback)
        let list = try #require(session.topId)
        var refused: FlowError?
        var taps = 0
        // Bounded so that a build without the cap fails here rather than doubling into gigabytes.
        while refused == nil, taps < 16 {
            taps += 1
            let before = session.tree
            do throws(FlowError) {
                try session.send("double", from: list, row: "r")
            } catch {
                refused = error
                #expect(session.tree == before)
            }
        }
        #expect(refused?.code == "list-too-large")
        #expect(taps < 14, "the row doubled \(taps) times before a refusal")
        guard case .listTooLarge(_, _, let reason)? = refused else { return }
        #expect(reason.hasPrefix("updateRow: at /0/rows/0 of the list: row \"r\" takes "))
        #expect(reason.hasSuffix(" bytes as JSON; a row takes at most 65536"))
        try session.send("load", params: ["sections": []])
    }

    /// Lists from params are held to the caps: values too deep, a row too big, a list too big
    /// (20 rows of 60 KB), each list-too-large with the session unchanged; just under them passes.
    @Test func paramsOverTheCapsAreRefused() throws {
        var session = try Session(catalog: Self.feedback)
        func rows(_ values: [JSONValue]) -> JSONValue {
            ["id": "s", "rows": .array(values.enumerated().map { ["id": .string("r\($0.offset)"), "kind": "cell", "values": $0.element] })]
        }
        let deep = session.failure("load", params: ["sections": [rows([["x": Self.nested(16)]])]])
        #expect(deep?.code == "list-too-large")
        #expect(deep?.message.contains("at /0/rows/0/values of the list") == true)
        try session.send("load", params: ["sections": [rows([["x": Self.nested(15)]])]])
        let big = String(repeating: "x", count: 70_000)
        #expect(session.failure("load", params: ["sections": [rows([["text": .string(big)]])]])?.code == "list-too-large")
        #expect(session.failure("add", params: ["values": ["text": .string(big)]])?.code == "list-too-large")
        let share = String(repeating: "y", count: 60_000)
        let many = rows(Array(repeating: ["text": .string(share)], count: 20))
        let total = session.failure("load", params: ["sections": [many]])
        #expect(total?.code == "list-too-large")
        #expect(total?.message.hasSuffix("the list's rows take more than 1048576 bytes as JSON; a list takes at most 1048576") == true)
        try session.send("load", params: ["sections": [rows(Array(repeating: ["text": .string(share)], count: 17))]])
        #expect(session.tree.screen(id: session.top!.id)?.sections?.first?.rows.count == 17)
    }

    /// The row cap counts UTF-8 bytes of the row as written: `{"id":"new","kind":"cell","values":{"text":…}}`
    /// is 47 bytes around the text, so 32,744 two-byte characters and one more byte make
    /// exactly 65,536 (taken), one more character 65,537 (refused).
    @Test func rowBytesAreUTF8() throws {
        var session = try Session(catalog: Self.feedback)
        let over = session.failure("add", params: ["values": ["text": .string(String(repeating: "é", count: 32_745))]])
        guard case .listTooLarge(_, _, let reason)? = over else {
            Issue.record("expected list-too-large; got \(String(describing: over))")
            return
        }
        #expect(reason == "insertRow: at /0/rows/1 of the list: row \"new\" takes 65537 bytes as JSON; a row takes at most 65536")
        try session.send("add", params: ["values": ["text": .string(String(repeating: "é", count: 32_744) + "x")]])
    }

    /// Definitions: a list written out whole is checked against the caps, and a list's rows are
    /// counted across its sections.
    @Test func definitionsOverTheCapsAreProblems() throws {
        let deep = Self.nested(17).jsonText
        let tooDeep = Fixtures.problems(#"{"name": "a", "kind": "stacked", "initial": [{"screen": "l", "sections": [{"id": "s", "rows": [{"id": "r", "kind": "k", "values": "# + deep + "}]}]}]}")
        #expect(tooDeep.map(\.path) == ["/initial/0/sections/0/rows/0/values"])
        func section(_ id: String, _ count: Int) -> String {
            #"{"id": "\#(id)", "rows": ["# + (0..<count).map { #"{"id": "\#(id)\#($0)", "kind": "k"}"# }.joined(separator: ",") + "]}"
        }
        let tooMany = Fixtures.problems(#"{"name": "a", "kind": "stacked", "initial": [{"screen": "l", "sections": ["# + section("a", 6000) + "," + section("b", 6000) + "]}]}")
        #expect(tooMany.map(\.path) == ["/initial/0/sections"])
        let fits = Fixtures.problems(#"{"name": "a", "kind": "stacked", "initial": [{"screen": "l", "sections": ["# + section("a", 5000) + "," + section("b", 5000) + "]}]}")
        #expect(fits.isEmpty)
    }

    /// Storage is not trusted: a stored list over a cap cannot be read back.
    @Test func storedListsOverTheCapsAreRefused() throws {
        var session = try Session(catalog: Self.feedback)
        let list = try #require(session.topId)
        for _ in 1..<ScreenList.maxValuesDepth { try session.send("nest", from: list, row: "r") }
        let stored = String(decoding: session.tree.storageBytes(), as: UTF8.self)
        #expect(throws: Never.self) { try FlowTree(storage: Array(stored.utf8)) }
        let deeper = stored.replacingOccurrences(of: #"{"n":1}"#, with: #"{"n":{"n":1}}"#)
        #expect(deeper != stored)
        #expect(throws: FlowStorageError.self) { try FlowTree(storage: Array(deeper.utf8)) }
    }
}
