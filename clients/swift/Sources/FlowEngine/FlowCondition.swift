// FlowCondition: a `when` condition of an initial entry or a rule, and its evaluation.

import JSON

/// A condition on the session, written as `when` in definitions.
///
/// A test reads one value from a source and applies one operator:
/// `{"flag": "eu-face-scan", "is": true}`, `{"attribute": "country", "in": ["DE", "FR"]}`,
/// `{"user": "onboarded", "isNot": true}`, `{"trait": "horizontalSizeClass", "exists": true}`,
/// `{"param": "index", "is": 0}`. Tests combine with `{"all": [...]}`, `{"any": [...]}` and
/// `{"not": cond}`.
///
/// A missing value is absent, not `null`: `is` and `in` fail on it, `isNot` and `notIn` hold,
/// and `exists` tells the two apart. Numbers compare by value (`1` equals `1.0`).
public indirect enum FlowCondition: Sendable, Equatable {
    case test(Source, key: String, Test)
    /// True when every condition holds (and for an empty list).
    case all([FlowCondition])
    /// True when at least one condition holds (false for an empty list).
    case any([FlowCondition])
    case not(FlowCondition)

    /// Where a test reads its value.
    public enum Source: String, Sendable, Equatable, CaseIterable {
        /// A flag value of the session (``FlowContext/flags``).
        case flag
        /// A user-state value (``FlowContext/user``).
        case user
        /// An attribute of the session (``FlowContext/attributes``).
        case attribute
        /// A trait of the session (``FlowContext/traits``), compared as a string.
        case trait
        /// A param of the action (in rules) or of the flow being built (in `initial`).
        case param
    }

    /// What a test checks.
    public enum Test: Sendable, Equatable {
        /// `is`: the value exists and equals.
        case equals(JSONValue)
        /// `isNot`: the value is missing or differs.
        case notEquals(JSONValue)
        /// `in`: the value exists and equals one of the list.
        case oneOf([JSONValue])
        /// `notIn`: the value is missing or equals none of the list.
        case noneOf([JSONValue])
        /// `exists`: whether the value is present.
        case exists(Bool)

        /// The operator as written in definitions.
        public var keyword: String {
            switch self {
            case .equals: return "is"
            case .notEquals: return "isNot"
            case .oneOf: return "in"
            case .noneOf: return "notIn"
            case .exists: return "exists"
            }
        }
    }

    /// Whether the condition holds in `context`, with `params` as the `param` source.
    public func evaluate(in context: FlowContext, params: JSONObject) -> Bool {
        switch self {
        case .test(let source, let key, let test):
            let value: JSONValue?
            switch source {
            case .flag: value = context.flags[key]
            case .user: value = context.user[key]
            case .attribute: value = context.attributes[key]
            case .trait: value = context.traits[key].map(JSONValue.string)
            case .param: value = params[key]
            }
            return test.holds(for: value)
        case .all(let conditions):
            return conditions.allSatisfy { $0.evaluate(in: context, params: params) }
        case .any(let conditions):
            return conditions.contains { $0.evaluate(in: context, params: params) }
        case .not(let condition):
            return !condition.evaluate(in: context, params: params)
        }
    }
}

extension FlowCondition.Test {
    /// Whether the test holds for `value` (`nil` when the source has no such key).
    public func holds(for value: JSONValue?) -> Bool {
        switch self {
        case .equals(let expected):
            guard let value else { return false }
            return value == expected
        case .notEquals(let expected):
            guard let value else { return true }
            return value != expected
        case .oneOf(let candidates):
            guard let value else { return false }
            return candidates.contains(value)
        case .noneOf(let candidates):
            guard let value else { return true }
            return !candidates.contains(value)
        case .exists(let expected):
            return (value != nil) == expected
        }
    }
}
