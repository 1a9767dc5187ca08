// InvalidDefinition: the error thrown when a definition is refused, with every problem found.

/// A definition was refused: every problem found, member by member.
///
/// Parsing does not stop at the first problem, so one answer lists everything the author
/// has to fix.
public struct InvalidDefinition: Error, Sendable, Equatable, CustomStringConvertible {
    /// The problems, at least one.
    public var problems: [FlagProblem]

    public init(problems: [FlagProblem]) {
        self.problems = problems
    }

    public var description: String {
        problems.map(\.description).joined(separator: "; ")
    }
}
