// AttributeOperator: the tests a targeting condition can apply to one attribute.

import JSON

/// A test on one attribute; its raw value is the key users write in a condition
/// (`{"attribute": "country", "in": ["DE", "FR"]}`).
///
/// ```swift
/// AttributeOperator(rawValue: "versionGte")   // .versionAtLeast
/// AttributeOperator.oneOf.rawValue             // "in"
/// ```
public enum AttributeOperator: String, Sendable, CaseIterable {
    /// `is`: equal to the value (numbers by value, so `1` is `1.0`).
    case equals = "is"
    /// `isNot`: not equal; holds when the attribute is missing.
    case notEquals = "isNot"
    /// `in`: equal to one of the listed values; an array attribute holds when any of its
    /// elements is listed.
    case oneOf = "in"
    /// `notIn`: the negation of `in`; holds when the attribute is missing.
    case noneOf = "notIn"
    /// `exists`: `true` when the attribute is present (and not null), `false` when it is not.
    case exists
    /// `gt`: greater than; numbers compare numerically, strings by UTF-16 code units.
    case greaterThan = "gt"
    /// `gte`: greater than or equal.
    case atLeast = "gte"
    /// `lt`: less than.
    case lessThan = "lt"
    /// `lte`: less than or equal.
    case atMost = "lte"
    /// `versionGt`: a later version (see ``SemanticVersion``). The attribute must be a
    /// well-formed version string (``SemanticVersion/isWellFormed(_:)``); any other value fails
    /// the version tests, except `versionIsNot`, which it passes, as a missing attribute does.
    case versionGreaterThan = "versionGt"
    /// `versionGte`: the same or a later version.
    case versionAtLeast = "versionGte"
    /// `versionLt`: an earlier version.
    case versionLessThan = "versionLt"
    /// `versionLte`: the same or an earlier version.
    case versionAtMost = "versionLte"
    /// `versionIs`: the same version (`v1.2.3` is `1.2.3+build`).
    case versionEquals = "versionIs"
    /// `versionIsNot`: not the same version; holds when the attribute is missing.
    case versionNotEquals = "versionIsNot"

    /// Whether a missing attribute passes: only the negative tests (`isNot`, `notIn`,
    /// `versionIsNot`) do, as "not in the EU" holds for a user whose country is unknown.
    /// `exists` decides by its own operand.
    var holdsWhenMissing: Bool {
        switch self {
        case .notEquals, .noneOf, .versionNotEquals: return true
        default: return false
        }
    }

    /// The operators in the order messages list them.
    static let names: [String] = allCases.map(\.rawValue)
}

extension AttributeOperator {
    /// What is wrong with `operand` for this operator, or `nil` when it is usable.
    func problem(with operand: JSONValue) -> String? {
        let name = DefinitionReader.quoted(rawValue)
        let found = DefinitionReader.describe(operand)
        switch self {
        case .equals, .notEquals:
            if operand.isNull { return "\(name) cannot compare with null; to test for a missing attribute use \"exists\": false" }
            return nil
        case .oneOf, .noneOf:
            guard case .array(let values) = operand else { return "\(name) needs an array of values, found \(found)" }
            if values.isEmpty { return "\(name) needs at least one value" }
            if values.contains(where: \.isNull) { return "\(name) cannot list null; to test for a missing attribute use \"exists\": false" }
            return nil
        case .exists:
            return operand.boolValue == nil ? "\(name) must be true or false, found \(found)" : nil
        case .greaterThan, .atLeast, .lessThan, .atMost:
            switch operand {
            case .integer, .number, .string: return nil
            default: return "\(name) needs a number or a string, found \(found)"
            }
        case .versionGreaterThan, .versionAtLeast, .versionLessThan, .versionAtMost, .versionEquals, .versionNotEquals:
            switch operand {
            case .string(let text) where !text.isEmpty: return nil
            case .integer, .number: return nil
            default: return "\(name) needs a version such as \"5.2.0\", found \(found)"
            }
        }
    }
}
