// AttributeTest: one operator and its operand, applied to the value of an attribute.

import JSON

/// One operator of an attribute condition with its operand, such as `"in": ["DE", "FR"]`.
///
/// ```swift
/// let test = AttributeTest(operation: .oneOf, operand: ["DE", "FR"])
/// test.holds(for: .string("DE"))   // true
/// test.holds(for: nil)             // false: a missing attribute is in no list
/// ```
public struct AttributeTest: Sendable, Equatable {
    public var operation: AttributeOperator
    public var operand: JSONValue

    public init(operation: AttributeOperator, operand: JSONValue) {
        self.operation = operation
        self.operand = operand
    }

    /// Whether the test holds for an attribute's value (`nil` when the context lacks it).
    ///
    /// Values of a type the operator cannot compare (a boolean against `gt`, a number against a
    /// string) fail the test rather than being converted, so a typo in a client's attributes
    /// narrows targeting instead of widening it.
    public func holds(for value: JSONValue?) -> Bool {
        if case .exists = operation {
            return (value != nil) == (operand.boolValue ?? true)
        }
        guard let value else { return operation.holdsWhenMissing }
        switch operation {
        case .equals: return value == operand
        case .notEquals: return value != operand
        case .oneOf: return isListed(value)
        case .noneOf: return !isListed(value)
        case .exists: return true
        case .greaterThan: return Self.order(value, operand).map { $0 > 0 } ?? false
        case .atLeast: return Self.order(value, operand).map { $0 >= 0 } ?? false
        case .lessThan: return Self.order(value, operand).map { $0 < 0 } ?? false
        case .atMost: return Self.order(value, operand).map { $0 <= 0 } ?? false
        case .versionGreaterThan: return Self.versions(value, operand).map { $0 > $1 } ?? false
        case .versionAtLeast: return Self.versions(value, operand).map { $0 >= $1 } ?? false
        case .versionLessThan: return Self.versions(value, operand).map { $0 < $1 } ?? false
        case .versionAtMost: return Self.versions(value, operand).map { $0 <= $1 } ?? false
        case .versionEquals: return Self.versions(value, operand).map { $0 == $1 } ?? false
        case .versionNotEquals: return Self.versions(value, operand).map { $0 != $1 } ?? true
        }
    }

    /// `in`: the value is listed, or (for an array attribute such as `tags`) one of its
    /// elements is, as GrowthBook's `$in` does.
    private func isListed(_ value: JSONValue) -> Bool {
        guard case .array(let listed) = operand else { return false }
        if case .array(let elements) = value {
            return elements.contains { listed.contains($0) }
        }
        return listed.contains(value)
    }

    /// The sign of `lhs - rhs` for two numbers or two strings, else `nil`.
    static func order(_ lhs: JSONValue, _ rhs: JSONValue) -> Int? {
        switch (lhs, rhs) {
        case let (.integer(a), .integer(b)):
            // Compared as integers: above 2^53 doubles would call distinct ids equal.
            return a < b ? -1 : (a > b ? 1 : 0)
        case (.integer, .number), (.number, .integer), (.number, .number):
            guard let a = lhs.doubleValue, let b = rhs.doubleValue else { return nil }
            return a < b ? -1 : (a > b ? 1 : 0)
        case let (.string(a), .string(b)):
            // UTF-16 code units, as JavaScript (and so GrowthBook) orders strings.
            if a.utf16.elementsEqual(b.utf16) { return 0 }
            return a.utf16.lexicographicallyPrecedes(b.utf16) ? -1 : 1
        default:
            return nil
        }
    }

    /// The attribute's value and the operand read as versions, `nil` when the attribute's value
    /// is not a well-formed version string (``SemanticVersion/isWellFormed(_:)``: a number, `05`,
    /// the empty string…), which then fails the test as a missing one does. The operand, checked
    /// when the definition was read, is read as written, a number as JavaScript writes it.
    static func versions(_ lhs: JSONValue, _ rhs: JSONValue) -> (SemanticVersion, SemanticVersion)? {
        guard case .string(let a) = lhs, SemanticVersion.isWellFormed(a), let b = versionText(rhs) else { return nil }
        return (SemanticVersion(a), SemanticVersion(b))
    }

    static func versionText(_ value: JSONValue) -> String? {
        if case .string(let text) = value { return text }
        return JavaScriptNumber.text(of: value)
    }
}
