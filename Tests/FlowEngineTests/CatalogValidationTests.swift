// CatalogValidationTests: problems across definitions — unknown flows, cycles, a missing root — with their paths.

import Testing

import FlowEngine

struct CatalogValidationTests {
    private func parsed(_ documents: [(String, String)]) -> (FlowCatalog, [DefinitionProblem]) {
        FlowCatalog.parse(documents.map { ($0.0, Array($0.1.utf8)) })
    }

    private static let app = #"{"name": "app", "kind": "stacked", "initial": ["a"]}"#

    static let cases: [([(String, String)], [String])] = [
        ([("app", #"{"name": "app", "kind": "stacked", "initial": [{"flow": "ghost"}]}"#)], ["/app/initial/0/flow"]),
        ([("app", #"{"name": "app", "kind": "stacked", "initial": ["a"], "on": {"x": [{"do": [{"present": "ghost"}]}]}}"#)],
         ["/app/on/x/0/do/0/present"]),
        ([("app", #"{"name": "app", "kind": "stacked", "initial": ["a"], "on": {"x": [{"do": [{"present": {"flow": "ghost"}}]}]}}"#)],
         ["/app/on/x/0/do/0/present/flow"]),
        ([("app", #"{"name": "app", "kind": "stacked", "initial": ["a"], "on": {"x": [{"do": [{"push": {"flow": "ghost"}}]}]}}"#)],
         ["/app/on/x/0/do/0/push/flow"]),
        ([("app", #"{"name": "app", "kind": "stacked", "initial": ["a"], "on": {"x": [{"do": [{"replaceRoot": "ghost"}]}]}}"#)],
         ["/app/on/x/0/do/0/replaceRoot"]),
        ([("app", #"{"name": "app", "kind": "stacked", "initial": ["a"], "on": {"x": [{"do": [{"setRoot": {"flow": "ghost"}}]}]}}"#)],
         ["/app/on/x/0/do/0/setRoot/flow"]),
        ([("app", #"{"name": "app", "kind": "stacked", "initial": ["a"], "on": {"x": [{"via": ["ghost"], "do": [{"pop": {}}]}]}}"#)],
         ["/app/on/x/0/via/0"]),
        ([("app", app), ("a", #"{"name": "a", "kind": "stacked", "initial": [{"flow": "a"}]}"#)], ["/a/initial/0/flow"]),
        ([("app", app),
          ("a", #"{"name": "a", "kind": "stacked", "initial": ["s", {"flow": "b"}]}"#),
          ("b", #"{"name": "b", "kind": "tabbed", "initial": ["t", {"flow": "c", "when": {"flag": "f", "is": true}}]}"#),
          ("c", #"{"name": "c", "kind": "stacked", "initial": [{"flow": "a"}]}"#)],
         ["/a/initial/1/flow", "/b/initial/1/flow", "/c/initial/0/flow"]),
        ([("home", #"{"name": "home", "kind": "stacked", "initial": ["a"]}"#)], ["/app"]),
        ([("app", app), ("other", #"{"name": "another", "kind": "stacked", "initial": ["a"]}"#)], ["/other/name"]),
        ([("app", app), ("bad", #"{"name": "bad", "kind": "stacked", "initial": []}"#)], ["/bad/initial"]),
    ]

    /// Each catalog-level problem is reported with its path prefixed by the flow's name.
    @Test(arguments: cases)
    func reportsProblemAtPath(documents: [(String, String)], expectedPaths: [String]) {
        let (_, problems) = parsed(documents)
        #expect(problems.map(\.path).sorted() == expectedPaths.sorted(), "\(problems)")
    }

    /// A cycle is described by the flows along it.
    @Test func describesCycle() {
        let (_, problems) = parsed([
            ("app", Self.app),
            ("a", #"{"name": "a", "kind": "stacked", "initial": [{"flow": "b"}]}"#),
            ("b", #"{"name": "b", "kind": "stacked", "initial": [{"flow": "a"}]}"#),
        ])
        let message = problems.first { $0.path == "/a/initial/0/flow" }?.message ?? ""
        #expect(message.contains("a → b → a"), "\(message)")
    }

    /// `problems(for:)` gives one flow's catalog problems with paths relative to its definition.
    @Test func problemsForOneFlowAreRelative() throws {
        var catalog = Fixtures.sampleCatalog
        let broken = try FlowDefinition.parse(Array(#"{"name": "modal", "kind": "stacked", "initial": [{"flow": "nowhere"}]}"#.utf8))
        catalog.insert(broken)
        #expect(catalog.problems(for: "modal").map(\.path) == ["/initial/0/flow"])
        #expect(catalog.problems(for: "home").isEmpty)
        #expect(catalog.validate().map(\.path) == ["/modal/initial/0/flow"])
    }

    /// The shipped sample app is valid.
    @Test func sampleAppIsValid() {
        #expect(Fixtures.sampleCatalog.validate().isEmpty)
        #expect(Fixtures.sampleCatalog.names == ["address", "app", "checkout", "home", "login", "modal", "onboarding", "paywall"])
    }
}
