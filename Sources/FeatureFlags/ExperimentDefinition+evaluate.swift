// ExperimentDefinition+evaluate: an experiment seen as a flag whose value is the variant key.

import JSON

extension ExperimentDefinition {
    /// The experiment as a flag would answer for `context`: in the experiment, the value and
    /// the variant are the key of the variant ``assign(key:context:)`` gives (so exactly what a
    /// session created for this context records in `state.experiments`), with reason `SPLIT`.
    ///
    /// Not in it, there is no value (`null`) and no variant, and the reason says why as a flag
    /// would: `DISABLED` for an experiment switched off or not running (draft, stopped,
    /// concluded: it assigns no new session), `DEFAULT` when its `when` does not
    /// hold, the hash falls outside the coverage, or the hash attribute is missing. A hash
    /// attribute that cannot be hashed (a boolean, an array, an object) is `ERROR` with
    /// `INVALID_CONTEXT`, as for a flag's split; with `requiringTargetingKey`, a missing
    /// targeting key that the experiment hashes on is `ERROR` with `TARGETING_KEY_MISSING`
    /// (see ``FlagDefinition/evaluate(key:context:requiringTargetingKey:)``).
    ///
    /// ```swift
    /// experiment.evaluate(key: "onboarding-length", context: EvaluationContext(targetingKey: "u-2"))
    /// // value "short", variant "short", reason SPLIT
    /// ```
    public func evaluate(key: String, context: EvaluationContext, requiringTargetingKey: Bool = false) -> EvaluationDetails {
        guard assignsSessions else { return EvaluationDetails(value: .null, variant: nil, reason: .disabled) }
        if let assignment = assign(key: key, context: context) {
            return EvaluationDetails(value: .string(assignment.variantKey), variant: assignment.variantKey, reason: .split)
        }
        let notIn = EvaluationDetails(value: .null, variant: nil, reason: .default)
        if let when, !when.matches(context) { return notIn }
        switch context.hashInput(for: hashAttribute) {
        case .value:
            return notIn  // outside the coverage
        case .missing:
            guard requiringTargetingKey, EvaluationContext.targetingKeyNames.contains(hashAttribute) else { return notIn }
            return .failure(
                .targetingKeyMissing,
                message: "experiment \(DefinitionReader.quoted(key)) is bucketed on the targeting key, which the context does not have")
        case .unusable(let typeName):
            return .failure(
                .invalidContext,
                message: "experiment \(DefinitionReader.quoted(key)) is bucketed on attribute \(DefinitionReader.quoted(hashAttribute)), which is \(typeName == "array" || typeName == "object" ? "an" : "a") \(typeName); expected a string or a number")
        }
    }
}
