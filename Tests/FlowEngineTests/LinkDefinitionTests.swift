// LinkDefinitionTests: reading `links` — every problem at its JSON Pointer, and checks across the catalog.

import Testing

import FlowEngine

/// A root flow document with `links` (a JSON array) and one action `t.go`.
private func app(links: String, name: String = "app") -> String {
    #"{"name": "\#(name)", "kind": "stacked", "initial": ["a"], "on": {"t.go": [{"do": [{"push": "b"}]}]}, "links": \#(links)}"#
}

struct LinkDefinitionTests {
    static let problemCases: [(String, [String])] = [
        (app(links: "[]", name: "home"), ["/links"]),
        (app(links: #"[{"pattern": "/a"}]"#, name: "home"), ["/links"]),
        (app(links: #"{"pattern": "/a"}"#), ["/links"]),
        (app(links: #"["/a"]"#), ["/links/0"]),
        (app(links: #"[{"actions": []}]"#), ["/links/0"]),
        (app(links: #"[{"pattern": 5}]"#), ["/links/0/pattern"]),
        (app(links: #"[{"pattern": "a/b"}]"#), ["/links/0/pattern"]),
        (app(links: #"[{"pattern": ""}]"#), ["/links/0/pattern"]),
        (app(links: #"[{"pattern": "//a"}]"#), ["/links/0/pattern"]),
        (app(links: #"[{"pattern": "/a b"}]"#), ["/links/0/pattern"]),
        (app(links: #"[{"pattern": "/a/x{y}"}]"#), ["/links/0/pattern"]),
        (app(links: #"[{"pattern": "/a/{y}z"}]"#), ["/links/0/pattern"]),
        (app(links: #"[{"pattern": "/a/{}"}]"#), ["/links/0/pattern"]),
        (app(links: #"[{"pattern": "/a/{1y}"}]"#), ["/links/0/pattern"]),
        (app(links: #"[{"pattern": "/a/{y-z}"}]"#), ["/links/0/pattern"]),
        (app(links: #"[{"pattern": "/a/{y}/{y}"}]"#), ["/links/0/pattern"]),
        (app(links: #"[{"pattern": "/a/{y}?k={y}"}]"#), ["/links/0/pattern"]),
        (app(links: #"[{"pattern": "/a?{k}=v"}]"#), ["/links/0/pattern"]),
        (app(links: #"[{"pattern": "/a?k"}]"#), ["/links/0/pattern"]),
        (app(links: #"[{"pattern": "/a?=v"}]"#), ["/links/0/pattern"]),
        (app(links: #"[{"pattern": "/a?k={x}&k=1"}]"#), ["/links/0/pattern"]),
        (app(links: #"[{"pattern": "/a?k=x{y}"}]"#), ["/links/0/pattern"]),
        (app(links: #"[{"pattern": "/a#top"}]"#), ["/links/0/pattern"]),
        (app(links: #"[{"pattern": "/a/%zz"}]"#), ["/links/0/pattern"]),
        (app(links: #"[{"pattern": "myapp:/a"}]"#), ["/links/0/pattern"]),
        (app(links: #"[{"pattern": "myapp://host:80/a"}]"#), ["/links/0/pattern"]),
        (app(links: #"[{"pattern": "myapp:///a"}]"#), ["/links/0/pattern"]),
        (app(links: #"[{"pattern": "my app://h/a"}]"#), ["/links/0/pattern"]),
        (app(links: #"[{"pattern": "/a", "path": "/a"}]"#), ["/links/0/path"]),
        (app(links: #"[{"pattern": "/a", "description": 1}]"#), ["/links/0/description"]),
        (app(links: #"[{"pattern": "/a/{x}", "params": ["x"]}]"#), ["/links/0/params"]),
        (app(links: #"[{"pattern": "/a/{x}", "params": {"y": "integer"}}]"#), ["/links/0/params/y"]),
        (app(links: #"[{"pattern": "/a/{x}", "params": {"x": "object"}}]"#), ["/links/0/params/x"]),
        (app(links: #"[{"pattern": "/a/{x}", "params": {"x": "integer?"}}]"#), ["/links/0/params/x"]),
        (app(links: #"[{"pattern": "/a/{x}", "params": {"x": 1}}]"#), ["/links/0/params/x"]),
        (app(links: #"[{"pattern": "/a", "when": {"user": "onboarded"}}]"#), ["/links/0/when"]),
        (app(links: #"[{"pattern": "/a/{x}", "when": {"param": "y", "is": 1}}]"#), ["/links/0/when/param"]),
        (app(links: #"[{"pattern": "/a/{x}", "when": {"all": [{"param": "x", "is": 1}, {"not": {"param": "z", "exists": true}}]}}]"#),
         ["/links/0/when/all/1/not/param"]),
        (app(links: #"[{"pattern": "/a", "actions": {"type": "t.go"}}]"#), ["/links/0/actions"]),
        (app(links: #"[{"pattern": "/a", "actions": ["t.go"]}]"#), ["/links/0/actions/0"]),
        (app(links: #"[{"pattern": "/a", "actions": [{"params": {}}]}]"#), ["/links/0/actions/0"]),
        (app(links: #"[{"pattern": "/a", "actions": [{"type": ""}]}]"#), ["/links/0/actions/0/type"]),
        (app(links: #"[{"pattern": "/a", "actions": [{"type": "t.go", "from": "e1"}]}]"#), ["/links/0/actions/0/from"]),
        (app(links: #"[{"pattern": "/a", "actions": [{"type": "t.go", "interactive": true}]}]"#), ["/links/0/actions/0/interactive"]),
        (app(links: #"[{"pattern": "/a", "actions": [{"type": "link", "params": {"uri": "/b"}}]}]"#), ["/links/0/actions/0/type"]),
        (app(links: #"[{"pattern": "/a", "actions": [{"type": "link.cancel"}]}]"#), ["/links/0/actions/0/type"]),
        (app(links: #"[{"pattern": "/a", "actions": [{"type": "interaction.end"}]}]"#), ["/links/0/actions/0/type"]),
        (app(links: #"[{"pattern": "/a", "actions": [{"type": "t.go", "params": 1}]}]"#), ["/links/0/actions/0/params"]),
        (app(links: #"[{"pattern": "/a/{x}", "actions": [{"type": "t.go", "params": {"v": {"$link": "y"}}}]}]"#),
         ["/links/0/actions/0/params/v/$link"]),
        (app(links: #"[{"pattern": "/a/{x}", "actions": [{"type": "t.go", "params": {"v": [{"deep": {"$link": "y"}}]}}]}]"#),
         ["/links/0/actions/0/params/v/0/deep/$link"]),
        (app(links: #"[{"pattern": "/a/{x}", "actions": [{"type": "t.go", "params": {"v": {"$link": "x", "or": 1}}}]}]"#),
         ["/links/0/actions/0/params/v"]),
        (app(links: #"[{"pattern": "/a/{x}", "actions": [{"type": "t.go", "params": {"v": {"$link": 1}}}]}]"#),
         ["/links/0/actions/0/params/v"]),
        (app(links: #"[{"pattern": "/a/{x}", "actions": [{"type": "t.go", "params": {"v": {"$param": "x"}}}]}]"#),
         ["/links/0/actions/0/params/v"]),
        (app(links: #"[{"pattern": "/a/{x}"}, {"pattern": "/a/{y}", "params": {"y": "integer"}}]"#), ["/links/1/pattern"]),
        (app(links: #"[{"pattern": "/a/b/"}, {"pattern": "/a//b"}]"#), ["/links/1/pattern"]),
        (app(links: #"[{"pattern": "/a?k={x}&j=1"}, {"pattern": "/a?j=1&k={y}"}]"#), ["/links/1/pattern"]),
        (app(links: #"[{"pattern": "myapp://H/a"}, {"pattern": "MYAPP://h/a"}]"#), ["/links/1/pattern"]),
        (app(links: #"[{"pattern": "/x"}, {"pattern": "/a/{x}"}, {"pattern": "/a/{y}"}, {"pattern": "/a/{z}"}]"#), ["/links/2/pattern", "/links/3/pattern"]),
        (app(links: #"[{"pattern": "/a/{x}"}, {"pattern": "/a/b"}]"#), []),
        (app(links: #"[{"pattern": "/a/{x}"}, {"pattern": "/{x}/a"}]"#), []),
        (app(links: #"[{"pattern": "/a"}, {"pattern": "myapp://h/a"}]"#), []),
        (app(links: #"[{"pattern": "/a?k=1"}, {"pattern": "/a?k=2"}, {"pattern": "/a?k={v}"}, {"pattern": "/a"}]"#), []),
        (app(links: #"[{"pattern": "/a/{x}", "params": {"x": "boolean"}, "when": {"param": "x", "is": true}, "actions": [{"type": "t.go", "params": {"v": {"$link": "x"}}}], "description": "ok"}]"#), []),
        (#"{"name": "t", "kind": "stacked", "initial": ["a"], "on": {"link": [{"do": [{"pop": {}}]}]}}"#, ["/on/link"]),
        (#"{"name": "t", "kind": "stacked", "initial": ["a"], "on": {"link.cancel": [{"do": [{"pop": {}}]}]}}"#, ["/on/link.cancel"]),
        (app(links: #"[{"pattern": "/a", "pattern2": 1, "actions": [{"type": "t.go", "from": "x"}]}, {"pattern": "b"}]"#),
         ["/links/0/pattern2", "/links/0/actions/0/from", "/links/1/pattern"]),
    ]

    /// Each problem of `links` is reported at its exact path, all of them at once.
    @Test(arguments: problemCases)
    func reportsProblemAtPath(document: String, expectedPaths: [String]) {
        let problems = Fixtures.problems(document)
        #expect(problems.map(\.path).sorted() == expectedPaths.sorted(), "\(problems)")
        for problem in problems { #expect(!problem.message.isEmpty) }
    }

    /// Messages name what is wrong: the other pattern of a duplicate, the placeholders a `$link` may use.
    @Test func messagesAreHelpful() {
        let duplicate = Fixtures.problems(app(links: #"[{"pattern": "/a/{x}"}, {"pattern": "/a/{y}"}]"#)).first?.message ?? ""
        #expect(duplicate.contains("/links/0/pattern") && duplicate.contains("/a/{x}"), "\(duplicate)")
        let reference = Fixtures.problems(app(links: #"[{"pattern": "/a/{x}", "actions": [{"type": "t.go", "params": {"v": {"$link": "y"}}}]}]"#)).first?.message ?? ""
        #expect(reference.contains("{x}") && reference.contains("\"y\""), "\(reference)")
        let nonRoot = Fixtures.problems(app(links: "[]", name: "home")).first?.message ?? ""
        #expect(nonRoot.contains("app"))
        let brace = Fixtures.problems(app(links: #"[{"pattern": "/a/x{y}"}]"#)).first?.message ?? ""
        #expect(brace.contains("whole segment"), "\(brace)")
    }

    /// A link whose action no flow of the catalog names is a catalog problem at its type;
    /// generic `back` and types named by any flow are fine.
    @Test func unknownActionTypesAreCatalogProblems() throws {
        let documents: [(String, [UInt8])] = [
            ("app", Array(app(links: #"[{"pattern": "/a", "actions": [{"type": "t.go"}, {"type": "back"}, {"type": "other.open"}, {"type": "t.nope"}]}]"#).utf8)),
            ("other", Array(#"{"name": "other", "kind": "stacked", "initial": ["o"], "on": {"other.open": [{"do": [{"push": "p"}]}]}}"#.utf8)),
        ]
        let (catalog, problems) = FlowCatalog.parse(documents)
        #expect(problems.map(\.path) == ["/app/links/0/actions/3/type"])
        #expect(problems.first?.message.contains("t.nope") == true)
        #expect(catalog.problems(for: "app").map(\.path) == ["/links/0/actions/3/type"])
        #expect(catalog.problems(for: "other").isEmpty)
    }

    /// A Swift delegate may handle any type, so with one registered, types are not checked.
    @Test func delegatesMayHandleAnyType() throws {
        struct Anything: FlowActionDelegate {
            func process(_ request: FlowDelegateRequest) throws(FlowError) -> FlowDelegateDecision { .useDefinition }
        }
        var catalog = FlowCatalog([try FlowDefinition.parse(Array(app(links: #"[{"pattern": "/a", "actions": [{"type": "t.nope"}]}]"#).utf8))])
        #expect(catalog.validate().count == 1)
        catalog.register(Anything(), for: "app")
        #expect(catalog.validate().isEmpty)
    }

    /// Links are part of what a definition means: equal documents give equal definitions, a
    /// different link set a different one, and the code-built init takes links.
    @Test func linksTakePartInEquality() throws {
        let one = try FlowDefinition.parse(Array(app(links: #"[{"pattern": "/a"}]"#).utf8))
        let same = try FlowDefinition.parse(Array(app(links: #"[ {"pattern": "/a"} ]"#).utf8))
        let other = try FlowDefinition.parse(Array(app(links: #"[{"pattern": "/b"}]"#).utf8))
        #expect(one == same)
        #expect(one != other)
        #expect(one.links.map(\.pattern.text) == ["/a"])
        let built = FlowDefinition(
            name: "app", kind: .stacked, initial: [.init(target: .screen(feature: "a", params: [:]))],
            handlers: one.handlers, links: [FlowLink(pattern: try LinkPattern("/a"))])
        #expect(built == one)
        #expect(FlowDefinition(name: "app", kind: .stacked, initial: one.initial, handlers: one.handlers).links.isEmpty)
    }

    /// The sample app's links read as written, and the sample catalog stays valid.
    @Test func sampleLinks() throws {
        let links = try #require(Fixtures.sampleCatalog["app"]?.links)
        #expect(links.map(\.pattern.text) == ["/home", "/home/{tab}", "/modal/{content}"])
        #expect(links[1].params == [FlowRule.Param(name: "tab", type: .integer)])
        #expect(links[0].when == nil && links[0].actions.isEmpty)
        #expect(links[2].actions.map(\.type) == ["home.presentModal"])
        #expect(Fixtures.sampleCatalog.validate().isEmpty)
    }
}
