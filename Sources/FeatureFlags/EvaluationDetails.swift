// EvaluationDetails: the result of evaluating one flag, in OpenFeature's shape.

import JSON

/// The result of evaluating a flag: its value, the variant that gave it, why, and the error
/// when there was one (OpenFeature's evaluation details).
///
/// ```swift
/// let details = flag.evaluate(key: "eu-face-scan", context: context)
/// details.value     // .bool(true)
/// details.variant   // "on"
/// details.reason    // .targetingMatch
/// ```
public struct EvaluationDetails: Sendable, Equatable {
    /// The flag's value for this context.
    public var value: JSONValue
    /// The variant that gave the value, `nil` when none did (an unknown flag).
    public var variant: String?
    public var reason: EvaluationReason
    /// Set exactly when ``reason`` is ``EvaluationReason/error``.
    public var errorCode: EvaluationErrorCode?
    /// What went wrong, for people; set with ``errorCode``.
    public var errorMessage: String?

    public init(
        value: JSONValue, variant: String?, reason: EvaluationReason,
        errorCode: EvaluationErrorCode? = nil, errorMessage: String? = nil
    ) {
        self.value = value
        self.variant = variant
        self.reason = reason
        self.errorCode = errorCode
        self.errorMessage = errorMessage
    }

    /// A failed evaluation: reason ``EvaluationReason/error`` with `code`, and `value` (the
    /// caller's default, or a flag's default variant) so the client still gets something usable.
    ///
    /// ```swift
    /// EvaluationDetails.failure(.parseError, message: "stored flag \"x\" no longer parses", value: false)
    /// ```
    public static func failure(
        _ code: EvaluationErrorCode, message: String, value: JSONValue = .null, variant: String? = nil
    ) -> EvaluationDetails {
        EvaluationDetails(value: value, variant: variant, reason: .error, errorCode: code, errorMessage: message)
    }

    /// The answer for a flag key nobody defined.
    public static func flagNotFound(key: String, defaultValue: JSONValue = .null) -> EvaluationDetails {
        failure(.flagNotFound, message: "no flag is defined with key \(JSONValue.string(key).jsonText)", value: defaultValue)
    }
}
