// ExperimentAnalysis+JSON: counts read from JSON, and the analysis written as the report's members.

import JSON

/// Counts that cannot be analysed, each problem with the JSON Pointer of the value at fault.
public struct InvalidAnalysisInput: Error, Sendable, Equatable {
    public var problems: [(pointer: String, message: String)]

    public static func == (lhs: InvalidAnalysisInput, rhs: InvalidAnalysisInput) -> Bool {
        lhs.problems.map(\.pointer) == rhs.problems.map(\.pointer) && lhs.problems.map(\.message) == rhs.problems.map(\.message)
    }
}

extension ExperimentAnalysis {
    /// Reads `{"variants": [{"key", "sessions", "conversions", "weight"?}, …], "baseline"?: KEY}`
    /// (the baseline defaults to the first variant) and analyses it; every problem is reported.
    ///
    /// ```swift
    /// try ExperimentAnalysis.read(JSONParser.parse(#"{"variants": [{"key": "a", "sessions": 100, "conversions": 10, "weight": 0.5},"#
    ///     + #"{"key": "b", "sessions": 100, "conversions": 15, "weight": 0.5}]}"#))
    /// ```
    public static func read(_ json: JSONValue) throws(InvalidAnalysisInput) -> ExperimentAnalysis {
        var problems: [(pointer: String, message: String)] = []
        func report(_ path: JSONPointer, _ message: String) { problems.append((path.description, message)) }
        guard let object = json.objectValue else {
            throw InvalidAnalysisInput(problems: [("", "expected an object {\"variants\": [...], \"baseline\"?: KEY}; found \(json.typeName)")])
        }
        for key in object.keys where !["variants", "baseline"].contains(key) {
            report(JSONPointer([key]), "unknown member; expected variants, baseline")
        }
        var variants: [Variant] = []
        var keys: Set<String> = []
        if let elements = object["variants"]?.arrayValue, !elements.isEmpty {
            for (index, element) in elements.enumerated() {
                let path = JSONPointer(["variants", String(index)])
                guard let member = element.objectValue else {
                    report(path, "expected {\"key\", \"sessions\", \"conversions\", \"weight\"?}; found \(element.typeName)")
                    continue
                }
                for key in member.keys where !["key", "sessions", "conversions", "weight"].contains(key) {
                    report(path.appending(key), "unknown member; expected key, sessions, conversions, weight")
                }
                let key = member["key"]?.stringValue
                if key == nil { report(path.appending("key"), "expected a string") }
                if let key, !keys.insert(key).inserted { report(path.appending("key"), "a second variant \(key)") }
                let sessions = member["sessions"]?.integerValue.flatMap { $0 >= 0 ? $0 : nil }
                if sessions == nil { report(path.appending("sessions"), "expected a whole number ≥ 0") }
                let conversions = member["conversions"]?.integerValue.flatMap { $0 >= 0 ? $0 : nil }
                if conversions == nil {
                    report(path.appending("conversions"), "expected a whole number ≥ 0")
                } else if let sessions, let conversions, conversions > sessions {
                    report(path.appending("conversions"), "\(conversions) conversions is more than the \(sessions) sessions")
                }
                var weight: Double?
                if let value = member["weight"], !value.isNull {
                    weight = value.doubleValue.flatMap { $0 >= 0 && $0.isFinite ? $0 : nil }
                    if weight == nil { report(path.appending("weight"), "expected a number ≥ 0") }
                }
                if let key, let sessions, let conversions {
                    variants.append(Variant(key: key, units: sessions, conversions: conversions, weight: weight))
                }
            }
        } else {
            report(JSONPointer(["variants"]), "expected a non-empty array of {\"key\", \"sessions\", \"conversions\", \"weight\"?}")
        }
        var baseline = 0
        if let value = object["baseline"], !value.isNull {
            if let key = value.stringValue, let index = variants.firstIndex(where: { $0.key == key }) {
                baseline = index
            } else {
                report(JSONPointer(["baseline"]), "expected the key of a variant (\(variants.map(\.key).joined(separator: ", "))); found \(value.abbreviatedJSON())")
            }
        }
        guard problems.isEmpty else { throw InvalidAnalysisInput(problems: problems) }
        return ExperimentAnalysis(variants: variants, baseline: baseline)
    }

    /// The whole analysis: `{"baseline", "variants": [{"key", "sessions", …members}], "srm"}`,
    /// what `flowstack experiments stats --json` prints.
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey("baseline")
        writer.writeString(variants[baseline].key)
        writer.writeKey("variants")
        writer.beginArray()
        for index in variants.indices {
            writer.beginObject()
            writer.writeKey("key")
            writer.writeString(variants[index].key)
            writer.writeKey("sessions")
            writer.writeInteger(variants[index].units)
            writeMembers(ofVariant: index, to: &writer)
            writer.endObject()
        }
        writer.endArray()
        writer.writeKey("srm")
        writeSampleRatio(to: &writer)
        writer.endObject()
    }

    /// A variant's members after its key and counts, inside its open object: `weight` (when
    /// configured), `conversions`, `rate` (null without sessions), and, except for the baseline,
    /// `comparison`: `{uplift, ci: [lower, upper], pValue, chanceToWin}`, or `{error, reason}`.
    public func writeMembers(ofVariant index: Int, to writer: inout JSONWriter) {
        let variant = variants[index]
        if let weight = variant.weight {
            writer.writeKey("weight")
            writer.writeNumber(weight)
        }
        writer.writeKey("conversions")
        writer.writeInteger(variant.conversions)
        writer.writeKey("rate")
        if let rate = variant.rate { writer.writeNumber(rate) } else { writer.writeNull() }
        guard let comparison = comparisons[index] else { return }
        writer.writeKey("comparison")
        writer.beginObject()
        switch comparison {
        case .estimated(let estimate):
            writer.writeKey("uplift")
            writer.writeNumber(estimate.uplift)
            writer.writeKey("ci")
            writer.beginArray()
            writer.writeNumber(estimate.lower)
            writer.writeNumber(estimate.upper)
            writer.endArray()
            writer.writeKey("pValue")
            writer.writeNumber(estimate.pValue)
            writer.writeKey("chanceToWin")
            writer.writeNumber(estimate.chanceToWin)
        case .unavailable(let problem):
            writer.writeKey("error")
            writer.writeString(problem.code.rawValue)
            writer.writeKey("reason")
            writer.writeString(problem.reason)
        }
        writer.endObject()
    }

    /// `{"pValue": p}`, with `"warning"` below 0.001; or `{"pValue": null, "reason"}`.
    public func writeSampleRatio(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey("pValue")
        if let pValue = sampleRatio.pValue { writer.writeNumber(pValue) } else { writer.writeNull() }
        if let warning = sampleRatio.warning {
            writer.writeKey("warning")
            writer.writeString(warning)
        }
        if let reason = sampleRatio.reason {
            writer.writeKey("reason")
            writer.writeString(reason)
        }
        writer.endObject()
    }
}
