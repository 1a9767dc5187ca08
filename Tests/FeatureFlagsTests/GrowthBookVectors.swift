// GrowthBookVectors: published and cross-checked GrowthBook test vectors, each with where it came from.

import Testing

/// Test vectors from GrowthBook, embedded so the suite reads no files.
///
/// Sources:
/// - **cases.json**: GrowthBook's shared SDK conformance corpus (specVersion 0.7.1), the file
///   every SDK tests against (`packages/sdk-js/test/cases.json` in growthbook/growthbook), read
///   from its copy in growthbook/growthbook-python `tests/cases.json` at commit c444b7df05da.
///   Sections used: `hash`, `getBucketRange`, `chooseVariation`, `getEqualWeights`, the
///   version (`$v…`) cases of `evalCondition`, and the hash-version-2 cases of `run`.
/// - **python-sdk test**: growthbook-python 4.0.0 `tests/test_growthbook.py`,
///   `test_hash_uses_utf16_code_units` ("Expected values from the JS SDK").
/// - **js-sdk run**: computed by running the JS SDK's `hashFnv32a` and `hash`, copied verbatim
///   from `packages/sdk-js/src/util.ts`, under Node; each value also equals growthbook-python
///   4.0.0's `gbhash`.
/// - **python-sdk run**: computed with growthbook-python 4.0.0 (from PyPI):
///   `GrowthBook(attributes={"id": USER}).run(Experiment(key=…, variations=…, hashVersion=2,
///   weights=…, coverage=…, seed=…))`, recording `variationId` (or not in the experiment) and
///   `bucket`.
enum GrowthBookVectors {
    struct HashCase: Sendable, CustomTestStringConvertible {
        let seed: String
        let value: String
        let version: Int
        let expected: Double?
        let source: String
        init(_ seed: String, _ value: String, _ version: Int, _ expected: Double?, _ source: String) {
            (self.seed, self.value, self.version, self.expected, self.source) = (seed, value, version, expected, source)
        }
        var testDescription: String { "hash(\(seed.debugDescription), \(value.debugDescription), v\(version)) [\(source)]" }
    }

    static let hash: [HashCase] = [
        // cases.json "hash": [seed, value, version, expected]
        HashCase("", "a", 1, 0.22, "cases.json"),
        HashCase("", "b", 1, 0.077, "cases.json"),
        HashCase("b", "a", 1, 0.946, "cases.json"),
        HashCase("ef", "d", 1, 0.652, "cases.json"),
        HashCase("asdf", "8952klfjas09ujk", 1, 0.549, "cases.json"),
        HashCase("", "123", 1, 0.011, "cases.json"),
        HashCase("", "___)((*\":&", 1, 0.563, "cases.json"),
        HashCase("seed", "a", 2, 0.0505, "cases.json"),
        HashCase("seed", "b", 2, 0.2696, "cases.json"),
        HashCase("foo", "ab", 2, 0.2575, "cases.json"),
        HashCase("foo", "def", 2, 0.2019, "cases.json"),
        HashCase("89123klj", "8952klfjas09ujkasdf", 2, 0.124, "cases.json"),
        HashCase("90850943850283058242805", "123", 2, 0.7516, "cases.json"),
        HashCase("()**(%$##$%#$#", "___)((*\":&", 2, 0.0128, "cases.json"),
        HashCase("abc", "def", 99, nil, "cases.json"),
        // Non-ASCII: UTF-16 code units, an emoji being two (a surrogate pair).
        HashCase("", "\u{1F600}", 2, 0.4971, "python-sdk test"),
        HashCase("", "jos\u{E9}", 1, 0.586, "python-sdk test"),
        HashCase("", "jos\u{E9}", 2, 0.1315, "js-sdk run"),
        HashCase("onboarding-length", "\u{7528}\u{6237}-42", 2, 0.867, "js-sdk run"),
        HashCase("eu-face-scan", "Zo\u{EB}", 2, 0.9999, "js-sdk run"),
        HashCase("seed", "\u{FF}\u{100}\u{FFFF}", 1, 0.426, "js-sdk run"),
        HashCase("seed", "\u{FF}\u{100}\u{FFFF}", 2, 0.3335, "js-sdk run"),
        HashCase("\u{E9}", "\u{FC}", 1, 0.918, "js-sdk run"),
        HashCase("", "\u{65E5}\u{672C}", 1, 0.396, "js-sdk run"),
        HashCase("\u{1F600}", "\u{1F600}", 2, 0.0499, "js-sdk run"),
        HashCase("", "", 1, 0.261, "js-sdk run"),
        HashCase("", "", 2, 0.2305, "js-sdk run"),
        HashCase("onboarding-length", "u-1", 2, 0.3973, "js-sdk run"),
        HashCase("onboarding-length", "u-2", 2, 0.83, "js-sdk run"),
        HashCase("eu-face-scan", "u-1", 2, 0.4804, "js-sdk run"),
        // Other unknown versions.
        HashCase("abc", "def", 0, nil, "GrowthBook rule: only 1 and 2 exist"),
        HashCase("abc", "def", 3, nil, "GrowthBook rule: only 1 and 2 exist"),
    ]

    /// Raw FNV-1a values from the JS SDK's `hashFnv32a` under Node ("" and "a" are also the
    /// FNV reference values: the offset basis and 0xE40C292C).
    static let fnv1a32: [(String, UInt32)] = [
        ("", 2_166_136_261),
        ("a", 3_826_002_220),
        ("foobar", 3_214_735_720),
        ("\u{1F600}", 3_409_036_472),
        ("jos\u{E9}", 1_843_599_586),
        ("\u{FFFF}", 2_041_487_694),
    ]

    struct BucketRangeCase: Sendable, CustomTestStringConvertible {
        let name: String
        let count: Int
        let coverage: Double
        let weights: [Double]?
        let expected: [(Double, Double)]
        var testDescription: String { name }
    }

    /// cases.json "getBucketRange": [name, [numVariations, coverage, weights], expected].
    static let bucketRanges: [BucketRangeCase] = [
        .init(name: "normal 50/50", count: 2, coverage: 1, weights: nil, expected: [(0, 0.5), (0.5, 1)]),
        .init(name: "reduced coverage", count: 2, coverage: 0.5, weights: nil, expected: [(0, 0.25), (0.5, 0.75)]),
        .init(name: "zero coverage", count: 2, coverage: 0, weights: nil, expected: [(0, 0), (0.5, 0.5)]),
        .init(name: "4 variations", count: 4, coverage: 1, weights: nil, expected: [(0, 0.25), (0.25, 0.5), (0.5, 0.75), (0.75, 1)]),
        .init(name: "uneven weights", count: 2, coverage: 1, weights: [0.4, 0.6], expected: [(0, 0.4), (0.4, 1)]),
        .init(name: "uneven weights, 3 variations", count: 3, coverage: 1, weights: [0.2, 0.3, 0.5], expected: [(0, 0.2), (0.2, 0.5), (0.5, 1)]),
        .init(name: "uneven weights, reduced coverage, 3 variations", count: 3, coverage: 0.2, weights: [0.2, 0.3, 0.5], expected: [(0, 0.04), (0.2, 0.26), (0.5, 0.6)]),
        .init(name: "negative coverage", count: 2, coverage: -0.2, weights: nil, expected: [(0, 0), (0.5, 0.5)]),
        .init(name: "coverage above 1", count: 2, coverage: 1.5, weights: nil, expected: [(0, 0.5), (0.5, 1)]),
        .init(name: "weights sum below 1", count: 2, coverage: 1, weights: [0.4, 0.1], expected: [(0, 0.5), (0.5, 1)]),
        .init(name: "weights sum above 1", count: 2, coverage: 1, weights: [0.7, 0.6], expected: [(0, 0.5), (0.5, 1)]),
        .init(name: "weights.length not equal to num variations", count: 4, coverage: 1, weights: [0.4, 0.4, 0.2], expected: [(0, 0.25), (0.25, 0.5), (0.5, 0.75), (0.75, 1)]),
        .init(name: "weights sum almost equals 1", count: 2, coverage: 1, weights: [0.4, 0.5999], expected: [(0, 0.4), (0.4, 0.9999)]),
    ]

    struct ChooseVariationCase: Sendable, CustomTestStringConvertible {
        let name: String
        let n: Double
        let ranges: [(Double, Double)]
        let expected: Int?
        var testDescription: String { name }
    }

    /// cases.json "chooseVariation": [name, n, ranges, expected], with `nil` for GrowthBook's -1.
    static let chooseVariation: [ChooseVariationCase] = {
        let even: [(Double, Double)] = [(0, 0.5), (0.5, 1)]
        let reduced: [(Double, Double)] = [(0, 0.25), (0.5, 0.75)]
        return [
            .init(name: "even range, 0.2", n: 0.2, ranges: even, expected: 0),
            .init(name: "even range, 0.4", n: 0.4, ranges: even, expected: 0),
            .init(name: "even range, 0.6", n: 0.6, ranges: even, expected: 1),
            .init(name: "even range, 0.8", n: 0.8, ranges: even, expected: 1),
            .init(name: "even range, 0", n: 0, ranges: even, expected: 0),
            .init(name: "even range, 0.5", n: 0.5, ranges: even, expected: 1),
            .init(name: "reduced range, 0.2", n: 0.2, ranges: reduced, expected: 0),
            .init(name: "reduced range, 0.4", n: 0.4, ranges: reduced, expected: nil),
            .init(name: "reduced range, 0.6", n: 0.6, ranges: reduced, expected: 1),
            .init(name: "reduced range, 0.8", n: 0.8, ranges: reduced, expected: nil),
            .init(name: "reduced range, 0.25", n: 0.25, ranges: reduced, expected: nil),
            .init(name: "reduced range, 0.5", n: 0.5, ranges: reduced, expected: 1),
            .init(name: "zero range", n: 0.5, ranges: [(0, 0.5), (0.5, 0.5), (0.5, 1)], expected: 2),
        ]
    }()

    /// cases.json "getEqualWeights": [numVariations, expected] (compared to 8 places, as given).
    static let equalWeights: [(Int, [Double])] = [
        (-1, []),
        (0, []),
        (1, [1]),
        (2, [0.5, 0.5]),
        (3, [0.33333333, 0.33333333, 0.33333333]),
        (4, [0.25, 0.25, 0.25, 0.25]),
    ]

    struct VersionCase: Sendable, CustomTestStringConvertible {
        let name: String
        let attribute: String
        let tests: [(operation: String, operand: String)]
        let expected: Bool
        init(_ name: String, _ attribute: String, _ tests: [(String, String)], _ expected: Bool) {
            self.name = name
            self.attribute = attribute
            self.tests = tests.map { (operation: $0.0, operand: $0.1) }
            self.expected = expected
        }
        var testDescription: String { name }
    }

    /// Every version case of cases.json "evalCondition", with GrowthBook's operators renamed:
    /// `$vgt` → versionGt, `$vgte` → versionGte, `$vlt` → versionLt, `$vlte` → versionLte,
    /// `$veq` → versionIs, `$vne` → versionIsNot.
    static let versions: [VersionCase] = [
        VersionCase("$vgt/$vlt - pass - major", "10.12.13", [("versionGt", "9.99.8"), ("versionLt", "11.0.1")], true),
        VersionCase("$vgt/$vlt - pass - minor", "10.12.11", [("versionGt", "10.2.11"), ("versionLt", "10.20.11")], true),
        VersionCase("$vgt/$vlt - pass - patch", "10.0.12", [("versionGt", "10.0.2"), ("versionLt", "10.0.20")], true),
        VersionCase("$vgt/$vlt - fail $vlt - major", "60.0.0", [("versionGt", "30.0.0"), ("versionLt", "50.0.0")], false),
        VersionCase("$vgt/$vlt - fail $vlt - minor", "10.60.0", [("versionGt", "10.30.0"), ("versionLt", "10.50.0")], false),
        VersionCase("$vgt/$vlt - fail $vlt - patch", "10.2.60", [("versionGt", "10.2.30"), ("versionLt", "10.2.50")], false),
        VersionCase("$vgt/$vlt - fail $vgt - major", "20.0.16", [("versionGt", "30.0.16"), ("versionLt", "50.0.16")], false),
        VersionCase("$vgt/$vlt - fail $vgt - minor", "10.20.0", [("versionGt", "10.30.0"), ("versionLt", "10.50.0")], false),
        VersionCase("$vgt/$vlt - fail $vgt - patch", "10.30.2", [("versionGt", "10.30.10"), ("versionLt", "10.30.20")], false),
        VersionCase("$vgte/$vlte - pass $vgte - major", "30.1.2", [("versionGte", "30.1.2"), ("versionLte", "60.1.2")], true),
        VersionCase("$vgte/$vlte - pass $vgte - minor", "5.30.2", [("versionGte", "5.30.2"), ("versionLte", "5.60.2")], true),
        VersionCase("$vgte/$vlte - pass $vgte - patch", "5.10.30", [("versionGte", "5.10.30"), ("versionLte", "5.10.60")], true),
        VersionCase("$vgte/$vlte - pass $vlte - major", "60.1.2", [("versionGte", "30.1.2"), ("versionLte", "60.1.2")], true),
        VersionCase("$vgte/$vlte - pass $vlte - minor", "1.60.2", [("versionGte", "1.30.2"), ("versionLte", "1.60.2")], true),
        VersionCase("$vgte/$vlte - pass $vlte - patch", "1.2.60", [("versionGte", "1.2.30"), ("versionLte", "1.2.60")], true),
        VersionCase("$vgte/$vlte - fail $vlte - major", "61.1.2", [("versionGte", "30.1.2"), ("versionLte", "60.1.2")], false),
        VersionCase("$vgte/$vlte - fail $vgt - minor", "29.1.2", [("versionGte", "30.1.2"), ("versionLte", "60.1.2")], false),
        VersionCase("$vgte/$vlte - fail $vgt - patch", "1.2.29", [("versionGte", "1.2.30"), ("versionLte", "1.2.60")], false),
        VersionCase("$vgt/$vlt prerelease - fail $vgt", "1.0.0-alpha", [("versionGt", "1.0.0-alpha"), ("versionLt", "1.0.0-beta")], false),
        VersionCase("$vgt/$vlt prerelease  w/ multiple fields - fail $vgt", "1.0.0-alpha.1", [("versionGt", "1.0.0-alpha.2"), ("versionLt", "1.0.0-beta.1")], false),
        VersionCase("$vgt/$vlt prerelease - fail $vlt", "1.0.0-beta", [("versionGt", "1.0.0-alpha"), ("versionLt", "1.0.0-beta")], false),
        VersionCase("$vgt/$vlt prerelease - pass", "1.0.0-alpha.10", [("versionGt", "1.0.0-alpha"), ("versionLt", "1.0.0-beta")], true),
        VersionCase("$vgt/$vlt prerelease - fail uppercase", "1.0.0-ALPHA", [("versionGt", "1.0.0-alpha"), ("versionLt", "1.0.0-beta")], false),
        VersionCase("$veq - pass", "1.2.3", [("versionIs", "1.2.3")], true),
        VersionCase("$veq - pass (with build)", "1.2.3+build.abc.123", [("versionIs", "1.2.3")], true),
        VersionCase("$vne - pass", "2.2.3", [("versionIsNot", "1.2.3")], true),
        VersionCase("$vne - pass (prerelease)", "1.2.3-alpha", [("versionIsNot", "1.2.3")], true),
        VersionCase("version 0.9.99 < 1.0.0", "0.9.99", [("versionLt", "1.0.0")], true),
        VersionCase("version 0.9.0 < 0.10.0", "0.9.0", [("versionLt", "0.10.0")], true),
        VersionCase("version 1.0.0-0.0 < 1.0.0-0.0.0", "1.0.0-0.0", [("versionLt", "1.0.0-0.0.0")], true),
        VersionCase("version 1.0.0-9999 < 1.0.0--", "1.0.0-9999", [("versionLt", "1.0.0--")], true),
        VersionCase("version 1.0.0-99 < 1.0.0-100", "1.0.0-99", [("versionLt", "1.0.0-100")], true),
        VersionCase("version 1.0.0-alpha < 1.0.0-alpha.1", "1.0.0-alpha", [("versionLt", "1.0.0-alpha.1")], true),
        VersionCase("version 1.0.0-alpha.1 < 1.0.0-alpha.beta", "1.0.0-alpha.1", [("versionLt", "1.0.0-alpha.beta")], true),
        VersionCase("version 1.0.0-alpha.beta < 1.0.0-beta", "1.0.0-alpha.beta", [("versionLt", "1.0.0-beta")], true),
        VersionCase("version 1.0.0-beta < 1.0.0-beta.2", "1.0.0-beta", [("versionLt", "1.0.0-beta.2")], true),
        VersionCase("version 1.0.0-beta.2 < 1.0.0-beta.11", "1.0.0-beta.2", [("versionLt", "1.0.0-beta.11")], true),
        VersionCase("version 1.0.0-beta.11 < 1.0.0-rc.1", "1.0.0-beta.11", [("versionLt", "1.0.0-rc.1")], true),
        VersionCase("version 1.0.0-rc.1 < 1.0.0", "1.0.0-rc.1", [("versionLt", "1.0.0")], true),
        VersionCase("version 1.0.0-0 < 1.0.0--1", "1.0.0-0", [("versionLt", "1.0.0--1")], true),
        VersionCase("version 1.0.0-0 < 1.0.0-1", "1.0.0-0", [("versionLt", "1.0.0-1")], true),
        VersionCase("version 1.0.0-1.0 < 1.0.0-1.-1", "1.0.0-1.0", [("versionLt", "1.0.0-1.-1")], true),
        VersionCase("version 1.2.3-a.b.c < 1.2.3-a.b.c.d", "1.2.3-a.b.c", [("versionLt", "1.2.3-a.b.c.d")], true),
        VersionCase("version 0.0.0 > 0.0.0-foo", "0.0.0", [("versionGt", "0.0.0-foo")], true),
        VersionCase("version 0.0.1 > 0.0.0", "0.0.1", [("versionGt", "0.0.0")], true),
        VersionCase("version 1.0.0 > 0.9.9", "1.0.0", [("versionGt", "0.9.9")], true),
        VersionCase("version 0.10.0 > 0.9.0", "0.10.0", [("versionGt", "0.9.0")], true),
        VersionCase("version 0.99.0 > 0.10.0", "0.99.0", [("versionGt", "0.10.0")], true),
        VersionCase("version 2.0.0 > 1.2.3", "2.0.0", [("versionGt", "1.2.3")], true),
        VersionCase("version v0.0.0 > 0.0.0-foo", "v0.0.0", [("versionGt", "0.0.0-foo")], true),
        VersionCase("version v0.0.1 > 0.0.0", "v0.0.1", [("versionGt", "0.0.0")], true),
        VersionCase("version v1.0.0 > 0.9.9", "v1.0.0", [("versionGt", "0.9.9")], true),
        VersionCase("version v0.10.0 > 0.9.0", "v0.10.0", [("versionGt", "0.9.0")], true),
        VersionCase("version v0.99.0 > 0.10.0", "v0.99.0", [("versionGt", "0.10.0")], true),
        VersionCase("version v2.0.0 > 1.2.3", "v2.0.0", [("versionGt", "1.2.3")], true),
        VersionCase("version 0.0.0 > v0.0.0-foo", "0.0.0", [("versionGt", "v0.0.0-foo")], true),
        VersionCase("version 0.0.1 > v0.0.0", "0.0.1", [("versionGt", "v0.0.0")], true),
        VersionCase("version 1.0.0 > v0.9.9", "1.0.0", [("versionGt", "v0.9.9")], true),
        VersionCase("version 0.10.0 > v0.9.0", "0.10.0", [("versionGt", "v0.9.0")], true),
        VersionCase("version 0.99.0 > v0.10.0", "0.99.0", [("versionGt", "v0.10.0")], true),
        VersionCase("version 2.0.0 > v1.2.3", "2.0.0", [("versionGt", "v1.2.3")], true),
        VersionCase("version 1.2.3 > 1.2.3-asdf", "1.2.3", [("versionGt", "1.2.3-asdf")], true),
        VersionCase("version 1.2.3 > 1.2.3-4", "1.2.3", [("versionGt", "1.2.3-4")], true),
        VersionCase("version 1.2.3 > 1.2.3-4-foo", "1.2.3", [("versionGt", "1.2.3-4-foo")], true),
        VersionCase("version 1.2.3-5-foo > 1.2.3-5", "1.2.3-5-foo", [("versionGt", "1.2.3-5")], true),
        VersionCase("version 1.2.3-5 > 1.2.3-4", "1.2.3-5", [("versionGt", "1.2.3-4")], true),
        VersionCase("version 1.2.3-5-foo > 1.2.3-5-Foo", "1.2.3-5-foo", [("versionGt", "1.2.3-5-Foo")], true),
        VersionCase("version 3.0.0 > 2.7.2+asdf", "3.0.0", [("versionGt", "2.7.2+asdf")], true),
        VersionCase("version 1.2.3-a.10 > 1.2.3-a.5", "1.2.3-a.10", [("versionGt", "1.2.3-a.5")], true),
        VersionCase("version 1.2.3-a.b > 1.2.3-a.5", "1.2.3-a.b", [("versionGt", "1.2.3-a.5")], true),
        VersionCase("version 1.2.3-a.b > 1.2.3-a", "1.2.3-a.b", [("versionGt", "1.2.3-a")], true),
        VersionCase("version 1.2.3-a.b.c.10.d.5 > 1.2.3-a.b.c.5.d.100", "1.2.3-a.b.c.10.d.5", [("versionGt", "1.2.3-a.b.c.5.d.100")], true),
        VersionCase("version 1.2.3-r2 > 1.2.3-r100", "1.2.3-r2", [("versionGt", "1.2.3-r100")], true),
        VersionCase("version 1.2.3-r100 > 1.2.3-R2", "1.2.3-r100", [("versionGt", "1.2.3-R2")], true),
        VersionCase("version a.b.c.d.e.f > 1.2.3", "a.b.c.d.e.f", [("versionGt", "1.2.3")], true),
        VersionCase("version 10.0.0 > 9.0.0", "10.0.0", [("versionGt", "9.0.0")], true),
        VersionCase("version 10000.0.0 > 9999.0.0", "10000.0.0", [("versionGt", "9999.0.0")], true),
        VersionCase("version 1.2.3 == 1.2.3", "1.2.3", [("versionIs", "1.2.3")], true),
        VersionCase("version 1.2.3 == v1.2.3", "1.2.3", [("versionIs", "v1.2.3")], true),
        VersionCase("version 1.2.3-0 == v1.2.3-0", "1.2.3-0", [("versionIs", "v1.2.3-0")], true),
        VersionCase("version 1.2.3-1 == 1.2.3-1", "1.2.3-1", [("versionIs", "1.2.3-1")], true),
        VersionCase("version 1.2.3-1 == v1.2.3-1", "1.2.3-1", [("versionIs", "v1.2.3-1")], true),
        VersionCase("version 1.2.3-beta == 1.2.3-beta", "1.2.3-beta", [("versionIs", "1.2.3-beta")], true),
        VersionCase("version 1.2.3-beta == v1.2.3-beta", "1.2.3-beta", [("versionIs", "v1.2.3-beta")], true),
        VersionCase("version 1.2.3-beta+build == 1.2.3-beta+otherbuild", "1.2.3-beta+build", [("versionIs", "1.2.3-beta+otherbuild")], true),
        VersionCase("version 1.2.3-beta+build == v1.2.3-beta+otherbuild", "1.2.3-beta+build", [("versionIs", "v1.2.3-beta+otherbuild")], true),
        VersionCase("version 1-2-3 == 1.2.3", "1-2-3", [("versionIs", "1.2.3")], true),
        VersionCase("version 1-2-3 == 1-2.3+build99", "1-2-3", [("versionIs", "1-2.3+build99")], true),
        VersionCase("version 1-2-3 == v1.2.3", "1-2-3", [("versionIs", "v1.2.3")], true),
        VersionCase("version 1.2.3.4 == 1.2.3-4", "1.2.3.4", [("versionIs", "1.2.3-4")], true),
    ]

    struct ExperimentCase: Sendable, CustomTestStringConvertible {
        let key: String
        let variants: Int
        let weights: [Double]?
        let coverage: Double
        let seed: String?
        let user: String
        /// The variation index, `nil` when the user is not in the experiment.
        let expected: Int?
        /// GrowthBook's `bucket` (the hash), when the user is in the experiment.
        let bucket: Double?
        let source: String
        init(_ key: String, _ variants: Int, _ weights: [Double]?, _ coverage: Double, _ seed: String?, _ user: String, _ expected: Int?, _ bucket: Double?, _ source: String = "python-sdk run") {
            (self.key, self.variants, self.weights, self.coverage, self.seed, self.user) = (key, variants, weights, coverage, seed, user)
            (self.expected, self.bucket, self.source) = (expected, bucket, source)
        }
        var testDescription: String { "\(key) \(seed ?? "-") coverage \(coverage) user \(user.debugDescription) [\(source)]" }
    }

    static let experiments: [ExperimentCase] = [
        // cases.json "run", the hash-version-2 cases: attributes {"id": "1"}, seed "foo".
        ExperimentCase("key", 2, nil, 1, "foo", "1", 1, nil, "cases.json"),
        ExperimentCase("key", 2, [0.5, 0.5], 0.99, "foo", "1", 1, nil, "cases.json"),
        // python-sdk run
        ExperimentCase("onboarding-length", 2, [0.5, 0.5], 1, nil, "u-1", 0, 0.3973),
        ExperimentCase("onboarding-length", 2, [0.5, 0.5], 1, nil, "u-2", 1, 0.83),
        ExperimentCase("onboarding-length", 2, [0.5, 0.5], 1, nil, "u-3", 1, 0.6561),
        ExperimentCase("onboarding-length", 2, [0.5, 0.5], 1, nil, "u-4", 1, 0.718),
        ExperimentCase("onboarding-length", 2, [0.5, 0.5], 1, nil, "u-5", 0, 0.4828),
        ExperimentCase("onboarding-length", 2, [0.5, 0.5], 1, nil, "u-6", 0, 0.407),
        ExperimentCase("onboarding-length", 2, [0.5, 0.5], 1, nil, "42", 1, 0.869),
        ExperimentCase("onboarding-length", 2, [0.5, 0.5], 1, nil, "Zo\u{EB}", 1, 0.5856),
        ExperimentCase("checkout-copy", 3, [0.2, 0.3, 0.5], 1, nil, "u-1", 1, 0.2273),
        ExperimentCase("checkout-copy", 3, [0.2, 0.3, 0.5], 1, nil, "u-2", 2, 0.583),
        ExperimentCase("checkout-copy", 3, [0.2, 0.3, 0.5], 1, nil, "u-3", 2, 0.7262),
        ExperimentCase("checkout-copy", 3, [0.2, 0.3, 0.5], 1, nil, "u-4", 0, 0.0885),
        ExperimentCase("checkout-copy", 3, [0.2, 0.3, 0.5], 1, nil, "u-5", 2, 0.944),
        ExperimentCase("checkout-copy", 3, [0.2, 0.3, 0.5], 1, nil, "u-6", 1, 0.4419),
        ExperimentCase("checkout-copy", 3, [0.2, 0.3, 0.5], 1, nil, "42", 0, 0.18),
        ExperimentCase("checkout-copy", 3, [0.2, 0.3, 0.5], 1, nil, "Zo\u{EB}", 1, 0.2568),
        ExperimentCase("onboarding-length", 2, [0.5, 0.5], 0.4, nil, "u-1", nil, nil),
        ExperimentCase("onboarding-length", 2, [0.5, 0.5], 0.4, nil, "u-2", nil, nil),
        ExperimentCase("onboarding-length", 2, [0.5, 0.5], 0.4, nil, "u-3", 1, 0.6561),
        ExperimentCase("onboarding-length", 2, [0.5, 0.5], 0.4, nil, "u-4", nil, nil),
        ExperimentCase("onboarding-length", 2, [0.5, 0.5], 0.4, nil, "u-5", nil, nil),
        ExperimentCase("onboarding-length", 2, [0.5, 0.5], 0.4, nil, "u-6", nil, nil),
        ExperimentCase("onboarding-length", 2, [0.5, 0.5], 0.4, nil, "42", nil, nil),
        ExperimentCase("onboarding-length", 2, [0.5, 0.5], 0.4, nil, "Zo\u{EB}", 1, 0.5856),
        ExperimentCase("onboarding-length", 2, [0.5, 0.5], 1, "spring-2026", "u-1", 1, 0.9918),
        ExperimentCase("onboarding-length", 2, [0.5, 0.5], 1, "spring-2026", "u-2", 0, 0.3785),
        ExperimentCase("onboarding-length", 2, [0.5, 0.5], 1, "spring-2026", "u-3", 0, 0.3594),
        ExperimentCase("onboarding-length", 2, [0.5, 0.5], 1, "spring-2026", "u-4", 0, 0.2402),
        ExperimentCase("onboarding-length", 2, [0.5, 0.5], 1, "spring-2026", "u-5", 0, 0.2114),
        ExperimentCase("onboarding-length", 2, [0.5, 0.5], 1, "spring-2026", "u-6", 0, 0.1274),
        ExperimentCase("onboarding-length", 2, [0.5, 0.5], 1, "spring-2026", "42", 1, 0.6565),
        ExperimentCase("onboarding-length", 2, [0.5, 0.5], 1, "spring-2026", "Zo\u{EB}", 1, 0.6076),
    ]
}
