// TargetingCondition: which users a rule or an experiment applies to, as a tree of attribute tests.

import JSON

/// A targeting condition: tests on the attributes of an ``EvaluationContext``, combined with
/// `all`, `any` and `not`.
///
/// Written in JSON as DESIGN's `when` clauses are:
///
/// ```json
/// {"attribute": "country", "in": ["DE", "FR"]}
/// {"all": [{"attribute": "platform", "is": "ios"}, {"attribute": "appVersion", "versionGte": "5.2"}]}
/// {"not": {"attribute": "beta", "exists": true}}
/// ```
///
/// ```swift
/// let eu = try TargetingCondition(json: ["attribute": "country", "in": ["DE", "FR"]])
/// eu.matches(EvaluationContext(targetingKey: "u-1", attributes: ["country": "DE"]))   // true
/// ```
public indirect enum TargetingCondition: Sendable, Equatable {
    /// Tests on one attribute; every test must hold.
    case attribute(AttributeCondition)
    /// Every condition holds.
    case all([TargetingCondition])
    /// At least one condition holds.
    case any([TargetingCondition])
    /// The condition does not hold.
    case not(TargetingCondition)

    /// Whether the context meets the condition.
    public func matches(_ context: EvaluationContext) -> Bool {
        switch self {
        case .attribute(let condition): return condition.matches(context)
        case .all(let conditions): return conditions.allSatisfy { $0.matches(context) }
        case .any(let conditions): return conditions.contains { $0.matches(context) }
        case .not(let condition): return !condition.matches(context)
        }
    }
}
