// FlowRule: one rule of a flow for an action type: when it matches and which effects it applies.

import JSON

/// One rule of a flow for an action type, tried in order with its siblings.
///
/// A rule matches when the source screen's feature is in ``from`` (or ``from`` is absent), the
/// action came up through a child flow named in ``via`` (or ``via`` is absent) and ``when``
/// holds (or is absent). Declared ``params`` are checked against the action's params before the
/// effects run; a param not declared is allowed and ignored.
///
/// ```json
/// {"from": "onboarding.second", "interactive": true, "do": [{"popTo": "onboarding.first"}]}
/// {"via": "onboarding", "do": [{"replaceRoot": "home"}]}
/// ```
///
/// `via` is how a parent trusts a child: the child checks its own screens before it bubbles an
/// action, so the parent names the child rather than the child's screens, and any version of
/// the child (one screen or three) works with it unchanged.
public struct FlowRule: Sendable, Equatable {
    /// The features the source screen may show; `nil` matches any.
    public var from: [String]?
    /// The kinds of the tapped row (`row` of the action) the rule matches; `nil` matches any
    /// action, row tap or not. A rule with `row` matches only row taps of those kinds.
    public var row: [String]?
    /// The child flows the action may come up through (the flow just below this one on the
    /// delegate chain; for a presented flow, its presenter is its parent); `nil` matches any
    /// source, including this flow's own screens, which a `via` rule never matches.
    public var via: [String]?
    /// An extra condition; `nil` always holds.
    public var when: FlowCondition?
    /// Whether the action may be started as an interactive transition.
    public var interactive: Bool
    /// The params the action must carry (or may, when optional), in written order.
    public var params: [Param]
    /// The effects, applied in order; never empty.
    public var effects: [FlowEffect]
    /// The rule's `description`, free text for authors.
    public var summary: String?
    /// A condition the rule needs before its effects apply, and the flow that satisfies it.
    public var guarded: FlowGuard?

    public init(
        from: [String]? = nil, row: [String]? = nil, via: [String]? = nil, when: FlowCondition? = nil, interactive: Bool = false,
        params: [Param] = [], effects: [FlowEffect], summary: String? = nil, guarded: FlowGuard? = nil
    ) {
        self.from = from
        self.row = row
        self.via = via
        self.when = when
        self.interactive = interactive
        self.params = params
        self.effects = effects
        self.summary = summary
        self.guarded = guarded
    }

    /// A declared param: written `"index": "integer"`, or `"note": "string?"` when optional.
    public struct Param: Sendable, Equatable {
        public var name: String
        public var type: ParamType
        public var required: Bool

        public init(name: String, type: ParamType, required: Bool = true) {
            self.name = name
            self.type = type
            self.required = required
        }
    }

    /// The JSON type a declared param must have.
    public enum ParamType: String, Sendable, Equatable, CaseIterable {
        case string, integer, number, boolean, object, array, any

        /// Whether `value` has this type; `integer` accepts integral numbers such as `1.0`,
        /// `number` accepts integers.
        public func accepts(_ value: JSONValue) -> Bool {
            switch self {
            case .any: return true
            case .string: return value.stringValue != nil
            case .integer: return value.integerValue != nil
            case .number: return value.doubleValue != nil
            case .boolean: return value.boolValue != nil
            case .object: return value.objectValue != nil
            case .array: return value.arrayValue != nil
            }
        }
    }

    /// Whether the rule applies to an action from a screen of `feature` that came up through
    /// the child flow `child` (`nil` when it comes from this flow's own screen).
    public func matches(feature: String, child: String? = nil, context: FlowContext, params: JSONObject) -> Bool {
        if let from, !from.contains(feature) { return false }
        // The engine puts the tapped row's kind in `row.kind` (and refuses that param otherwise).
        if let row {
            guard let kind = params[FlowAction.rowKindParam]?.stringValue, row.contains(kind) else { return false }
        }
        if let via {
            guard let child, via.contains(child) else { return false }
        }
        if let when, !when.evaluate(in: context, params: params) { return false }
        return true
    }

    /// Whether the rule only passes the action to the parent.
    public var bubbles: Bool { effects.contains(.bubble) }
}

/// A rule's `guard`: `{"when": {"user": "loggedIn", "is": true}, "else": {"present": {"flow": "login"}}}`.
///
/// When `when` does not hold, the rule applies the `else` effects instead of its own (they show
/// the guard's flow) and the action is kept as a ``PendingAction``; once that flow has left the
/// tree and `when` holds, the action applies in the same version, so the user lands where they
/// asked to go. A guard flow left while `when` still fails (cancelled) drops the action.
public struct FlowGuard: Sendable, Equatable {
    /// What must hold for the rule's own effects to apply.
    public var when: FlowCondition
    /// The effects applied instead; exactly one of them shows a flow (`present`, or `push` or
    /// `setRoot` of a flow).
    public var otherwise: [FlowEffect]

    public init(when: FlowCondition, otherwise: [FlowEffect]) {
        self.when = when
        self.otherwise = otherwise
    }
}
