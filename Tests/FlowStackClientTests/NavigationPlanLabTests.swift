// NavigationPlanLabTests: plans over a catalog that uses every effect (child flows in stacks, nested modals, tabs that present).
import FlowEngine
import FlowStackClient
import Foundation
import JSON
import Testing
import TestSupport

/// The engine's lab flows (Tests/TestSupport/LabFlowDocuments.swift):
/// every effect, child flows pushed into stacks, tabs that present, modals over modals.
enum LabSpace {
    /// The engine's lab flows, shared with its tests (their `ghost` flow is undefined: the
    /// action that pushes it is refused, like any other the engine refuses, and not explored).
    static let documents = LabFlowDocuments.all

    static let catalog: FlowCatalog = {
        var definitions: [FlowDefinition] = []
        for document in documents {
            do throws(DefinitionProblems) {
                definitions.append(try FlowDefinition.parse(Array(document.utf8)))
            } catch {
                Issue.record("lab definition does not parse: \(error)")
            }
        }
        return FlowCatalog(definitions)
    }()

    /// Compact and regular size classes (the adaptive presentation style reads it).
    static func starts() throws -> [SessionState] {
        try ["compact", "regular"].map { sizeClass in
            let context = FlowContext(userId: "lab-\(sizeClass)", traits: ["horizontalSizeClass": sizeClass])
            return SessionState(
                sessionId: "lab_\(sizeClass)", userId: context.userId, version: 0,
                tree: try FlowEngine.start(catalog: catalog, context: context), context: context, catalog: catalog,
                flagsJSON: Array("{}".utf8), experimentsJSON: Array("{}".utf8))
        }
    }

    static let explored: (states: [SampleSpace.Reached], edges: [SampleSpace.Edge]) = {
        do {
            return try SampleSpace.explore(from: try starts(), depth: 5, limit: 4000) { session in
                SampleSpace.actions(in: session, links: []) { available in
                    available.type == "t.selectTabParam" ? [["i": 0], ["i": 2]] : [[:]]
                }
            }
        } catch {
            Issue.record("exploring the lab flows failed: \(error)")
            return ([], [])
        }
    }()
}

struct NavigationPlanLabTests {
    /// Every transition of the lab flows (child flows pushed into stacks, generic back popping
    /// a parent stack, modals over modals dismissed at once, tabs that present and are left)
    /// renders the next state, and its first step shows the transition.
    @Test func everyLabTransitionRendersTheNextState() {
        let (states, edges) = LabSpace.explored
        let (failures, disagreements, named) = PlanChecker().check(states: states, edges: edges, strict: false)
        print("NavigationPlan: \(edges.count) lab transitions (\(named) with a transition) between \(states.count) states checked")
        #expect(edges.count > 1000)
        #expect(failures.isEmpty, "\(failures.count) failures; first: \(failures.prefix(3).joined(separator: "\n\n"))")
        #expect(disagreements.isEmpty, "\(disagreements.count) disagreements; first: \(disagreements.prefix(3).joined(separator: "\n\n"))")
    }

    /// Jumps between lab states.
    @Test func randomJumpsBetweenLabStates() {
        let states = LabSpace.explored.states.map(\.state)
        var generator = SeededGenerator(seed: 2222)
        let checker = PlanChecker()
        var failures: [String] = []
        for _ in 0..<5000 {
            guard let from = states.randomElement(using: &generator), let to = states.randomElement(using: &generator) else { break }
            if let problem = checker.problem(from: from, to: to) {
                failures.append("\(PlanChecker.outline(from.root)) → \(PlanChecker.outline(to.root)): \(problem)")
            }
        }
        print("NavigationPlan: 5000 random jumps between \(states.count) lab states checked")
        #expect(failures.isEmpty, "\(failures.count) failures; first: \(failures.prefix(3).joined(separator: "\n\n"))")
    }
}
