// NavigationPlan+diff: the plan between two states, from the two flow trees and the transition.
import FlowEngine

extension NavigationPlan {
    /// The plan from the state shown (nil before the first render) to the next.
    ///
    /// When `next` is the next version of `shown`'s session, its transition says which step
    /// to animate and how (style, interactive finish); otherwise (a first render, a correction,
    /// versions made elsewhere) the steps are the same kind of diff, unstyled, the last one
    /// animated. Either way, applying the steps to what shows `shown` shows `next`.
    ///
    /// ```swift
    /// let plan = NavigationPlan(from: shown, to: next)
    /// plan.steps.first?.description   // "push e4 on stack f2, animated"
    /// ```
    public init(from shown: NavigationState?, to next: NavigationState) {
        let follows = shown.map { next.sessionId == $0.sessionId && next.version == $0.version + 1 } ?? false
        var planner = Planner(transition: follows ? next.transition : nil)
        let target = next.root.shown
        let pendingBefore = shown.flatMap(Self.interactionStep)
        let pendingAfter = Self.interactionStep(next)

        guard let shown else {
            planner.replaceRoot(with: target)
            self.init(steps: planner.ordered + (pendingAfter.map { [$0] } ?? []), followsTransition: false)
            return
        }
        var current = shown.root.shown

        // The same interaction, moved or not: nothing else can change meanwhile.
        if let before = pendingBefore, let after = pendingAfter, before.isSameChange(as: after), current == target {
            self.init(steps: before == after ? [] : [after], followsTransition: follows)
            return
        }

        // A link rebuilt the tree with new ids; when the engine says only its last step is new,
        // re-key what is shown instead of building it again.
        var renamed: [String: String] = [:]
        if follows, pendingBefore == nil, current.id != target.id, let type = next.transition?.type, type != "replaceRoot",
           current.flow == target.flow, current.kind == target.kind, current.allIds.isDisjoint(with: target.allIds) {
            Self.matchShapes(current, target, into: &renamed)
            current = current.renaming(renamed)
        }

        if current.isSameNode(as: target) {
            planner.reconcile(current, target)
        } else {
            renamed = [:]
            planner.replaceRoot(with: target)
        }
        planner.updateLists(from: current, to: target)
        var steps = planner.ordered
        if let before = pendingBefore {
            if next.transition?.interactive == true, follows, let first = steps.first, first.isSameChange(as: before) {
                steps[0].interaction = .finish
            } else {
                var cancel = before
                cancel.interaction = .cancel
                steps.insert(cancel, at: 0)
            }
        }
        self.init(renamed: renamed, steps: planner.styled(steps, pendingAfter: pendingAfter), followsTransition: follows)
    }

    /// The step a pending interaction drives, at its progress; nil when the state has none, or
    /// when its preview cannot be addressed: an interactive present (the flow it would show is
    /// not in the state until it finishes), or a push or tab change hidden under a modal.
    ///
    /// The container is found on the path from the root to the screen on top: the handler's
    /// node (the deepest of its flow), or for the generic `back` the deepest stack with more
    /// than one entry above the last presentation.
    public static func interactionStep(_ state: NavigationState) -> Step? {
        guard let interaction = state.interaction, let preview = interaction.transition,
              let from = preview.from?.flowId, let chain = state.root.shown.chain(to: from) else { return nil }
        let handlerIndex = chain.lastIndex { $0.node.flow == interaction.handledBy }
        let handler = handlerIndex.map { chain[$0].node }
        let visible = chain[(chain.lastIndex { $0.presented } ?? 0)...].map(\.node)
        func holdsTop(_ entry: NavigationState.Entry) -> Bool {
            guard let to = preview.to else { return false }
            switch entry {
            case .screen(let screen): return screen.id == to.id
            case .flow(let node): return to.flowId.map { node.node(withId: $0) != nil } ?? false
            }
        }
        func isStack(_ node: NavigationState.Node) -> Bool { node.kind == "stacked" && node.entries.count > 1 }
        let operation: Operation
        let container: Container
        switch preview.type {
        case "pop":
            guard let stack = handler.flatMap({ isStack($0) ? $0 : nil }) ?? visible.last(where: isStack) else { return nil }
            (container, operation) = (.stack(stack.id), .pop)
        case "popTo":
            func popsToTop(_ node: NavigationState.Node) -> Bool { isStack(node) && node.entries.dropLast().contains(where: holdsTop) }
            guard let stack = handler.flatMap({ popsToTop($0) ? $0 : nil }) ?? visible.last(where: popsToTop),
                  let entry = stack.entries.dropLast().last(where: holdsTop) else { return nil }
            (container, operation) = (.stack(stack.id), .popTo(entry.id))
        case "push":
            guard let stack = handler, stack.kind == "stacked", let to = preview.to, to.flowId == stack.id else { return nil }
            (container, operation) = (.stack(stack.id), .push(.screen(NavigationState.Screen(
                id: to.id, feature: to.feature, params: to.params, handoff: to.handoff))))
        case "dismiss":
            // The handler dismisses what it presents, or (a presented flow closing) itself.
            guard let index = handlerIndex else { return nil }
            let presenter: NavigationState.Node
            if index + 1 < chain.count, chain[index + 1].presented {
                presenter = chain[index].node
            } else if let presented = chain[...index].lastIndex(where: { $0.presented }), presented > 0 {
                presenter = chain[presented - 1].node
            } else {
                return nil
            }
            (container, operation) = (.presentation(over: presenter.id), .dismiss)
        case "selectTab":
            guard let tabs = handler, tabs.isTabbed, let index = tabs.entries.firstIndex(where: holdsTop) else { return nil }
            (container, operation) = (.tabs(tabs.id), .selectTab(index))
        default:
            return nil
        }
        return Step(container: container, operation: operation, animated: preview.animated, style: preview.style,
                    interaction: .progress(interaction.progress))
    }

    /// Pairs the old tree's nodes and screens with the new tree's where they look the same
    /// (flow and kind; feature and params), position by position.
    static func matchShapes(_ old: NavigationState.Node, _ new: NavigationState.Node, into map: inout [String: String]) {
        guard old.flow == new.flow, old.kind == new.kind else { return }
        map[old.id] = new.id
        let pairs: [(NavigationState.Entry, NavigationState.Entry)]
        if old.isTabbed {
            pairs = old.entries.count == new.entries.count ? Array(zip(old.entries, new.entries)) : []
        } else {
            pairs = Array(zip(old.entries, new.entries).prefix { sameShape($0, $1) })
        }
        for (lhs, rhs) in pairs where sameShape(lhs, rhs) {
            switch (lhs, rhs) {
            case (.screen(let a), .screen(let b)): map[a.id] = b.id
            case (.flow(let a), .flow(let b)): matchShapes(a, b, into: &map)
            default: break
            }
        }
        if let a = old.presented?.node, let b = new.presented?.node, a.style == b.style {
            matchShapes(a, b, into: &map)
        }
    }

    private static func sameShape(_ lhs: NavigationState.Entry, _ rhs: NavigationState.Entry) -> Bool {
        switch (lhs, rhs) {
        case (.screen(let a), .screen(let b)): a.feature == b.feature && a.params == b.params
        case (.flow(let a), .flow(let b)): a.flow == b.flow && a.kind == b.kind
        default: false
        }
    }
}

/// Walks two shown trees and collects the steps in the four phases a renderer needs:
/// dismissals, then stack and tab changes, then presentations, then refreshes of screens that
/// stay where they are with new params.
private struct Planner {
    let transition: NavigationState.Transition?
    var dismissals: [NavigationPlan.Step] = []
    var changes: [NavigationPlan.Step] = []
    var presentations: [NavigationPlan.Step] = []
    var refreshes: [NavigationPlan.Step] = []
    var lists: [NavigationPlan.Step] = []

    init(transition: NavigationState.Transition?) {
        self.transition = transition
    }

    var ordered: [NavigationPlan.Step] { dismissals.reversed() + changes + presentations + refreshes + lists }

    /// A list step for every screen in both trees (same id) whose list changed, in the next
    /// tree's order: with the transition's changes when it has them for that screen, else with
    /// changes computed here from the two lists (a jump, a correction).
    mutating func updateLists(from old: NavigationState.Node, to new: NavigationState.Node) {
        var before: [String: [ListSection]] = [:]
        old.collectLists(into: &before)
        guard !before.isEmpty else { return }
        new.forEachScreen { screen, owner in
            guard let shown = before[screen.id] else { return }
            let sections = screen.sections ?? []
            guard shown != sections else { return }
            let changes = transition?.lists[screen.id] ?? ListChanges.diff(from: shown, to: sections)
            let container: NavigationPlan.Container = owner.isTabbed ? .tabs(owner.id) : .stack(owner.id)
            lists.append(.init(container: container, operation: .updateList(screen: screen.id, changes: changes, sections: sections)))
        }
    }

    mutating func replaceRoot(with node: NavigationState.Node) {
        changes.append(.init(container: .window, operation: .replaceRoot(node.withoutPresentations)))
        presentAll(in: node)
    }

    /// Animates the step that shows the transition (or, for a jump, the last one) and appends
    /// the pending interaction.
    func styled(_ steps: [NavigationPlan.Step], pendingAfter: NavigationPlan.Step?) -> [NavigationPlan.Step] {
        var steps = steps
        if let transition {
            if let index = steps.firstIndex(where: { $0.interaction != .cancel && $0.operation.kind.shows(transitionType: transition.type) }) {
                steps[index].animated = transition.animated
                steps[index].style = transition.style
            }
        } else if let index = steps.lastIndex(where: { $0.interaction != .cancel && $0.operation.kind != .refresh && $0.operation.kind != .updateList }) {
            steps[index].animated = true
        }
        if let pendingAfter { steps.append(pendingAfter) }
        return steps
    }

    /// Steps that turn `old` into `new`, the same node (same id, flow and kind).
    mutating func reconcile(_ old: NavigationState.Node, _ new: NavigationState.Node) {
        // Its presentation.
        switch (old.presented?.node, new.presented?.node) {
        case (let shown?, let next?) where shown.isSameNode(as: next) && shown.style == next.style:
            reconcile(shown, next)
        case (.some, let next):
            dismissals.append(.init(container: .presentation(over: old.id), operation: .dismiss))
            if let next { present(next, over: new.id) }
        case (nil, let next?):
            present(next, over: new.id)
        case (nil, nil):
            break
        }
        if new.isTabbed {
            reconcileTabs(old, new)
        } else {
            reconcileStack(old, new)
        }
    }

    private mutating func reconcileStack(_ old: NavigationState.Node, _ new: NavigationState.Node) {
        let common = zip(old.entries, new.entries).prefix { $0.isSameOrRefreshed(as: $1) }.count
        let container = NavigationPlan.Container.stack(new.id)
        if common == old.entries.count && common == new.entries.count {
            // Nothing moves here.
        } else if common == new.entries.count, let last = new.entries.last {
            dismissPresentations(in: old.entries[common...])
            let popTo = transition?.type == "popTo" || old.entries.count - common > 1
            changes.append(.init(container: container, operation: popTo ? .popTo(last.id) : .pop))
        } else if common == old.entries.count, new.entries.count == common + 1, let last = new.entries.last {
            changes.append(.init(container: container, operation: .push(last.withoutPresentations)))
            presentAll(in: last)
        } else {
            replaceEntries(old, new) { .setStack($0) }
            return
        }
        reconcileKept(zip(old.entries, new.entries).prefix(common), in: container)
    }

    /// Entries that stay: flows are reconciled, screens with new params refreshed, and so is the
    /// screen the transition says received a result (even one equal to what it had: the app may
    /// react to the result itself).
    private mutating func reconcileKept(_ pairs: some Sequence<(NavigationState.Entry, NavigationState.Entry)>,
                                        in container: NavigationPlan.Container) {
        for (lhs, rhs) in pairs {
            switch (lhs, rhs) {
            case (.flow(let a), .flow(let b)):
                reconcile(a, b)
            case (.screen(let a), .screen(let b)) where a.params != b.params || b.id == transition?.result?.id:
                refreshes.append(.init(container: container, operation: .refresh(b)))
            default:
                break
            }
        }
    }

    private mutating func reconcileTabs(_ old: NavigationState.Node, _ new: NavigationState.Node) {
        let sameTabs = old.entries.count == new.entries.count && zip(old.entries, new.entries).allSatisfy { $0.isSameOrRefreshed(as: $1) }
        guard sameTabs else {
            replaceEntries(old, new) { .setTabs($0, selected: new.selectedIndex) }
            return
        }
        // Dismissals under a tab being left are collected by the walk below (the shown tree
        // has none under tabs that are not selected).
        if old.selectedIndex != new.selectedIndex {
            changes.append(.init(container: .tabs(new.id), operation: .selectTab(new.selectedIndex)))
        }
        reconcileKept(zip(old.entries, new.entries), in: .tabs(new.id))
    }

    /// setStack or setTabs: kept entries are reconciled, dropped ones dismiss what they present,
    /// new ones present what they hold once built.
    private mutating func replaceEntries(
        _ old: NavigationState.Node, _ new: NavigationState.Node, _ operation: ([NavigationState.Entry]) -> NavigationPlan.Operation
    ) {
        let container: NavigationPlan.Container = new.isTabbed ? .tabs(new.id) : .stack(new.id)
        changes.append(.init(container: container, operation: operation(new.entries.map(\.withoutPresentations))))
        for entry in old.entries where !new.entries.contains(where: { $0.isSameEntry(as: entry) }) {
            dismissPresentations(in: [entry])
        }
        for entry in new.entries {
            if let kept = old.entries.first(where: { $0.isSameEntry(as: entry) }) {
                if case .flow(let a) = kept, case .flow(let b) = entry { reconcile(a, b) }
            } else {
                presentAll(in: entry)
            }
        }
    }

    /// Dismisses what nodes inside `entries` present, at the outermost presenter of each branch.
    private mutating func dismissPresentations(in entries: some Sequence<NavigationState.Entry>) {
        for case .flow(let node) in entries {
            if node.presented != nil {
                dismissals.append(.init(container: .presentation(over: node.id), operation: .dismiss))
            }
            dismissPresentations(in: node.entries)
        }
    }

    /// Presents `node` over `presenter`, then what it and its children present.
    private mutating func present(_ node: NavigationState.Node, over presenter: String) {
        presentations.append(.init(container: .presentation(over: presenter), operation: .present(node.withoutPresentations)))
        presentAll(in: node)
    }

    /// The presentations a newly built subtree holds, outer first.
    private mutating func presentAll(in node: NavigationState.Node) {
        for case .flow(let child) in node.entries { presentAll(in: child) }
        if let presented = node.presented?.node { present(presented, over: node.id) }
    }

    private mutating func presentAll(in entry: NavigationState.Entry) {
        if case .flow(let node) = entry { presentAll(in: node) }
    }
}

extension NavigationState.Node {
    /// The lists of every screen in the tree (every screen with a list, presented ones
    /// included), by entry id; a screen with `sections` absent counts as having none.
    func collectLists(into lists: inout [String: [ListSection]]) {
        forEachScreen { screen, _ in lists[screen.id] = screen.sections ?? [] }
    }

    /// Calls `body` with every screen of the tree and the node that holds it, in tree order
    /// (entries, then what the node presents).
    func forEachScreen(_ body: (NavigationState.Screen, NavigationState.Node) -> Void) {
        for entry in entries {
            switch entry {
            case .screen(let screen): body(screen, self)
            case .flow(let child): child.forEachScreen(body)
            }
        }
        presented?.node.forEachScreen(body)
    }
}
