// ErrorTests: every FlowError the engine reports, with the tree left unchanged each time.

import JSON
import Testing

import FlowEngine

/// One step of a session script.
struct Step: Sendable {
    var type: String
    var from: String? = nil
    var params: JSONObject = [:]
    var interactive = false
}

/// What an error case expects: the exact error, or the parts that identify it.
enum ExpectedError: Sendable {
    case exact(FlowError)
    case refused(flow: String, action: String)
    case invalidParams(path: String)
    case brokenDefinition(flow: String)

    func matches(_ error: FlowError) -> Bool {
        switch (self, error) {
        case (.exact(let expected), _): return expected == error
        case (.refused(let flow, let action), .refused(let actualFlow, let actualAction, let reason)):
            return flow == actualFlow && action == actualAction && !reason.isEmpty
        case (.invalidParams(let path), .invalidParams(let actualPath, let message)):
            return path == actualPath && !message.isEmpty
        case (.brokenDefinition(let flow), .brokenDefinition(let actualFlow, _)):
            return flow == actualFlow
        default: return false
        }
    }
}

struct ErrorCase: Sendable, CustomTestStringConvertible {
    var name: String
    var setup: [Step] = []
    var action: Step
    var expected: ExpectedError

    var testDescription: String { name }
}

struct ErrorTests {
    static let cases: [ErrorCase] = [
        ErrorCase(name: "stale from", action: Step(type: "t.push", from: "e99"),
                  expected: .exact(.staleSource(from: "e99", top: "e2"))),
        ErrorCase(name: "double tap", setup: [Step(type: "t.push", from: "e2")], action: Step(type: "t.push", from: "e2"),
                  expected: .exact(.staleSource(from: "e2", top: "e3"))),
        ErrorCase(name: "from names a flow", action: Step(type: "t.push", from: "f1"),
                  expected: .exact(.staleSource(from: "f1", top: "e2"))),
        ErrorCase(name: "malformed from", action: Step(type: "t.push", from: "x1"), expected: .invalidParams(path: "/from")),
        ErrorCase(name: "empty type", action: Step(type: ""), expected: .invalidParams(path: "/type")),
        ErrorCase(name: "unhandled at root", action: Step(type: "nobody.knows"),
                  expected: .exact(.unhandled(action: "nobody.knows", chain: ["app"]))),
        ErrorCase(name: "unhandled from a presented flow", setup: [Step(type: "t.present")], action: Step(type: "nobody.knows"),
                  expected: .exact(.unhandled(action: "nobody.knows", chain: ["sheet", "app"]))),
        ErrorCase(name: "unhandled from a nested tab",
                  setup: [Step(type: "t.replaceRoot"), Step(type: "t.selectTabParam", params: ["i": 2])],
                  action: Step(type: "nobody.knows"),
                  expected: .exact(.unhandled(action: "nobody.knows", chain: ["inner", "tabs", "app"]))),
        ErrorCase(name: "refused: wrong source screen", action: Step(type: "t.onlyFromNext"),
                  expected: .refused(flow: "app", action: "t.onlyFromNext")),
        ErrorCase(name: "refused: when does not hold", action: Step(type: "t.flagged"),
                  expected: .refused(flow: "app", action: "t.flagged")),
        ErrorCase(name: "refused: pop a single entry", action: Step(type: "t.pop"), expected: .refused(flow: "app", action: "t.pop")),
        ErrorCase(name: "refused: popTo what is on top", action: Step(type: "t.popTo"), expected: .refused(flow: "app", action: "t.popTo")),
        ErrorCase(name: "refused: popToRoot at the root", action: Step(type: "t.popToRoot"),
                  expected: .refused(flow: "app", action: "t.popToRoot")),
        ErrorCase(name: "refused: present while presenting", setup: [Step(type: "t.present")], action: Step(type: "t.present"),
                  expected: .refused(flow: "app", action: "t.present")),
        ErrorCase(name: "refused: dismiss with nothing presented", action: Step(type: "t.closeFromApp"),
                  expected: .refused(flow: "app", action: "t.closeFromApp")),
        ErrorCase(name: "refused: interactive on a rule that does not allow it", action: Step(type: "t.push", interactive: true),
                  expected: .refused(flow: "app", action: "t.push")),
        ErrorCase(name: "back with nothing to pop", action: Step(type: "back"), expected: .refused(flow: "app", action: "back")),
        ErrorCase(name: "back on a tab with nothing to pop", setup: [Step(type: "t.replaceRoot")], action: Step(type: "back"),
                  expected: .refused(flow: "app", action: "back")),
        ErrorCase(name: "interaction pending", setup: [Step(type: "t.interactivePush", interactive: true)], action: Step(type: "t.push"),
                  expected: .exact(.interactionPending(action: "t.push", pending: "t.interactivePush"))),
        ErrorCase(name: "back while interaction pending", setup: [Step(type: "t.interactivePush", interactive: true)],
                  action: Step(type: "back"), expected: .exact(.interactionPending(action: "back", pending: "t.interactivePush"))),
        ErrorCase(name: "update with no interaction", action: Step(type: "interaction.update", params: ["progress": 0.5]),
                  expected: .exact(.noInteraction(action: "interaction.update"))),
        ErrorCase(name: "end with no interaction", action: Step(type: "interaction.end"),
                  expected: .exact(.noInteraction(action: "interaction.end"))),
        ErrorCase(name: "cancel with no interaction", action: Step(type: "interaction.cancel"),
                  expected: .exact(.noInteraction(action: "interaction.cancel"))),
        ErrorCase(name: "missing declared param", action: Step(type: "t.pushParams"), expected: .invalidParams(path: "/params/v")),
        ErrorCase(name: "param of the wrong type", action: Step(type: "t.pushParams", params: ["v": 1]),
                  expected: .invalidParams(path: "/params/v")),
        ErrorCase(name: "missing referenced param", action: Step(type: "t.pushUndeclared"), expected: .invalidParams(path: "/params/v")),
        ErrorCase(name: "integer param given a float", action: Step(type: "t.setUser", params: ["level": 1.5]),
                  expected: .invalidParams(path: "/params/level")),
        ErrorCase(name: "tab index out of range", setup: [Step(type: "t.replaceRoot")],
                  action: Step(type: "t.selectTabParam", params: ["i": 7]), expected: .invalidParams(path: "/params/i")),
        ErrorCase(name: "popTo id that is no id", action: Step(type: "t.popToId", params: ["target": "nope"]),
                  expected: .invalidParams(path: "/params/target")),
        ErrorCase(name: "progress out of range", setup: [Step(type: "t.interactivePush", interactive: true)],
                  action: Step(type: "interaction.update", params: ["progress": 2]), expected: .invalidParams(path: "/params/progress")),
        ErrorCase(name: "progress missing", setup: [Step(type: "t.interactivePush", interactive: true)],
                  action: Step(type: "interaction.update"), expected: .invalidParams(path: "/params/progress")),
        ErrorCase(name: "velocity not a number", setup: [Step(type: "t.interactivePush", interactive: true)],
                  action: Step(type: "interaction.end", params: ["velocity": "fast"]), expected: .invalidParams(path: "/params/velocity")),
        ErrorCase(name: "undefined flow", action: Step(type: "t.ghost"), expected: .brokenDefinition(flow: "ghost")),
    ]

    /// Each error is reported as expected, and the tree is left unchanged.
    @Test(arguments: cases)
    func reportsError(_ errorCase: ErrorCase) throws {
        var session = try LabFlows.session()
        for step in errorCase.setup {
            try session.send(step.type, from: step.from, params: step.params, interactive: step.interactive)
        }
        let action = errorCase.action
        let error = session.failure(action.type, from: action.from, params: action.params, interactive: action.interactive)
        let unwrapped = try #require(error)
        #expect(errorCase.expected.matches(unwrapped), "got \(unwrapped)")
        #expect(!unwrapped.message.isEmpty)
    }

    /// Messages name what was wrong and what was expected.
    @Test func messagesExplain() throws {
        var session = try LabFlows.session()
        let refused = session.failure("t.onlyFromNext")?.message ?? ""
        #expect(refused == "app refused t.onlyFromNext: it is accepted only from a.next, but the screen on top is a.root (e2)")
        let stale = session.failure("t.push", from: "e7")?.message ?? ""
        #expect(stale.contains("e7") && stale.contains("e2"))
        let params = session.failure("t.pushParams", params: ["v": 1])?.message ?? ""
        #expect(params == "/params/v: param \"v\" of t.pushParams must be string; found integer 1")
        let unhandled = session.failure("nobody.knows")?.message ?? ""
        #expect(unhandled == "no flow handles nobody.knows: it passed through app and none of them names it")
    }

    /// Errors carry stable codes for the API's problem documents.
    @Test func errorCodes() {
        #expect(FlowError.staleSource(from: "e1", top: "e2").code == "stale-source")
        #expect(FlowError.interactionPending(action: "a", pending: "b").code == "interaction-pending")
        #expect(FlowError.invalidParams(path: "/x", message: "m").code == "invalid-params")
    }

    /// A request body is read into an action, and malformed bodies are refused with a path.
    @Test(arguments: [
        (#"{"type": "back"}"#, nil),
        (#"{"type": "x", "from": "e3", "params": {"a": 1}, "interactive": true}"#, nil),
        (#"{"type": "x", "from": null, "params": null, "interactive": null}"#, nil),
        (#"[]"#, ""),
        (#"{}"#, "/type"),
        (#"{"type": ""}"#, "/type"),
        (#"{"type": 5}"#, "/type"),
        (#"{"type": "x", "from": 3}"#, "/from"),
        (#"{"type": "x", "params": []}"#, "/params"),
        (#"{"type": "x", "interactive": "yes"}"#, "/interactive"),
        (#"{"type": "x", "parmas": {}}"#, "/parmas"),
    ] as [(String, String?)])
    func readsActionBody(body: String, errorPath: String?) {
        do throws(FlowError) {
            let action = try FlowAction(json: Fixtures.json(body))
            #expect(errorPath == nil, "expected an error at \(errorPath ?? "")")
            #expect(!action.type.isEmpty)
        } catch {
            guard case .invalidParams(let path, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(path == errorPath)
        }
    }
}
