// Which flow versions a client can run: the live ones it can render, else per flow the newest
// earlier activated version it can, and what it lacks when nothing fits.
import FeatureFlags
import FlowEngine

extension DefinitionRegistry {
    /// The versions a client runs, or why it cannot run any.
    enum ClientFit: Equatable {
        /// `versions` are the live versions with those the client falls back to in place
        /// (`fallbacks`: flow name → the version it runs instead of the live one, for the flows
        /// its sessions reach).
        case fits(versions: [String: Int], fallbacks: [String: Int])
        /// Nothing fits; `missing` is what the live versions show and the client lacks, `flows`
        /// the flows none of whose activated versions it can render.
        case unsupported(missing: [String], flows: [String])
    }

    /// Chooses, per flow, the version a client renders. A version fits when the client renders
    /// every screen the version shows itself and every child flow it names (starts with,
    /// pushes, sets as root, presents) has a fitting version; the candidates are the version
    /// given as live, then the activated versions below it, newest first. A parent may thus
    /// fall back because of a child: an older `app` that never presents a new flow fits a build
    /// that cannot draw that flow. Memoized per flow; in a cycle between flows the flow that
    /// started it decides (the final check of `fit` makes that safe).
    private struct VersionResolver {
        let flows: [FlowKey: StoredFlow]
        let activated: [String: Set<Int>]
        let live: [String: Int]
        let renderable: Set<String>
        /// The version chosen per flow resolved; nil: no version fits.
        var chosen: [String: Int?] = [:]
        /// Flows none of whose candidate versions shows only screens the client renders.
        var lacking: Set<String> = []
        private var inProgress: Set<String> = []

        init(flows: [FlowKey: StoredFlow], activated: [String: Set<Int>], live: [String: Int], renderable: Set<String>) {
            self.flows = flows
            self.activated = activated
            self.live = live
            self.renderable = renderable
        }

        /// Whether `name` has a fitting version (a flow that is not live is left to the catalog,
        /// which reports it as it always has).
        mutating func resolve(_ name: String) -> Bool {
            if let memo = chosen[name] { return memo != nil }
            if inProgress.contains(name) { return true }
            guard let current = live[name] else { return true }
            inProgress.insert(name)
            defer { inProgress.remove(name) }
            let earlier = (activated[name] ?? []).filter { $0 < current }.sorted(by: >)
            var ownFit = false
            for version in [current] + earlier {
                guard let stored = flows[FlowKey(name: name, version: version)] else { continue }
                let own = stored.definition.ownScreens
                guard own.features.union(stored.definition.ownRowKinds).isSubset(of: renderable) else { continue }
                ownFit = true
                var children = true
                for child in own.childFlows.sorted() where !resolve(child) {
                    children = false
                    break
                }
                if children {
                    chosen[name] = version
                    return true
                }
            }
            if !ownFit { lacking.insert(name) }
            chosen[name] = .some(nil)
            return false
        }

        /// The child flows of `name` in the version chosen for it.
        func children(of name: String) -> [String] {
            guard let version = chosen[name] ?? nil, let stored = flows[FlowKey(name: name, version: version)] else { return [] }
            return stored.definition.ownScreens.childFlows.sorted()
        }
    }

    /// The versions `client` can render, starting from `live` (the live versions, or those a
    /// flow test runs), each flow reached from the root at its fitting version (see
    /// `VersionResolver`); flows the root never reaches keep their version (no session shows
    /// them). Deterministic: the same client, definitions and history give the same versions.
    func fit(_ client: ClientCapabilities, live: [String: Int]) -> ClientFit {
        guard let renderable = client.features else { return .fits(versions: live, fallbacks: [:]) }
        let (flows, activated) = history
        var resolver = VersionResolver(flows: flows, activated: activated, live: live, renderable: renderable)
        let root = FlowCatalog.rootFlowName
        var versions = live
        var fallbacks: [String: Int] = [:]
        var fits = resolver.resolve(root)
        if fits {
            var visited: Set<String> = [root]
            var queue = [root]
            var position = 0
            while position < queue.count {
                let name = queue[position]
                position += 1
                guard live[name] != nil else { continue }
                guard let version = resolver.chosen[name] ?? nil else {
                    fits = false  // a cycle decided optimistically did not hold
                    break
                }
                versions[name] = version
                if version != live[name] { fallbacks[name] = version }
                for child in resolver.children(of: name) where visited.insert(child).inserted { queue.append(child) }
            }
        }
        // Whatever the resolution, a session is never put on a catalog the client cannot render.
        if fits, let catalog = catalog(for: versions), !client.canRender(catalog.screenFeatures()) { fits = false }
        guard fits else {
            let shown = catalog(for: live)?.screenFeatures() ?? ScreenFeatures()
            let flows = resolver.lacking.isEmpty ? [root] : resolver.lacking.sorted()
            return .unsupported(missing: shown.missing(from: renderable), flows: flows)
        }
        return .fits(versions: versions, fallbacks: fallbacks)
    }

    /// Whether `client` renders version `live[name]` of flow `name` with the child flows it
    /// names (each at a version it renders): false when it must fall back for that flow, or
    /// for a flow above it because of it.
    func rendersLive(_ name: String, client: ClientCapabilities, live: [String: Int]) -> Bool {
        guard let renderable = client.features, let current = live[name] else { return true }
        let (flows, activated) = history
        var resolver = VersionResolver(flows: flows, activated: activated, live: live, renderable: renderable)
        return resolver.resolve(name) && (resolver.chosen[name] ?? nil) == current
    }

    /// Whether `client` renders every variant of `experiment`, each as a session enrolled in it
    /// would run: the flows the experiment pins (in any variant) at the variant's pin or else
    /// their live version, the other flows as the client runs them (`base`). A client that cannot
    /// render one variant is kept out of the whole experiment, whichever variant it hashed into:
    /// excluding it only from that variant would leave old builds in the others, and bias the
    /// comparison. Variants of weight 0 receive no sessions and are not asked.
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
