// StorageTests: the lossless storage encoding — exact round trips, and corrupt input refused without crashing.

import TestSupport
import JSON
import Testing

import FlowEngine

struct StorageTests {
    private func roundTrip(_ tree: FlowTree) throws {
        let bytes = tree.storageBytes()
        let decoded = try FlowTree(storage: bytes)
        #expect(decoded == tree)
        #expect(decoded.storageBytes() == bytes)
    }

    /// Every state of a session (a pending interaction included) decodes back to the same tree.
    @Test func sessionStatesRoundTrip() throws {
        var session = try Session(context: FlowContext(userId: "u", flags: ["eu-face-scan": true]))
        try roundTrip(session.tree)
        let script: [(String, JSONObject, Bool)] = [
            ("onboarding.showSecond", [:], false),
            ("onboarding.returnToFirst", [:], true),
            ("interaction.update", ["progress": 0.125], false),
            ("interaction.cancel", [:], false),
            ("onboarding.completed", [:], false),
            ("onboarding.faceScanVerified", [:], false),
            ("home.selectTab", ["index": 1], false),
            ("home.presentModal", ["content": ["title": "Hi", "n": 1.5, "list": [1, nil, true], "big": 1e300]], false),
        ]
        for (type, params, interactive) in script {
            try session.send(type, params: params, interactive: interactive)
            try roundTrip(session.tree)
        }
        #expect(session.top?.feature == "modal")
    }

    /// A tree keeps its interaction out of line, as a value: an update makes a tree that differs
    /// from the one before it, which stays as it was, and a tree without one stays small (every
    /// cached session holds one, and every turn copies it).
    @Test func interactionsStayValuesOutOfLine() throws {
        var session = try Session(context: FlowContext(userId: "u"))
        try session.send("onboarding.showSecond")
        #expect(MemoryLayout<FlowTree>.size <= 160, "a tree is \(MemoryLayout<FlowTree>.size) bytes inline")
        try session.send("onboarding.returnToFirst", interactive: true)
        let started = session.tree
        try session.send("interaction.update", params: ["progress": 0.5])
        #expect(started.interaction?.progress == 0)
        #expect(session.tree.interaction?.progress == 0.5)
        #expect(session.tree != started)
        #expect(try FlowTree(storage: session.tree.storageBytes()) == session.tree, "equal by the interaction's value, not its box")
        try session.send("interaction.cancel")
        #expect(session.tree.interaction == nil)
        #expect(started.interaction != nil)
    }

    /// A tree built from many actions' params can outgrow the limits a single request is read
    /// with (8 MiB documents, 1 MiB strings); it is the server's own data and must read back.
    @Test func treesLargerThanRequestLimitsRoundTrip() throws {
        let catalog = Fixtures.catalog(#"""
            {"name": "app", "kind": "stacked", "initial": ["a.root"], "on": {
              "t.pushParams": [{"params": {"v": "string"}, "do": [{"push": {"screen": "a.param", "params": {"v": {"$param": "v"}}}}]}]
            }}
            """#)
        var session = try Session(catalog: catalog)
        let blob = JSONValue.string(String(repeating: "x", count: (1 << 20) + 1))
        for _ in 0..<9 { try session.send("t.pushParams", params: ["v": blob]) }
        let bytes = session.tree.storageBytes()
        #expect(bytes.count > 9 << 20)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(bytes) }  // the request limits would refuse it
        try roundTrip(session.tree)
    }

    static let base = #"{"format":1,"nextId":4,"root":{"id":1,"flow":"app","kind":"stacked","entries":[{"id":2,"flow":"onboarding","kind":"stacked","entries":[{"id":3,"feature":"onboarding.first"}]}]}}"#

    /// The base document used by the corruption table is itself valid.
    @Test func baseDocumentDecodes() throws {
        let tree = try FlowTree(storage: Array(Self.base.utf8))
        #expect(tree.top?.feature == "onboarding.first")
        #expect(tree.nextId == 4)
        #expect(String(decoding: tree.storageBytes(), as: UTF8.self) == Self.base)
    }

    static let corrupt: [String] = [
        "",
        "[]",
        #"{"format":2,"nextId":4,"root":{"id":1,"flow":"app","kind":"stacked","entries":[{"id":3,"feature":"a"}]}}"#,
        #"{"format":1,"root":{"id":1,"flow":"app","kind":"stacked","entries":[{"id":3,"feature":"a"}]}}"#,
        #"{"format":1,"nextId":0,"root":{"id":1,"flow":"app","kind":"stacked","entries":[{"id":3,"feature":"a"}]}}"#,
        #"{"format":1,"nextId":1e300,"root":{"id":1,"flow":"app","kind":"stacked","entries":[{"id":3,"feature":"a"}]}}"#,
        #"{"format":1,"nextId":9007199254740993,"root":{"id":1,"flow":"app","kind":"stacked","entries":[{"id":3,"feature":"a"}]}}"#,
        #"{"format":1,"nextId":4}"#,
        #"{"format":1,"nextId":4,"root":{"id":1,"flow":"app","kind":"sideways","entries":[{"id":3,"feature":"a"}]}}"#,
        #"{"format":1,"nextId":4,"root":{"id":1,"flow":"app","kind":"stacked"}}"#,
        #"{"format":1,"nextId":4,"root":{"id":1,"flow":"app","kind":"stacked","entries":{}}}"#,
        #"{"format":1,"nextId":4,"root":{"id":1,"flow":"app","kind":"stacked","entries":[]}}"#,
        #"{"format":1,"nextId":4,"root":{"id":1,"flow":"app","kind":"stacked","entries":[{"id":1,"feature":"a"}]}}"#,
        #"{"format":1,"nextId":4,"root":{"id":1,"flow":"app","kind":"stacked","entries":[{"id":4,"feature":"a"}]}}"#,
        #"{"format":1,"nextId":4,"root":{"id":0,"flow":"app","kind":"stacked","entries":[{"id":3,"feature":"a"}]}}"#,
        #"{"format":1,"nextId":4,"root":{"id":1,"flow":"app","kind":"stacked","entries":[{"id":3,"feature":""}]}}"#,
        #"{"format":1,"nextId":4,"root":{"id":1,"flow":"","kind":"stacked","entries":[{"id":3,"feature":"a"}]}}"#,
        #"{"format":1,"nextId":4,"root":{"id":1,"flow":"app","kind":"tabbed","selected":5,"entries":[{"id":3,"feature":"a"}]}}"#,
        #"{"format":1,"nextId":4,"root":{"id":1,"flow":"app","kind":"stacked","selected":0,"entries":[{"id":3,"feature":"a"}]}}"#,
        #"{"format":1,"nextId":4,"root":{"id":1,"flow":"app","kind":"stacked","style":"fullScreen","entries":[{"id":3,"feature":"a"}]}}"#,
        #"{"format":1,"nextId":5,"root":{"id":1,"flow":"app","kind":"stacked","entries":[{"id":3,"feature":"a"}],"presented":{"id":2,"flow":"m","kind":"stacked","entries":[{"id":4,"feature":"m"}]}}}"#,
        #"{"format":1,"nextId":7,"root":{"id":1,"flow":"app","kind":"stacked","entries":[{"id":2,"flow":"h","kind":"stacked","entries":[{"id":3,"feature":"a"}],"presented":{"id":4,"flow":"m","kind":"stacked","style":"fullScreen","entries":[{"id":5,"feature":"m"}]}},{"id":6,"feature":"b"}]}}"#,
        #"{"format":1,"nextId":4,"root":{"id":1,"flow":"app","kind":"stacked","entries":[{"id":3,"feature":"a"}]},"extra":1}"#,
        #"{"format":1,"nextId":4,"root":{"id":1,"flow":"app","kind":"stacked","entries":[{"id":3}]}}"#,
        #"{"format":1,"nextId":4,"root":{"id":1,"flow":"app","kind":"stacked","entries":[{"id":3,"feature":"a","params":[]}]}}"#,
        #"{"format":1,"nextId":4,"root":{"id":1,"flow":"app","kind":"stacked","entries":[{"id":3,"feature":"a"}]},"interaction":{"action":{"type":"back","interactive":true},"progress":2,"handledBy":"app"}}"#,
        #"{"format":1,"nextId":4,"root":{"id":1,"flow":"app","kind":"stacked","entries":[{"id":3,"feature":"a"}]},"interaction":{"action":{"type":"back"},"progress":0,"handledBy":"app"}}"#,
        #"{"format":1,"nextId":4,"root":{"id":1,"flow":"app","kind":"stacked","entries":[{"id":3,"feature":"a"}]},"interaction":{"action":{"type":"back","interactive":true},"progress":0,"handledBy":"app","preview":{"type":"zoom","animated":true,"interactive":true}}}"#,
        #"{"format":1,"nextId":4,"root":{"id":1,"flow":"app","kind":"stacked","entries":[{"id":3,"feature":"a"}]},"interaction":{"action":{"type":"","interactive":true},"progress":0,"handledBy":"app"}}"#,
        String(repeating: #"{"id":1,"flow":"x","kind":"stacked","entries":["#, count: 40) + String(repeating: "]}", count: 40),
    ]

    /// Corrupt storage is refused with an error, never a crash.
    @Test(arguments: corrupt)
    func refusesCorruptStorage(document: String) {
        #expect(throws: FlowStorageError.self) {
            try FlowTree(storage: Array(document.utf8))
        }
    }

    /// Storage errors point at the offending field.
    @Test func errorsHavePaths() {
        do throws(FlowStorageError) {
            _ = try FlowTree(storage: Array(#"{"format":1,"nextId":4,"root":{"id":1,"flow":"app","kind":"stacked","entries":[{"id":"e3","feature":"a"}]}}"#.utf8))
            Issue.record("should fail")
        } catch {
            #expect(error.path == "/root/entries/0/id")
        }
    }

    /// Random corruptions of real encodings never crash the decoder; whatever decodes is well-formed.
    @Test func randomCorruptionsNeverCrash() throws {
        var session = try Session(context: FlowContext(userId: "u", user: ["onboarded": true]))
        try session.send("home.presentModal", params: ["content": "x"])
        let seeds = [session.tree.storageBytes(), Array(Self.base.utf8)]
        var generator = SeededGenerator(seed: 99)
        for _ in 0..<3_000 {
            var bytes = seeds[Int.random(in: 0..<seeds.count, using: &generator)]
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let position = Int.random(in: 0..<bytes.count, using: &generator)
                if Bool.random(using: &generator) {
                    bytes[position] = UInt8.random(in: 0x20...0x7E, using: &generator)
                } else {
                    bytes.remove(at: position)
                }
            }
            if let tree = try? FlowTree(storage: bytes) {
                #expect(tree.structuralProblems().isEmpty)
                #expect((try? FlowTree(storage: tree.storageBytes())) == tree)
            }
        }
    }
}
