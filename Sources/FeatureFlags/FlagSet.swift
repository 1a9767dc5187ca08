// FlagSet: the flags in force, evaluated one by one or all at once for a context.

import JSON

/// The flags in force, by key, whatever store they came from.
///
/// ```swift
/// let flags = FlagSet(["eu-face-scan": euFaceScan, "new-home": newHome])
/// let results = flags.evaluateAll(context: EvaluationContext(targetingKey: "u-1", attributes: ["country": "DE"]))
/// results["eu-face-scan"]?.value   // .bool(true)
/// ```
public struct FlagSet: Sendable, Equatable {
    /// The flags by key.
    public var flags: [String: FlagDefinition]

    public init(_ flags: [String: FlagDefinition] = [:]) {
        self.flags = flags
    }

    /// The flag with `key`, if any.
    public subscript(key: String) -> FlagDefinition? {
        get { flags[key] }
        set { flags[key] = newValue }
    }

    /// Evaluates one flag; an unknown key answers `ERROR` with `FLAG_NOT_FOUND` and
    /// `defaultValue` (OpenFeature hands back the caller's default).
    public func evaluate(key: String, context: EvaluationContext, defaultValue: JSONValue = .null) -> EvaluationDetails {
        guard let flag = flags[key] else { return .flagNotFound(key: key, defaultValue: defaultValue) }
        return flag.evaluate(key: key, context: context)
    }

    /// Evaluates every flag, in key order.
    public func evaluateAll(context: EvaluationContext) -> FlagEvaluations {
        Self.evaluateAll(flags: flags, context: context)
    }

    /// Evaluates every flag of `flags` (any sequence of key and definition, so a store can
    /// stream its rows), in key order. A repeated key keeps its last definition.
    ///
    /// ```swift
    /// FlagSet.evaluateAll(flags: ["b": flagB, "a": flagA], context: context).keys   // ["a", "b"]
    /// ```
    public static func evaluateAll(
        flags: some Sequence<(key: String, value: FlagDefinition)>, context: EvaluationContext
    ) -> FlagEvaluations {
        var evaluations = FlagEvaluations()
        for (key, flag) in flags {
            evaluations[key] = flag.evaluate(key: key, context: context)
        }
        return evaluations
    }
}
