// GrowthBookPayload+versions: version tests as GrowthBook's $v operators, on the versions where they agree with FlowStack.

import JSON

extension GrowthBookPayload {
    /// A version test's comparison; `versionIsNot` is the negation of ``equal``.
    enum VersionComparison: Sendable {
        case greater, atLeast, less, atMost, equal, notEqual

        init?(_ operation: AttributeOperator) {
            switch operation {
            case .versionGreaterThan: self = .greater
            case .versionAtLeast: self = .atLeast
            case .versionLessThan: self = .less
            case .versionAtMost: self = .atMost
            case .versionEquals: self = .equal
            case .versionNotEquals: self = .notEqual
            default: return nil
            }
        }

        var growthBookOperator: String {
            switch self {
            case .greater: "$vgt"
            case .atLeast: "$vgte"
            case .less: "$vlt"
            case .atMost: "$vlte"
            case .equal: "$veq"
            case .notEqual: "$vne"
            }
        }
    }

    /// The GrowthBook condition that holds exactly when FlowStack's version test does.
    ///
    /// FlowStack compares only well-formed version strings (``SemanticVersion/isWellFormed(_:)``);
    /// on them, GrowthBook's `$v…` operators (`paddedVersionString`) order as ``SemanticVersion``
    /// does, with two differences this translation removes:
    ///
    /// - the threshold is written in canonical form: `major.minor.patch`, then the pre-release
    ///   pieces joined by `.`, numbers without leading zeros (`"5.2"` → `"5.2.0"`, `"v1.0.0-RC.01+7"`
    ///   → `"1.0.0-RC.1"`, the number `5` → `"5.0.0"`);
    /// - FlowStack reads a version of one or two numbers as if padded with zeros (`5.2` is `5.2.0`),
    ///   GrowthBook does not (it puts `5.2` below `5.2.0`), so such versions are compared with the
    ///   threshold cut to as many numbers, the operator adjusted for what was cut: against
    ///   `5.2.1`, `5.2` (`5.2.0`) is below, so `versionGte` is `$vgt "5.2"`; against `5.2.0-beta`
    ///   it is above, so `versionGte` is `$vgte "5.2"`.
    ///
    /// Each branch guards the attribute with `$type: "string"` (the JS SDK reads a missing
    /// version as `"0"` and compares numbers as versions) and a `$regex` for its kind of version,
    /// so a malformed or missing version matches no branch, as it fails FlowStack's test.
    /// `versionIsNot` is `$not` of `versionIs`'s condition: a malformed or missing version passes both.
    ///
    /// Throws for a threshold that has no canonical form GrowthBook reads the same way: fewer
    /// than three numbers before a pre-release (`1-2`), a number above 99999, a piece that is not
    /// ASCII letters and digits (`a_b`, empty, non-ASCII), or not starting with numbers (`a.b.c`).
    ///
    /// ```swift
    /// // {"attribute": "appVersion", "versionGte": "5.2"}:
    /// // {"$or": [{"appVersion": {"$type": "string", "$regex": UNPADDED, "$vgte": "5.2.0"}},
    /// //          {"appVersion": {"$type": "string", "$regex": TWO NUMBERS, "$vgte": "5.2"}},
    /// //          {"appVersion": {"$type": "string", "$regex": ONE NUMBER, "$vgte": "5"}}]}
    /// ```
    static func versionCondition(_ name: String, _ test: AttributeTest, comparison: VersionComparison, at path: JSONPointer) throws(Untranslatable) -> JSONValue {
        let written = AttributeTest.versionText(test.operand) ?? ""
        let threshold = try canonicalThreshold(written, at: path)
        if comparison == .notEqual {
            let equal = try versionCondition(name, test, comparison: .equal, at: path)
            return ["$not": equal]
        }
        func branch(_ pattern: String, _ op: String, _ value: String) -> JSONValue {
            .object(JSONObject(uniqueMembers: [.init(key: name, value: .object(JSONObject(uniqueMembers: [
                .init(key: "$type", value: "string"),
                .init(key: "$regex", value: .string(pattern)),
                .init(key: op, value: .string(value)),
            ])))]))
        }
        var branches = [branch(SemanticVersion.unpaddedPattern, comparison.growthBookOperator, threshold.text)]
        for count in [2, 1] {
            let cut = threshold.numbers.prefix(count).joined(separator: ".")
            let tail = threshold.numbers.dropFirst(count)
            let above = tail.contains { $0 != "0" }  // the threshold is above `cut` padded with zeros
            let below = !above && !threshold.preRelease.isEmpty  // a pre-release of `cut` padded: below it
            let op: String?
            switch (comparison, above, below) {
            case (_, false, false): op = comparison.growthBookOperator
            case (.greater, true, _), (.atLeast, true, _): op = "$vgt"
            case (.less, true, _), (.atMost, true, _): op = "$vlte"
            case (.greater, _, true), (.atLeast, _, true): op = "$vgte"
            case (.less, _, true), (.atMost, _, true): op = "$vlt"
            default: op = nil  // equal: a padded version is never a threshold with more
            }
            if let op { branches.append(branch(SemanticVersion.paddedPattern(numbers: count), op, cut)) }
        }
        return ["$or": .array(branches)]
    }

    /// A threshold in the form GrowthBook's `paddedVersionString` reads as ``SemanticVersion``
    /// reads the written one: its three numbers, its pre-release pieces, and the text
    /// (`major.minor.patch[-piece.piece…]`).
    struct CanonicalThreshold {
        var numbers: [String]
        var preRelease: [String]
        var text: String { numbers.joined(separator: ".") + (preRelease.isEmpty ? "" : "-" + preRelease.joined(separator: ".")) }
    }

    static func canonicalThreshold(_ written: String, at path: JSONPointer) throws(Untranslatable) -> CanonicalThreshold {
        let pieces = SemanticVersion.pieces(of: written)
        func refuse(_ why: String) -> Untranslatable {
            Untranslatable(path: path, reason: "the threshold \(JSONValue.string(written).jsonText) \(why), which GrowthBook SDKs do not order as FlowStack does; write it as major.minor.patch with an optional pre-release, such as \"5.2.0\" or \"1.0.0-beta.2\"")
        }
        var numbers: [String] = []
        var preRelease: [String] = []
        for (index, piece) in pieces.enumerated() {
            switch piece {
            case .number(let digits):
                guard digits.utf8.count <= 5 else { throw refuse("has a number above 99999") }
                if index < 3 { numbers.append(digits) } else { preRelease.append(digits) }
            case .text(let text):
                guard index >= 3 else { throw refuse(pieces.count < 3 ? "has fewer than three numbers" : "does not start with three numbers") }
                guard !text.isEmpty, text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) }) else {
                    throw refuse("has a pre-release piece \(JSONValue.string(text).jsonText) that is not ASCII letters and digits")
                }
                preRelease.append(text)
            }
        }
        guard numbers.count == 3 else { throw refuse("has fewer than three numbers") }
        return CanonicalThreshold(numbers: numbers, preRelease: preRelease)
    }
}
