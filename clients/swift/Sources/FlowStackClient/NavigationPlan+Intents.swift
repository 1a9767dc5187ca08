// NavigationPlan+Intents: what a declarative renderer reads from a state, and what a user's gesture asks for.

import FlowEngine
import JSON

extension NavigationState {
    /// The tree as a renderer shows it: presentations under tabs that are not selected are
    /// left out (they come back with their tab). SwiftUI views read this; UIKit follows plans.
    public var shownRoot: Node { root.shown }
}

extension NavigationState.Node: Identifiable {
    /// For a stacked node, the entries above its first: a `NavigationStack`'s path (the first
    /// entry is the stack's root view). Empty for a tabbed node.
    ///
    /// ```swift
    /// NavigationStack(path: model.path(of: node)) { view(for: node.entries[0]) }
    /// ```
    public var path: [NavigationState.Entry] { kind == "stacked" ? Array(entries.dropFirst()) : [] }

    /// What the user asks for when a `NavigationStack` shows `ids` as its path (a back swipe or
    /// the back button shortened it); nil when the path is what the node already shows or is
    /// not one of its prefixes (a renderer never pushes by itself).
    public func intent(forPath ids: [String]) -> NavigationIntent? {
        let current = path.map(\.id)
        guard ids.count < current.count, Array(current.prefix(ids.count)) == ids else { return nil }
        guard let target = (ids.last.map { id in entries.first { $0.id == id } } ?? entries.first) ?? nil else { return nil }
        return .back(stack: id, to: target.id, count: current.count - ids.count)
    }

    /// What the user asks for when a `TabView` selects `index`; nil when it is already selected
    /// or not a tab.
    public func intent(forSelection index: Int) -> NavigationIntent? {
        guard isTabbed, index != selectedIndex, entries.indices.contains(index) else { return nil }
        return .selectTab(tabs: id, index: index)
    }
}

extension NavigationState.Entry: Identifiable {}

/// What a user's gesture on a renderer asks for. The renderer does not move by itself: the app
/// turns the intent into an action (``action(in:)`` gives the sample app's), the client applies
/// it, and the next state comes back through a plan.
public enum NavigationIntent: Sendable, Equatable {
    /// Back on stack `stack` until entry `to` is on top (`count` entries off).
    case back(stack: String, to: String, count: Int)
    /// Tab `index` of the tab bar of node `tabs`.
    case selectTab(tabs: String, index: Int)
    /// Dismiss what node `presenter` presents (a sheet swiped down).
    case dismiss(presenter: String)

    /// The action the sample app's flows understand for the intent: `back` (from the screen on
    /// top) for going back and dismissing, `<flow>.selectTab {index}` for a tab. Flows that name
    /// these differently map intents themselves.
    ///
    /// ```swift
    /// if let action = intent.action(in: state) { client.send(action) }
    /// ```
    public func action(in state: NavigationState) -> FlowAction? {
        switch self {
        case .back, .dismiss:
            return FlowAction(type: FlowAction.back, from: state.top?.id)
        case .selectTab(let tabs, let index):
            guard let node = state.root.node(withId: tabs) else { return nil }
            return FlowAction(type: node.flow + ".selectTab", from: state.top?.id, params: ["index": .integer(index)])
        }
    }
}
