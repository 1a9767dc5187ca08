// FlowScenario: a flow test — a context, a start, and steps of actions with what must follow.

import FlowEngine
import JSON

/// A flow test: like a snapshot test, for navigation. A session is started for a context (new,
/// or by a deep link), then each step posts an action and states what must follow: the screen
/// on top, the whole stack, the transition, or the error the action is refused with.
///
/// Scenarios are written as JSON (the file format of `flowstack flows test` and the body of
/// `POST /v1/flows/{name}/versions/{n}/test`) and read with ``FlowScenarioSuite/parse(_:)``:
///
/// ```json
/// {"scenarios": [{
///   "name": "a German user scans their face before home",
///   "context": {"userId": "hans", "attributes": {"country": "DE"}, "flags": {"eu-face-scan": true}},
///   "steps": [
///     {"action": {"type": "onboarding.showSecond", "from": "top"}, "expect": {"top": "onboarding.second", "transition": "push"}},
///     {"action": {"type": "onboarding.completed"}, "expect": {"top": "onboarding.faceScan"}},
///     {"action": {"type": "onboarding.showSecond"}, "expect": {"error": "unhandled"}}
///   ]
/// }]}
/// ```
public struct FlowScenario: Sendable, Equatable {
    public var name: String
    public var context: Context
    /// The app build the session is for (`{"platform", "appVersion", "features"}`); nil: one
    /// that renders every screen. A client that cannot render the flows gets no session: the
    /// start is refused with `unsupported-client`, which `start.expect.error` may expect.
    public var client: ClientCapabilities?
    public var start: Start
    public var steps: [Step]

    public init(name: String, context: Context = Context(), client: ClientCapabilities? = nil, start: Start = Start(), steps: [Step] = []) {
        self.name = name
        self.context = context
        self.client = client
        self.start = start
        self.steps = steps
    }

    /// Who the session is for: `{userId?, attributes?, traits?, user?, flags?}`.
    ///
    /// `user` is the user state the session starts with (`{"onboarded": true}` starts at home).
    /// `flags` are flag values that win over what the flag definitions give this context; flags
    /// not listed are evaluated as a new session's would be (by whoever runs the scenario: the
    /// server with its live flags, `flowstack flows test` with the flags it ships).
    public struct Context: Sendable, Equatable {
        public var userId: String
        public var attributes: [String: JSONValue]
        public var traits: [String: String]
        public var user: [String: JSONValue]
        public var flags: [String: JSONValue]

        /// The user id of a scenario that names none.
        public static let defaultUserId = "scenario-user"

        public init(
            userId: String = Context.defaultUserId, attributes: [String: JSONValue] = [:], traits: [String: String] = [:],
            user: [String: JSONValue] = [:], flags: [String: JSONValue] = [:]
        ) {
            self.userId = userId
            self.attributes = attributes
            self.traits = traits
            self.user = user
            self.flags = flags
        }
    }

    /// How the session starts: `{}` (a new session), or `{"link": URI}` (a session created with
    /// a deep link, which is its first action), with an optional `expect` checked before the
    /// first step.
    public struct Start: Sendable, Equatable {
        public var link: String?
        public var expect: Expectation?

        public init(link: String? = nil, expect: Expectation? = nil) {
            self.link = link
            self.expect = expect
        }
    }

    /// One action and what must follow it: `{"action": {type, from?, params?, interactive?},
    /// "expect"?: {…}}`. A step with no `expect` must apply without an error.
    public struct Step: Sendable, Equatable {
        public var action: FlowAction
        /// `action.from` was written `"top"`: the id of the screen on top when the step runs.
        public var fromTop: Bool
        public var expect: Expectation?

        public init(action: FlowAction, fromTop: Bool = false, expect: Expectation? = nil) {
            self.action = action
            self.fromTop = fromTop
            self.expect = expect
        }
    }

    /// What must hold after a step (or the start), as `{key: value}`; each key present is
    /// checked, each absent one is not.
    ///
    /// | key | value |
    /// | --- | --- |
    /// | `top` | the feature of the screen on top |
    /// | `topParams` | the params of the screen on top (the whole object) |
    /// | `screens` | the features of `screens`, bottom to top |
    /// | `transition` | the transition's type (`push`, `replaceRoot`…), or `null` for none |
    /// | `handledBy` | the flow that handled the action |
    /// | `error` | the code the action is refused with (`refused`, `stale-source`, `unhandled`…) |
    /// | `pendingLink` | the URI of the link waiting for its condition, or `null` for none |
    /// | `interaction` | the action type of the interaction in progress, or `null` for none |
    /// | `user` | user-state values (only those listed; `null` also matches a missing one) |
    /// | `params` | `{feature: {param: value}}`: params of the topmost screen in `screens` showing each feature (only those listed; `null` also matches a missing one) |
    /// | `result` | the feature of the screen that received a `result`, or `null` for none |
    /// | `handoff` | the kind of the hand-off on top (`purchase`), or `null` when the top is an ordinary screen |
    /// | `pending` | the action types waiting for their guards, outermost first (`[]` for none) |
    /// | `rows` | `{feature: {section id: [row ids]}}`: the list of the topmost screen in `screens` showing each feature, every section and row by id (rows in order; `null` for a feature no screen shows, or a screen without a list) |
    ///
    /// `params` checks a screen below the top too: after `address.chosen`, the review shows the
    /// address it was given with `"params": {"checkout.review": {"address": {"city": "Lyon"}}}`.
    /// Each listed param must equal the expected value (the whole value, not a part of it);
    /// params not listed are not looked at. A feature not in `screens` fails the check.
    ///
    /// Without `error`, the action must apply; with it, it must be refused with that code, and
    /// `top`, `topParams`, `screens`, `pendingLink`, `interaction`, `user`, `params`, `handoff`
    /// and `pending` describe the state it left unchanged (`transition`, `handledBy` and
    /// `result` cannot go with `error`).
    public struct Expectation: Sendable, Equatable {
        /// The checks in the order they were written.
        public var checks: [(key: Key, value: JSONValue)]

        public init(_ checks: [(key: Key, value: JSONValue)] = []) {
            self.checks = checks
        }

        public subscript(key: Key) -> JSONValue? {
            checks.first { $0.key == key }?.value
        }

        public static func == (lhs: Expectation, rhs: Expectation) -> Bool {
            lhs.checks.count == rhs.checks.count && zip(lhs.checks, rhs.checks).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        }

        /// A key of `expect`.
        public enum Key: String, Sendable, CaseIterable {
            case top, topParams, screens, transition, handledBy, error, pendingLink, interaction, user
            case params, result, handoff, pending, rows
        }
    }
}

/// A file of flow tests: `{"scenarios": [...]}`.
public struct FlowScenarioSuite: Sendable, Equatable {
    public var scenarios: [FlowScenario]

    public init(scenarios: [FlowScenario]) {
        self.scenarios = scenarios
    }

    /// Scenarios in one suite, at most.
    public static let maxScenarios = 1000
    /// Steps in one scenario, at most.
    public static let maxSteps = 1000
    /// Steps in one suite, at most: a run is bounded whatever the body.
    public static let maxTotalSteps = 10_000
}

/// One thing wrong with a scenario file, located by a JSON Pointer into it: the same value as
/// a definition's problem.
public typealias ScenarioProblem = DefinitionProblem

/// Every problem of a scenario file; thrown by ``FlowScenarioSuite/parse(_:)``.
public typealias ScenarioProblems = DefinitionProblems
