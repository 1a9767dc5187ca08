// SemanticVersionTests: version ordering, from GrowthBook's corpus and FlowStack's own refinements.

import FeatureFlags
import JSON
import Testing

struct SemanticVersionTests {
    /// Every version case of GrowthBook's evalCondition corpus holds as a FlowStack condition.
    @Test(arguments: GrowthBookVectors.versions)
    func growthBookVersionCases(_ vector: GrowthBookVectors.VersionCase) throws {
        var condition: JSONObject = ["attribute": "version"]
        for test in vector.tests { condition[test.operation] = .string(test.operand) }
        let parsed = try TargetingCondition(json: .object(condition))
        let context = EvaluationContext(attributes: ["version": .string(vector.attribute)])
        #expect(parsed.matches(context) == vector.expected)
    }

    struct Ordering: Sendable, CustomTestStringConvertible {
        let lower: String
        let higher: String
        let why: String
        var testDescription: String { "\(lower) < \(higher): \(why)" }
    }

    /// Orderings FlowStack relies on for app versions, including the two refinements over GrowthBook.
    @Test(arguments: [
        Ordering(lower: "5.9", higher: "5.10", why: "numeric parts compare as numbers"),
        Ordering(lower: "5.2.0", higher: "5.10.0", why: "numeric parts compare as numbers"),
        Ordering(lower: "1.0.0-beta", higher: "1.0.0", why: "a pre-release precedes its release"),
        Ordering(lower: "1.0.0-alpha", higher: "1.0.0-beta", why: "pre-releases compare as text"),
        Ordering(lower: "1.0.0-rc.1", higher: "v1.0.0", why: "a leading v is ignored"),
        Ordering(lower: "5.1.9", higher: "5.2", why: "missing parts are 0"),
        Ordering(lower: "4.99", higher: "5", why: "missing parts are 0"),
        Ordering(lower: "99999.0.0", higher: "100000.0.0", why: "numbers longer than five digits"),
        Ordering(lower: "9.9.9", higher: "a.b.c", why: "text sorts above numbers, as in GrowthBook"),
    ])
    func ordering(_ case_: Ordering) {
        let lower = SemanticVersion(case_.lower)
        let higher = SemanticVersion(case_.higher)
        #expect(lower < higher)
        #expect(!(higher < lower))
        #expect(lower != higher)
    }

    /// Versions written differently but meaning the same compare equal.
    @Test(arguments: [
        ("5.2", "5.2.0"), ("5", "5.0.0"), ("v5.2.0", "5.2.0"), ("1.2.3+build.7", "1.2.3"),
        ("1.02.3", "1.2.3"), ("1-2-3", "1.2.3"),
    ])
    func equivalence(_ a: String, _ b: String) {
        #expect(SemanticVersion(a) == SemanticVersion(b))
        #expect(!(SemanticVersion(a) < SemanticVersion(b)))
    }

    /// Well-formed versions: the only attribute values version tests compare (and GrowthBook's
    /// $v operators order as FlowStack does).
    @Test(arguments: ["5", "5.2", "5.2.0", "v5.2.0", "10.0", "0.0.0", "99999.0.0", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-rc.1",
                      "1.0.0-RC.1+build.7", "5.2+7", "1-2-3", "1.2.3.4", "a.b.c", "1.0.0-0", "1.2.3-r2", "vbeta", "vv5.2"])
    func wellFormed(_ text: String) {
        #expect(SemanticVersion.isWellFormed(text))
    }

    /// Malformed: leading zeros, numbers above 99999, empty pieces, anything but ASCII letters and
    /// digits, an empty build, a lone or doubled v.
    @Test(arguments: ["", "05", "1.02.3", "00", "100000.0.0", "1.0.0-beta.02", "1..2", "1.0.0--", "5.2 ", " 5.2", "5.2\n",
                      "V5.2x_", "v", "v05", "5.2.0+", "5.2.0+a+b", "١.٢.٣", "1.0.0-β", "5,2", "+1"])
    func malformed(_ text: String) {
        #expect(!SemanticVersion.isWellFormed(text))
    }

    /// Odd input (empty, separators only, huge numbers, non-ASCII digits) orders without trapping.
    @Test(arguments: ["", "v", ".", "--", "+", "1..2", "١.٢.٣", String(repeating: "9", count: 400), "1.0.0-\u{1F600}"])
    func oddInputDoesNotTrap(_ text: String) {
        let version = SemanticVersion(text)
        #expect(version == version)
        #expect(!(version < version))
        _ = version < SemanticVersion("1.0.0")
    }
}
