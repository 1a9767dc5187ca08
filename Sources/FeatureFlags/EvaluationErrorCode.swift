// EvaluationErrorCode: why an evaluation failed (OpenFeature's error codes).

/// Why an evaluation failed, spelled as OpenFeature spells it.
///
/// ```swift
/// EvaluationErrorCode.flagNotFound.rawValue   // "FLAG_NOT_FOUND"
/// ```
public enum EvaluationErrorCode: String, Sendable, CaseIterable {
    /// No flag has the requested key.
    case flagNotFound = "FLAG_NOT_FOUND"
    /// The stored flag could not be read (the server produces it for a definition that no
    /// longer parses).
    case parseError = "PARSE_ERROR"
    /// The value is not of the type the caller asked for.
    case typeMismatch = "TYPE_MISMATCH"
    /// The evaluation needs a targeting key the context does not have. FlowStack's own
    /// evaluation never answers it: a split without one falls back to the default variant
    /// (see ``FlagDefinition/evaluate(key:context:)``). It is here for callers that require one.
    case targetingKeyMissing = "TARGETING_KEY_MISSING"
    /// The context has a value that cannot be used, such as a hash attribute that is an object.
    case invalidContext = "INVALID_CONTEXT"
    /// Anything else.
    case general = "GENERAL"
}
