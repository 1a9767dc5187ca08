// FlowLink: a deep link the root flow declares — its URI pattern, typed placeholders, condition and actions.

import JSON

/// A deep link, declared in the root flow's `links`: the URIs it opens (``pattern``), the
/// types of its placeholders, when it may be followed, and the actions that lead from the
/// cold-start stack to the linked screen.
///
/// ```json
/// {"pattern": "/modal/{content}",
///  "when": {"user": "onboarded", "is": true},
///  "actions": [{"type": "home.presentModal", "params": {"content": {"$link": "content"}}}]}
/// ```
///
/// Following a link rebuilds the stack a new session would start with, then applies the
/// actions in order, so the screens below the linked one are what the flows say (home below
/// a modal). With no actions the link opens the cold-start stack itself. When ``when`` does
/// not hold, the link waits in the session as its pending link (see
/// ``FlowEngine/followLink(_:from:catalog:context:limits:field:)``).
public struct FlowLink: Sendable, Equatable {
    public var pattern: LinkPattern
    /// Types of placeholders (`string`, `integer`, `number`, `boolean`); an undeclared
    /// placeholder is a string. Every declared param is required: a placeholder always
    /// captures a value when its pattern matches.
    public var params: [FlowRule.Param]
    /// When the link may be followed now; evaluated in the session's context with the captured
    /// values as the `param` source. `nil` always holds.
    public var when: FlowCondition?
    /// Applied in order after the cold start; their params may hold `{"$link": name}` at any
    /// depth, replaced by the placeholder's typed value.
    public var actions: [FlowAction]
    /// The link's `description`, free text for authors.
    public var summary: String?

    public init(
        pattern: LinkPattern, params: [FlowRule.Param] = [], when: FlowCondition? = nil, actions: [FlowAction] = [],
        summary: String? = nil
    ) {
        self.pattern = pattern
        self.params = params
        self.when = when
        self.actions = actions
        self.summary = summary
    }

    /// The placeholder types a link may declare.
    public static let paramTypes: [FlowRule.ParamType] = [.string, .integer, .number, .boolean]

    /// The type of placeholder `name`.
    public func type(of name: String) -> FlowRule.ParamType {
        params.first { $0.name == name }?.type ?? .string
    }
}
