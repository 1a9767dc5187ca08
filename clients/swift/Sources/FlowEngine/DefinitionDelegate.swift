// DefinitionDelegate: the delegate that interprets a flow definition's rules.

import JSON

/// The delegate of every flow with no Swift delegate: it interprets the definition.
///
/// An action type the definition does not name passes to the parent. For one it names, the
/// first rule whose `from` and `when` match decides: a `bubble` rule passes the action up,
/// any other rule has its declared params checked and its effects applied. When no rule
/// matches the action is refused, because the flow owns it and a client must not skip a step
/// by posting it from the wrong screen.
public struct DefinitionDelegate: FlowActionDelegate {
    public var definition: FlowDefinition

    public init(definition: FlowDefinition) {
        self.definition = definition
    }

    public func process(_ request: FlowDelegateRequest) throws(FlowError) -> FlowDelegateDecision {
        guard let rules = definition.rules(for: request.action.type) else { return .passToParent }
        return try Self.decide(rules, action: request.action, source: request.source, child: request.child, context: request.context)
    }

    /// What a flow with `rules` for the action decides: the first rule that matches, or a
    /// refusal saying why none did. The engine asks this directly for a flow with no Swift
    /// delegate, without building a request.
    static func decide(
        _ rules: [FlowRule], action: FlowAction, source: ScreenRef, child: String?, context: FlowContext
    ) throws(FlowError) -> FlowDelegateDecision {
        let feature = source.feature
        for rule in rules where rule.matches(feature: feature, child: child, context: context, params: action.params) {
            if rule.bubbles { return .passToParent }
            try checkParams(rule.params, of: action)
            if let guarded = rule.guarded, !guarded.when.evaluate(in: context, params: action.params) {
                return .guarded(guarded.otherwise)
            }
            return .handle(rule.effects, allowsInteractive: rule.interactive)
        }
        return .refuse(reason: explainNoMatch(rules, feature: feature, child: child, source: source))
    }

    /// Checks the action's params against a rule's declarations.
    static func checkParams(_ declared: [FlowRule.Param], of action: FlowAction) throws(FlowError) {
        for param in declared {
            var path: String { JSONPointer(["params", param.name]).description }  // built only for an error
            guard let value = action.params[param.name] else {
                if param.required {
                    throw .invalidParams(path: path, message: "\(action.type) needs param \(JSONValue.string(param.name).jsonText) (\(param.type.rawValue))")
                }
                continue
            }
            guard param.type.accepts(value) else {
                throw .invalidParams(
                    path: path,
                    message: "param \(JSONValue.string(param.name).jsonText) of \(action.type) must be \(param.type.rawValue); found \(value.typeName) \(value.abbreviatedJSON(limit: 40))")
            }
        }
    }

    private static func explainNoMatch(_ rules: [FlowRule], feature: String, child: String?, source: ScreenRef) -> String {
        let viaMatches = rules.contains { rule in rule.via.map { via in child.map(via.contains) ?? false } ?? true }
        if !viaMatches {
            var expected: [String] = []
            for rule in rules {
                for candidate in rule.via ?? [] where !expected.contains(candidate) { expected.append(candidate) }
            }
            let came = child.map { "it came up through \($0)" } ?? "it came from a screen of this flow (\(feature), \(source.entryId))"
            return "it is accepted only through \(expected.joined(separator: " or ")), but \(came)"
        }
        let fromMatches = rules.contains { $0.from?.contains(feature) ?? true }
        if !fromMatches {
            var expected: [String] = []
            for rule in rules {
                for candidate in rule.from ?? [] where !expected.contains(candidate) { expected.append(candidate) }
            }
            return "it is accepted only from \(expected.joined(separator: " or ")), but the screen on top is \(feature) (\(source.entryId))"
        }
        return "no rule matches from \(feature) (\(source.entryId)): the when conditions of its rules do not hold"
    }
}
