// FlowNavigationModel: a session's states as SwiftUI state, and the user's gestures as actions. Not built on Linux; see APPLE.md.
#if canImport(SwiftUI) && canImport(Observation)
import FlowStackClient
import Observation
import SwiftUI

/// A session's states as SwiftUI reads them: a `NavigationStack` path per stack, a `TabView`
/// selection per tabbed node, a sheet or full-screen cover per presenting node, all derived from
/// the state shown (``NavigationState/shownRoot``).
///
/// SwiftUI moves before anyone asks: a back swipe, a tab tapped, a sheet pulled down change the
/// screen, then write the binding. The model posts the action that does the same thing through
/// `send` and, until the answer, reads the change over the state (``PendingGestures``), so
/// what it says is what the user sees. Refused (or when no action does exactly that), the
/// change is dropped and SwiftUI draws the state again: the screen comes back, the tab
/// switches back, the sheet comes up again. Sheets that no action dismisses cannot be pulled
/// down, and a screen that no action pops shows no back button.
///
/// ```swift
/// struct SessionView: View {
///     let session: FlowSession
///     @State private var model: FlowNavigationModel
///
///     init(session: FlowSession) {
///         self.session = session
///         _model = State(initialValue: FlowNavigationModel { action in
///             try? await session.send(action)     // nil: refused, the model puts the screen back
///         })
///     }
///
///     var body: some View {
///         Group {
///             if let root = model.root {
///                 FlowNodeView(model: model, node: root) { screen in AnyView(ScreenView(screen: screen, session: session)) }
///             }
///         }
///         .task { @MainActor in
///             for await state in await session.states() { model.show(state) }
///         }
///     }
/// }
/// ```
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1, *)
@MainActor
@Observable
public final class FlowNavigationModel {
    /// Posts an action for a gesture and returns the state the session then shows, or nil when
    /// it refused it (`try? await session.send(action)`).
    public typealias Send = @MainActor @Sendable (FlowAction) async -> NavigationState?
    /// The action that does what a gesture asks for in the state shown, or nil when none does.
    public typealias GestureAction = @MainActor (NavigationIntent, NavigationState) -> FlowAction?

    /// The state shown.
    public private(set) var state: NavigationState?
    /// The plan from the state shown before to this one: its styles, animation and interactive
    /// progress, for views that animate by it.
    public private(set) var lastPlan: NavigationPlan?
    /// What the user changed that waits for the session's answer.
    public private(set) var pending = PendingGestures()
    /// Moved when a gesture has no action, so views read the state again and SwiftUI puts back
    /// what it changed.
    private(set) var revision = 0
    /// The state before: a screen popped is still drawn while it slides away.
    @ObservationIgnored private var previous: NavigationState?

    private let send: Send
    private let gestureAction: GestureAction

    /// A model that posts gestures' actions through `send`.
    ///
    /// - Parameters:
    ///   - send: posts a gesture's action to the session; nil means refused.
    ///   - gestureAction: the action for a gesture; by default the generic `back` when it does
    ///     exactly what the gesture did, and `<flow>.selectTab` (``NavigationState/gestureAction(for:)``).
    public init(send: @escaping Send,
                gestureAction: @escaping GestureAction = { intent, state in state.gestureAction(for: intent) }) {
        self.send = send
        self.gestureAction = gestureAction
    }

    /// Shows the next state (each state the session shows, in order).
    public func show(_ next: NavigationState) {
        lastPlan = NavigationPlan(from: state, to: next)
        previous = state
        state = next
    }

    /// The tree as shown, presentations under unselected tabs left out.
    public var root: NavigationState.Node? { state?.shownRoot }

    /// The shown node with this id.
    public func node(_ id: String) -> NavigationState.Node? { root?.node(withId: id) }

    /// The entry of a stack drawn for `id`, in the state shown or, while it slides away, the one before.
    func stackEntry(_ id: String, in stack: String) -> NavigationState.Entry? {
        if let entry = node(stack)?.stackEntries.first(where: { $0.id == id }) { return entry }
        return previous?.shownRoot.node(withId: stack)?.stackEntries.first { $0.id == id }
    }

    // MARK: bindings

    /// The path of the `NavigationStack` that draws stacked node `id`: the ids of its
    /// ``NavigationState/Node/stackEntries`` above the first. Shortening it posts the back it
    /// asks for.
    public func path(of id: String) -> Binding<[String]> {
        _ = shownPath(of: id)  // read in the view's body, so the view follows the state and the pending changes
        return Binding(
            get: { MainActor.assumeIsolated { self.shownPath(of: id) } },
            set: { ids in MainActor.assumeIsolated { self.userSetPath(ids, of: id) } })
    }

    /// The selected tab of tabbed node `id`. Selecting another posts its selectTab action.
    public func selection(of id: String) -> Binding<Int> {
        _ = shownSelection(of: id)
        return Binding(
            get: { MainActor.assumeIsolated { self.shownSelection(of: id) } },
            set: { index in MainActor.assumeIsolated { self.userSelect(index, of: id) } })
    }

    /// What node `id` presents with one of `styles` (nil for any style); writing nil (a sheet
    /// pulled down) posts the dismissal.
    public func presented(over id: String, styles: Set<String>? = nil) -> Binding<NavigationState.Node?> {
        _ = shownPresented(over: id, styles: styles)
        return Binding(
            get: { MainActor.assumeIsolated { self.shownPresented(over: id, styles: styles) } },
            set: { value in MainActor.assumeIsolated { if value == nil { self.userDismiss(over: id) } } })
    }

    /// Whether pulling down what node `id` presents posts an action (else the sheet stays put).
    public func canDismiss(presenter id: String) -> Bool {
        guard let state else { return false }
        return gestureAction(.dismiss(presenter: id), state) != nil
    }

    /// Whether going back one screen in the stack that draws node `id` posts an action (else
    /// the top screen shows no back button).
    public func canGoBack(inStack id: String) -> Bool {
        guard let state, let node = node(id) else { return false }
        let path = shownPath(of: id)
        guard !path.isEmpty, let intent = node.intent(forStackPath: Array(path.dropLast())) else { return false }
        return gestureAction(intent, state) != nil
    }

    // MARK: what is shown, and what the user did

    private func shownPath(of id: String) -> [String] {
        _ = revision
        let path = node(id).map { $0.stackEntries.dropFirst().map(\.id) } ?? []
        return pending.path(of: id, shown: path)
    }

    private func shownSelection(of id: String) -> Int {
        _ = revision
        return pending.selection(of: id, shown: node(id)?.selected ?? 0)
    }

    private func shownPresented(over id: String, styles: Set<String>?) -> NavigationState.Node? {
        _ = revision
        guard !pending.isDismissed(presenter: id), let presented = node(id)?.presented?.node else { return nil }
        guard let styles else { return presented }
        return styles.contains(presented.style ?? "") ? presented : nil
    }

    private func userSetPath(_ ids: [String], of id: String) {
        guard ids != shownPath(of: id) else { return }
        guard let state, let intent = node(id)?.intent(forStackPath: ids), let action = gestureAction(intent, state) else {
            return putBack()
        }
        post(action, change: .path(stack: id, ids: ids))
    }

    private func userSelect(_ index: Int, of id: String) {
        guard index != shownSelection(of: id) else { return }
        guard let state, let action = gestureAction(.selectTab(tabs: id, index: index), state) else { return putBack() }
        post(action, change: .selection(tabs: id, index: index))
    }

    private func userDismiss(over id: String) {
        // Nil written for a presentation the state already took away is SwiftUI catching up.
        guard shownPresented(over: id, styles: nil) != nil else { return }
        guard let state, let action = gestureAction(.dismiss(presenter: id), state) else { return putBack() }
        post(action, change: .dismissed(presenter: id))
    }

    /// Posts `action`; until the answer, `change` is read over the state. Taken, the state it
    /// returns is shown (unless the session's stream brought it, or a later one, already).
    private func post(_ action: FlowAction, change: PendingGestures.Change) {
        let ticket = pending.record(change)
        Task { [weak self] in
            guard let self else { return }
            let next = await self.send(action)
            if let next, next.supersedes(self.state) { self.show(next) }
            self.pending.resolve(ticket)
        }
    }

    /// After SwiftUI finished its change, makes views read the state again.
    private func putBack() {
        Task { [weak self] in self?.revision += 1 }
    }
}

/// Draws a node of the tree: a `TabView` for a tabbed node; for a stacked node one
/// `NavigationStack` holding its screens and those of the stacked child flows inside it
/// (SwiftUI stacks must not nest, so they are drawn as destinations of the same stack); and
/// what the nodes present, as a full-screen cover (`fullScreen`) or a sheet (any other style).
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1, *)
@MainActor
public struct FlowNodeView: View {
    let model: FlowNavigationModel
    let node: NavigationState.Node
    let screen: (NavigationState.Screen) -> AnyView
    /// Drawn inside an enclosing `NavigationStack` (a tab bar pushed on a stack): stacks in it
    /// draw their top screen without a stack of their own.
    let insideStack: Bool

    /// Draws `node`, with `screen` drawing each screen.
    public init(model: FlowNavigationModel, node: NavigationState.Node, screen: @escaping (NavigationState.Screen) -> AnyView) {
        self.init(model: model, node: node, insideStack: false, screen: screen)
    }

    init(model: FlowNavigationModel, node: NavigationState.Node, insideStack: Bool, screen: @escaping (NavigationState.Screen) -> AnyView) {
        self.model = model
        self.node = node
        self.insideStack = insideStack
        self.screen = screen
    }

    public var body: some View {
        content(model.node(node.id) ?? node)
    }

    private func content(_ current: NavigationState.Node) -> AnyView {
        if current.kind == "tabbed" {
            return presentations(of: [current], tabs(current))
        }
        let entries = current.stackEntries
        guard let first = entries.first else { return AnyView(EmptyView()) }
        if insideStack {
            // A stack inside a tab bar that is itself in a stack: its top screen only.
            return presentations(of: current.stackNodes, entryView(entries.last ?? first, insideStack: true))
        }
        if entries.count == 1, case .flow = first {
            // A tab bar and nothing above it: drawn without a stack, so its tabs hold theirs.
            return presentations(of: current.stackNodes, entryView(first, insideStack: false))
        }
        let stackId = current.id
        let stack = NavigationStack(path: model.path(of: stackId)) {
            entryView(first, insideStack: true)
                .navigationDestination(for: String.self) { id in destination(id, in: stackId) }
        }
        return presentations(of: current.stackNodes, AnyView(stack))
    }

    private func tabs(_ current: NavigationState.Node) -> AnyView {
        AnyView(TabView(selection: model.selection(of: current.id)) {
            ForEach(Array(current.entries.enumerated()), id: \.element.id) { index, entry in
                entryView(entry, insideStack: insideStack).tag(index)
            }
        })
    }

    /// A pushed entry of the stack drawing node `stack`; the top one shows a back button only
    /// when going back posts an action.
    private func destination(_ id: String, in stack: String) -> AnyView {
        guard let entry = model.stackEntry(id, in: stack) else { return AnyView(EmptyView()) }
        let isTop = model.node(stack)?.stackEntries.last?.id == id
        return AnyView(entryView(entry, insideStack: true).navigationBarBackButtonHidden(isTop && !model.canGoBack(inStack: stack)))
    }

    private func entryView(_ entry: NavigationState.Entry, insideStack: Bool) -> AnyView {
        switch entry {
        case .screen(let value): screen(value)
        case .flow(let child): AnyView(FlowNodeView(model: model, node: child, insideStack: insideStack, screen: screen))
        }
    }

    /// `content` with what each of `nodes` presents, outer first.
    private func presentations(of nodes: [NavigationState.Node], _ content: AnyView) -> AnyView {
        nodes.reduce(content) { view, presenter in AnyView(presentation(over: presenter.id, view)) }
    }

    @ViewBuilder private func presentation(over id: String, _ content: AnyView) -> some View {
        #if os(iOS) || os(tvOS) || os(visionOS)
        content
            .fullScreenCover(item: model.presented(over: id, styles: ["fullScreen"])) { presented in
                presentedView(presented, over: id)
            }
            .sheet(item: model.presented(over: id, styles: Self.sheetStyles)) { presented in
                presentedView(presented, over: id)
            }
        #else
        content.sheet(item: model.presented(over: id)) { presented in
            presentedView(presented, over: id)
        }
        #endif
    }

    /// A presented flow: a presentation context of its own (its stack is a new `NavigationStack`).
    private func presentedView(_ presented: NavigationState.Node, over id: String) -> some View {
        FlowNodeView(model: model, node: presented, insideStack: false, screen: screen)
            .interactiveDismissDisabled(!model.canDismiss(presenter: id))
    }

    /// Every style but `fullScreen` shows as a sheet.
    static let sheetStyles: Set<String> = ["sheet", "pageSheet", "formSheet", "overFullScreen", "popover", "automatic", ""]
}
#endif
