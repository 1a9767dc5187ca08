// CoverageTable: how many cases exercise each feature of the suite, and the features none does.

/// The suite's coverage: for each of ``EngineSuite/features`` the number of cases whose steps
/// exercised it (as observed when the case was generated, see `FeatureObserver`).
public struct CoverageTable: Sendable {
    public var counts: [(feature: String, cases: Int)]

    public init(_ cases: [GeneratedCase]) {
        counts = EngineSuite.features.map { feature in (feature.name, cases.count { $0.features.contains(feature.name) }) }
    }

    /// The features no case exercises.
    public var uncovered: [String] { counts.filter { $0.cases == 0 }.map(\.feature) }

    /// `feature  cases` lines, widest feature first padded.
    public var text: String {
        let width = counts.map(\.feature.count).max() ?? 0
        func padded(_ name: String) -> String { name + String(repeating: " ", count: max(0, width - name.count)) }
        var lines: [String] = [padded("feature") + "  cases"]
        for count in counts { lines.append(padded(count.feature) + "  " + String(count.cases)) }
        return lines.joined(separator: "\n")
    }
}
