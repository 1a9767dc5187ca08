// GrowthBookVersionTests: version tests as GrowthBook $v conditions, checked against a model of GrowthBook's evaluation.

import FeatureFlags
import JSON
import Testing

struct GrowthBookVersionTests {
    static func translate(_ text: String) throws -> JSONValue {
        try GrowthBookPayload.condition(try TargetingCondition(json: JSONParser.parse(text)))
    }

    /// One `$or` branch: which versions its `$regex` admits, its operator and threshold.
    struct Branch: Equatable, CustomStringConvertible {
        let kind: String
        let op: String
        let value: String
        var description: String { "\(kind) \(op) \(value)" }
    }

    static func branches(_ condition: JSONValue) -> [Branch] {
        (condition["$or"]?.arrayValue ?? []).compactMap { branch -> Branch? in
            guard case .object(let object) = branch, let (name, test) = object.members.first.map({ ($0.key, $0.value) }),
                  case .object(let operators) = test else { return nil }
            _ = name
            let pattern = operators["$regex"]?.stringValue ?? ""
            let kind = pattern.hasPrefix("^(?!") ? "unpadded" : (pattern.contains(#"\."#) ? "two" : "one")
            guard let last = operators.members.last, let value = last.value.stringValue else { return nil }
            return Branch(kind: kind, op: last.key, value: value)
        }
    }

    struct BranchCase: Sendable, CustomTestStringConvertible {
        let condition: String
        let expected: [String]
        init(_ condition: String, _ expected: [String]) { (self.condition, self.expected) = (condition, expected) }
        var testDescription: String { condition }
    }

    /// The threshold in canonical form for unpadded versions; cut to one and two numbers, with the
    /// operator adjusted for what was cut, for the versions FlowStack pads.
    @Test(arguments: [
        BranchCase(#"{"attribute": "appVersion", "versionGte": "5.2"}"#, ["unpadded $vgte 5.2.0", "two $vgte 5.2", "one $vgt 5"]),
        BranchCase(#"{"attribute": "appVersion", "versionGte": "5.2.0"}"#, ["unpadded $vgte 5.2.0", "two $vgte 5.2", "one $vgt 5"]),
        BranchCase(#"{"attribute": "appVersion", "versionGte": "5.0.0"}"#, ["unpadded $vgte 5.0.0", "two $vgte 5.0", "one $vgte 5"]),
        BranchCase(#"{"attribute": "appVersion", "versionGt": "5.2.1"}"#, ["unpadded $vgt 5.2.1", "two $vgt 5.2", "one $vgt 5"]),
        BranchCase(#"{"attribute": "appVersion", "versionLt": "5.2.1"}"#, ["unpadded $vlt 5.2.1", "two $vlte 5.2", "one $vlte 5"]),
        BranchCase(#"{"attribute": "appVersion", "versionLte": "5.2.0-beta"}"#, ["unpadded $vlte 5.2.0-beta", "two $vlt 5.2", "one $vlte 5"]),
        BranchCase(#"{"attribute": "appVersion", "versionGt": "1.0.0-rc.1"}"#, ["unpadded $vgt 1.0.0-rc.1", "two $vgte 1.0", "one $vgte 1"]),
        BranchCase(#"{"attribute": "appVersion", "versionIs": "5.2"}"#, ["unpadded $veq 5.2.0", "two $veq 5.2"]),
        BranchCase(#"{"attribute": "appVersion", "versionIs": "5.0.0-beta"}"#, ["unpadded $veq 5.0.0-beta"]),
        BranchCase(#"{"attribute": "appVersion", "versionIs": 5}"#, ["unpadded $veq 5.0.0", "two $veq 5.0", "one $veq 5"]),
        BranchCase(#"{"attribute": "appVersion", "versionGte": "v05.02+build.7"}"#, ["unpadded $vgte 5.2.0", "two $vgte 5.2", "one $vgt 5"]),
        BranchCase(#"{"attribute": "appVersion", "versionLt": "1.2.3.4"}"#, ["unpadded $vlt 1.2.3-4", "two $vlte 1.2", "one $vlte 1"]),
        BranchCase(#"{"attribute": "appVersion", "versionGte": "1.0.0-RC.01"}"#, ["unpadded $vgte 1.0.0-RC.1", "two $vgte 1.0", "one $vgte 1"]),
    ])
    func branches(_ test: BranchCase) throws {
        let translated = try Self.translate(test.condition)
        #expect(Self.branches(translated).map(\.description) == test.expected, "\(translated.jsonText)")
    }

    /// versionIsNot is the negation of versionIs: a missing or malformed version passes both.
    @Test func notEqualIsNotOfEqual() throws {
        let not = try Self.translate(#"{"attribute": "appVersion", "versionIsNot": "5.2"}"#)
        let equal = try Self.translate(#"{"attribute": "appVersion", "versionIs": "5.2"}"#)
        #expect(not == ["$not": equal])
    }

    /// Every branch admits only strings that FlowStack calls well-formed.
    @Test func branchesGuardTheAttribute() throws {
        let translated = try Self.translate(#"{"attribute": "appVersion", "versionGte": "5.2"}"#)
        for branch in translated["$or"]?.arrayValue ?? [] {
            #expect(branch["appVersion"]?["$type"] == "string")
            #expect(branch["appVersion"]?["$regex"]?.stringValue?.isEmpty == false)
        }
    }

    static let versions: [JSONValue?] = [
        "5.2", "5.2.0", "05", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-rc.1", "10.0", "2", "", nil, 5, 5.2, true, .null, ["5.2.0"],
        "5.2.1", "5.1.9", "5.10", "4.99", "5", "5.0", "5.0.0", "6", "1", "1.0", "1.0.0", "0", "0.0.0", "0.0.0-rc.1", "2.0.0", "2.0.0-0",
        "v5.2.0", "v5.2", "v2", "5.2.0+build.7", "5.2+7", "1.0.0-alpha", "1.0.0-beta.11", "1.0.0-RC.1", "5.2.0-beta", "5.2.0-rc.1",
        "1-2-3", "1.2.3.4", "1.2.3-4", "a.b.c", "99999.0.0", "100000.0.0", "1.02.3", "1.0.0-beta.02", "5.2 ", "5.2\n", "V5.2",
        "vv5.2", "v", "v05", "1..2", "1.0.0--", "5.2.0+", "5-2", "١.٢.٣", "5.2-beta", "1.0-rc.1",
        // from GrowthBook's cases.json
        "1.0.0-1.-1", "a.b.c.d.e.f", "1.2.3-5-Foo", "2.7.2+asdf", "1-2.3+build99", "1.0.0-alpha.beta", "10000.0.0",
    ]
    static let thresholds: [JSONValue] = [
        "5.2", "5.2.0", "5.2.1", "5", "5.0.0", "10.0", "2", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-rc.1", "5.2.0-beta", "0.0.0",
        "05.02", "v5.2.0+build.9", "1.2.3.4", "1-2-3", "99999.0.0", 5, 5.2,
    ]
    static let operators = ["versionGt", "versionGte", "versionLt", "versionLte", "versionIs", "versionIsNot"]

    /// A model of GrowthBook's evaluation of these conditions (`$or`, `$not`, `$type`, `$regex`
    /// and the `$v` operators over Python's `paddedVersionString`) agrees with FlowStack on every
    /// version, operator and threshold above. scripts/growthbook_client.py checks the same with
    /// GrowthBook's own SDK.
    @Test func modelOfGrowthBookAgrees() throws {
        var compared = 0
        var regexes: [String: Regex<AnyRegexOutput>] = [:]
        for threshold in Self.thresholds {
            for op in Self.operators {
                var object: JSONObject = ["attribute": "appVersion"]
                object[op] = threshold
                let condition = try TargetingCondition(json: .object(object))
                let translated = try GrowthBookPayload.condition(condition)
                for version in Self.versions {
                    let context = EvaluationContext(attributes: version.map { ["appVersion": $0] } ?? [:])
                    let flowstack = condition.matches(context)
                    let growthbook = try GrowthBookModel.evaluate(translated, attributes: version.map { ["appVersion": $0] } ?? [:], regexes: &regexes)
                    #expect(flowstack == growthbook, "\(op) \(threshold.jsonText) for \(version?.jsonText ?? "missing"): FlowStack \(flowstack)")
                    compared += 1
                }
            }
        }
        #expect(compared == Self.thresholds.count * Self.operators.count * Self.versions.count)
    }

    /// The regular expression GrowthBook is given admits exactly what isWellFormed does.
    @Test(arguments: versions.compactMap { $0?.stringValue })
    func patternIsWellFormedness(_ text: String) throws {
        let pattern = try Regex(SemanticVersion.wellFormedPattern)
        #expect((text.firstMatch(of: pattern) != nil) == SemanticVersion.isWellFormed(text), "\(JSONValue.string(text).jsonText)")
    }
}

/// The part of GrowthBook's condition language the version translation uses, evaluated as its
/// Python SDK does (core.py: evalCondition, evalOperatorCondition, paddedVersionString).
enum GrowthBookModel {
    struct Unsupported: Error {}

    static func evaluate(_ condition: JSONValue, attributes: JSONObject, regexes: inout [String: Regex<AnyRegexOutput>]) throws -> Bool {
        guard case .object(let object) = condition else { throw Unsupported() }
        for member in object.members {
            switch member.key {
            case "$or":
                guard let items = member.value.arrayValue else { throw Unsupported() }
                var any = items.isEmpty
                for item in items where !any { any = try evaluate(item, attributes: attributes, regexes: &regexes) }
                if !any { return false }
            case "$not":
                if try evaluate(member.value, attributes: attributes, regexes: &regexes) { return false }
            default:
                guard case .object(let operators) = member.value else { throw Unsupported() }
                let value = attributes[member.key]
                for test in operators.members where try !holds(test.key, test.value, value, regexes: &regexes) { return false }
            }
        }
        return true
    }

    static func holds(_ op: String, _ expected: JSONValue, _ actual: JSONValue?, regexes: inout [String: Regex<AnyRegexOutput>]) throws -> Bool {
        switch op {
        case "$type":
            let type: String
            switch actual {
            case nil, .null?: type = "null"
            case .string?: type = "string"
            case .bool?: type = "boolean"
            case .integer?, .number?: type = "number"
            case .array?: type = "array"
            case .object?: type = "object"
            }
            return type == expected.stringValue
        case "$regex":
            guard case .string(let text)? = actual, let pattern = expected.stringValue else { return false }
            if regexes[pattern] == nil { regexes[pattern] = try Regex(pattern) }
            return try regexes[pattern].map { text.firstMatch(of: $0) != nil } ?? false
        case "$veq", "$vne", "$vgt", "$vgte", "$vlt", "$vlte":
            guard case .string(let a)? = actual, let b = expected.stringValue else { return op == "$vne" }
            let (x, y) = (padded(a), padded(b))
            switch op {
            case "$veq": return x == y
            case "$vne": return x != y
            case "$vgt": return x > y
            case "$vgte": return x >= y
            case "$vlt": return x < y
            default: return x <= y
            }
        default:
            throw Unsupported()
        }
    }

    /// paddedVersionString for the ASCII versions the regex admits (compared by code point).
    static func padded(_ input: String) -> [UInt32] {
        var text = Substring(input.isEmpty ? "0" : input)
        if text.first == "v" { text = text.dropFirst() }
        if let plus = text.firstIndex(of: "+") { text = text[..<plus] }
        var parts = text.split(omittingEmptySubsequences: false) { $0 == "." || $0 == "-" }.map(String.init)
        if parts.count == 3 { parts.append("~") }
        let joined = parts.map { part in
            !part.isEmpty && part.allSatisfy(\.isNumber) ? String(repeating: " ", count: max(0, 5 - part.count)) + part : part
        }.joined(separator: "-")
        return joined.unicodeScalars.map(\.value)
    }
}

extension Array: @retroactive Comparable where Element == UInt32 {
    public static func < (lhs: [UInt32], rhs: [UInt32]) -> Bool { lhs.lexicographicallyPrecedes(rhs) }
}
