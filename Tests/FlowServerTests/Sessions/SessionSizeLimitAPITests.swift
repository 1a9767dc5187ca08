// SessionSizeLimitAPITests: an action that would grow a session past --max-session-bytes (pushes
// with large params, again and again) is refused 422 session-too-large, alone, in a batch and as
// a new session's link; nothing of it is stored, and the session still serves and shrinks.
import FlowEngine
@testable import FlowServer
import HTTPServer
import HTTPTestClient
import JSON
import Testing

struct SessionSizeLimitAPITests {
    /// The root flow: a detail screen that opens another detail with the params it is given.
    static let app = #"""
        {"name": "app", "kind": "stacked",
         "initial": ["detail"],
         "on": {"open": [{"from": "detail", "params": {"blob": "object"}, "do": [{"push": {"screen": "detail", "params": {"blob": {"$param": "blob"}}}}]}],
                "back": [{"from": "detail", "do": [{"pop": {}}]}]}}
        """#

    /// An `open` whose `blob` holds `strings` strings of 60,000 bytes: about 60 KB each as JSON.
    static func open(_ strings: Int, letter: String = "x") -> String {
        let text = String(repeating: letter, count: 60_000)
        let members = (0..<strings).map { #""k\#($0)":"\#(text)""# }.joined(separator: ",")
        return #"{"type":"open","params":{"blob":{\#(members)}}}"#
    }

    static func activated(_ test: TestApp) throws {
        let put = try test.direct.send("PUT", "/v1/flows/app?activate=true", body: Self.app, headers: FlowAdminTests.admin)
        #expect(put.status == 201, "\(put.text)")
    }

    /// At the default 4 MiB: pushes of about 900 KB each (a body under the 1 MiB limit) are
    /// applied until the one that would pass 4 MiB, which is refused as a problem with the
    /// limit; the version stays, the stored state is the one before, the session pops back
    /// and takes a small push, and a restart reads it.
    @Test func pushesPastTheDefaultAreRefused() throws {
        let test = try TestApp()
        try Self.activated(test)
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "hoarder")
        var refusal: Response?
        var applied = 0
        // Bounded so that a build without the cap fails here instead of growing for ever.
        while refusal == nil, applied < 8 {
            let response = try client.act(session, Self.open(15))
            if response.status == 200 { applied += 1 } else { refusal = response }
        }
        let refused = try #require(refusal, "8 pushes of 900 KB were all applied")
        #expect(applied == 4)
        #expect(refused.status == 422, "\(refused.text)")
        #expect(refused.headers["Content-Type"] == "application/problem+json")
        #expect(refused.json["code"] == "session-too-large")
        #expect(refused.json["type"] == "urn:flowstack:problem:session-too-large")
        #expect(refused.json["limit"].integerValue == Application.defaultMaxSessionBytes)
        #expect(refused.json["detail"].stringValue?.contains("--max-session-bytes") == true, "\(refused.text)")

        // The state is larger than the test client's parser takes by default: it repeats the
        // top screen's params.
        let state = try client.state(session)
        #expect(state.status == 200)
        let document = try JSONParser.parse(state.body, limits: .storedData)
        #expect(document["version"].integerValue == applied)
        #expect(document.features.count == applied + 1)
        let log = try test.direct.send("GET", "/v1/sessions/\(session.id)/actions?limit=100", headers: session.auth)
        let entries = try JSONParser.parse(log.body, limits: .storedData)["actions"].arrayValue
        #expect(entries?.count == applied)

        #expect(try client.apply(session, #"{"type":"back"}"#)["version"].integerValue == applied + 1)
        #expect(try client.apply(session, Self.open(1))["version"].integerValue == applied + 2)

        let restarted = try test.reopened()
        let again = try SessionClient(sender: restarted.direct).state(session)
        let reread = try JSONParser.parse(again.body, limits: .storedData)
        #expect(again.status == 200 && reread["version"].integerValue == applied + 2)
        #expect(reread.features.count == applied + 1)
    }

    /// In a batch the too-large tap is the refused item, with the problem a single POST answers;
    /// the taps before it are applied, those after it are not.
    @Test func aBatchStopsAtTheTapThatWouldPassTheLimit() throws {
        let test = try TestApp(maxSessionBytes: 200_000)
        try Self.activated(test)
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "batcher")
        let taps = (0..<5).map { Tap(key: "k\($0)", version: $0, action: Self.open(1, letter: "\($0)")) }
        let answer = try client.batch(session, taps)
        #expect(answer.status == 200, "\(answer.text)")
        // Three pushes of 60 KB fit in 200,000 bytes; the fourth does not.
        #expect(answer.json.batchStatuses == ["applied", "applied", "applied", "refused", "notApplied"])
        #expect(answer.json["refused"]["status"] == 422)
        #expect(answer.json["refused"]["code"] == "session-too-large")
        #expect(answer.json["refused"]["limit"] == 200_000)
        let state = try client.state(session)
        #expect(state.json["version"].integerValue == 3)
        // The refused key was not used: it may carry a smaller action later.
        let later = try client.batch(session, [Tap(key: "k3", version: 3, action: #"{"type":"back"}"#)])
        #expect(later.json.batchStatuses == ["applied"], "\(later.text)")
    }

    /// A new session's link that would build a session past the limit creates nothing.
    @Test func aLinkPastTheLimitCreatesNothing() throws {
        // Links are at most 2,048 bytes: the limit is set below what one can add.
        let test = try TestApp(maxSessionBytes: 2048)
        let long = String(repeating: "a", count: 2000)
        let refused = try test.direct.send("POST", "/v1/sessions", body: #"{"userId":"linker","link":"/modal/\#(long)"}"#)
        #expect(refused.status == 422, "\(refused.text)")
        #expect(refused.json["code"] == "session-too-large")
        #expect(refused.json["detail"].stringValue?.hasPrefix("The link would leave the new session") == true, "\(refused.text)")
        let export = try test.direct.send("GET", "/v1/users/linker/export", headers: FlowAdminTests.admin)
        #expect(export.status == 404, "\(export.text.prefix(300))")
        let short = try test.direct.send("POST", "/v1/sessions", body: #"{"userId":"linker","link":"/modal/Hi"}"#)
        #expect(short.status == 201, "\(short.text)")
    }
}
