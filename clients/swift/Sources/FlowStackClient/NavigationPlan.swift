// NavigationPlan: from the state shown to the next, the ordered steps a renderer applies.
import FlowEngine

/// The steps that turn what a renderer shows for one ``NavigationState`` into what it shows for
/// the next: push, pop, pop to, set the whole stack, select a tab, present, dismiss, each
/// addressed to the container it acts on.
///
/// A renderer that mirrors the flow tree (a navigation stack per `stacked` node, a tab bar per
/// `tabbed` node, a modal presentation level over each presenting node, all keyed by flow node
/// id) applies ``steps`` in order, mechanically. The plan covers what the transition alone does
/// not say: a link that rebuilt the whole stack, nested modals dismissed at once, a presenter
/// on a tab that is no longer selected, a jump from a predicted state to a different server
/// state (a correction), a first render.
///
/// ```swift
/// let plan = NavigationPlan(from: shown, to: next)
/// for step in plan.steps {
///     switch (step.container, step.operation) {
///     case (.stack(let id), .push(let entry)):  stacks[id]?.push(make(entry), animated: step.animated)
///     case (.presentation(let id), .dismiss):   presenters[id]?.dismiss(animated: step.animated)
///     …
///     }
/// }
/// ```
///
/// ``RenderedTree`` is that renderer as a value; the tests apply every plan of the sample app
/// to it. Renderers that cannot follow a step (an old controller id after a rename they
/// missed) can always rebuild from `NavigationPlan(from: nil, to: next)`.
public struct NavigationPlan: Sendable, Equatable {
    /// Ids the next state gives to entries and flows the renderer already shows, unchanged:
    /// old id to new id. Non-empty only when a link rebuilt the tree as a cold start would
    /// (every id is new) and the engine reports that only its last step changed what is seen.
    /// A renderer re-keys its controllers before applying ``steps``; nothing moves on screen.
    public var renamed: [String: String]
    /// What to do, in order: a swipe in progress that does not finish here is cancelled first;
    /// then dismissals (topmost first, each at the lowest level that goes, so nested modals go
    /// in one step), stack and tab changes (outer containers first), presentations (outer
    /// first), refreshes of screens whose params changed (a result written into them), and a
    /// swipe in progress last. A modal over a tab that is not selected is not on
    /// screen: it is dismissed before its tab is left and presented again after it is selected.
    public var steps: [Step]
    /// Whether the next state's transition describes this change (it is the next version of
    /// the same session); false for a first render and for a jump (a correction, versions made
    /// elsewhere). Steps of a jump are not styled; only the last is animated.
    public var followsTransition: Bool

    /// A plan from its parts; ``init(from:to:)`` computes one.
    public init(renamed: [String: String] = [:], steps: [Step], followsTransition: Bool) {
        self.renamed = renamed
        self.steps = steps
        self.followsTransition = followsTransition
    }

    /// Whether nothing changes on screen.
    public var isEmpty: Bool { steps.isEmpty && renamed.isEmpty }
}

extension NavigationPlan {
    /// What a step acts on, by flow node id.
    public enum Container: Sendable, Hashable, CustomStringConvertible {
        /// The navigation stack of a `stacked` node.
        case stack(String)
        /// The tab bar of a `tabbed` node.
        case tabs(String)
        /// The modal presentation level over a node: what it presents.
        case presentation(over: String)
        /// The window: its root container.
        case window

        /// `stack f2`, `presentation over f1`, …
        public var description: String {
            switch self {
            case .stack(let id): "stack \(id)"
            case .tabs(let id): "tabs \(id)"
            case .presentation(let id): "presentation over \(id)"
            case .window: "window"
            }
        }
    }

    /// A change to one container. Entries and nodes are the next state's, without the
    /// presentations inside them: those follow as their own ``present(_:)`` steps.
    public enum Operation: Sendable, Equatable {
        /// Push one entry (a screen, or a child flow to build) on the stack.
        case push(NavigationState.Entry)
        /// Pop the top entry.
        case pop
        /// Pop to the entry with this id, which stays on top.
        case popTo(String)
        /// Replace the stack's entries (setRoot, replaceRoot, a rebuilt stack). Entries the
        /// stack already shows (same id, same screen or flow) are kept as they are; the others
        /// are built from the values given.
        case setStack([NavigationState.Entry])
        /// Select a tab by index.
        case selectTab(Int)
        /// Replace the tabs (kept as ``setStack(_:)`` keeps entries) and select one.
        case setTabs([NavigationState.Entry], selected: Int)
        /// Present a flow over the container's node.
        case present(NavigationState.Node)
        /// Dismiss what the container's node presents, with everything presented over it.
        case dismiss
        /// Show a new root flow in the window, dropping everything shown before.
        case replaceRoot(NavigationState.Node)
        /// Re-render the screen with this id, in place, with these params: the same screen
        /// received a result (the transition's ``NavigationState/Transition/result``). Nothing
        /// moves and nothing else is rebuilt.
        case refresh(NavigationState.Screen)
        /// Change the list of the screen with this id, in place: `changes` (UIKit batch
        /// indexes, by id) turn the list it showed into `sections`. The server's changes when
        /// the plan follows the transition, else computed here. A renderer that already shows
        /// `sections` (it built the screen from the next state) has nothing to do; a diffable
        /// data source applies a snapshot of `sections` and reconfigures the reloaded ids.
        case updateList(screen: String, changes: ListChanges, sections: [ListSection])

        /// The operation without its values.
        public var kind: Kind {
            switch self {
            case .push: .push
            case .pop: .pop
            case .popTo: .popTo
            case .setStack: .setStack
            case .selectTab: .selectTab
            case .setTabs: .setTabs
            case .present: .present
            case .dismiss: .dismiss
            case .replaceRoot: .replaceRoot
            case .refresh: .refresh
            case .updateList: .updateList
            }
        }
    }

    /// The kinds of ``Operation``.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case push, pop, popTo, setStack, selectTab, setTabs, present, dismiss, replaceRoot, refresh, updateList

        /// Whether a step of this kind shows a transition of `type` (`push`, `replaceRoot`, …).
        public func shows(transitionType type: String) -> Bool {
            switch type {
            case "push": self == .push
            case "pop": self == .pop
            case "popTo": self == .popTo || self == .pop
            case "setRoot", "replaceRoot": self == .setStack || self == .replaceRoot || self == .setTabs
            case "present": self == .present
            case "dismiss": self == .dismiss
            case "selectTab": self == .selectTab || self == .setTabs
            case "list": self == .updateList
            default: false
            }
        }
    }

    /// Where a step stands in an interactive transition (an edge swipe).
    public enum Interaction: Sendable, Equatable {
        /// Drive the step's animation to this progress (0…1) and hold it there; the step is not
        /// applied yet. Starts the interaction, or moves the one in progress.
        case progress(Double)
        /// Complete the interaction in progress: the step applies.
        case finish
        /// Roll the interaction in progress back: nothing changes.
        case cancel
    }

    /// One operation on one container, with how to show it.
    public struct Step: Sendable, Equatable, CustomStringConvertible {
        /// The container the step acts on.
        public var container: Container
        /// What it does there.
        public var operation: Operation
        /// Whether to animate it. Only the step that shows the state's transition is animated
        /// (and only when the transition is); the others bring hidden parts in line.
        public var animated: Bool
        /// The transition's style on that step: `crossFade`, `fullScreen`, `sheet`, …
        public var style: String?
        /// Set when the step belongs to an interactive transition.
        public var interaction: Interaction?

        /// A step; by default not animated, unstyled, not interactive.
        public init(container: Container, operation: Operation, animated: Bool = false, style: String? = nil,
                    interaction: Interaction? = nil) {
            self.container = container
            self.operation = operation
            self.animated = animated
            self.style = style
            self.interaction = interaction
        }

        /// Whether two steps do the same thing to the same container, however shown.
        public func isSameChange(as other: Step) -> Bool {
            container == other.container && operation == other.operation
        }

        /// One line: `push e4 on stack f2, animated`, `dismiss on presentation over f1, animated, fullScreen`.
        public var description: String {
            var text = "\(operation.kind.rawValue)"
            switch operation {
            case .push(let entry): text += " \(entry.id)"
            case .popTo(let id): text += " \(id)"
            case .setStack(let entries): text += " [\(entries.map(\.id).joined(separator: ", "))]"
            case .selectTab(let index): text += " \(index)"
            case .setTabs(let entries, let selected): text += " [\(entries.map(\.id).joined(separator: ", "))] \(selected)"
            case .present(let node), .replaceRoot(let node): text += " \(node.id) (\(node.flow))"
            case .refresh(let screen): text += " \(screen.id)"
            case .updateList(let screen, let changes, _):
                text += " \(screen) (-\(changes.rows.deleted.count) +\(changes.rows.inserted.count) ~\(changes.rows.moved.count) ↻\(changes.rows.reloaded.count) rows)"
            case .pop, .dismiss: break
            }
            text += " on \(container)"
            if animated { text += ", animated" }
            if let style { text += ", \(style)" }
            switch interaction {
            case .progress(let progress): text += ", interactive at \(progress)"
            case .finish: text += ", finishing the interaction"
            case .cancel: text += ", cancelling the interaction"
            case nil: break
            }
            return text
        }
    }
}

extension NavigationState.Entry {
    /// The entry id of a screen (`e7`) or the node id of a flow (`f3`).
    public var id: String {
        switch self {
        case .screen(let screen): screen.id
        case .flow(let node): node.id
        }
    }

    /// Whether two entries are the same thing shown: the same screen, or the same flow node
    /// (same id, flow and kind; its contents may differ).
    func isSameEntry(as other: NavigationState.Entry) -> Bool {
        switch (self, other) {
        case (.screen(let lhs), .screen(let rhs)): lhs.isSameScreen(as: rhs) && lhs.params == rhs.params
        case (.flow(let lhs), .flow(let rhs)): lhs.isSameNode(as: rhs)
        default: false
        }
    }

    /// Whether two entries stay in place: the same flow node, or the same screen whose params
    /// may have changed (a ``NavigationPlan/Operation/refresh(_:)`` shows them).
    func isSameOrRefreshed(as other: NavigationState.Entry) -> Bool {
        switch (self, other) {
        case (.screen(let lhs), .screen(let rhs)): lhs.isSameScreen(as: rhs)
        default: isSameEntry(as: other)
        }
    }

    /// The entry with every presentation inside it left out.
    var withoutPresentations: NavigationState.Entry {
        switch self {
        case .screen: self
        case .flow(let node): .flow(node.withoutPresentations)
        }
    }
}

extension NavigationState.Screen {
    /// The same entry showing the same feature (a native step or not), whatever its params.
    func isSameScreen(as other: NavigationState.Screen) -> Bool {
        id == other.id && feature == other.feature && handoff == other.handoff
    }
}

extension NavigationState.Node {
    /// Same id, flow and kind: the same controller, whatever it shows now.
    func isSameNode(as other: NavigationState.Node) -> Bool {
        id == other.id && flow == other.flow && kind == other.kind
    }

    var isTabbed: Bool { kind == "tabbed" }

    /// The selected tab, as the engine reads it (0 when absent).
    var selectedIndex: Int { selected ?? 0 }

    /// The node with every presentation in it, its own and its children's, left out.
    var withoutPresentations: NavigationState.Node {
        var node = self
        node.presented = nil
        node.entries = entries.map(\.withoutPresentations)
        return node
    }

    /// What a renderer shows of the node: presentations under tabs that are not selected are
    /// left out (a modal over a hidden tab is not on screen; it comes back with its tab).
    var shown: NavigationState.Node {
        var node = self
        node.entries = entries.enumerated().map { index, entry in
            guard case .flow(let child) = entry else { return entry }
            if isTabbed && index != selectedIndex { return .flow(child.withoutPresentations) }
            return .flow(child.shown)
        }
        node.presented = presented.map { NavigationState.Box($0.node.shown) }
        return node
    }

    /// Every flow node id and screen entry id in the tree, presented ones included.
    var allIds: Set<String> {
        var ids: Set<String> = [id]
        for entry in entries {
            switch entry {
            case .screen(let screen): ids.insert(screen.id)
            case .flow(let child): ids.formUnion(child.allIds)
            }
        }
        if let presented { ids.formUnion(presented.node.allIds) }
        return ids
    }

    /// The node with ids replaced through `map` (ids not in it stay).
    func renaming(_ map: [String: String]) -> NavigationState.Node {
        var node = self
        node.id = map[id] ?? id
        node.entries = entries.map { entry in
            switch entry {
            case .screen(var screen):
                screen.id = map[screen.id] ?? screen.id
                return .screen(screen)
            case .flow(let child):
                return .flow(child.renaming(map))
            }
        }
        node.presented = presented.map { NavigationState.Box($0.node.renaming(map)) }
        return node
    }

    /// The first node with this id, in this node's tree.
    public func node(withId target: String) -> NavigationState.Node? {
        if id == target { return self }
        for case .flow(let child) in entries {
            if let found = child.node(withId: target) { return found }
        }
        return presented?.node.node(withId: target)
    }

    /// The nodes from this one down to node `target`, each marked when it is presented (a
    /// presentation boundary lies above it); nil when `target` is not in the tree.
    func chain(to target: String, presented: Bool = false) -> [(node: NavigationState.Node, presented: Bool)]? {
        if id == target { return [(self, presented)] }
        for case .flow(let child) in entries {
            if let below = child.chain(to: target) { return [(self, presented)] + below }
        }
        if let below = self.presented?.node.chain(to: target, presented: true) { return [(self, presented)] + below }
        return nil
    }
}
