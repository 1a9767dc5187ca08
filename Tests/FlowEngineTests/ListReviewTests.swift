// ListReviewTests: the review of lists (issue 37) — links tap no row, an undeclared param in setSections is reported once, a rule's row and via share one reader.

import JSON
import Testing

import FlowEngine

struct ListReviewTests {
    /// `link` and `link.cancel` refuse a `row`, as they refuse `interactive`: invalid-params at
    /// `/row`, rather than carrying a row no rule checks.
    @Test func linksTapNoRow() throws {
        var session = try Session(catalog: ListTests.contacts)
        let list = try #require(session.topId)
        for (type, params) in [("link", ["uri": "/anything"] as JSONObject), ("link.cancel", [:])] {
            let error = session.failure(type, from: list, row: "ada", params: params)
            #expect(error == .invalidParams(path: "/row", message: "\(type) taps no row; post it without \"row\""))
        }
        #expect(session.failure("link", params: ["uri": "/anything"])?.code == "unknown-link")
    }

    /// An undeclared param inside `setSections` is one problem, whether it is the whole list or
    /// a section's rows.
    @Test func undeclaredParamInSetSectionsIsReportedOnce() {
        for (sections, path) in [
            (#"{"$param": "nope"}"#, "/on/x/0/do/0/setSections/sections/$param"),
            (#"[{"id": "s", "rows": {"$param": "nope"}}]"#, "/on/x/0/do/0/setSections/sections/0/rows/$param"),
        ] {
            let problems = Fixtures.problems(#"{"name": "a", "kind": "stacked", "initial": [{"screen": "l", "sections": []}], "on": {"x": [{"from": "l", "params": {"a": "string"}, "do": [{"setSections": {"sections": "# + sections + "}}]}]}}")
            #expect(problems.map(\.path) == [path])
        }
    }

    /// A rule's `row` and `via` are read alike (one name or a non-empty array), each with its
    /// own message.
    @Test func rowAndViaShareTheirShape() {
        let row = Fixtures.problems(#"{"name": "a", "kind": "stacked", "initial": [{"screen": "l", "sections": []}], "on": {"x": [{"from": "l", "row": [], "do": [{"pop": {}}]}]}}"#)
        #expect(row.map(\.message) == [#"row must be a row kind or a non-empty array of them, such as "address.row"; found []"#])
        let via = Fixtures.problems(#"{"name": "a", "kind": "stacked", "initial": ["l"], "on": {"x": [{"via": 3, "do": [{"pop": {}}]}]}}"#)
        #expect(via.map(\.message) == [#"via must be a child flow's name or a non-empty array of them, such as "onboarding"; found 3"#])
    }
}
