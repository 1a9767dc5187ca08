// DefinitionTests: reading flow definitions — every problem kind reported at its exact JSON Pointer.

import Testing

import FlowEngine

/// A definition document around `on` (and optionally other parts), for compact tables.
private func document(
    kind: String = "stacked", initial: String = #"["a"]"#, on: String = "{}", extra: String = ""
) -> String {
    #"{"name": "t", "kind": "\#(kind)", "initial": \#(initial), "on": \#(on)\#(extra)}"#
}

/// A document with one action `x` whose rules are `rules`.
private func rules(_ rules: String, kind: String = "stacked", initial: String = #"["a"]"#) -> String {
    document(kind: kind, initial: initial, on: #"{"x": \#(rules)}"#)
}

struct DefinitionTests {
    static let problemCases: [(String, [String])] = [
        ("[]", [""]),
        (#"{"kind": "stacked", "initial": ["a"]}"#, ["/name"]),
        (#"{"name": "a b", "kind": "stacked", "initial": ["a"]}"#, ["/name"]),
        (document(kind: "stack"), ["/kind"]),
        (#"{"name": "t", "kind": "stacked"}"#, ["/initial"]),
        (document(initial: "[]"), ["/initial"]),
        (document(kind: "tabbed", initial: "[]"), ["/initial"]),
        (document(initial: "[5]"), ["/initial/0"]),
        (document(initial: #"["a", {"screen": "b", "flow": "c"}]"#), ["/initial/1"]),
        (document(initial: #"[{"flow": "x y"}]"#), ["/initial/0/flow"]),
        (document(initial: #"[{"screen": "a", "when": {"flag": "f"}}]"#), ["/initial/0/when"]),
        (document(initial: #"[{"screen": "a", "params": {"x": {"$param": "y"}}}]"#), ["/initial/0/params/x"]),
        (document(initial: #"[{"screen": "a", "tag": 1}]"#), ["/initial/0/tag"]),
        (document(extra: #", "selected": 0"#), ["/selected"]),
        (document(kind: "tabbed", initial: #"["a", "b"]"#, extra: #", "selected": 2"#), ["/selected"]),
        (document(extra: #", "onn": {}"#), ["/onn"]),
        (document(extra: #", "version": "1""#), ["/version"]),
        (document(on: "[]"), ["/on"]),
        (document(on: #"{"x": []}"#), ["/on/x"]),
        (document(on: #"{"interaction.update": [{"do": [{"pop": {}}]}]}"#), ["/on/interaction.update"]),
        (rules(#"[{"frm": "a", "do": [{"pop": {}}]}]"#), ["/on/x/0/frm"]),
        (rules(#"[{"from": 5, "do": [{"pop": {}}]}]"#), ["/on/x/0/from"]),
        (rules(#"[{"from": ["a", ""], "do": [{"pop": {}}]}]"#), ["/on/x/0/from/1"]),
        (rules(#"[{"interactive": "yes", "do": [{"pop": {}}]}]"#), ["/on/x/0/interactive"]),
        (rules(#"[{"params": {"i": "int"}, "do": [{"pop": {}}]}]"#), ["/on/x/0/params/i"]),
        (rules(#"[{"from": "a"}]"#), ["/on/x/0"]),
        (rules(#"[{"do": []}]"#), ["/on/x/0/do"]),
        (rules(#"[{"do": [{"push": "a", "pop": {}}]}]"#), ["/on/x/0/do/0"]),
        (rules(#"[{"do": ["pop"]}]"#), ["/on/x/0/do/0"]),
        (rules(#"[{"do": [{"pusj": "a"}]}]"#), ["/on/x/0/do/0/pusj"]),
        (rules(#"[{"do": [{"push": 5}]}]"#), ["/on/x/0/do/0/push"]),
        (rules(#"[{"do": [{"push": {"screen": "a", "animated": false}}]}]"#), ["/on/x/0/do/0/push/animated"]),
        (rules(#"[{"do": [{"pop": true}]}]"#), ["/on/x/0/do/0/pop"]),
        (rules(#"[{"do": [{"bubble": {}}, {"pop": {}}]}]"#), ["/on/x/0/do/0/bubble"]),
        (rules(#"[{"do": [{"pop": {}}]}, {"from": "a", "do": [{"pop": {}}]}]"#), ["/on/x/1"]),
        (rules(#"[{"from": ["a", "b"], "do": [{"pop": {}}]}, {"from": "a", "when": {"flag": "f", "is": true}, "do": [{"pop": {}}]}]"#), ["/on/x/1"]),
        (rules(#"[{"from": "a", "when": {"flag": "f", "is": true}, "do": [{"pop": {}}]}, {"from": "a", "do": [{"pop": {}}]}]"#), []),
        (rules(#"[{"from": "a", "do": [{"pop": {}}]}, {"from": "b", "do": [{"pop": {}}]}]"#), []),
        (rules(#"[{"via": 5, "do": [{"pop": {}}]}]"#), ["/on/x/0/via"]),
        (rules(#"[{"via": [], "do": [{"pop": {}}]}]"#), ["/on/x/0/via"]),
        (rules(#"[{"via": ["c", "d e"], "do": [{"pop": {}}]}]"#), ["/on/x/0/via/1"]),
        (rules(#"[{"via": "t", "do": [{"pop": {}}]}]"#), ["/on/x/0/via"]),
        (rules(#"[{"via": "c", "do": [{"pop": {}}]}, {"via": "d", "do": [{"pop": {}}]}]"#), []),
        (rules(#"[{"via": ["c", "d"], "do": [{"pop": {}}]}, {"via": "d", "from": "a", "do": [{"pop": {}}]}]"#), ["/on/x/1"]),
        (rules(#"[{"via": "c", "do": [{"pop": {}}]}, {"do": [{"pop": {}}]}]"#), []),
        (rules(#"[{"do": [{"selectTab": 2}]}]"#, kind: "tabbed", initial: #"["a", "b"]"#), ["/on/x/0/do/0/selectTab"]),
        (rules(#"[{"do": [{"selectTab": -1}]}]"#, kind: "tabbed", initial: #"["a", "b"]"#), ["/on/x/0/do/0/selectTab"]),
        (rules(#"[{"do": [{"selectTab": 0}]}]"#), ["/on/x/0/do/0/selectTab"]),
        (rules(#"[{"do": [{"push": "b"}]}]"#, kind: "tabbed"), ["/on/x/0/do/0/push"]),
        (rules(#"[{"do": [{"replaceRoot": "home"}]}]"#, kind: "tabbed"), ["/on/x/0/do/0/replaceRoot"]),
        (rules(#"[{"do": [{"present": {"flow": "m", "style": "sideways"}}]}]"#), ["/on/x/0/do/0/present/style"]),
        (rules(#"[{"do": [{"present": {"flow": "m", "style": {"compact": "fullScreen"}}}]}]"#), ["/on/x/0/do/0/present/style"]),
        (rules(#"[{"do": [{"present": {"flow": "m", "style": {"compact": "fullScreen", "regular": "big"}}}]}]"#), ["/on/x/0/do/0/present/style/regular"]),
        (rules(#"[{"do": [{"present": {"params": {}}}]}]"#), ["/on/x/0/do/0/present"]),
        (rules(#"[{"do": [{"present": {"flow": "m", "animated": true}}]}]"#), ["/on/x/0/do/0/present/animated"]),
        (rules(#"[{"params": {"w": "string"}, "do": [{"push": {"screen": "b", "params": {"v": {"$param": "v"}}}}]}]"#), ["/on/x/0/do/0/push/params/v/$param"]),
        (rules(#"[{"do": [{"push": {"screen": "b", "params": {"v": {"$param": "v", "default": 1}}}}]}]"#), ["/on/x/0/do/0/push/params/v"]),
        (rules(#"[{"params": {"v": "string?"}, "do": [{"setUser": {"v": {"$param": "v"}}}]}]"#), ["/on/x/0/do/0/setUser/v/$param"]),
        (rules(#"[{"params": {"i": "string"}, "do": [{"selectTab": {"$param": "i"}}]}]"#, kind: "tabbed", initial: #"["a", "b"]"#), ["/on/x/0/do/0/selectTab/$param"]),
        (rules(#"[{"do": [{"setUser": {}}]}]"#), ["/on/x/0/do/0/setUser"]),
        (rules(#"[{"do": [{"popTo": {"id": "x3"}}]}]"#), ["/on/x/0/do/0/popTo/id"]),
        (rules(#"[{"do": [{"popTo": {"feature": "a", "id": "e1"}}]}]"#), ["/on/x/0/do/0/popTo"]),
        (rules(#"[{"when": {"flag": "a", "user": "b", "is": 1}, "do": [{"pop": {}}]}]"#), ["/on/x/0/when"]),
        (rules(#"[{"when": {"flag": "a", "is": 1, "isNot": 2}, "do": [{"pop": {}}]}]"#), ["/on/x/0/when"]),
        (rules(#"[{"when": {"attribute": "country", "in": "DE"}, "do": [{"pop": {}}]}]"#), ["/on/x/0/when/in"]),
        (rules(#"[{"when": {"all": []}, "do": [{"pop": {}}]}]"#), ["/on/x/0/when/all"]),
        (rules(#"[{"when": {"flag": "a", "is": 1, "iz": 2}, "do": [{"pop": {}}]}]"#), ["/on/x/0/when/iz"]),
        (rules(#"[{"when": {"all": [{"flag": "a", "is": 1}, {"user": "b", "exists": "yes"}]}, "do": [{"pop": {}}]}]"#), ["/on/x/0/when/all/1/exists"]),
        (rules(#"[{"when": {"not": {"trait": "", "is": "x"}}, "do": [{"pop": {}}]}]"#), ["/on/x/0/when/not/trait"]),
        (rules(#"[{"when": {"any": [{"flag": "a", "is": 1}], "not": {"flag": "b", "is": 1}}, "do": [{"pop": {}}]}]"#), ["/on/x/0/when"]),
        (document(on: #"{"a/b~c": [{"do": [{"nope": {}}]}]}"#), ["/on/a~1b~0c/0/do/0/nope"]),
        (#"{"kind": "stak", "initial": ["a"], "on": {"x": [{"do": [{"pusj": "a"}]}]}}"#, ["/name", "/kind", "/on/x/0/do/0/pusj"]),
    ]

    /// Each problem kind is reported at its exact path, and all of a document's problems are
    /// reported together.
    @Test(arguments: problemCases)
    func reportsProblemAtPath(document: String, expectedPaths: [String]) {
        let problems = Fixtures.problems(document)
        #expect(problems.map(\.path).sorted() == expectedPaths.sorted(), "\(problems)")
        for problem in problems { #expect(!problem.message.isEmpty) }
    }

    /// A `setUser` that writes U+0000 as it is (a key, or a string at any depth) is refused when
    /// the definition is uploaded, at the key or string, in words that say why: no store keeps
    /// it, and every action the rule handles would be refused. A param is judged when an action
    /// brings its value. Read as stored (and as bundles carry it), the same definition reads.
    @Test func anUploadedSetUserCannotStoreNul() throws {
        func uploadProblems(_ text: String) throws -> [DefinitionProblem] {
            do throws(DefinitionProblems) {
                _ = try FlowDefinition.parse(Array(text.utf8), uploading: true)
                return []
            } catch {
                return error.problems
            }
        }
        let both = rules(#"[{"do": [{"setUser": {"n\u0000": "a", "s": ["\u0000"]}}]}]"#)
        let problems = try uploadProblems(both)
        #expect(problems.map(\.path) == ["/on/x/0/do/0/setUser/n\u{0}", "/on/x/0/do/0/setUser/s/0"])
        #expect(problems.map(\.message) == ["setUser cannot store a key holding the character U+0000",
                                             "setUser cannot store a string holding the character U+0000"])
        #expect(try uploadProblems(rules(#"[{"do": [{"setUser": {"profile": {"tags": ["ok", "x\u0000"], "k\u0000": {"n": 1}}}}]}]"#))
            .map(\.path) == ["/on/x/0/do/0/setUser/profile/tags/1", "/on/x/0/do/0/setUser/profile/k\u{0}"])
        #expect(try uploadProblems(rules(#"[{"params": {"v": "string"}, "do": [{"setUser": {"v": {"$param": "v"}, "w": "fine", "z": null}}]}]"#)).isEmpty)
        // Not uploading: a definition stored before the check still reads.
        #expect(Fixtures.problems(both).isEmpty)
    }

    /// A malformed JSON document is one problem at the root naming the byte.
    @Test func reportsJSONSyntaxError() {
        let problems = Fixtures.problems(#"{"name": "t",}"#)
        #expect(problems.count == 1)
        #expect(problems.first?.path == "")
        #expect(problems.first?.message.contains("at byte 13") == true)
    }

    /// Problem messages say what was wrong and what was expected.
    @Test func messagesAreHelpful() {
        let unknown = Fixtures.problems(rules(#"[{"do": [{"pusj": "a"}]}]"#)).first?.message ?? ""
        #expect(unknown.contains("unknown effect \"pusj\""))
        #expect(unknown.contains("push, pop, popTo"))
        let shadowed = Fixtures.problems(rules(#"[{"do": [{"pop": {}}]}, {"from": "a", "do": [{"pop": {}}]}]"#)).first?.message ?? ""
        #expect(shadowed.contains("never matches"))
        #expect(shadowed.contains("/on/x/0"))
    }

    /// A `PUT /v1/flows/{name}` body naming another flow is reported at `/name`.
    @Test func checksExpectedName() {
        do throws(DefinitionProblems) {
            _ = try FlowDefinition.parse(Array(document().utf8), expectedName: "other")
            Issue.record("should fail")
        } catch {
            #expect(error.problems.map(\.path) == ["/name"])
        }
        let definition = try? FlowDefinition.parse(Array(document().utf8))
        #expect(definition?.nameProblem(expected: "t") == nil)
        #expect(definition?.nameProblem(expected: "u")?.path == "/name")
    }

    /// The sample onboarding definition reads into the expected rules and effects.
    @Test func readsSampleOnboarding() throws {
        let onboarding = try FlowDefinition.parse(Fixtures.sampleBytes("onboarding"), expectedName: "onboarding")
        #expect(onboarding.kind == .stacked)
        #expect(onboarding.initial == [.init(target: .screen(feature: "onboarding.first", params: [:]))])
        #expect(onboarding.actionTypes == ["onboarding.showSecond", "onboarding.returnToFirst", "onboarding.completed", "onboarding.faceScanVerified"])
        let returnRule = onboarding.rules(for: "onboarding.returnToFirst")?.first
        #expect(returnRule?.interactive == true)
        #expect(returnRule?.effects == [.popTo(.feature("onboarding.first"))])
        let completed = onboarding.rules(for: "onboarding.completed") ?? []
        #expect(completed.count == 2)
        #expect(completed.first?.when == .test(.flag, key: "eu-face-scan", .equals(true)))
        #expect(completed.last?.bubbles == true)
        #expect(onboarding.rules(for: "home.selectTab") == nil)
    }

    /// Effects read into their values, including shorthand forms and param references.
    @Test func readsEffectForms() throws {
        let text = rules(#"""
            [{"params": {"c": "any", "n": "string", "note": "string?"}, "do": [
              {"push": {"flow": "m", "params": {"c": {"$param": "c"}}}},
              {"setRoot": {"screen": "s", "params": {"k": [1, {"$param": "c"}]}}},
              {"replaceRoot": "home"},
              {"replaceRoot": {"screen": "z"}},
              {"present": "m"},
              {"present": {"flow": "m", "style": {"compact": "fullScreen", "regular": "formSheet"}}},
              {"popTo": {"id": {"$param": "n"}}},
              {"popToRoot": {}}, {"dismiss": {}}, {"dismissAll": {}},
              {"setUser": {"onboarded": true}}
            ]}]
            """#)
        let definition = try FlowDefinition.parse(Array(text.utf8))
        let rule = try #require(definition.rules(for: "x")?.first)
        #expect(rule.params == [.init(name: "c", type: .any), .init(name: "n", type: .string), .init(name: "note", type: .string, required: false)])
        #expect(rule.effects == [
            .push(.flow(name: "m", params: ["c": ["$param": "c"]])),
            .setRoot(.screen(feature: "s", params: ["k": [1, ["$param": "c"]]])),
            .replaceRoot(.flow(name: "home", params: [:])),
            .replaceRoot(.screen(feature: "z", params: [:])),
            .present(.init(flow: "m")),
            .present(.init(flow: "m", style: .adaptive(compact: "fullScreen", regular: "formSheet"))),
            .popTo(.idParam("n")),
            .popToRoot, .dismiss, .dismissAll,
            .setUser(["onboarded": true]),
        ])
    }

    // MARK: bodies that cost little (found while fuzzing; see scripts/fuzz.sh)

    /// An action type may have 64 rules; a 65th is refused at the action, before any rule is
    /// compared with the others.
    @Test func tooManyRulesForOneAction() {
        func rulesList(_ count: Int) -> String {
            "[" + (0..<count).map { #"{"from": "s\#($0)", "do": [{"pop": {}}]}"# }.joined(separator: ", ") + "]"
        }
        #expect(Fixtures.problems(rules(rulesList(64))).isEmpty)
        let problems = Fixtures.problems(rules(rulesList(65)))
        #expect(problems.map(\.path) == ["/on/x"])
        #expect(problems.first?.message == "x has 65 rules; an action type may have at most 64")
    }

    /// Two rules whose `from` lists 50,000 features each, differing in the last: checking that
    /// the second is not shadowed compared the lists element by element (quadratic, over half a
    /// minute in a debug build); as sets it takes a moment.
    @Test func longFromListsAreComparedAsSets() {
        let features = (0..<50_000).map { #""s\#($0)""# }
        let first = features.joined(separator: ", ")
        let second = features.dropLast().joined(separator: ", ") + #", "other""#
        let text = rules(#"[{"from": [\#(first)], "do": [{"pop": {}}]}, {"from": [\#(second)], "do": [{"pop": {}}]}]"#)
        let clock = ContinuousClock()
        let elapsed = clock.measure { #expect(Fixtures.problems(text).isEmpty) }
        #expect(elapsed < .seconds(5))
    }

    /// A rule shadowed by one with a long `from` gets a message naming its first five features:
    /// one naming all of them for each of many shadowed rules made problems grow with the square
    /// of the body (a 200 KB definition made 170 MB of them).
    @Test func shadowingMessagesNameFewFeatures() {
        let features = (0..<1_000).map { #""s\#($0)""# }.joined(separator: ", ")
        let shadowed = Array(repeating: #"{"from": "s7", "do": [{"pop": {}}]}"#, count: 63).joined(separator: ", ")
        let problems = Fixtures.problems(rules(#"[{"from": [\#(features)], "do": [{"pop": {}}]}, \#(shadowed)]"#))
        #expect(problems.count == 63)
        #expect(problems.first?.path == "/on/x/1")
        #expect(problems.first?.message
            == "this rule never matches: rule /on/x/0 matches from s0, s1, s2, s3, s4 and 995 more with no when, and it comes first")
    }
}
