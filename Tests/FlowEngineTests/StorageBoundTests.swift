// StorageBoundTests: over seeded walks, the document's length bounds the stored tree's, and every document re-encodes to itself.

import JSON
import TestSupport
import Testing

import FlowEngine

/// Drives one session through seeded actions and checks, at every step, the state document: it
/// bounds the storage encoding's length (`storageLengthBound`), and it parses to a value that
/// the writer writes again byte for byte (a canonical form whatever the strings, numbers and
/// member orders the walk gives it).
private struct DocumentWalk {
    var generator: SeededGenerator
    let catalog: FlowCatalog
    var context: FlowContext
    var tree: FlowTree
    var version = 0
    let sessionId: String
    let userId: String
    let flags = Array(#"{"eu-face-scan":{"value":true,"variant":"on","reason":"TARGETING_MATCH"}}"#.utf8)
    let experiments = Array(#"{"onboarding-length":"short"}"#.utf8)
    /// Steps whose document was checked, so a walk that goes nowhere is noticed.
    var compared = 0
    /// Documents that failed a check; a walk stops at its first.
    var mismatches = 0
    /// Steps whose tree the document's length bounded (`storageLengthBound`), checked against
    /// the storage encoding; the others held an interaction or actions waiting.
    var bounded = 0

    /// Strings that encode differently while `==` (canonical equivalence) or `JSONObject`'s
    /// `==` (any member order) calls them equal, and ones the writer escapes.
    static let strings = ["Hello", "caf\u{E9}", "cafe\u{301}", "a \"quoted\" \\ line\n", "😀", ""]

    init(seed: UInt64, catalog: FlowCatalog) throws {
        generator = SeededGenerator(seed: seed)
        self.catalog = catalog
        var user: [String: JSONValue] = [:]
        if seed % 3 == 0 { user["onboarded"] = true }
        context = FlowContext(userId: "u-\(seed)", flags: ["eu-face-scan": .bool(seed % 2 == 0)], user: user)
        tree = try FlowEngine.start(catalog: catalog, context: context)
        sessionId = "s-\(seed)"
        userId = Self.strings[Int(seed % UInt64(Self.strings.count))]
    }

    mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &generator)] }
    mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &generator) < probability }

    mutating func value() -> JSONValue {
        switch Int.random(in: 0..<6, using: &generator) {
        case 0: return .string(pick(Self.strings))
        case 1: return chance(0.5) ? .integer(1) : .number(1.0)
        case 2: return .number(pick([0.5, -0.0, 0.0, 1e21]))
        case 3: return .object(chance(0.5) ? JSONObject(uniqueMembers: [.init(key: "x", value: .integer(1)), .init(key: "y", value: .string("é"))])
                                           : JSONObject(uniqueMembers: [.init(key: "y", value: .string("é")), .init(key: "x", value: .integer(1))]))
        case 4: return .array([.string(pick(Self.strings)), .bool(chance(0.5)), .null])
        default: return .bool(chance(0.5))
        }
    }

    /// Mostly an action the state offers, with params of every kind; sometimes anything.
    mutating func action() -> FlowAction {
        let available = FlowEngine.availableActions(in: tree, catalog: catalog, context: context)
        let from = chance(0.9) ? tree.top?.entryId : nil
        guard chance(0.85), !available.isEmpty else {
            return FlowAction(type: pick(["back", "nope", "interaction.cancel", "link.cancel"]), from: from)
        }
        let choice = pick(available)
        var params = JSONObject()
        for param in choice.params {
            switch param.type {
            case .integer: params[param.name] = .integer(Int.random(in: 0...1, using: &generator))
            case .number: params[param.name] = .number(Double.random(in: 0...1, using: &generator))
            case .string: params[param.name] = .string(pick(Self.strings))
            case .boolean: params[param.name] = .bool(chance(0.5))
            default: params[param.name] = value()
            }
        }
        if choice.type.hasPrefix("interaction.") {
            params["progress"] = .number(Double.random(in: 0...1, using: &generator))
            if chance(0.5) { params["velocity"] = .number(Double.random(in: -500...900, using: &generator)) }
        }
        return FlowAction(type: choice.type, from: from, params: params, interactive: choice.interactive && chance(0.5))
    }

    /// The state document of the current version.
    func document(transitionJSON: [UInt8]?, handledBy: String?) -> [UInt8] {
        SessionState.document(sessionId: sessionId, userId: userId, version: version, tree: tree, transitionJSON: transitionJSON,
                              handledBy: handledBy, flagsJSON: flags, experimentsJSON: experiments)
    }

    /// Checks the current version's document: it bounds the storage, and parsed and written
    /// again it is the same bytes.
    mutating func check(transitionJSON: [UInt8]?, handledBy: String?, _ note: String) {
        let written = document(transitionJSON: transitionJSON, handledBy: handledBy)
        checkBound(documentLength: written.count, note)
        var again = JSONWriter()
        if let parsed = try? JSONParser.parse(written, limits: .storedData) { again.writeValue(parsed) }
        let rewritten = again.takeBytes()
        if rewritten != written {
            mismatches += 1
            Issue.record("document \(note) does not re-encode to itself:\n\(String(decoding: written, as: UTF8.self))\n\(String(decoding: rewritten, as: UTF8.self))")
        }
        compared += 1
    }

    /// Expects the bound the document's length gives to be at least the storage encoding's length.
    mutating func checkBound(documentLength: Int, _ note: String) {
        guard let bound = tree.storageLengthBound(documentLength: documentLength) else { return }
        bounded += 1
        let stored = tree.storageBytes()
        guard bound < stored.count else { return }
        mismatches += 1
        Issue.record("storage bound \(bound) under the encoding's \(stored.count) bytes \(note):\n\(String(decoding: stored, as: UTF8.self))")
    }

    /// One step: an action applied, a tree from elsewhere, or a tree perturbed through storage.
    mutating func step(_ note: String) {
        switch Int.random(in: 0..<20, using: &generator) {
        case 0:
            // Another session's state, a reload.
            let other = try? FlowEngine.start(catalog: catalog, context: context)
            if let other { tree = other }
            check(transitionJSON: nil, handledBy: "app", "foreign tree \(note)")
        case 1:
            if let perturbed = Self.perturbed(tree) { tree = perturbed }
            check(transitionJSON: nil, handledBy: nil, "perturbed tree \(note)")
        default:
            let action = action()
            guard let outcome = try? FlowEngine.apply(action, to: tree, catalog: catalog, context: context) else { return }
            version += 1
            tree = outcome.tree
            UserChange.apply(outcome.userChanges, to: &context.user)
            check(transitionJSON: outcome.transition.map(SessionState.encode), handledBy: outcome.handledBy, "after \(action.type) \(note)")
        }
    }

    /// The tree read back from its storage with every params object's members reversed and
    /// every "é" decomposed: ids and `==` unchanged, bytes not.
    static func perturbed(_ tree: FlowTree) -> FlowTree? {
        guard let value = try? JSONParser.parse(tree.storageBytes()) else { return nil }
        var writer = JSONWriter()
        writer.writeValue(perturb(value, key: nil))
        return try? FlowTree(storage: writer.takeBytes())
    }

    private static func perturb(_ value: JSONValue, key: String?) -> JSONValue {
        switch value {
        case .string(let text): return .string(text.replacingNFC())
        case .array(let values): return .array(values.map { perturb($0, key: nil) })
        case .object(let object):
            var members = object.members.map { JSONObject.Member(key: $0.key, value: perturb($0.value, key: $0.key)) }
            if key == "params" { members.reverse() }
            return .object(JSONObject(uniqueMembers: members))
        default: return value
        }
    }
}

extension String {
    /// "é" as "e" and a combining acute accent: canonically equal, other bytes.
    fileprivate func replacingNFC() -> String {
        var result = ""
        for scalar in unicodeScalars {
            if scalar == "\u{E9}" { result.unicodeScalars.append("e"); result.unicodeScalars.append("\u{301}") }
            else { result.unicodeScalars.append(scalar) }
        }
        return result
    }
}

struct StorageBoundTests {
    static let catalogs: [(name: String, catalog: FlowCatalog)] = [
        ("sample", Fixtures.sampleCatalog), ("shop", ShopFlows.catalog), ("lab", LabFlows.catalog),
    ]
    static let batches = Array(0..<6)
    static let sessionsPerBatch = 60
    static let steps = 30

    /// Over seeded walks of many sessions (the sample app, the shop and the lab flows), with
    /// foreign and perturbed trees between the actions, every state document bounds its tree's
    /// storage and re-encodes to itself.
    @Test(arguments: batches)
    func everyDocumentBoundsItsStorageAndReencodesToItself(batch: Int) throws {
        var compared = 0
        var bounded = 0
        var mismatches = 0
        for (name, catalog) in Self.catalogs where mismatches < 3 {
            for index in 0..<Self.sessionsPerBatch where mismatches < 3 {
                let seed = UInt64(batch * Self.sessionsPerBatch + index) &* 0x9E37_79B9 &+ 7
                var walk = try DocumentWalk(seed: seed, catalog: catalog)
                walk.check(transitionJSON: nil, handledBy: nil, "at creation, \(name) seed \(seed)")
                for step in 0..<Self.steps where walk.mismatches == 0 { walk.step("at step \(step), \(name) seed \(seed)") }
                compared += walk.compared
                bounded += walk.bounded
                mismatches += walk.mismatches
            }
        }
        #expect(mismatches == 0)
        #expect(compared > Self.catalogs.count * Self.sessionsPerBatch * Self.steps / 2)
        #expect(bounded > compared / 2, "the storage bound was checked at \(bounded) of \(compared) steps")
    }

    /// What only the storage writes: `"handoff":true` where the document writes a feature's
    /// name of one byte, and a presented flow's style of bytes the writer escapes to six
    /// (the document writes it too). The bound still holds.
    @Test(arguments: [
        #"{"format":1,"nextId":6,"root":{"id":1,"flow":"a","kind":"stacked","entries":[{"id":2,"feature":"y","handoff":true},{"id":3,"feature":"x","handoff":true},{"id":4,"flow":"b","kind":"stacked","entries":[{"id":5,"feature":"z","handoff":true}]}]}}"#,
        #"{"format":1,"nextId":5,"root":{"id":1,"flow":"a","kind":"stacked","entries":[{"id":2,"feature":"s"}],"presented":{"id":3,"flow":"m","kind":"stacked","style":"\u0001\u0002\u0003","entries":[{"id":4,"feature":"q"}]}}}"#,
    ])
    func storageBoundHoldsWhereOnlyTheStorageWrites(storage: String) throws {
        let tree = try FlowTree(storage: Array(storage.utf8))
        let document = SessionState.document(sessionId: "", userId: "", version: 0, tree: tree, transitionJSON: nil, handledBy: nil,
                                             flagsJSON: Array("{}".utf8), experimentsJSON: Array("{}".utf8))
        let bound = try #require(tree.storageLengthBound(documentLength: document.count))
        #expect(bound >= tree.storageBytes().count, "\(bound) against \(tree.storageBytes().count)")
    }
}
