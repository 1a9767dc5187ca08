// DefinitionProblem: one thing wrong with a flow definition, located by a JSON Pointer.

import JSON

/// One problem in a flow definition: where it is (a JSON Pointer into the definition, or into
/// the catalog when prefixed by the flow name) and what is wrong.
///
/// ```swift
/// DefinitionProblem(path: "/on/home.selectTab/0/do/0/selectTab",
///                   message: "selectTab 5 is out of range; flow 'home' has tabs 0...1")
/// ```
public struct DefinitionProblem: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// A JSON Pointer (RFC 6901) to the offending value.
    public var path: String
    /// What is wrong and what was expected.
    public var message: String
    /// Whether the problem refuses the definition (``Severity/error``) or is only shown
    /// (``Severity/warning``: something that may be right, such as a flag defined later).
    public var severity: Severity

    /// How much a problem matters.
    public enum Severity: String, Sendable, Hashable {
        /// The definition is refused.
        case error
        /// The definition is accepted; the problem is shown beside the answer.
        case warning
    }

    public init(path: String, message: String, severity: Severity = .error) {
        self.path = path
        self.message = message
        self.severity = severity
    }

    public var isWarning: Bool { severity == .warning }

    public var description: String { "\(path.isEmpty ? "/" : path): \(isWarning ? "warning: " : "")\(message)" }
}

extension Array where Element == DefinitionProblem {
    /// The problems that refuse a definition.
    public var errors: [DefinitionProblem] { filter { !$0.isWarning } }
    /// The problems that are only shown.
    public var warnings: [DefinitionProblem] { filter(\.isWarning) }
}

/// Every problem found in a definition; thrown by parsing, which collects them all rather than
/// stopping at the first.
public struct DefinitionProblems: Error, Sendable, Equatable, CustomStringConvertible {
    public var problems: [DefinitionProblem]

    public init(_ problems: [DefinitionProblem]) {
        self.problems = problems
    }

    public var description: String {
        problems.map(\.description).joined(separator: "\n")
    }
}
