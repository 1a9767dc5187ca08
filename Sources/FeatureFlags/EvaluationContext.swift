// EvaluationContext: who a flag or experiment is evaluated for (OpenFeature's evaluation context).

import JSON

/// Who flags and experiments are evaluated for: OpenFeature's targeting key plus attributes.
///
/// FlowStack fills it at session creation: the targeting key is the session's `userId`, the
/// attributes are what the client sent (`platform`, `country`, `appVersion`, …).
///
/// The attribute names `userId` and `targetingKey` both mean the targeting key, so a condition
/// or a `hashAttribute` can name the user the way DESIGN's formats do (`"hashAttribute":
/// "userId"`) without the client repeating its id among the attributes.
///
/// ```swift
/// let context = EvaluationContext(targetingKey: "u-1", attributes: ["country": "DE"])
/// context.attribute("country")   // .string("DE")
/// context.attribute("userId")    // .string("u-1")
/// ```
public struct EvaluationContext: Sendable, Equatable {
    /// The user the evaluation is for (OpenFeature's targeting key).
    public var targetingKey: String?
    /// Everything else known about the user and device.
    public var attributes: [String: JSONValue]

    public init(targetingKey: String? = nil, attributes: [String: JSONValue] = [:]) {
        self.targetingKey = targetingKey
        self.attributes = attributes
    }

    /// The names that stand for the targeting key.
    public static let targetingKeyNames: Set<String> = ["userId", "targetingKey"]

    /// The value of the attribute `name`, or `nil` when the context does not have it. `null`
    /// counts as not having it, since a client that sends `"country": null` does not know
    /// the country.
    ///
    /// `userId` and `targetingKey` read the targeting key when it is set, and the attribute of
    /// that name otherwise.
    public func attribute(_ name: String) -> JSONValue? {
        if Self.targetingKeyNames.contains(name), let targetingKey {
            return .string(targetingKey)
        }
        guard let value = attributes[name], !value.isNull else { return nil }
        return value
    }

    /// What a hash attribute yields for bucketing.
    public enum HashInput: Sendable, Equatable {
        /// The text to hash: a string as is, a number as JavaScript writes it.
        case value(String)
        /// The context has no such attribute, or it is empty (`""`, or the number zero): the user
        /// cannot be bucketed.
        case missing
        /// The attribute has a type that cannot be hashed (boolean, array or object).
        case unusable(typeName: String)
    }

    /// The text bucketing hashes for the attribute `name`, as GrowthBook derives its hash value:
    /// strings as written, numbers as JavaScript writes them (`42`, `1.5`), so a numeric id lands
    /// in the bucket the JS SDK gives it.
    ///
    /// Zero is missing, as an empty string is: GrowthBook SDKs bucket only what is truthy in
    /// JavaScript (the JS SDK's `attributes[hashAttribute] || ""`, the Python SDK's
    /// `_is_hashable`), so a user whose id is `0` is in no split or experiment there, and must be
    /// in none here for a GrowthBook SDK to give the same answers.
    ///
    /// ```swift
    /// EvaluationContext(targetingKey: "u-1").hashInput(for: "userId")   // .value("u-1")
    /// EvaluationContext(attributes: ["deviceId": 42]).hashInput(for: "deviceId")   // .value("42")
    /// EvaluationContext(attributes: ["deviceId": 0]).hashInput(for: "deviceId")    // .missing
    /// ```
    public func hashInput(for name: String) -> HashInput {
        guard let value = attribute(name) else { return .missing }
        switch value {
        case .string(let text):
            return text.isEmpty ? .missing : .value(text)
        case .integer, .number:
            if value.doubleValue == 0 { return .missing }
            return JavaScriptNumber.text(of: value).map(HashInput.value) ?? .missing
        default:
            return .unusable(typeName: value.typeName)
        }
    }
}
