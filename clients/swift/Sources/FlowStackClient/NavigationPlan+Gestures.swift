// NavigationPlan+Gestures: the action a user's gesture posts, one NavigationStack per stack tree, and what a renderer shows until the session answers.

import FlowEngine
import JSON

// A back swipe, a tab tapped or a sheet pulled down changes the screen before the session has
// said anything. The renderers post the action that does the same thing and, when the session
// refuses it (or when no action does exactly that), show the state again. What follows is the
// pure part of that: which action, and what to show meanwhile; the Apple layers only wire it.

extension NavigationState {
    /// What the generic `back` does in this state, as the gesture that shows it: the pop of the
    /// nearest stack above the top screen with more than one entry, within the topmost
    /// presented layer, else the dismissal of that layer; nil when `back` is refused (nothing
    /// to go back to, or an interactive transition is pending).
    ///
    /// This mirrors the engine's generic `back` for flows that do not name `back` themselves
    /// (none of the sample app's do). An app whose flows take `back` over maps its intents
    /// itself.
    ///
    /// ```swift
    /// state.features          // ["onboarding.first", "onboarding.second"]
    /// state.backIntent        // .back(stack: "f2", to: "e3", count: 1)
    /// ```
    public var backIntent: NavigationIntent? {
        guard interaction == nil, let flowId = top?.flowId, let chain = root.shown.chain(to: flowId) else { return nil }
        for index in chain.indices.reversed() {
            let node = chain[index].node
            if node.kind == "stacked", node.entries.count > 1 {
                return .back(stack: node.id, to: node.entries[node.entries.count - 2].id, count: 1)
            }
            if chain[index].presented, index > 0 {
                return .dismiss(presenter: chain[index - 1].node.id)
            }
        }
        return nil
    }

    /// The action that does exactly what a gesture did, posted from the screen on top: `back`
    /// when the generic `back` pops that stack by one entry or dismisses that presentation
    /// (``backIntent``), `<flow>.selectTab {index}` for another tab of a tab bar on screen; nil
    /// otherwise (going back several entries at once, pulling down a sheet whose own stack
    /// would pop first, the selected tab again, an interaction pending). A renderer puts the
    /// screen back when there is none.
    ///
    /// ```swift
    /// if let action = state.gestureAction(for: intent) { try await session.send(action) }
    /// ```
    public func gestureAction(for intent: NavigationIntent) -> FlowAction? {
        guard interaction == nil, let top else { return nil }
        switch intent {
        case .back, .dismiss:
            guard intent == backIntent else { return nil }
            return FlowAction(type: FlowAction.back, from: top.id)
        case .selectTab(let tabs, let index):
            guard let node = root.shown.node(withId: tabs), node.isTabbed, node.entries.indices.contains(index),
                  index != node.selectedIndex else { return nil }
            return intent.action(in: self)
        }
    }

    /// Whether this state, returned for a gesture's action, should be shown in place of
    /// `shown`: the same session at a later version (a renderer that already shows that
    /// version or a later one, through the session's stream of states, keeps it).
    public func supersedes(_ shown: NavigationState?) -> Bool {
        guard let shown else { return true }
        return sessionId == shown.sessionId && version > shown.version
    }
}

extension NavigationState.Node {
    /// What one `NavigationStack` draws for this stacked node, bottom to top: its screens, the
    /// entries of stacked child flows in line (SwiftUI stacks must not nest), and each tabbed
    /// child flow as one entry. The first is the stack's root view, the others its path.
    /// Empty for a tabbed node.
    ///
    /// ```swift
    /// // app [a.root, inner [inner.first, inner.next]]
    /// node.stackEntries.map(\.id)   // ["e2", "e5", "e6"]: one stack, no nested NavigationStack
    /// ```
    public var stackEntries: [NavigationState.Entry] {
        guard kind == "stacked" else { return [] }
        return entries.flatMap { entry -> [NavigationState.Entry] in
            if case .flow(let child) = entry, child.kind == "stacked" { return child.stackEntries }
            return [entry]
        }
    }

    /// The stacked nodes whose entries ``stackEntries`` draws, this one first, then the child
    /// flows drawn in line, outer first: the nodes whose presentations hang on that stack.
    public var stackNodes: [NavigationState.Node] {
        guard kind == "stacked" else { return [] }
        return [self] + entries.flatMap { entry -> [NavigationState.Node] in
            if case .flow(let child) = entry, child.kind == "stacked" { return child.stackNodes }
            return []
        }
    }

    /// What the user asks for when the `NavigationStack` that draws ``stackEntries`` shows
    /// `ids` as its path (a back swipe, the back button or its menu shortened it): going back
    /// on the one stack that loses entries. Nil when the path is not a shorter prefix of the
    /// one shown, or when two stacks would change at once (a child flow loses entries and its
    /// parent entries above it).
    public func intent(forStackPath ids: [String]) -> NavigationIntent? {
        let current = stackEntries.dropFirst().map(\.id)
        guard ids.count < current.count, Array(current.prefix(ids.count)) == ids else { return nil }
        return backIntent(keeping: ids.count + 1)
    }

    /// The back that leaves the first `kept` drawn entries (at least one), when a single stack
    /// changes.
    private func backIntent(keeping kept: Int) -> NavigationIntent? {
        var before = 0
        for (index, entry) in entries.enumerated() {
            let drawn = Self.drawnCount(entry)
            guard before + drawn >= kept else {
                before += drawn
                continue
            }
            let dropped = entries.count - 1 - index
            if before + drawn == kept {
                return dropped > 0 ? .back(stack: id, to: entry.id, count: dropped) : nil
            }
            // Part of a stacked child flow stays: it alone may change.
            guard dropped == 0, case .flow(let child) = entry else { return nil }
            return child.backIntent(keeping: kept - before)
        }
        return nil
    }

    private static func drawnCount(_ entry: NavigationState.Entry) -> Int {
        if case .flow(let child) = entry, child.kind == "stacked" { return child.stackEntries.count }
        return 1
    }
}

/// Changes a user made on a declarative renderer (SwiftUI) that the session has not answered
/// yet. SwiftUI pops a stack, switches a tab or drops a sheet before the model hears of it;
/// reading these over the state shown keeps what the model says equal to what the user sees
/// until the answer comes. A refused change is forgotten, and the state shown is what the
/// renderer draws again.
///
/// ```swift
/// var pending = PendingGestures()
/// let ticket = pending.record(.path(stack: "f2", ids: []))
/// pending.path(of: "f2", shown: ["e4"])     // [] while the action is on its way
/// pending.resolve(ticket)                  // answered (taken or refused)
/// pending.path(of: "f2", shown: ["e4"])     // ["e4"]: whatever the state says
/// ```
public struct PendingGestures: Sendable, Equatable {
    /// What the user made a container show.
    public enum Change: Sendable, Hashable {
        /// The `NavigationStack` drawing stacked node `stack` shows this path of entry ids.
        case path(stack: String, ids: [String])
        /// The tab bar of node `tabs` shows tab `index`.
        case selection(tabs: String, index: Int)
        /// What node `presenter` presents was dismissed.
        case dismissed(presenter: String)
    }

    private var changes: [(ticket: Int, change: Change)] = []
    private var nextTicket = 0

    /// Nothing pending.
    public init() {}

    /// Whether no change waits for an answer.
    public var isEmpty: Bool { changes.isEmpty }

    /// Records a change the user made; the ticket resolves it.
    public mutating func record(_ change: Change) -> Int {
        nextTicket += 1
        changes.append((nextTicket, change))
        return nextTicket
    }

    /// Forgets a change once answered: refused, the state shown is drawn again; taken, the
    /// state that shows it is (or is about to be) shown.
    public mutating func resolve(_ ticket: Int) {
        changes.removeAll { $0.ticket == ticket }
    }

    /// The path the stack drawing node `stack` shows: the latest change, else `shown`.
    public func path(of stack: String, shown: [String]) -> [String] {
        for (_, change) in changes.reversed() {
            if case .path(stack, let ids) = change { return ids }
        }
        return shown
    }

    /// The tab node `tabs` shows: the latest change, else `shown`.
    public func selection(of tabs: String, shown: Int) -> Int {
        for (_, change) in changes.reversed() {
            if case .selection(tabs, let index) = change { return index }
        }
        return shown
    }

    /// Whether what node `presenter` presents was dismissed by the user, unanswered yet.
    public func isDismissed(presenter: String) -> Bool {
        changes.contains { $0.change == .dismissed(presenter: presenter) }
    }

    public static func == (lhs: PendingGestures, rhs: PendingGestures) -> Bool {
        lhs.nextTicket == rhs.nextTicket && lhs.changes.elementsEqual(rhs.changes) { $0.ticket == $1.ticket && $0.change == $1.change }
    }
}
