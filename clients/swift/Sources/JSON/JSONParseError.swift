// JSONParseError: why a JSON text was rejected, and at which byte.

/// A JSON text was rejected: the reason, the byte offset where it was found, and a message
/// that says what was expected there.
///
/// ```swift
/// do { _ = try JSONParser.parse("[1,]") }
/// catch { print(error) }   // "expected a JSON value after ',', found ']' at byte 3"
/// ```
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of problem, for callers that branch on it (an HTTP server maps
    /// ``Reason/inputTooLarge`` to 413 and everything else to 400).
    public enum Reason: String, Sendable, Equatable {
        case unexpectedEnd
        case unexpectedByte
        case invalidLiteral
        case invalidNumber
        case numberOutOfRange
        case invalidEscape
        case loneSurrogate
        case invalidUTF8
        case controlCharacterInString
        case duplicateKey
        case tooDeep
        case stringTooLong
        case inputTooLarge
        case trailingData
    }

    public var reason: Reason
    /// Zero-based offset of the offending byte in the input.
    public var offset: Int
    /// What was wrong and what was expected.
    public var message: String

    public init(reason: Reason, offset: Int, message: String) {
        self.reason = reason
        self.offset = offset
        self.message = message
    }

    public var description: String { "\(message) at byte \(offset)" }
}
