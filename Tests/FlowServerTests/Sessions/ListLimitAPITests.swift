// ListLimitAPITests: through the API, a list grown by updateRow fed its own values is refused (422 list-too-large, problem+json) and the session still serves, before and after a restart.
import FlowEngine
@testable import FlowServer
import HTTPServer
import HTTPTestClient
import JSON
import Testing

struct ListLimitAPITests {
    /// The root flow: one list whose row, tapped with `double`, takes its own values twice over.
    static let app = #"""
        {"name": "app", "kind": "stacked",
         "initial": [{"screen": "list", "sections": [{"id": "s", "rows": [{"id": "r", "kind": "cell", "values": {"n": 1}}]}]}],
         "on": {"double": [{"from": "list", "row": "cell", "do": [{"updateRow": {"row": {"$param": "row.id"},
                                                                  "values": {"a": {"$param": "row.values"}, "b": {"$param": "row.values"}}}}]}],
                "rename": [{"from": "list", "row": "cell", "do": [{"updateRow": {"row": {"$param": "row.id"}, "values": {"n": 2}}}]}]}}
        """#

    /// A chain of `double` taps doubles the row until the tap that would pass 64 KiB: that one is
    /// 422 list-too-large (problem+json, the refusing flow named), the version stays, and the
    /// session still answers and applies actions, also once the server restarts.
    @Test func doublingUpdateRowChainIsRefused() throws {
        let test = try TestApp()
        let put = try test.direct.send("PUT", "/v1/flows/app?activate=true", body: Self.app, headers: FlowAdminTests.admin)
        #expect(put.status == 201, "\(put.text)")
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "lister")
        var refusal: Response?
        var applied = 0
        // Bounded so that a build without the cap fails here rather than doubling into gigabytes.
        while refusal == nil, applied < 16 {
            let response = try client.act(session, #"{"type": "double", "row": "r"}"#)
            if response.status == 200 { applied += 1 } else { refusal = response }
        }
        let refused = try #require(refusal, "16 doublings were all applied")
        #expect(applied > 5 && applied < 14)
        #expect(refused.status == 422, "\(refused.text)")
        #expect(refused.headers["Content-Type"] == "application/problem+json")
        #expect(refused.json["code"] == "list-too-large")
        #expect(refused.json["flow"] == "app")
        #expect(refused.json["detail"].stringValue?.contains("a row takes at most 65536") == true, "\(refused.text)")

        let state = try client.state(session)
        #expect(state.status == 200)
        #expect(state.json["version"].integerValue == applied)
        #expect(try client.apply(session, #"{"type": "rename", "row": "r"}"#)["version"].integerValue == applied + 1)

        let restarted = try test.reopened()
        let again = try SessionClient(sender: restarted.direct).state(session)
        #expect(again.status == 200 && again.json["version"].integerValue == applied + 1)
    }
}
