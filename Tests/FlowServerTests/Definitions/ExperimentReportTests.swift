// The experiment report's statistics over the API: the metric, the baseline, the SRM warning, refusals.
import ExperimentStats
import FlowServer
import HTTPServer
import HTTPTestClient
import JSON
import Testing

struct ExperimentReportTests {
    static let admin = FlowAdminTests.admin
    static let fiftyFifty = #"{"variants": [{"key": "control", "weight": 0.5}, {"key": "treatment", "weight": 0.5}]}"#

    /// Sessions for `users` users in experiment `key`; in control every seventh user stops on the
    /// first screen and every third on the second, in treatment every fifth stops on the first.
    /// Returns the sessions of each variant.
    @discardableResult
    static func walk(_ test: TestApp, users: Int, key: String = "exp") throws -> [String: Int] {
        let client = SessionClient(sender: test.direct)
        var counts: [String: Int] = [:]
        for index in 0..<users {
            let session = try client.create(userId: "\(key)-user-\(index)")
            let variant = session.state["experiments"][key].stringValue ?? "none"
            counts[variant, default: 0] += 1
            if (variant == "treatment" && index % 5 == 0) || (variant == "control" && index % 7 == 0) { continue }
            try client.apply(session, #"{"type":"onboarding.showSecond"}"#)
            if variant == "control" && index % 3 == 0 { continue }
            try client.apply(session, #"{"type":"onboarding.completed"}"#)
        }
        return counts
    }

    static func report(_ test: TestApp, _ query: String = "", key: String = "exp") throws -> Response {
        try test.direct.send("GET", "/v1/experiments/\(key)/report\(query)", headers: admin)
    }

    /// The analysis of what the report counted, computed directly: the route must serve exactly it.
    static func expected(_ report: JSONValue, metric: String, baseline: Int, weights: [Double?]) -> ExperimentAnalysis {
        let variants = (report["variants"].arrayValue ?? []).enumerated().map { index, variant in
            ExperimentAnalysis.Variant(
                key: variant["key"].stringValue ?? "", units: variant["sessions"].integerValue ?? -1,
                conversions: (metric == "onboarded" ? variant["onboarded"] : variant["funnel"][metric]).integerValue ?? 0,
                weight: weights[index])
        }
        return ExperimentAnalysis(variants: variants, baseline: baseline)
    }

    static func comparison(_ analysis: ExperimentAnalysis, _ index: Int) -> JSONValue {
        var writer = JSONWriter()
        writer.beginObject()
        analysis.writeMembers(ofVariant: index, to: &writer)
        writer.endObject()
        return ((try? JSONParser.parse(writer.takeBytes())) ?? .null)["comparison"]
    }

    /// By default the report converts on onboarding against the first variant: each variant has
    /// its conversions, rate and (but the baseline) a comparison equal to the analysis of its
    /// counts; the SRM check is quiet on a fair split; the counts of before are all still there.
    @Test func defaultMetricAndBaseline() throws {
        let test = try TestApp()
        #expect(try test.direct.send("PUT", "/v1/experiments/exp", body: Self.fiftyFifty, headers: Self.admin).status == 201)
        let counts = try Self.walk(test, users: 60)
        let response = try Self.report(test)
        #expect(response.status == 200)
        let report = response.json
        #expect(report["experiment"] == "exp")
        #expect(report["metric"] == "onboarded")
        #expect(report["metrics"] == ["onboarded", "home.first", "onboarding.first", "onboarding.second"])
        #expect(report["baseline"] == "control")
        let analysis = Self.expected(report, metric: "onboarded", baseline: 0, weights: [0.5, 0.5])
        for (index, key) in ["control", "treatment"].enumerated() {
            let variant = report["variants"][index]
            #expect(variant["key"].stringValue == key)
            #expect(variant["sessions"].integerValue == counts[key])
            #expect(variant["funnel"]["onboarding.first"].integerValue == counts[key])
            #expect(variant["weight"] == 0.5)
            #expect(variant["conversions"].integerValue == variant["onboarded"].integerValue)
            #expect(variant["rate"].doubleValue == Double(variant["onboarded"].integerValue ?? -1) / Double(counts[key] ?? 1))
            #expect(variant["comparison"] == Self.comparison(analysis, index))
        }
        #expect(report["variants"][0]["comparison"] == .null)
        let comparison: JSONValue = report["variants"][1]["comparison"]
        #expect(comparison["uplift"].doubleValue != nil && comparison["ci"].arrayValue?.count == 2)
        #expect((0...1).contains(comparison["pValue"].doubleValue ?? -1) && (0...1).contains(comparison["chanceToWin"].doubleValue ?? -1))
        #expect(report["srm"]["pValue"].doubleValue == analysis.sampleRatio.pValue)
        #expect(report["srm"]["warning"] == .null)
    }

    /// `?metric=FEATURE` converts on the sessions that showed that screen; `?baseline=` compares
    /// with another variant.
    @Test func featureMetricAndAnotherBaseline() throws {
        let test = try TestApp()
        #expect(try test.direct.send("PUT", "/v1/experiments/exp", body: Self.fiftyFifty, headers: Self.admin).status == 201)
        try Self.walk(test, users: 40)
        let response = try Self.report(test, "?metric=onboarding.second&baseline=treatment")
        #expect(response.status == 200)
        let report = response.json
        #expect(report["metric"] == "onboarding.second")
        #expect(report["baseline"] == "treatment")
        #expect(report["variants"][0]["conversions"].integerValue == report["variants"][0]["funnel"]["onboarding.second"].integerValue)
        #expect(report["variants"][1]["conversions"].integerValue == report["variants"][1]["funnel"]["onboarding.second"].integerValue)
        #expect(report["variants"][1]["comparison"] == .null)
        let analysis = Self.expected(report, metric: "onboarding.second", baseline: 1, weights: [0.5, 0.5])
        #expect(report["variants"][0]["comparison"] == Self.comparison(analysis, 0))
        #expect(report["variants"][0]["comparison"]["uplift"].doubleValue != nil)
    }

    /// A metric no session reached and a variant that does not exist are 400, naming what there is.
    @Test func unknownMetricOrBaseline() throws {
        let test = try TestApp()
        #expect(try test.direct.send("PUT", "/v1/experiments/exp", body: Self.fiftyFifty, headers: Self.admin).status == 201)
        try Self.walk(test, users: 6)
        let metric = try Self.report(test, "?metric=checkout")
        #expect(metric.status == 400)
        #expect(metric.json["detail"].stringValue?.contains("onboarded, home.first, onboarding.first, onboarding.second") == true)
        #expect(metric.json["errors"][0]["pointer"] == "metric")
        let baseline = try Self.report(test, "?baseline=nobody")
        #expect(baseline.status == 400)
        #expect(baseline.json["detail"].stringValue?.contains("control, treatment") == true)
        #expect(baseline.json["errors"][0]["pointer"] == "baseline")
        // Before any session, onboarded is the only metric, and every comparison says why it has no numbers.
        #expect(try test.direct.send("PUT", "/v1/experiments/empty", body: Self.fiftyFifty, headers: Self.admin).status == 201)
        let empty = try Self.report(test, key: "empty").json
        #expect(empty["metrics"] == ["onboarded"])
        #expect(empty["variants"][0]["rate"] == .null)
        #expect(empty["variants"][1]["comparison"]["error"] == "ZERO_NEGATIVE_BASELINE_VARIATION")
        #expect(empty["variants"][1]["comparison"]["reason"].stringValue?.contains("no sessions yet") == true)
        #expect(empty["srm"]["pValue"] == 1)
        #expect(try Self.report(test, "?metric=onboarding.first", key: "empty").status == 400)
    }

    /// Weights changed under a running experiment: the sessions no longer match them, and the
    /// report warns; a variant dropped from the definition is still listed, without a weight, and
    /// left out of the check.
    @Test func sampleRatioMismatchWarns() throws {
        let test = try TestApp()
        #expect(try test.direct.send("PUT", "/v1/experiments/exp", body: Self.fiftyFifty, headers: Self.admin).status == 201)
        let counts = try Self.walk(test, users: 80)
        let skewed = #"{"variants": [{"key": "control", "weight": 0.5}, {"key": "other", "weight": 0.5}]}"#
        #expect(try test.direct.send("PUT", "/v1/experiments/exp", body: skewed, headers: Self.admin).status == 200)
        let report = try Self.report(test).json
        #expect(report["variants"].arrayValue?.compactMap { $0["key"].stringValue } == ["control", "other", "treatment"])
        #expect(report["variants"][1]["sessions"] == 0)
        #expect(report["variants"][2]["weight"] == .null)
        #expect(report["variants"][2]["sessions"].integerValue == counts["treatment"])
        let check = SampleRatioCheck(units: [counts["control"] ?? 0, 0], weights: [0.5, 0.5])
        #expect(report["srm"]["pValue"].doubleValue == check.pValue)
        #expect((check.pValue ?? 1) < 0.001)
        #expect(report["srm"]["warning"].stringValue?.hasPrefix("sample ratio mismatch: sessions split 100%/0% where the weights ask for 50%/50%") == true)
        // One configured variant: no split to check.
        #expect(try test.direct.send("PUT", "/v1/experiments/exp", body: #"{"variants": [{"key": "control"}]}"#, headers: Self.admin).status == 200)
        let alone = try Self.report(test).json
        #expect(alone["srm"]["pValue"] == .null)
        #expect(alone["srm"]["reason"].stringValue != nil)
    }

    /// The playground's report page, its script and style are served from the binary.
    @Test func reportPageIsServed() throws {
        let test = try TestApp()
        let page = try test.direct.send("GET", "/playground/report.html")
        #expect(page.status == 200)
        #expect(page.text.contains("/playground/report.js") && page.text.contains("data-testid=\"srm\""))
        #expect(try test.direct.send("GET", "/playground/report.js").status == 200)
        #expect(try test.direct.send("GET", "/playground/report.css").status == 200)
        #expect(try test.direct.send("GET", "/").text.contains("/playground/report.html"))
    }
}
