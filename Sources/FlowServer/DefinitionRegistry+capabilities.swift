// Which flow versions a client can run: the live ones it can render, else per flow the newest
// earlier activated version it can, and what it lacks when nothing fits.
import FeatureFlags
import FlowEngine

extension DefinitionRegistry {
    /// The versions a client runs, or why it cannot run any.
    enum ClientFit: Equatable {
        /// `versions` are the live versions with those the client falls back to in place
        /// (`fallbacks`: flow name → the version it runs instead of the live one).
        case fits(versions: [String: Int], fallbacks: [String: Int])
        /// No activated version of `flows` fits; `missing` is what the live versions show and
        /// the client lacks.
        case unsupported(missing: [String], flows: [String])
    }

    /// The versions `client` can render, starting from `live` (the live versions, or those a
    /// flow test runs): each flow reached from the root keeps its version when the client
    /// renders every screen it shows itself, else takes the newest activated version below it
    /// that the client renders; its child flows are then followed in the version chosen. Flows
    /// the root never reaches keep their version (no session shows them). Deterministic: the
    /// same client, definitions and history always give the same versions.
    func fit(_ client: ClientCapabilities, live: [String: Int]) -> ClientFit {
        guard let renderable = client.features else { return .fits(versions: live, fallbacks: [:]) }
        let (flows, activated) = history
        var versions = live
        var fallbacks: [String: Int] = [:]
        var unfit: [String] = []
        var visited: Set<String> = [FlowCatalog.rootFlowName]
        var queue = [FlowCatalog.rootFlowName]
        var position = 0
        while position < queue.count {
            let name = queue[position]
            position += 1
            guard let current = live[name], let currentFlow = flows[FlowKey(name: name, version: current)] else { continue }
            let earlier = (activated[name] ?? []).filter { $0 < current }.sorted(by: >)
            var chosen: (version: Int, definition: FlowDefinition)?
            for version in [current] + earlier {
                guard let stored = flows[FlowKey(name: name, version: version)] else { continue }
                if stored.definition.ownScreens.features.isSubset(of: renderable) {
                    chosen = (version, stored.definition)
                    break
                }
            }
            let followed: FlowDefinition
            if let chosen {
                versions[name] = chosen.version
                if chosen.version != current { fallbacks[name] = chosen.version }
                followed = chosen.definition
            } else {
                unfit.append(name)
                followed = currentFlow.definition
            }
            for child in followed.ownScreens.childFlows.sorted() where visited.insert(child).inserted {
                queue.append(child)
            }
        }
        guard unfit.isEmpty else {
            let shown = catalog(for: live)?.screenFeatures() ?? ScreenFeatures()
            return .unsupported(missing: shown.missing(from: renderable), flows: unfit.sorted())
        }
        return .fits(versions: versions, fallbacks: fallbacks)
    }

    /// Whether `client` renders every variant of `experiment`, each as a session enrolled in it
    /// would run: the flows the experiment pins (in any variant) at the variant's pin or else
    /// their live version, the other flows as the client runs them (`base`). A client that cannot
    /// render one variant is kept out of the whole experiment, whichever variant it hashed into:
    /// excluding it only from that variant would leave old builds in the others, and bias the
    /// comparison.
    func renders(_ experiment: ExperimentDefinition, client: ClientCapabilities, base: [String: Int], live: [String: Int]) -> Bool {
        guard client.features != nil else { return true }
        let pinned = Set(experiment.variants.flatMap { $0.flows.map(\.flow) })
        guard !pinned.isEmpty else { return true }
        for variant in experiment.variants where variant.weight != 0 {
            var versions = base
            let pins = variant.pinnedFlows
            for flow in pinned {
                if let version = pins[flow] ?? live[flow] { versions[flow] = version }
            }
            // A pin to a version that is not stored fails the session as it always has.
            guard let catalog = catalog(for: versions) else { continue }
            if !client.canRender(catalog.screenFeatures()) { return false }
        }
        return true
    }
}
