// FlowNavigationModel: a session's states as SwiftUI state — paths, tab selections, presentations. Not built on Linux; see README.md.
#if canImport(SwiftUI) && canImport(Observation)
import Observation
import SwiftUI

/// A session's states as SwiftUI reads them: a `NavigationStack` path per stacked node, a
/// `TabView` selection per tabbed node, a sheet or full-screen cover per presenting node, all
/// derived from the state shown (``NavigationState/shownRoot``).
///
/// Views never move by themselves: when a binding is written (the back button, a swipe, a tab
/// tapped, a sheet pulled down) the model reports the ``NavigationIntent`` and keeps showing the
/// state until the client publishes the next one.
///
/// ```swift
/// @State var model = FlowNavigationModel { intent in
///     if let state = client.state, let action = intent.action(in: state) { client.send(action) }
/// }
///
/// var body: some View {
///     if let root = model.root {
///         FlowNodeView(model: model, node: root) { screen in AnyView(Text(screen.feature)) }
///     }
/// }
/// // and for each state the client publishes: model.show(state)
/// ```
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1, *)
@MainActor
@Observable
public final class FlowNavigationModel {
    /// The state shown.
    public private(set) var state: NavigationState?
    /// The plan from the state shown before to this one: its styles, animation and interactive
    /// progress, for views that animate by it.
    public private(set) var lastPlan: NavigationPlan?
    /// Called with what a gesture asks for.
    @ObservationIgnored public var onIntent: @MainActor (NavigationIntent) -> Void

    public init(onIntent: @escaping @MainActor (NavigationIntent) -> Void = { _ in }) {
        self.onIntent = onIntent
    }

    /// Shows the next state.
    public func show(_ next: NavigationState) {
        lastPlan = NavigationPlan(from: state, to: next)
        state = next
    }

    /// The tree as shown, presentations under unselected tabs left out.
    public var root: NavigationState.Node? { state?.shownRoot }

    /// The shown node with this id.
    public func node(_ id: String) -> NavigationState.Node? { root?.node(withId: id) }

    /// The path of stacked node `id`: the ids of its entries above the first.
    public func path(of id: String) -> Binding<[String]> {
        Binding(
            get: { MainActor.assumeIsolated { self.node(id)?.path.map(\.id) ?? [] } },
            set: { ids in
                MainActor.assumeIsolated {
                    if let intent = self.node(id)?.intent(forPath: ids) { self.onIntent(intent) }
                }
            })
    }

    /// The selected tab of tabbed node `id`.
    public func selection(of id: String) -> Binding<Int> {
        Binding(
            get: { MainActor.assumeIsolated { self.node(id)?.selected ?? 0 } },
            set: { index in
                MainActor.assumeIsolated {
                    if let intent = self.node(id)?.intent(forSelection: index) { self.onIntent(intent) }
                }
            })
    }

    /// What node `id` presents with one of `styles` (nil for any style); writing nil asks to
    /// dismiss it.
    public func presented(over id: String, styles: Set<String>? = nil) -> Binding<NavigationState.Node?> {
        Binding(
            get: {
                MainActor.assumeIsolated {
                    guard let presented = self.node(id)?.presented?.node else { return nil }
                    guard let styles else { return presented }
                    return styles.contains(presented.style ?? "") ? presented : nil
                }
            },
            set: { value in
                MainActor.assumeIsolated {
                    if value == nil, self.node(id)?.presented != nil { self.onIntent(.dismiss(presenter: id)) }
                }
            })
    }
}

/// Draws a node of the tree: a `TabView` for a tabbed node, a `NavigationStack` for a stacked
/// one (a stack holding a single child flow draws the child, since stacks do not nest), and
/// what the node presents as a full-screen cover (`fullScreen`) or a sheet (any other style).
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1, *)
public struct FlowNodeView: View {
    let model: FlowNavigationModel
    let node: NavigationState.Node
    let screen: (NavigationState.Screen) -> AnyView

    public init(model: FlowNavigationModel, node: NavigationState.Node, screen: @escaping (NavigationState.Screen) -> AnyView) {
        self.model = model
        self.node = node
        self.screen = screen
    }

    public var body: some View {
        presentations(content)
    }

    @ViewBuilder private var content: some View {
        if node.kind == "tabbed" {
            TabView(selection: model.selection(of: node.id)) {
                ForEach(Array(node.entries.enumerated()), id: \.element.id) { index, entry in
                    view(for: entry).tag(index)
                }
            }
        } else if node.entries.count == 1, let only = node.entries.first, case .flow = only {
            view(for: only)
        } else if let first = node.entries.first {
            NavigationStack(path: model.path(of: node.id)) {
                view(for: first).navigationDestination(for: String.self) { id in
                    if let entry = model.node(node.id)?.entries.first(where: { $0.id == id }) { view(for: entry) }
                }
            }
        }
    }

    @ViewBuilder private func presentations(_ content: some View) -> some View {
        #if os(iOS) || os(tvOS) || os(visionOS)
        content
            .fullScreenCover(item: model.presented(over: node.id, styles: ["fullScreen"])) { presented in
                FlowNodeView(model: model, node: presented, screen: screen)
            }
            .sheet(item: model.presented(over: node.id, styles: Self.sheetStyles)) { presented in
                FlowNodeView(model: model, node: presented, screen: screen)
            }
        #else
        content.sheet(item: model.presented(over: node.id)) { presented in
            FlowNodeView(model: model, node: presented, screen: screen)
        }
        #endif
    }

    /// Every style but `fullScreen` shows as a sheet.
    static let sheetStyles: Set<String> = ["sheet", "pageSheet", "formSheet", "overFullScreen", "popover", "automatic", ""]

    private func view(for entry: NavigationState.Entry) -> AnyView {
        switch entry {
        case .screen(let value): screen(value)
        case .flow(let child): AnyView(FlowNodeView(model: model, node: child, screen: screen))
        }
    }
}
#endif
