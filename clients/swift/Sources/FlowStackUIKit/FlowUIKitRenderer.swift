// FlowUIKitRenderer: a session's flow tree in UIKit, driven by NavigationPlan; the user's gestures become actions. Not built on Linux; see APPLE.md.
// Here its state and `show`; the steps, gestures and controllers are in FlowUIKitRenderer+steps, +gestures, +controllers.
#if canImport(UIKit) && !os(watchOS)
import FlowStackClient
import UIKit

/// Shows a session's states with UIKit: a `UINavigationController` per stacked node, a
/// `UITabBarController` per tabbed node, a modal presentation per presented node, changed step
/// by step as ``NavigationPlan`` says.
///
/// The server decides where the user goes. What the user does to UIKit itself becomes the
/// action that does the same thing, posted through `send`:
/// - a tab tapped is not selected here: its `selectTab` action is posted, and the tab changes
///   when the answer comes;
/// - the back button posts `back` (the stack pops when the answer comes); an edge swipe, the
///   back button's menu, or the tvOS Menu button pop at once, and are put back if the action
///   is refused or if no action does exactly that;
/// - a sheet or popover pulled down or tapped outside goes away at once, and is presented
///   again if refused; one that no action dismisses cannot be pulled down.
///
/// ```swift
/// let renderer = FlowUIKitRenderer(window: window, send: { action in
///     try? await session.send(action)          // nil: refused, the renderer puts the screen back
/// }) { screen in
///     switch screen.feature {
///     case "home.first": HomeViewController(screen: screen, session: session)
///     default: PlaceholderViewController(title: screen.feature)
///     }
/// }
/// Task {                                      // on the main actor, e.g. in the scene delegate
///     for await state in await session.states() { renderer.show(state) }
/// }
/// ```
@MainActor
public final class FlowUIKitRenderer {
    /// Makes the view controller of a screen (its feature and params). Called once per entry id.
    public typealias ScreenFactory = @MainActor (NavigationState.Screen) -> UIViewController
    /// Posts an action for a gesture and returns the state the session then shows, or nil when
    /// it refused it (`try? await session.send(action)`).
    public typealias Send = @MainActor @Sendable (FlowAction) async -> NavigationState?
    /// The action that does what a gesture asks for in the state shown, or nil when none does.
    public typealias GestureAction = @MainActor (NavigationIntent, NavigationState) -> FlowAction?

    public let window: UIWindow
    /// Told why a plan could not be shown (the renderer then rebuilt the screen from nothing).
    public var onProblem: (@MainActor (String) -> Void)?
    /// The last such problem.
    public internal(set) var lastProblem: String?

    let makeScreen: ScreenFactory
    let send: Send
    let gestureAction: GestureAction
    let events = FlowUIKitEvents()

    /// The state shown, and the renderer's model of it (checked before touching UIKit).
    var shown: NavigationState?
    var model = RenderedTree()
    /// Controllers by flow node id (navigation or tab bar controllers) and by screen entry id.
    var containers: [String: UIViewController] = [:]
    var screens: [String: ScreenController] = [:]
    /// Wrappers that put a child flow's controller inside a stack, by node id.
    var wrappers: [String: EmbeddedFlowController] = [:]
    /// What each node presents, by the presenter's node id.
    var presentedControllers: [String: UIViewController] = [:]
    var stackDelegates: [String: StackDelegate] = [:]
    /// Presentations the user pulled down, by presenter id, until the session answers.
    var userDismissed: [String: UIViewController] = [:]

    /// While a plan runs, a gesture waits for its answer, or a sheet is being pulled, states
    /// that arrive wait; only the last one matters.
    var running = false
    var gesturesInFlight = 0
    var sheetsBeingPulled: Set<String> = []
    var waiting: NavigationState?
    var isBusy: Bool { running || gesturesInFlight > 0 || !sheetsBeingPulled.isEmpty }

    /// A renderer for `window`.
    ///
    /// - Parameters:
    ///   - send: posts a gesture's action to the session; nil means refused.
    ///   - gestureAction: the action for a gesture; by default the generic `back` when it does
    ///     exactly what the gesture did, and `<flow>.selectTab` (``NavigationState/gestureAction(for:)``).
    ///   - makeScreen: the controller of a screen.
    public init(window: UIWindow, send: @escaping Send,
                gestureAction: @escaping GestureAction = { intent, state in state.gestureAction(for: intent) },
                makeScreen: @escaping ScreenFactory) {
        self.window = window
        self.send = send
        self.gestureAction = gestureAction
        self.makeScreen = makeScreen
        events.renderer = self
    }

    /// Shows `state`: applies the plan from what is shown. A plan the renderer's model refuses,
    /// or a step UIKit does not carry out, is replaced by a rebuild from nothing; a state of
    /// another session is built from nothing.
    public func show(_ state: NavigationState) {
        guard !isBusy else {
            waiting = state
            return
        }
        guard let shown, shown.sessionId == state.sessionId else { return rebuild(state) }
        let plan = NavigationPlan(from: shown, to: state)
        guard !plan.isEmpty else {
            self.shown = state
            return settle()
        }
        let steps: [PlannedStep]
        let next: RenderedTree
        do throws(RenderError) {
            (steps, next) = try Self.planned(plan, from: model)
        } catch {
            report("the plan to version \(state.version) does not apply to what is shown: \(error)")
            return rebuild(state)
        }
        model = next
        self.shown = state
        rename(plan.renamed)
        run(steps, for: state, rebuilding: false)
    }
}
#endif
