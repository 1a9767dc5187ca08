// EvaluationDetails+JSON: evaluation results written as the API sends them.

import JSON

extension EvaluationDetails {
    /// Writes `{"value": …, "variant": …, "reason": …}`, plus `"errorCode"` and
    /// `"errorMessage"` when the evaluation failed; `variant` is `null` when no variant applied.
    ///
    /// ```swift
    /// var writer = JSONWriter()
    /// details.write(to: &writer)
    /// // {"value":false,"variant":"off","reason":"DEFAULT"}
    /// ```
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey("value")
        writer.writeValue(value)
        writer.writeKey("variant")
        writer.writeOptionalString(variant)
        writer.writeKey("reason")
        writer.writeString(reason.rawValue)
        if let errorCode {
            writer.writeKey("errorCode")
            writer.writeString(errorCode.rawValue)
            // The message goes with the code only, so successful answers keep DESIGN's shape.
            if let errorMessage {
                writer.writeKey("errorMessage")
                writer.writeString(errorMessage)
            }
        }
        writer.endObject()
    }

    /// The details as the JSON value ``write(to:)`` writes.
    public var jsonValue: JSONValue {
        var object: JSONObject = ["value": value, "variant": variant.map(JSONValue.string) ?? .null, "reason": .string(reason.rawValue)]
        if let errorCode {
            object["errorCode"] = .string(errorCode.rawValue)
            if let errorMessage { object["errorMessage"] = .string(errorMessage) }
        }
        return .object(object)
    }
}
