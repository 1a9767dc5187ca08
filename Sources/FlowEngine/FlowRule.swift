// FlowRule: one rule of a flow for an action type: when it matches and which effects it applies.

import JSON

/// One rule of a flow for an action type, tried in order with its siblings.
///
/// A rule matches when the source screen's feature is in ``from`` (or ``from`` is absent) and
/// ``when`` holds (or is absent). Declared ``params`` are checked against the action's params
/// before the effects run; a param not declared is allowed and ignored.
///
/// ```json
/// {"from": "onboarding.second", "interactive": true, "do": [{"popTo": "onboarding.first"}]}
/// ```
public struct FlowRule: Sendable, Equatable {
    /// The features the source screen may show; `nil` matches any.
    public var from: [String]?
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

    public init(
        from: [String]? = nil, when: FlowCondition? = nil, interactive: Bool = false,
        params: [Param] = [], effects: [FlowEffect], summary: String? = nil
    ) {
        self.from = from
        self.when = when
        self.interactive = interactive
        self.params = params
        self.effects = effects
        self.summary = summary
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

    /// Whether the rule applies to an action from a screen of `feature`.
    public func matches(feature: String, context: FlowContext, params: JSONObject) -> Bool {
        if let from, !from.contains(feature) { return false }
        if let when, !when.evaluate(in: context, params: params) { return false }
        return true
    }

    /// Whether the rule only passes the action to the parent.
    public var bubbles: Bool { effects.contains(.bubble) }
}
