// Flags read from files for offline flow tests (`flowstack flows test --flags`).
import FlowServer
import JSON
import Testing

struct ScenarioFlagsTests {
    /// A flag file is evaluated for each scenario's context, as for a new session: its rules
    /// decide, and a flag no file defines has no value.
    @Test func flagFilesAreEvaluatedPerContext() {
        let tour = #"{"variants": {"on": true, "off": false}, "defaultVariant": "off", "rules": [{"when": {"attribute": "country", "in": ["FR"]}, "variant": "on"}]}"#
        let (values, problems) = ScenarioFlags.read([(key: "onboarding-tour", bytes: Array(tour.utf8))])
        #expect(problems.isEmpty)
        #expect(values("amelie", ["country": "FR"]) == ["onboarding-tour": true])
        #expect(values("hans", ["country": "DE"]) == ["onboarding-tour": false])
        #expect(values("hans", [:])["eu-face-scan"] == nil)
    }

    /// A file that is not JSON, or not a flag, is a problem with its key and pointer, and is left out.
    @Test func badFlagFilesAreProblems() {
        let (values, problems) = ScenarioFlags.read([
            (key: "broken", bytes: Array("{".utf8)),
            (key: "wrong", bytes: Array(#"{"variants": {"on": true}, "defaultVariant": "missing"}"#.utf8)),
        ])
        #expect(problems.map(\.key) == ["broken", "wrong"])
        #expect(problems.allSatisfy { $0.pointer.hasPrefix("/") && !$0.message.isEmpty })
        #expect(values("u", [:]).isEmpty)
    }
}
