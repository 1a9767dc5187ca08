// FlowTree: a session's navigation state — the root flow, the id counter, a pending interaction and link.

/// A session's navigation state, as a value: the root flow controller, the counter that gives
/// every flow and screen a unique id (never reused within the session), the interactive
/// transition in progress, if any, and the deep link waiting for its condition, if any.
///
/// Trees come from ``FlowEngine/start(catalog:context:rootFlow:limits:)``, from
/// ``FlowEngine/apply(_:to:catalog:context:limits:)`` and from storage
/// (`FlowTree(storage:)`); their fields cannot be set from
/// outside, which keeps them well-formed.
public struct FlowTree: Sendable, Equatable {
    public internal(set) var root: FlowNode
    /// The id the next flow or screen will get.
    public internal(set) var nextId: Int
    /// The interactive transition in progress (a back swipe, a sheet dragged down), if any.
    public internal(set) var interaction: Interaction? {
        get { interactionBox?.interaction }
        set { interactionBox = newValue.map(InteractionBox.init) }
    }
    /// Where ``interaction`` is kept: out of line, so that a tree without one (nearly every tree a
    /// server caches, copies or an app keeps) does not carry its 320 bytes in every copy.
    private var interactionBox: InteractionBox?
    /// A deep link whose `when` did not hold yet (a user not yet onboarded); it is followed
    /// after the first action that makes it hold.
    public internal(set) var pendingLink: PendingLink?
    /// Actions held back by guards, outermost first; each is applied again, or dropped, once
    /// its guard's flow has left the tree (see ``PendingAction``).
    public internal(set) var pendingActions: [PendingAction]

    init(
        root: FlowNode, nextId: Int, interaction: Interaction? = nil, pendingLink: PendingLink? = nil,
        pendingActions: [PendingAction] = []
    ) {
        self.root = root
        self.nextId = nextId
        self.interactionBox = interaction.map(InteractionBox.init)
        self.pendingLink = pendingLink
        self.pendingActions = pendingActions
    }
}

/// An ``Interaction`` held by reference, immutable: a change to a tree's interaction puts a new
/// box in its place, so that trees stay values. Equal when the interactions are.
private final class InteractionBox: Sendable, Equatable {
    let interaction: Interaction

    init(_ interaction: Interaction) {
        self.interaction = interaction
    }

    static func == (lhs: InteractionBox, rhs: InteractionBox) -> Bool {
        lhs === rhs || lhs.interaction == rhs.interaction
    }
}

extension FlowTree {
    /// Whether a flow with the id number `id` is anywhere in the tree.
    func containsFlow(id: Int) -> Bool {
        root.containsFlow(id: id)
    }

    /// Whether a screen with the id number `id` is anywhere in the tree.
    func containsScreen(id: Int) -> Bool {
        root.containsScreen(id: id)
    }

    /// The screen with the id number `id`, anywhere in the tree: the path to the flow that owns it
    /// and its index in that flow's entries.
    func place(ofScreen id: Int) -> (path: [TreeStep], index: Int)? {
        var path: [TreeStep] = []
        return root.place(ofScreen: id, path: &path)
    }

    /// The screen with the id number `id`, anywhere in the tree (with its list, which
    /// ``screens`` does not carry).
    public func screen(id: Int) -> ScreenEntry? {
        guard let place = place(ofScreen: id), let owner = root.node(at: place.path[...]),
            case .screen(let screen) = owner.entries[place.index]
        else { return nil }
        return screen
    }

    /// The topmost screen in ``screens`` showing `feature`, and the path to the flow that owns it.
    func topmostScreen(showing feature: String) -> (path: [TreeStep], index: Int)? {
        var found: (path: [TreeStep], index: Int)?
        var path: [TreeStep] = []
        root.findScreens(showing: feature, path: &path, found: &found)
        return found
    }
}

extension FlowNode {
    func containsScreen(id: Int) -> Bool {
        for entry in entries {
            switch entry {
            case .screen(let screen): if screen.id == id { return true }
            case .flow(let child): if child.containsScreen(id: id) { return true }
            }
        }
        return presented?.containsScreen(id: id) ?? false
    }

    func place(ofScreen id: Int, path: inout [TreeStep]) -> (path: [TreeStep], index: Int)? {
        for (index, entry) in entries.enumerated() {
            switch entry {
            case .screen(let screen):
                if screen.id == id { return (path, index) }
            case .flow(let child):
                path.append(.entry(index))
                if let found = child.place(ofScreen: id, path: &path) { return found }
                path.removeLast()
            }
        }
        if let presented {
            path.append(.presented)
            if let found = presented.place(ofScreen: id, path: &path) { return found }
            path.removeLast()
        }
        return nil
    }

    /// The lists of the screens that have one, by screen id.
    func collectLists(into lists: inout [Int: [ListSection]]) {
        for entry in entries {
            switch entry {
            case .screen(let screen): if let sections = screen.sections { lists[screen.id] = sections }
            case .flow(let child): child.collectLists(into: &lists)
            }
        }
        presented?.collectLists(into: &lists)
    }

    func containsFlow(id: Int) -> Bool {
        if self.id == id { return true }
        for entry in entries {
            if case .flow(let child) = entry, child.containsFlow(id: id) { return true }
        }
        return presented?.containsFlow(id: id) ?? false
    }

    /// Walks the screens in ``FlowTree/screens`` order, keeping the last one showing `feature`.
    fileprivate func findScreens(showing feature: String, path: inout [TreeStep], found: inout (path: [TreeStep], index: Int)?) {
        let shown: [Int] = kind == .stacked ? Array(entries.indices) : (entries.indices.contains(selected) ? [selected] : [])
        for index in shown {
            switch entries[index] {
            case .screen(let screen):
                if screen.feature == feature { found = (path, index) }
            case .flow(let child):
                path.append(.entry(index))
                child.findScreens(showing: feature, path: &path, found: &found)
                path.removeLast()
            }
        }
        if let presented {
            path.append(.presented)
            presented.findScreens(showing: feature, path: &path, found: &found)
            path.removeLast()
        }
    }
}

/// The visible path of a tree: the nodes from the root to the flow that owns the top screen
/// (through entries and presentations), and that screen.
struct VisiblePath {
    /// `steps[k]` leads from `nodes[k]` to `nodes[k + 1]`.
    var steps: [TreeStep]
    var nodes: [FlowNode]
    var screen: ScreenEntry

    var owner: FlowNode { nodes[nodes.count - 1] }
    var top: ScreenRef { ScreenRef(screen: screen, owner: owner) }

    /// Whether `nodes[depth]` is a presented flow.
    func isPresented(_ depth: Int) -> Bool {
        depth > 0 && steps[depth - 1] == .presented
    }
}

extension FlowTree {
    /// The path to the screen on top; `nil` only for a malformed tree.
    func visiblePath() -> VisiblePath? {
        // Room for the usual depths up front (an app's stack, a tabbed flow, a presented one):
        // grown one append at a time, the path's arrays were allocated three times per call.
        var steps: [TreeStep] = []
        steps.reserveCapacity(4)
        var nodes: [FlowNode] = []
        nodes.reserveCapacity(4)
        var node = root
        // Bounded so a malformed tree cannot loop; real trees are far shallower.
        for _ in 0..<4096 {
            nodes.append(node)
            if let presented = node.presented {
                steps.append(.presented)
                node = presented
                continue
            }
            let index = node.activeIndex
            guard node.entries.indices.contains(index) else { return nil }
            switch node.entries[index] {
            case .screen(let screen):
                return VisiblePath(steps: steps, nodes: nodes, screen: screen)
            case .flow(let child):
                steps.append(.entry(index))
                node = child
            }
        }
        return nil
    }

    /// The screen on top: what the user sees. Found as ``visiblePath()`` finds it, without
    /// building the path (two arrays, asked for at least twice an action).
    public var top: ScreenRef? { root.topScreen(depth: 0) }

    /// What is on screen and behind it, bottom to top: every entry of a stack, the selected tab
    /// of a tabbed flow, a presented flow on top of its presenter.
    public var screens: [ScreenRef] {
        var result: [ScreenRef] = []
        root.collectScreens(into: &result)
        return result
    }
}

extension FlowNode {
    /// The screen on top within this node, `depth` levels below the root. Each level is read
    /// where it lies in its parent's array: walking down with a `var` copied every node on the
    /// way (its name, entries and presented flow retained, then released).
    func topScreen(depth: Int) -> ScreenRef? {
        // Bounded as `visiblePath()` is, so a malformed tree cannot recurse without end.
        guard depth < 4096 else { return nil }
        if !presentedStorage.isEmpty { return presentedStorage[0].topScreen(depth: depth + 1) }
        let index = activeIndex
        guard entries.indices.contains(index) else { return nil }
        switch entries[index] {
        case .screen(let screen): return ScreenRef(screen: screen, owner: self)
        case .flow(let child): return child.topScreen(depth: depth + 1)
        }
    }

    func collectScreens(into result: inout [ScreenRef]) {
        switch kind {
        case .stacked:
            for entry in entries { collect(entry, into: &result) }
        case .tabbed:
            if entries.indices.contains(selected) { collect(entries[selected], into: &result) }
        }
        presented?.collectScreens(into: &result)
    }

    private func collect(_ entry: FlowEntry, into result: inout [ScreenRef]) {
        switch entry {
        case .screen(let screen): result.append(ScreenRef(screen: screen, owner: self))
        case .flow(let child): child.collectScreens(into: &result)
        }
    }
}
