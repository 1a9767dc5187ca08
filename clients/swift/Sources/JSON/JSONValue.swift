// JSONValue: the JSON data model shared by the parser, the writer and the flow engine.

/// A JSON value.
///
/// Integers stay exact: ``JSONParser`` produces ``integer(_:)`` for a literal with no fraction
/// and no exponent that fits in 64 bits, and ``number(_:)`` for every other number. Numbers
/// compare by value, so `.integer(1) == .number(1.0)`, and objects compare as JSON objects do,
/// ignoring member order.
///
/// ```swift
/// let params: JSONValue = ["content": "Hello", "index": 1]
/// params["index"]?.integerValue   // 1
/// ```
public enum JSONValue: Sendable {
    case null
    case bool(Bool)
    /// An integral number that fits in `Int` (64 bits on every supported platform).
    case integer(Int)
    /// Any other finite number.
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

extension JSONValue: Equatable {
    /// Numbers compare by value across the two numeric cases; objects ignore member order.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.integer(a), .integer(b)): return a == b
        case let (.number(a), .number(b)): return a == b
        case let (.integer(a), .number(b)), let (.number(b), .integer(a)):
            return Double(exactly: a) == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)): return a == b
        default: return false
        }
    }
}

extension JSONValue {
    /// The member named `key` when this is an object, else `nil`.
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// The value as an `Int` when it is an integer, or a number with no fractional part that fits.
    public var integerValue: Int? {
        switch self {
        case .integer(let value): return value
        case .number(let value): return Int(exactly: value)
        default: return nil
        }
    }

    /// The value as a `Double` when it is numeric.
    public var doubleValue: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .number(let value): return value
        default: return nil
        }
    }

    /// The string when this is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The boolean when this is a boolean.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements when this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The object when this is an object.
    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Whether this is `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The JSON type name used in error messages: `null`, `boolean`, `integer`, `number`,
    /// `string`, `array` or `object`.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .integer: return "integer"
        case .number: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }

    /// The value as compact JSON text, for messages and debugging.
    public var jsonText: String {
        var writer = JSONWriter()
        writer.writeValue(self)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// The JSON text shortened to `limit` characters, so error messages stay readable.
    public func abbreviatedJSON(limit: Int = 60) -> String {
        let text = jsonText
        guard text.count > limit else { return text }
        return String(text.prefix(limit)) + "…"
    }
}

extension JSONValue: CustomStringConvertible {
    /// The value as compact JSON text.
    public var description: String { jsonText }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// Members keep the literal's order; a repeated key keeps its first position and last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var object = JSONObject()
        for (key, value) in elements { object[key] = value }
        self = .object(object)
    }
}
