// FlowScenario+run: runs a flow test against a catalog with the engine, collecting every difference.

import FlowEngine
import JSON

/// What one scenario's run found.
public struct ScenarioResult: Sendable, Equatable {
    public var name: String
    /// The scenario's index in its file.
    public var index: Int
    /// Steps that were applied or refused before the run ended (a run stops at the first step
    /// with a difference: the steps after it were written for the state it should have left).
    public var stepsRun: Int
    /// Empty when the scenario passed.
    public var failures: [ScenarioFailure]

    public var passed: Bool { failures.isEmpty }

    public init(name: String, index: Int, stepsRun: Int, failures: [ScenarioFailure]) {
        self.name = name
        self.index = index
        self.stepsRun = stepsRun
        self.failures = failures
    }
}

/// One difference between what a scenario expects and what happened.
public struct ScenarioFailure: Sendable, Equatable, CustomStringConvertible {
    /// The step's index, or `nil` for the start.
    public var step: Int?
    /// The step's action type (`link` for a start by link, `nil` for a plain start).
    public var action: String?
    /// The expectation's key (`top`, `screens`, …), or `error` for an action refused or applied
    /// against expectations.
    public var key: String
    /// Where in the scenario file: `/scenarios/0/steps/2/expect/top`.
    public var pointer: String
    public var expected: JSONValue
    public var actual: JSONValue
    /// A sentence for people, such as `top is onboarding.second, expected home.first`.
    public var message: String

    public init(step: Int?, action: String?, key: String, pointer: String, expected: JSONValue, actual: JSONValue, message: String) {
        self.step = step
        self.action = action
        self.key = key
        self.pointer = pointer
        self.expected = expected
        self.actual = actual
        self.message = message
    }

    /// `step 2 (onboarding.completed): top is onboarding.second, expected home.first`.
    public var description: String {
        let place = step.map { "step \($0)" } ?? "start"
        return "\(place)\(action.map { " (\($0))" } ?? ""): \(message)"
    }
}

/// What a scenario runs on: the catalog its client gets, or, when its client can render no
/// version of the flows, the features it lacks (the server refuses such a session with 422
/// `unsupported-client`).
public enum ScenarioCatalog: Sendable {
    case catalog(FlowCatalog)
    case unsupportedClient(missing: [String])

    /// `catalog` when `client` renders every screen it can show, else what the client lacks:
    /// what `flowstack flows test` runs on, having only the folder's definitions.
    public static func fitting(_ catalog: FlowCatalog, client: ClientCapabilities?) -> ScenarioCatalog {
        guard let client else { return .catalog(catalog) }
        let missing = client.missing(catalog.screenFeatures())
        return missing.isEmpty ? .catalog(catalog) : .unsupportedClient(missing: missing)
    }
}

extension FlowScenario {
    /// The error code of a start refused because the client cannot render the flows.
    public static let unsupportedClientCode = "unsupported-client"

    /// Flag values for a context: what a new session would be given, before the scenario's own
    /// `flags` override them.
    public typealias FlagValues = (_ userId: String, _ attributes: [String: JSONValue]) -> [String: JSONValue]

    /// Runs the scenario on `catalog`: starts a session as the server would (a link is the
    /// session's first action), then applies each step, checking what it expects.
    ///
    /// ```swift
    /// let result = scenario.run(catalog: catalog)
    /// result.failures.first?.description   // "step 1 (onboarding.completed): top is …, expected …"
    /// ```
    public func run(catalog: FlowCatalog, index: Int = 0, flags: FlagValues = { _, _ in [:] }, limits: FlowLimits = .default) -> ScenarioResult {
        run(on: .fitting(catalog, client: client), index: index, flags: flags, limits: limits)
    }

    /// Runs the scenario on what its client gets: a catalog, as ``run(catalog:index:flags:limits:)``
    /// does, or a refusal, which passes only when `start.expect` expects `unsupported-client`
    /// and the scenario has no steps (no session exists to take them).
    public func run(on placement: ScenarioCatalog, index: Int = 0, flags: FlagValues = { _, _ in [:] },
                    limits: FlowLimits = .default) -> ScenarioResult {
        let catalog: FlowCatalog
        switch placement {
        case .catalog(let fitting):
            catalog = fitting
        case .unsupportedClient(let missing):
            return refusedStart(missing: missing, index: index)
        }
        var values = flags(context.userId, context.attributes)
        for (key, value) in context.flags { values[key] = value }
        var flowContext = FlowContext(
            userId: context.userId, attributes: context.attributes, traits: context.traits, flags: values, user: context.user)
        let base = JSONPointer(["scenarios", String(index)])
        var result = ScenarioResult(name: name, index: index, stepsRun: 0, failures: [])

        var tree: FlowTree
        do throws(FlowError) {
            tree = try FlowEngine.start(catalog: catalog, context: flowContext, limits: limits)
        } catch {
            result.failures = Self.check(
                start.expect, outcome: .failure(error), tree: nil, context: flowContext, at: base.appending("start"), step: nil, action: nil)
            return result
        }
        var outcome: Result<ActionOutcome, FlowError>?
        if let link = start.link {
            // As the server creates a session with a link: the link is its first action.
            let applied = FlowEngine.applyResult(
                FlowAction(type: FlowAction.link, params: ["uri": .string(link)]), to: tree, catalog: catalog, context: flowContext, limits: limits)
            if case .success(let followed) = applied {
                tree = followed.tree
                UserChange.apply(followed.userChanges, to: &flowContext.user)
            }
            outcome = applied
        }
        result.failures = Self.check(
            start.expect, outcome: outcome, tree: tree, context: flowContext, at: base.appending("start"), step: nil,
            action: start.link == nil ? nil : FlowAction.link)
        if case .failure = outcome {
            // Steps were written for a session that exists; a link refused at creation makes none.
            if result.failures.isEmpty, !steps.isEmpty {
                result.failures.append(ScenarioFailure(
                    step: nil, action: FlowAction.link, key: "steps", pointer: base.appending("steps").description,
                    expected: .null, actual: .null, message: "the steps cannot run: the link was refused, so no session was created"))
            }
            return result
        }
        guard result.failures.isEmpty else { return result }

        for (stepIndex, step) in steps.enumerated() {
            var action = step.action
            if step.fromTop { action.from = tree.top?.entryId }
            let applied = FlowEngine.applyResult(action, to: tree, catalog: catalog, context: flowContext, limits: limits)
            if case .success(let moved) = applied {
                tree = moved.tree
                UserChange.apply(moved.userChanges, to: &flowContext.user)
            }
            result.stepsRun += 1
            let failures = Self.check(
                step.expect, outcome: applied, tree: tree, context: flowContext,
                at: base.appending("steps").appending(stepIndex), step: stepIndex, action: action.type)
            if !failures.isEmpty {
                result.failures = failures
                break
            }
        }
        return result
    }

    /// The result of a scenario whose client gets no session.
    private func refusedStart(missing: [String], index: Int) -> ScenarioResult {
        let base = JSONPointer(["scenarios", String(index)])
        var result = ScenarioResult(name: name, index: index, stepsRun: 0, failures: [])
        let code = JSONValue.string(Self.unsupportedClientCode)
        let lacking = missing.prefix(10).joined(separator: ", ") + (missing.count > 10 ? ", …" : "")
        switch start.expect?[.error] {
        case code?:
            if !steps.isEmpty {
                result.failures.append(ScenarioFailure(
                    step: nil, action: nil, key: "steps", pointer: base.appending("steps").description, expected: .null, actual: .null,
                    message: "the steps cannot run: the client cannot render \(lacking), so no session is created"))
            }
        case let expected?:
            result.failures.append(ScenarioFailure(
                step: nil, action: nil, key: "error", pointer: base.appending("start").appending("expect").appending("error").description,
                expected: expected, actual: code,
                message: "refused with unsupported-client, expected \(expected.stringValue ?? expected.jsonText): the client cannot render \(lacking)"))
        case nil:
            result.failures.append(ScenarioFailure(
                step: nil, action: nil, key: "error", pointer: base.appending("client").description, expected: .null, actual: code,
                message: "refused with unsupported-client: the client cannot render \(lacking)"))
        }
        return result
    }

    /// The differences between `expect` and what happened: an error nobody expected (or an
    /// expected one that did not come) first and alone, else each check that does not hold.
    static func check(
        _ expect: Expectation?, outcome: Result<ActionOutcome, FlowError>?, tree: FlowTree?, context: FlowContext,
        at path: JSONPointer, step: Int?, action: String?
    ) -> [ScenarioFailure] {
        let expectPath = path.appending("expect")
        func failure(_ key: String, _ pointer: JSONPointer, expected: JSONValue, actual: JSONValue, _ message: String) -> ScenarioFailure {
            ScenarioFailure(step: step, action: action, key: key, pointer: pointer.description, expected: expected, actual: actual, message: message)
        }
        let expectedError = expect?[.error]
        switch (outcome, expectedError) {
        case (.failure(let error)?, nil):
            let pointer = step == nil ? path : path.appending("action")
            return [failure("error", pointer, expected: .null, actual: .string(error.code), "refused with \(error.code): \(error.message)")]
        case (.failure(let error)?, let expected?) where expected != .string(error.code):
            return [failure("error", expectPath.appending("error"), expected: expected, actual: .string(error.code),
                            "refused with \(error.code), expected \(expected.stringValue ?? expected.jsonText): \(error.message)")]
        case (.success?, let expected?), (nil, let expected?):
            return [failure("error", expectPath.appending("error"), expected: expected, actual: .null,
                            "applied, expected to be refused with \(expected.stringValue ?? expected.jsonText)")]
        default:
            break
        }
        guard let expect else { return [] }
        let applied: ActionOutcome? = if case .success(let outcome)? = outcome { outcome } else { nil }
        var failures: [ScenarioFailure] = []
        for (key, expected) in expect.checks where key != .error {
            let actual: JSONValue
            switch key {
            case .top: actual = tree?.top.map { .string($0.feature) } ?? .null
            case .topParams: actual = tree?.top.map { .object($0.params) } ?? .null
            case .screens: actual = .array((tree?.screens ?? []).map { .string($0.feature) })
            case .transition: actual = applied?.transition.map { .string($0.type.rawValue) } ?? .null
            case .handledBy: actual = applied.map { .string($0.handledBy) } ?? .null
            case .pendingLink: actual = tree?.pendingLink.map { .string($0.uri) } ?? .null
            case .interaction: actual = tree?.interaction.map { .string($0.action.type) } ?? .null
            case .user:
                var members: [JSONObject.Member] = []
                for member in expected.objectValue ?? JSONObject() {
                    members.append(JSONObject.Member(key: member.key, value: context.user[member.key] ?? .null))
                }
                actual = .object(JSONObject(members))
            case .params:
                actual = Self.params(of: expected, in: tree)
            case .result: actual = applied?.transition?.result.map { .string($0.feature) } ?? .null
            case .handoff: actual = tree?.top.flatMap { $0.isHandoff ? .string($0.feature) : nil } ?? .null
            case .pending: actual = .array((tree?.pendingActions ?? []).map { .string($0.action.type) })
            case .rows: actual = Self.rows(of: expected, in: tree)
            case .error: continue
            }
            guard actual != expected else { continue }
            let message = key == .params
                ? Self.paramsDifference(actual: actual, expected: expected)
                : "\(key.rawValue) is \(Self.show(actual)), expected \(Self.show(expected))"
            failures.append(failure(key.rawValue, expectPath.appending(key.rawValue), expected: expected, actual: actual, message))
        }
        return failures
    }

    /// What `params` expects, as it is: for each feature listed, the listed params of the
    /// topmost screen showing it (`null` for a param it lacks), or `null` when no screen in
    /// `screens` shows it.
    static func params(of expected: JSONValue, in tree: FlowTree?) -> JSONValue {
        let screens = tree?.screens ?? []
        var features: [JSONObject.Member] = []
        for feature in expected.objectValue ?? JSONObject() {
            guard let screen = screens.last(where: { $0.feature == feature.key }) else {
                features.append(JSONObject.Member(key: feature.key, value: .null))
                continue
            }
            var params: [JSONObject.Member] = []
            for param in feature.value.objectValue ?? JSONObject() {
                params.append(JSONObject.Member(key: param.key, value: screen.params[param.key] ?? .null))
            }
            features.append(JSONObject.Member(key: feature.key, value: .object(JSONObject(params))))
        }
        return .object(JSONObject(features))
    }

    /// What `rows` expects, as it is: for each feature listed, the list of the topmost screen
    /// showing it as section id → row ids, or `null` (no such screen, or no list).
    static func rows(of expected: JSONValue, in tree: FlowTree?) -> JSONValue {
        let screens = tree?.screens ?? []
        var features: [JSONObject.Member] = []
        for feature in expected.objectValue ?? JSONObject() {
            guard let ref = screens.last(where: { $0.feature == feature.key }), let sections = tree?.screen(id: ref.id)?.sections else {
                features.append(JSONObject.Member(key: feature.key, value: .null))
                continue
            }
            let list = sections.map { JSONObject.Member(key: $0.id, value: .array($0.rows.map { .string($0.id) })) }
            features.append(JSONObject.Member(key: feature.key, value: .object(JSONObject(list))))
        }
        return .object(JSONObject(features))
    }

    /// `params of checkout.review are {…}, expected {…}; no screen shows paywall.offer`: only
    /// the features whose params differ.
    static func paramsDifference(actual: JSONValue, expected: JSONValue) -> String {
        var parts: [String] = []
        for feature in expected.objectValue ?? JSONObject() {
            let found = actual[feature.key] ?? .null
            guard found != feature.value else { continue }
            if found.isNull {
                parts.append("no screen shows \(feature.key)")
            } else {
                parts.append("params of \(feature.key) are \(Self.show(found)), expected \(Self.show(feature.value))")
            }
        }
        return parts.joined(separator: "; ")
    }

    /// A value in a message: a string as itself, `[a, b]` for a list of names, JSON otherwise.
    static func show(_ value: JSONValue) -> String {
        if let text = value.stringValue { return text }
        if let elements = value.arrayValue, elements.allSatisfy({ $0.stringValue != nil }) {
            return "[" + elements.compactMap(\.stringValue).joined(separator: ", ") + "]"
        }
        if value.isNull { return "none" }
        return value.abbreviatedJSON(limit: 120)
    }
}

extension FlowScenarioSuite {
    /// Runs every scenario on `catalog`, in order.
    public func run(catalog: FlowCatalog, flags: FlowScenario.FlagValues = { _, _ in [:] }) -> [ScenarioResult] {
        scenarios.enumerated().map { $0.element.run(catalog: catalog, index: $0.offset, flags: flags) }
    }

    /// Runs every scenario, in order, on what `placement` gives its client (the server's flow
    /// test route: the versions a session of that client would run).
    public func run(flags: FlowScenario.FlagValues = { _, _ in [:] },
                    placement: (ClientCapabilities?) -> ScenarioCatalog) -> [ScenarioResult] {
        scenarios.enumerated().map { $0.element.run(on: placement($0.element.client), index: $0.offset, flags: flags) }
    }
}

extension ScenarioResult {
    /// `{name, passed, stepsRun, failures: [{step, action, key, pointer, expected, actual, message}]}`.
    public func write(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey("name")
        writer.writeString(name)
        writer.writeKey("passed")
        writer.writeBool(passed)
        writer.writeKey("stepsRun")
        writer.writeInteger(stepsRun)
        writer.writeKey("failures")
        writer.beginArray()
        for failure in failures {
            writer.beginObject()
            writer.writeKey("step")
            writer.writeOptionalInteger(failure.step)
            writer.writeKey("action")
            writer.writeOptionalString(failure.action)
            writer.writeKey("key")
            writer.writeString(failure.key)
            writer.writeKey("pointer")
            writer.writeString(failure.pointer)
            writer.writeKey("expected")
            writer.writeValue(failure.expected)
            writer.writeKey("actual")
            writer.writeValue(failure.actual)
            writer.writeKey("message")
            writer.writeString(failure.message)
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
    }
}
