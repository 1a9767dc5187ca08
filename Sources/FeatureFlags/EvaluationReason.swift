// EvaluationReason: why a flag has the value it has (OpenFeature's resolution reasons).

/// Why an evaluation produced its value, spelled as OpenFeature spells it.
///
/// ```swift
/// EvaluationReason.targetingMatch.rawValue   // "TARGETING_MATCH"
/// ```
public enum EvaluationReason: String, Sendable, CaseIterable {
    /// The flag has no rules and no split: its value is the same for everyone.
    case `static` = "STATIC"
    /// The flag has rules or a split, and none applied: the default variant.
    case `default` = "DEFAULT"
    /// A rule's condition matched.
    case targetingMatch = "TARGETING_MATCH"
    /// The user was bucketed into a variant of the split.
    case split = "SPLIT"
    /// The flag is switched off: the default variant.
    case disabled = "DISABLED"
    /// The evaluation failed; ``EvaluationDetails/errorCode`` says why.
    case error = "ERROR"
}
