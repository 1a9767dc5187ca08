// The engine conformance suite's expected answers are the server's: the sample app's cases replayed through the session API, byte for byte.
import EngineSuite
import FlowEngine
import Foundation
import HTTPServer
import HTTPTestClient
import JSON
import Testing

struct EngineSuiteServerTests {
    /// The checked-in cases of the sample app (the flows and flags a fresh server serves).
    static let sampleCases: [String] = {
        let folder = Repository.path("engine-suite/cases").path
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
            .filter { $0.hasPrefix("sample-app.") && $0.hasSuffix(".jsonl") }.sorted()
    }()

    /// The refusal a problem answer means, as a runner writes it: the status, the `code` and
    /// extension members, and the pointer when the problem names one (else the runner's).
    static func refusal(of response: Response, expected: JSONValue) -> JSONValue {
        let problem = response.json
        var members: [JSONObject.Member] = []
        for key in ["chain", "code", "flow", "link"] where !problem[key].isNull { members.append(.init(key: key, value: problem[key])) }
        let firstError: JSONValue = problem["errors"][0]
        let pointer: JSONValue = firstError["pointer"]
        members.append(.init(key: "pointer", value: pointer.isNull ? expected["refused"]["pointer"] : pointer))
        members.append(.init(key: "status", value: .integer(response.status)))
        if !problem["step"].isNull { members.append(.init(key: "step", value: problem["step"])) }
        return .object(["refused": .object(JSONObject(members))])
    }

    /// Each sample-app case, run through the server's session API (a new session for the case's
    /// user and attributes; a returning user onboarded first on another session), answers every
    /// line exactly as the case expects, but for the session's id: states, predictions, dry runs
    /// and available actions byte for byte, refusals by status, code and members.
    @Test(arguments: sampleCases)
    func serverAnswersTheCase(name: String) throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let text = try String(contentsOf: Repository.path("engine-suite/cases/\(name)"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        let parsed: JSONValue = try JSONParser.parse(lines[1])
        let bundle: JSONValue = parsed["bundle"]
        let userId = try #require(bundle["context"]["user"].objectValue != nil ? bundle["userId"].stringValue : nil)
        let caseSession = try #require(bundle["sessionId"].stringValue)
        let user: JSONValue = bundle["context"]["user"]
        if user["onboarded"].boolValue == true {
            // The user finished onboarding in an earlier session, as the case's user state says.
            let earlier = try client.create(userId: userId)
            let first = try client.apply(earlier, #"{"type":"onboarding.showSecond","from":"\#(earlier.state["top"]["id"].stringValue ?? "")"}"#)
            try client.apply(earlier, #"{"type":"onboarding.completed","from":"\#(first["top"]["id"].stringValue ?? "")"}"#)
        }
        #expect(bundle["context"]["user"].objectValue?.keys.allSatisfy { $0 == "onboarded" } == true, "\(name): a user state the walk can make")
        let session = try client.create(userId: userId, attributes: bundle["context"]["attributes"].jsonText,
                                        traits: bundle["context"]["traits"].jsonText)
        func expected(_ index: Int) -> String { lines[index].replacingOccurrences(of: "\"\(caseSession)\"", with: "\"\(session.id)\"") }
        #expect(try client.state(session).text == expected(2), "\(name): the new session's state")
        var index = 3, compared = 0
        while index + 1 < lines.count {
            let input = try JSONParser.parse(lines[index])
            let response: Response
            if input["available"] == .bool(true) {
                response = try client.sender.send("GET", "/v1/sessions/\(session.id)/actions/available", headers: session.auth)
            } else {
                let query = input["predict"] == .bool(true) ? "?predict=true" : input["dryRun"] == .bool(true) ? "?dryRun=true" : ""
                response = try client.sender.send("POST", "/v1/sessions/\(session.id)/actions\(query)", body: input["action"].jsonText,
                                                  headers: session.auth)
            }
            let want = expected(index + 1)
            if response.status == 200 {
                #expect(response.text == want, "\(name) line \(index + 2): \(lines[index])")
            } else {
                let wanted = try JSONParser.parse(want)
                #expect(Self.refusal(of: response, expected: wanted) == wanted, "\(name) line \(index + 2): \(lines[index]) answered \(response.status) \(response.text)")
            }
            index += 2
            compared += 1
        }
        #expect(compared >= 5 && compared == (lines.count - 3) / 2, "\(name): \(compared) lines compared")
    }

    /// Every sample-app case of the suite is checked here.
    @Test func sampleCasesAreThere() {
        #expect(Self.sampleCases.count >= 5, "\(Self.sampleCases)")
    }
}
