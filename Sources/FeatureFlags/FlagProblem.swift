// FlagProblem: one thing wrong in a flag, experiment or condition, and where it is.

import JSON

/// One problem found in a definition: where (an RFC 6901 pointer into the document) and what
/// was expected there. The server answers 422 with the list.
///
/// ```swift
/// do { _ = try FlagDefinition(json: ["variants": [:], "defaultVariant": "off"]) }
/// catch { error.problems[0].path.description }   // "/variants"
/// ```
public struct FlagProblem: Sendable, Equatable, CustomStringConvertible {
    /// Where the problem is; the empty pointer is the whole document.
    public var path: JSONPointer
    /// What is wrong and what was expected.
    public var message: String

    public init(path: JSONPointer, message: String) {
        self.path = path
        self.message = message
    }

    /// `path: message`, with `/` for the whole document.
    public var description: String {
        let where_ = path.tokens.isEmpty ? "/" : path.description
        return "\(where_): \(message)"
    }

    /// The problem as `{"path": …, "message": …}`, the shape of an RFC 9457 `errors` member.
    public var jsonValue: JSONValue {
        ["path": .string(path.description), "message": .string(message)]
    }
}
