// FlowScenarioSuite+parse: reading a scenario file, every problem located by a JSON Pointer.

import FlowEngine
import JSON

extension FlowScenarioSuite {
    /// Parses a scenario file, reporting every problem found (a JSON syntax error alone, at `""`).
    ///
    /// ```swift
    /// let suite = try FlowScenarioSuite.parse(Array(text.utf8))
    /// ```
    public static func parse(
        _ bytes: [UInt8], limits: JSONParser.Limits = JSONParser.Limits()
    ) throws(ScenarioProblems) -> FlowScenarioSuite {
        let json: JSONValue
        do throws(JSONParseError) {
            json = try JSONParser.parse(bytes, limits: limits)
        } catch {
            throw ScenarioProblems([ScenarioProblem(path: "", message: "invalid JSON: \(error.description)")])
        }
        return try FlowScenarioSuite(json: json)
    }

    /// Reads a scenario file from parsed JSON, reporting every problem found.
    public init(json: JSONValue) throws(ScenarioProblems) {
        var reader = ScenarioReader()
        let suite = reader.readSuite(json)
        guard let suite, reader.problems.isEmpty else { throw ScenarioProblems(reader.problems) }
        self = suite
    }
}

/// Reads scenario JSON, recording every problem and carrying on, so one run reports all of them.
private struct ScenarioReader {
    var problems: [ScenarioProblem] = []
    private var totalSteps = 0

    mutating func report(_ path: JSONPointer, _ message: String) {
        problems.append(ScenarioProblem(path: path.description, message: message))
    }

    private mutating func checkKeys(_ object: JSONObject, _ allowed: [String], at path: JSONPointer, what: String) {
        for key in object.keys where !allowed.contains(key) {
            report(path.appending(key), "unknown key \(JSONValue.string(key).abbreviatedJSON(limit: 40)) in \(what); expected \(allowed.joined(separator: ", "))")
        }
    }

    mutating func readSuite(_ json: JSONValue) -> FlowScenarioSuite? {
        let root = JSONPointer()
        guard let object = json.objectValue else {
            report(root, "a scenario file is an object {\"scenarios\": [...]}; found \(json.typeName)")
            return nil
        }
        checkKeys(object, ["scenarios"], at: root, what: "a scenario file")
        let path = root.appending("scenarios")
        guard let raw = object["scenarios"] else {
            report(path, "scenarios is required: an array of {name, context?, start?, steps}")
            return nil
        }
        guard let elements = raw.arrayValue, !elements.isEmpty else {
            report(path, "scenarios must be a non-empty array of {name, context?, start?, steps}; found \(raw.abbreviatedJSON(limit: 40))")
            return nil
        }
        guard elements.count <= FlowScenarioSuite.maxScenarios else {
            report(path, "a file holds at most \(FlowScenarioSuite.maxScenarios) scenarios; found \(elements.count)")
            return nil
        }
        var scenarios: [FlowScenario] = []
        for (index, element) in elements.enumerated() {
            if let scenario = readScenario(element, at: path.appending(index)) { scenarios.append(scenario) }
        }
        return scenarios.count == elements.count ? FlowScenarioSuite(scenarios: scenarios) : nil
    }

    private mutating func readScenario(_ json: JSONValue, at path: JSONPointer) -> FlowScenario? {
        guard let object = json.objectValue else {
            report(path, "a scenario is an object {name, context?, start?, steps}; found \(json.typeName)")
            return nil
        }
        let before = problems.count
        checkKeys(object, ["name", "context", "client", "start", "steps"], at: path, what: "a scenario")
        var name = ""
        if let raw = object["name"], let text = raw.stringValue, !text.isEmpty, text.unicodeScalars.count <= 200 {
            name = text
        } else {
            report(path.appending("name"), "name is required: 1 to 200 characters that say what the scenario shows")
        }
        var context = FlowScenario.Context()
        if let raw = object["context"], !raw.isNull { context = readContext(raw, at: path.appending("context")) }
        var client: ClientCapabilities?
        if let raw = object["client"], !raw.isNull {
            do throws(DefinitionProblems) {
                client = try ClientCapabilities(json: raw, at: path.appending("client"))
            } catch {
                problems += error.problems
            }
        }
        var start = FlowScenario.Start()
        if let raw = object["start"], !raw.isNull { start = readStart(raw, at: path.appending("start")) }
        var steps: [FlowScenario.Step] = []
        let stepsPath = path.appending("steps")
        if let raw = object["steps"] {
            if let elements = raw.arrayValue {
                if elements.count > FlowScenarioSuite.maxSteps {
                    report(stepsPath, "a scenario has at most \(FlowScenarioSuite.maxSteps) steps; found \(elements.count)")
                } else if totalSteps + elements.count > FlowScenarioSuite.maxTotalSteps {
                    report(stepsPath, "a file has at most \(FlowScenarioSuite.maxTotalSteps) steps in all; split it")
                } else {
                    totalSteps += elements.count
                    for (index, element) in elements.enumerated() {
                        if let step = readStep(element, at: stepsPath.appending(index)) { steps.append(step) }
                    }
                }
            } else {
                report(stepsPath, "steps must be an array of {action, expect?}; found \(raw.typeName)")
            }
        } else if start.expect == nil {
            report(stepsPath, "steps is required (it may be empty when start has an expect): an array of {action, expect?}")
        }
        guard problems.count == before else { return nil }
        return FlowScenario(name: name, context: context, client: client, start: start, steps: steps)
    }

    private mutating func readContext(_ json: JSONValue, at path: JSONPointer) -> FlowScenario.Context {
        var context = FlowScenario.Context()
        guard let object = json.objectValue else {
            report(path, "context is an object {userId?, attributes?, traits?, user?, flags?}; found \(json.typeName)")
            return context
        }
        checkKeys(object, ["userId", "attributes", "traits", "user", "flags"], at: path, what: "a context")
        if let raw = object["userId"], !raw.isNull {
            if let text = raw.stringValue, !text.isEmpty, text.unicodeScalars.count <= 128 {
                context.userId = text
            } else {
                report(path.appending("userId"), "userId must be a string of 1 to 128 characters; found \(raw.abbreviatedJSON(limit: 40))")
            }
        }
        context.attributes = readValues(object["attributes"], at: path.appending("attributes"), what: "attributes such as {\"country\": \"DE\"}")
        context.user = readValues(object["user"], at: path.appending("user"), what: "user state such as {\"onboarded\": true}")
        context.flags = readValues(object["flags"], at: path.appending("flags"), what: "flag values such as {\"eu-face-scan\": true}")
        if let raw = object["traits"], !raw.isNull {
            if let traits = raw.objectValue {
                for member in traits {
                    if let text = member.value.stringValue {
                        context.traits[member.key] = text
                    } else {
                        report(path.appending("traits").appending(member.key), "a trait is a string, such as \"compact\"; found \(member.value.typeName)")
                    }
                }
            } else {
                report(path.appending("traits"), "traits must be an object of strings such as {\"horizontalSizeClass\": \"compact\"}; found \(raw.typeName)")
            }
        }
        return context
    }

    private mutating func readValues(_ json: JSONValue?, at path: JSONPointer, what: String) -> [String: JSONValue] {
        guard let json, !json.isNull else { return [:] }
        guard let object = json.objectValue else {
            report(path, "\(path.tokens.last ?? "this") must be an object of \(what); found \(json.typeName)")
            return [:]
        }
        var values: [String: JSONValue] = [:]
        for member in object { values[member.key] = member.value }
        return values
    }

    private mutating func readStart(_ json: JSONValue, at path: JSONPointer) -> FlowScenario.Start {
        var start = FlowScenario.Start()
        guard let object = json.objectValue else {
            report(path, "start is an object {link?, expect?}: {} for a new session, {\"link\": \"/modal/Hi\"} for one opened by a link; found \(json.typeName)")
            return start
        }
        checkKeys(object, ["link", "expect"], at: path, what: "start")
        if let raw = object["link"], !raw.isNull {
            if let text = raw.stringValue, !text.isEmpty {
                start.link = text
            } else {
                report(path.appending("link"), "link must be a URI such as \"/modal/Hi\" or \"myapp://open/modal/Hi\"; found \(raw.abbreviatedJSON(limit: 40))")
            }
        }
        if let raw = object["expect"], !raw.isNull { start.expect = readExpectation(raw, at: path.appending("expect")) }
        return start
    }

    private mutating func readStep(_ json: JSONValue, at path: JSONPointer) -> FlowScenario.Step? {
        guard let object = json.objectValue else {
            report(path, "a step is an object {action, expect?}; found \(json.typeName)")
            return nil
        }
        let before = problems.count
        checkKeys(object, ["action", "expect"], at: path, what: "a step")
        var action: FlowAction?
        var fromTop = false
        if let raw = object["action"] {
            // "from": "top" is the screen on top when the step runs, since ids are not known
            // when the scenario is written.
            var body = raw
            if var members = raw.objectValue, members["from"] == .string("top") {
                members["from"] = nil
                body = .object(members)
                fromTop = true
            }
            do throws(FlowError) {
                action = try FlowAction(json: body)
            } catch {
                if case .invalidParams(let inner, let message) = error {
                    report(JSONPointer(path.tokens + ["action"] + JSONPointer.tokens(of: inner)), message)
                } else {
                    report(path.appending("action"), error.message)
                }
            }
        } else {
            report(path.appending("action"), "action is required: {type, from?, params?, interactive?}, as posted to /v1/sessions/{id}/actions; from may be \"top\"")
        }
        var expect: FlowScenario.Expectation?
        if let raw = object["expect"], !raw.isNull { expect = readExpectation(raw, at: path.appending("expect")) }
        guard problems.count == before, let action else { return nil }
        return FlowScenario.Step(action: action, fromTop: fromTop, expect: expect)
    }

    private mutating func readExpectation(_ json: JSONValue, at path: JSONPointer) -> FlowScenario.Expectation? {
        guard let object = json.objectValue else {
            report(path, "expect is an object such as {\"top\": \"home.first\", \"transition\": \"replaceRoot\"}; found \(json.typeName)")
            return nil
        }
        let keys = FlowScenario.Expectation.Key.allCases.map(\.rawValue)
        checkKeys(object, keys, at: path, what: "expect")
        var checks: [(key: FlowScenario.Expectation.Key, value: JSONValue)] = []
        for member in object {
            guard let key = FlowScenario.Expectation.Key(rawValue: member.key) else { continue }
            let at = path.appending(member.key)
            let value = member.value
            switch key {
            case .top, .handledBy:
                guard value.stringValue?.isEmpty == false else {
                    report(at, "\(key.rawValue) must be a \(key == .top ? "feature" : "flow") name; found \(value.abbreviatedJSON(limit: 40))")
                    continue
                }
            case .error:
                guard value.stringValue?.isEmpty == false else {
                    report(at, "error must be an error code such as \"refused\" or \"stale-source\"; found \(value.abbreviatedJSON(limit: 40))")
                    continue
                }
            case .transition:
                if !value.isNull {
                    guard let text = value.stringValue, Transition.Kind(rawValue: text) != nil else {
                        let kinds = Transition.Kind.allCases.map(\.rawValue).joined(separator: ", ")
                        report(at, "transition must be one of \(kinds), or null for none; found \(value.abbreviatedJSON(limit: 40))")
                        continue
                    }
                }
            case .result, .handoff:
                guard value.isNull || value.stringValue?.isEmpty == false else {
                    let what = key == .result ? "the feature of the screen that received the result" : "the hand-off's kind, such as \"purchase\""
                    report(at, "\(key.rawValue) must be \(what), or null for none; found \(value.abbreviatedJSON(limit: 40))")
                    continue
                }
            case .pending:
                guard let elements = value.arrayValue, elements.allSatisfy({ $0.stringValue?.isEmpty == false }) else {
                    report(at, "pending must be an array of action types waiting for their guards, outermost first, such as [\"home.checkout\"] ([] for none); found \(value.abbreviatedJSON(limit: 40))")
                    continue
                }
            case .params:
                guard let features = value.objectValue, !features.isEmpty else {
                    report(at, "params must be a non-empty object of features and their params, such as {\"checkout.review\": {\"address\": {\"city\": \"Lyon\"}}}; found \(value.abbreviatedJSON(limit: 40))")
                    continue
                }
                var valid = true
                for member in features {
                    if member.key.isEmpty {
                        report(at.appending(member.key), "a key of params is a feature name; found an empty one")
                        valid = false
                    } else if member.value.objectValue == nil {
                        report(at.appending(member.key), "the params expected of \(member.key) are an object such as {\"address\": …}; found \(member.value.typeName)")
                        valid = false
                    }
                }
                guard valid else { continue }
            case .rows:
                guard let features = value.objectValue, !features.isEmpty,
                    features.allSatisfy({ member in
                        member.value.isNull || member.value.objectValue?.allSatisfy({ $0.value.arrayValue?.allSatisfy({ $0.stringValue != nil }) == true }) == true
                    })
                else {
                    report(at, "rows must be a non-empty object of features and their lists, section id → row ids, such as {\"address.list\": {\"FR\": [\"home\", \"office\"]}}; found \(value.abbreviatedJSON(limit: 60))")
                    continue
                }
            case .pendingLink, .interaction:
                guard value.isNull || value.stringValue != nil else {
                    report(at, "\(key.rawValue) must be a string, or null for none; found \(value.typeName)")
                    continue
                }
            case .screens:
                guard let elements = value.arrayValue, elements.allSatisfy({ $0.stringValue != nil }) else {
                    report(at, "screens must be an array of feature names, bottom to top; found \(value.abbreviatedJSON(limit: 40))")
                    continue
                }
            case .topParams, .user:
                guard value.objectValue != nil else {
                    report(at, "\(key.rawValue) must be an object; found \(value.typeName)")
                    continue
                }
            }
            checks.append((key, value))
        }
        if object["error"] != nil {
            for key in [FlowScenario.Expectation.Key.transition, .handledBy, .result] where object[key.rawValue] != nil {
                report(path.appending(key.rawValue), "\(key.rawValue) cannot be checked on a step expected to fail with an error; nothing is applied")
            }
        }
        return FlowScenario.Expectation(checks)
    }
}

extension JSONPointer {
    /// The tokens of a pointer written as text (`/params/uri` → `["params", "uri"]`).
    static func tokens(of text: String) -> [String] {
        guard !text.isEmpty else { return [] }
        return text.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { token in
            var result = ""
            var escaped = false
            for character in token {
                if escaped {
                    result.append(character == "1" ? "/" : character == "0" ? "~" : character)
                    escaped = false
                } else if character == "~" {
                    escaped = true
                } else {
                    result.append(character)
                }
            }
            return result
        }
    }
}
