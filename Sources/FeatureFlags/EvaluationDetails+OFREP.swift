// EvaluationDetails+OFREP: evaluation results as the OpenFeature Remote Evaluation Protocol writes them.

import JSON

extension EvaluationReason {
    /// The reason OFREP answers: OpenFeature's own name for it (`STATIC`, `DEFAULT`,
    /// `TARGETING_MATCH`, `SPLIT`, `DISABLED`), `nil` for ``error`` (OFREP answers a failure
    /// instead).
    ///
    /// OFREP's schema lists reasons as examples of "an OpenFeature reason", not as an enum, and
    /// OpenFeature's reasons include `DEFAULT` (flagd, the reference OFREP server, answers it), so
    /// an OpenFeature provider reports the reason FlowStack's own evaluation gives.
    ///
    /// ```swift
    /// EvaluationReason.default.ofrep   // "DEFAULT"
    /// EvaluationReason.split.ofrep     // "SPLIT"
    /// ```
    public var ofrep: String? {
        self == .error ? nil : rawValue
    }
}

extension EvaluationErrorCode {
    /// The code in OFREP's failure bodies: `FLAG_NOT_FOUND` (its own 404 body), `PARSE_ERROR`,
    /// `TARGETING_KEY_MISSING`, `INVALID_CONTEXT`, `GENERAL`. OFREP's failure enum has no
    /// `TYPE_MISMATCH` (the server does not know the type the caller wants, so FlowStack never
    /// produces it when evaluating): it would be `GENERAL`.
    public var ofrep: String {
        switch self {
        case .typeMismatch: EvaluationErrorCode.general.rawValue
        default: rawValue
        }
    }
}

extension EvaluationDetails {
    /// The HTTP status of a single-flag OFREP answer: 200 for a success, 404 for an unknown
    /// flag, 400 for any other failure (OFREP puts every `evaluationFailure` under 400).
    public var ofrepStatus: Int {
        switch errorCode {
        case nil: 200
        case .flagNotFound: 404
        default: 400
        }
    }

    /// Writes OFREP's `evaluationSuccess` (`{"key", "value", "reason", "variant"}`), or its
    /// `evaluationFailure` / `flagNotFound` (`{"key", "errorCode", "errorDetails"}`) when the
    /// evaluation failed; a failure carries no value, so the client falls back to its default.
    ///
    /// A `null` value is written as OFREP's code default: no `value` member, and the client uses
    /// the default in its code (OFREP has no null value). `variant` is always written (`""` when
    /// no variant applied), as OpenFeature's Python OFREP provider reads it unconditionally.
    ///
    /// ```swift
    /// var writer = JSONWriter()
    /// details.writeOFREP(key: "eu-face-scan", to: &writer)
    /// // {"key":"eu-face-scan","value":false,"reason":"DEFAULT","variant":"off"}
    /// ```
    public func writeOFREP(key: String, to writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey("key")
        writer.writeString(key)
        if let errorCode {
            writer.writeKey("errorCode")
            writer.writeString(errorCode.ofrep)
            writer.writeKey("errorDetails")
            writer.writeString(errorMessage ?? errorCode.rawValue)
        } else {
            if !value.isNull {
                writer.writeKey("value")
                writer.writeValue(value)
            }
            writer.writeKey("reason")
            writer.writeString(reason.ofrep ?? "UNKNOWN")
            writer.writeKey("variant")
            writer.writeString(variant ?? "")
        }
        writer.endObject()
    }
}
