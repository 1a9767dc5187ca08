// TestSupport: fixtures shared by the tests — the sample app's flows, small catalogs, a session driver.

import JSON
import Foundation
import Testing

import FlowEngine

/// Fixtures: the sample app loaded from `flows/*.json`, and catalogs built from inline JSON.
enum Fixtures {
    /// `Tests/FlowEngineTests/X.swift` → `flows/`, so the tests find the definitions wherever
    /// the package is checked out.
    static let flowsDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .appendingPathComponent("flows")

    static let sampleNames = ["app", "onboarding", "home", "modal", "login", "checkout", "address", "paywall"]

    /// The bytes of `flows/<name>.json`.
    static func sampleBytes(_ name: String) -> [UInt8] {
        let url = flowsDirectory.appendingPathComponent("\(name).json")
        guard let data = FileManager.default.contents(atPath: url.path) else {
            Issue.record("cannot read \(url.path)")
            return []
        }
        return [UInt8](data)
    }

    /// The sample app, parsed and validated once.
    static let sampleCatalog: FlowCatalog = {
        let (catalog, problems) = FlowCatalog.parse(sampleNames.map { ($0, sampleBytes($0)) })
        if !problems.isEmpty { Issue.record("sample flows have problems: \(problems)") }
        return catalog
    }()

    /// A catalog from inline definition documents; any problem fails the test.
    static func catalog(_ documents: String...) -> FlowCatalog {
        var definitions: [FlowDefinition] = []
        for document in documents {
            do throws(DefinitionProblems) {
                definitions.append(try FlowDefinition.parse(Array(document.utf8)))
            } catch {
                Issue.record("definition does not parse: \(error)\n\(document)")
            }
        }
        let catalog = FlowCatalog(definitions)
        let problems = catalog.validate()
        if !problems.isEmpty { Issue.record("catalog problems: \(problems)") }
        return catalog
    }

    /// The problems of one definition document (empty when it parses).
    static func problems(_ document: String) -> [DefinitionProblem] {
        do throws(DefinitionProblems) {
            _ = try FlowDefinition.parse(Array(document.utf8))
            return []
        } catch {
            return error.problems
        }
    }

    static func json(_ text: String) -> JSONValue {
        do {
            return try JSONParser.parse(text)
        } catch {
            Issue.record("bad JSON in test: \(error)")
            return .null
        }
    }
}

/// Drives one session: applies actions, keeps the tree, and records user changes into the
/// context the way the server will.
struct Session {
    let catalog: FlowCatalog
    var context: FlowContext
    var tree: FlowTree
    var last: ActionOutcome?

    init(catalog: FlowCatalog = Fixtures.sampleCatalog, context: FlowContext = FlowContext(userId: "u-1")) throws {
        self.catalog = catalog
        self.context = context
        self.tree = try FlowEngine.start(catalog: catalog, context: context)
    }

    /// Applies an action; on success the session moves on, on error it stays where it was.
    @discardableResult
    mutating func send(
        _ type: String, from: String? = nil, row: String? = nil, params: JSONObject = [:], interactive: Bool = false
    ) throws(FlowError) -> ActionOutcome {
        let action = FlowAction(type: type, from: from, row: row, params: params, interactive: interactive)
        let outcome = try FlowEngine.apply(action, to: tree, catalog: catalog, context: context)
        tree = outcome.tree
        UserChange.apply(outcome.userChanges, to: &context.user)
        last = outcome
        return outcome
    }

    /// Sends an action expected to fail and returns the error (recording an issue if it succeeds).
    mutating func failure(
        _ type: String, from: String? = nil, row: String? = nil, params: JSONObject = [:], interactive: Bool = false
    ) -> FlowError? {
        let before = tree
        do throws(FlowError) {
            try send(type, from: from, row: row, params: params, interactive: interactive)
            Issue.record("\(type) was expected to fail but succeeded")
            return nil
        } catch {
            #expect(tree == before, "a failed action must leave the tree unchanged")
            return error
        }
    }

    var top: ScreenRef? { tree.top }
    var topFeature: String? { tree.top?.feature }
    var topId: String? { tree.top?.entryId }
    var screenFeatures: [String] { tree.screens.map(\.feature) }
}

extension FlowError {
    /// The error's case, without its payload, for tables.
    var kind: String { code }
}

