// FlowUIKitRenderer: a session's flow tree in UIKit, driven by NavigationPlan; the user's gestures become actions. Not built on Linux; see APPLE.md.
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
    public private(set) var lastProblem: String?

    private let makeScreen: ScreenFactory
    private let send: Send
    private let gestureAction: GestureAction
    private let events = FlowUIKitEvents()

    /// The state shown, and the renderer's model of it (checked before touching UIKit).
    private var shown: NavigationState?
    private var model = RenderedTree()
    /// Controllers by flow node id (navigation or tab bar controllers) and by screen entry id.
    private var containers: [String: UIViewController] = [:]
    private var screens: [String: ScreenController] = [:]
    /// Wrappers that put a child flow's controller inside a stack, by node id.
    private var wrappers: [String: EmbeddedFlowController] = [:]
    /// What each node presents, by the presenter's node id.
    private var presentedControllers: [String: UIViewController] = [:]
    private var stackDelegates: [String: StackDelegate] = [:]
    /// Presentations the user pulled down, by presenter id, until the session answers.
    private var userDismissed: [String: UIViewController] = [:]

    /// While a plan runs, a gesture waits for its answer, or a sheet is being pulled, states
    /// that arrive wait; only the last one matters.
    private var running = false
    private var gesturesInFlight = 0
    private var sheetsBeingPulled: Set<String> = []
    private var waiting: NavigationState?
    private var isBusy: Bool { running || gesturesInFlight > 0 || !sheetsBeingPulled.isEmpty }

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

    // MARK: steps

    /// A plan step with what the renderer's model shows once it is applied.
    struct PlannedStep: Sendable {
        var step: NavigationPlan.Step
        var after: RenderedTree
    }

    /// The plan's steps, each with the model after it, and the model at the end.
    private static func planned(_ plan: NavigationPlan, from tree: RenderedTree) throws(RenderError) -> ([PlannedStep], RenderedTree) {
        var tree = tree
        if !plan.renamed.isEmpty {
            try tree.apply(NavigationPlan(renamed: plan.renamed, steps: [], followsTransition: plan.followsTransition))
        }
        var steps: [PlannedStep] = []
        for step in plan.steps {
            try tree.apply(step)
            steps.append(PlannedStep(step: step, after: tree))
        }
        return (steps, tree)
    }

    /// Builds `state` from nothing (a first render, another session, or after a failure).
    private func rebuild(_ state: NavigationState) {
        let plan = NavigationPlan(from: nil, to: state)
        let steps: [PlannedStep]
        do throws(RenderError) {
            (steps, _) = try Self.planned(plan, from: RenderedTree())
        } catch {
            // Never seen (every state of the sample app and of the lab flows is drawn from
            // nothing in the tests); the steps still go, checked by UIKit alone.
            report("the plan from nothing to version \(state.version) does not apply: \(error)")
            steps = plan.steps.map { PlannedStep(step: $0, after: RenderedTree(state)) }
        }
        model = RenderedTree(state)
        shown = state
        run(steps, for: state, rebuilding: true)
    }

    private func run(_ steps: [PlannedStep], for state: NavigationState, rebuilding: Bool) {
        running = true
        runSteps(steps[...]) { [weak self] succeeded in
            guard let self else { return }
            self.running = false
            if !succeeded {
                if !rebuilding { return self.rebuild(state) }
                // Even a rebuild failed: build from nothing again with the next state.
                self.shown = nil
            }
            self.settle()
        }
    }

    private func runSteps(_ steps: ArraySlice<PlannedStep>, then done: @escaping @MainActor @Sendable (Bool) -> Void) {
        guard let planned = steps.first else { return done(true) }
        let completion = StepCompletion(timeout: .seconds(4)) { [weak self] succeeded, problem in
            guard let self else { return }
            guard succeeded else {
                self.report("\(planned.step): \(problem ?? "UIKit did not finish it")")
                return done(false)
            }
            self.runSteps(steps.dropFirst(), then: done)
        }
        perform(planned, then: completion)
    }

    private func perform(_ planned: PlannedStep, then completion: StepCompletion) {
        let step = planned.step
        if case .stack = step.container {} else if step.interaction != nil && step.interaction != .finish {
            // Only stacks are driven by progress; other interactive changes apply when they finish.
            return completion.succeed()
        }
        switch (step.container, step.operation) {
        case (_, .refresh(let screen)):
            (screens[screen.id]?.controller as? FlowScreenRefreshing)?.refresh(with: screen)
            completion.succeed()
        case (.window, .replaceRoot(let node)):
            replaceRoot(with: node, animated: step.animated, then: completion)
        case (.stack(let id), _):
            guard let stack = containers[id] as? UINavigationController else { return completion.fail("no navigation controller for \(id)") }
            performOnStack(stack, id: id, planned, then: completion)
        case (.tabs(let id), .selectTab(let index)):
            guard let tabs = containers[id] as? UITabBarController, (tabs.viewControllers ?? []).indices.contains(index) else {
                return completion.fail("no tab \(index) in \(id)")
            }
            tabs.selectedIndex = index
            completion.succeed()
        case (.tabs(let id), .setTabs(let entries, let selected)):
            guard let tabs = containers[id] as? UITabBarController else { return completion.fail("no tab bar controller for \(id)") }
            tabs.setViewControllers(entries.map { controller(for: $0, inStack: false) }, animated: false)
            tabs.selectedIndex = selected
            completion.succeed()
        case (.presentation(let id), .present(let node)):
            guard let presenter = containers[id] else { return completion.fail("no controller for \(id) to present from") }
            let controller = build(node)
            configurePresentation(of: controller, style: node.style ?? step.style, over: id, from: presenter)
            presentedControllers[id] = controller
            present(controller, from: presenter, animated: step.animated, attempts: 3, then: completion)
        case (.presentation(let id), .dismiss):
            userDismissed[id] = nil
            guard let presented = presentedControllers.removeValue(forKey: id) else { return completion.succeed() }
            dismiss(presented, animated: step.animated, then: completion)
        default:
            completion.fail("the renderer does not take this step")
        }
    }

    private func performOnStack(_ stack: UINavigationController, id: String, _ planned: PlannedStep, then completion: StepCompletion) {
        let step = planned.step
        let delegate = stackDelegates[id]
        switch step.interaction {
        case .progress(let progress):
            if let interaction = delegate?.interaction {
                interaction.update(CGFloat(progress))
                return completion.succeed()
            }
            // Start the change under a percent-driven transition and hold it at `progress`
            // until a finish or cancel step.
            delegate?.interaction = UIPercentDrivenInteractiveTransition()
            switch step.operation {
            case .pop:
                stack.popViewController(animated: true)
            case .popTo(let target):
                if let controller = existingController(forEntry: target) { stack.popToViewController(controller, animated: true) }
            case .push(let entry):
                stack.pushViewController(controller(for: entry, inStack: true), animated: true)
            default:
                break
            }
            delegate?.interaction?.update(CGFloat(progress))
            return completion.succeed()
        case .finish, .cancel:
            if let interaction = delegate?.interaction {
                if step.interaction == .finish { interaction.finish() } else { interaction.cancel() }
                return afterTransition(of: stack, animated: true) { [weak self] in
                    delegate?.interaction = nil
                    self?.updateBar(of: stack)
                    completion.succeed()
                }
            }
            // Nothing was started here (the renderer came in mid-swipe): a cancel changes
            // nothing, a finish applies the step now.
            if step.interaction == .cancel { return completion.succeed() }
        case nil:
            break
        }
        // A plain change: the stack shows what the model shows after the step. UIKit's
        // setViewControllers animates it as a push or a pop by the new top. When the stack
        // already shows it (the user's swipe did it, and the session took it), nothing moves.
        guard let node = planned.after.root?.node(withId: id) else { return completion.fail("\(id) is not in the model after the step") }
        let wanted = node.entries.map { controller(for: $0, inStack: true) }
        let animated = step.animated || step.interaction != nil
        whenIdle(stack) { [weak self] in
            guard let self else { return completion.succeed() }
            if !stack.viewControllers.elementsEqual(wanted, by: ===) {
                stack.setViewControllers(wanted, animated: animated)
            }
            self.updateBar(of: stack)
            self.afterTransition(of: stack, animated: animated) { completion.succeed() }
        }
    }

    /// Runs `body` once `controller` is in no transition (a swipe ending, a pop finishing).
    private func whenIdle(_ controller: UIViewController, _ body: @escaping @MainActor @Sendable () -> Void) {
        guard let coordinator = controller.transitionCoordinator else { return body() }
        _ = coordinator.animate(alongsideTransition: nil) { _ in MainActor.assumeIsolated { body() } }
    }

    private func afterTransition(of stack: UINavigationController, animated: Bool, then done: @escaping @MainActor @Sendable () -> Void) {
        guard animated, let coordinator = stack.transitionCoordinator else { return done() }
        _ = coordinator.animate(alongsideTransition: nil) { _ in MainActor.assumeIsolated { done() } }
    }

    /// Presents `controller` from `presenter`, or from the top of what it already presents
    /// (an alert of the app's own). A presenter not yet in a window (built a moment ago) is
    /// retried a few times; a presentation UIKit refuses fails the step.
    private func present(_ controller: UIViewController, from presenter: UIViewController, animated: Bool, attempts: Int,
                         then completion: StepCompletion) {
        if presenter.viewIfLoaded?.window == nil { window.layoutIfNeeded() }
        var host = presenter
        while let above = host.presentedViewController, !above.isBeingDismissed { host = above }
        let ready = presenter.viewIfLoaded?.window != nil && host.transitionCoordinator == nil && host.presentedViewController == nil
        guard ready else {
            guard attempts > 0 else { return completion.fail("\(type(of: presenter)) is not in a window, or still busy, after several tries") }
            Task { @MainActor [weak self] in
                try? await Task.sleep(for: .milliseconds(100))
                self?.present(controller, from: presenter, animated: animated, attempts: attempts - 1, then: completion)
            }
            return
        }
        host.present(controller, animated: animated) { MainActor.assumeIsolated { completion.succeed() } }
        if controller.presentingViewController == nil && !controller.isBeingPresented {
            completion.fail("UIKit did not present \(type(of: controller)) from \(type(of: host))")
        }
    }

    /// Dismisses `presented` and what it presents; already gone (pulled down by the user) is done.
    private func dismiss(_ presented: UIViewController, animated: Bool, then completion: StepCompletion) {
        guard let host = presented.presentingViewController else { return completion.succeed() }
        whenIdle(presented) {
            guard presented.presentingViewController != nil else { return completion.succeed() }
            host.dismiss(animated: animated) { MainActor.assumeIsolated { completion.succeed() } }
        }
    }

    private func replaceRoot(with node: NavigationState.Node, animated: Bool, then completion: StepCompletion) {
        let old = window.rootViewController
        // A presented controller outlives a root swap unless dismissed first.
        if old?.presentedViewController != nil { old?.dismiss(animated: false) }
        containers = [:]
        screens = [:]
        wrappers = [:]
        presentedControllers = [:]
        stackDelegates = [:]
        userDismissed = [:]
        window.rootViewController = build(node)
        window.makeKeyAndVisible()
        guard animated, old != nil else { return completion.succeed() }
        UIView.transition(with: window, duration: 0.3, options: .transitionCrossDissolve, animations: nil) { _ in
            MainActor.assumeIsolated { completion.succeed() }
        }
    }

    // MARK: after a plan, a gesture, or an answer

    /// Once nothing runs: puts back what the user changed and the session did not take, sets
    /// the back buttons and sheets for the state shown, then shows the state that waited.
    private func settle() {
        guard !isBusy else { return }
        if let next = waiting {
            // Its plan runs first (it may take away what the user changed); its end settles again.
            waiting = nil
            return show(next)
        }
        restoreUserChanges()
        guard !isBusy else { return }
        updateAffordances()
    }

    /// Makes UIKit show the model where the user changed it: stacks popped by a swipe the
    /// session refused or did not follow, sheets pulled down it did not dismiss.
    private func restoreUserChanges() {
        // What was dismissed with its presenter (a dismissal takes what is above it along).
        presentedControllers = presentedControllers.filter { model.root?.node(withId: $0.key)?.presented != nil }
        for (id, controller) in userDismissed {
            userDismissed[id] = nil
            guard let presenter = containers[id], model.root?.node(withId: id)?.presented != nil, controller.presentingViewController == nil else {
                continue
            }
            presentedControllers[id] = controller
            running = true
            let completion = StepCompletion(timeout: .seconds(4)) { [weak self] succeeded, problem in
                guard let self else { return }
                self.running = false
                if !succeeded, let state = self.shown {
                    self.report("putting back what \(id) presents: \(problem ?? "UIKit did not finish it")")
                    return self.rebuild(state)
                }
                self.settle()
            }
            present(controller, from: presenter, animated: true, attempts: 3, then: completion)
            return  // one at a time; settle comes back for the others
        }
        guard model.interaction == nil else { return }
        for (id, container) in containers {
            guard let stack = container as? UINavigationController, stack.transitionCoordinator == nil,
                  let node = model.root?.node(withId: id) else { continue }
            let wanted = node.entries.map { controller(for: $0, inStack: true) }
            if !stack.viewControllers.elementsEqual(wanted, by: ===) {
                stack.setViewControllers(wanted, animated: true)
                updateBar(of: stack)
            }
        }
    }

    /// The back button of the screen on top posts `back` when it pops that screen's stack, and
    /// is hidden otherwise; a sheet that no action dismisses cannot be pulled down.
    private func updateAffordances() {
        #if os(iOS) || os(visionOS)
        guard let state = shown else { return }
        let intent = state.backIntent
        let action: FlowAction? = intent.flatMap { gestureAction($0, state) }
        for (id, record) in screens {
            let item = record.controller.navigationItem
            if id == state.top?.id, case .back? = intent, action != nil, let intent {
                // backAction replaces what the back button does, and adds one to the root of a
                // child flow's stack when back takes that flow off its parent stack.
                item.backAction = UIAction(image: UIImage(systemName: "chevron.backward")) { [weak self] _ in
                    MainActor.assumeIsolated { self?.post(intent, undo: nil) }
                }
                item.hidesBackButton = false
            } else {
                item.backAction = nil
                item.hidesBackButton = true
            }
        }
        for (id, controller) in presentedControllers {
            controller.isModalInPresentation = gestureAction(.dismiss(presenter: id), state) == nil
        }
        #endif
    }

    // MARK: gestures

    /// Posts the action for what the user did. `undo` puts UIKit back when the gesture already
    /// changed it (nil when it changed nothing yet); states that arrive meanwhile wait, so the
    /// undo finds UIKit as the gesture left it.
    private func post(_ intent: NavigationIntent, undo: (@MainActor @Sendable () -> Void)?) {
        guard let state = shown, let action = gestureAction(intent, state) else {
            undo?()
            return settle()
        }
        gesturesInFlight += 1
        Task { @MainActor [weak self] in
            guard let self else { return }
            let next = await self.send(action)
            self.gesturesInFlight -= 1
            if let next {
                // Taken: show its state now, unless the session's stream brought it, or a
                // later one, already.
                if next.supersedes(self.shown), self.waiting.map({ next.supersedes($0) }) ?? true { self.waiting = next }
            } else {
                undo?()
            }
            self.settle()
        }
    }

    /// A tab tapped: posts its selectTab action and leaves the selection to the answer.
    fileprivate func tabBarController(_ tabs: UITabBarController, shouldSelect controller: UIViewController) -> Bool {
        guard let id = containerId(of: tabs), let index = tabs.viewControllers?.firstIndex(where: { $0 === controller }),
              index != tabs.selectedIndex else {
            // The selected tab again would pop its stack to the root here; the server decides that too.
            return false
        }
        post(.selectTab(tabs: id, index: index), undo: nil)
        return false
    }

    /// A stack finished showing a controller: if the user popped it (edge swipe, back button
    /// menu, tvOS Menu button), post the back it asks for, and put the stack back if refused.
    fileprivate func stackDidShow(_ stack: UINavigationController) {
        guard !isBusy, model.interaction == nil, let id = containerId(of: stack), let node = model.root?.node(withId: id) else { return }
        let wanted = node.entries.map { controller(for: $0, inStack: true) }
        let shownControllers = stack.viewControllers
        guard !shownControllers.elementsEqual(wanted, by: ===) else { return }
        let restore: @MainActor @Sendable () -> Void = { [weak self] in self?.restoreStack(id) }
        guard !shownControllers.isEmpty, shownControllers.count < wanted.count,
              zip(shownControllers, wanted).allSatisfy({ $0 === $1 }) else { return restore() }
        let kept = shownControllers.count
        post(.back(stack: id, to: node.entries[kept - 1].id, count: wanted.count - kept), undo: restore)
    }

    private func restoreStack(_ id: String) {
        guard let stack = containers[id] as? UINavigationController, let node = model.root?.node(withId: id) else { return }
        whenIdle(stack) { [weak self] in
            guard let self else { return }
            stack.setViewControllers(node.entries.map { self.controller(for: $0, inStack: true) }, animated: true)
            self.updateBar(of: stack)
        }
    }

    /// Whether the system edge swipe may start on `recognizer`'s stack: only when it pops the
    /// stack that the generic back pops, with an action for it, and nothing else is moving.
    fileprivate func edgeSwipeShouldBegin(_ recognizer: UIGestureRecognizer) -> Bool {
        #if os(iOS) || os(visionOS)
        guard !isBusy, model.interaction == nil, let state = shown,
              let id = containers.first(where: { ($0.value as? UINavigationController)?.interactivePopGestureRecognizer === recognizer })?.key,
              let stack = containers[id] as? UINavigationController, stack.viewControllers.count > 1, stack.transitionCoordinator == nil,
              let node = model.root?.node(withId: id), node.entries.count > 1 else { return false }
        return gestureAction(.back(stack: id, to: node.entries[node.entries.count - 2].id, count: 1), state) != nil
        #else
        return false
        #endif
    }

    /// Whether a sheet or popover may go when pulled down or tapped outside: when an action
    /// dismisses it and nothing else is moving.
    fileprivate func presentationShouldDismiss(_ presented: UIViewController) -> Bool {
        guard !isBusy, let state = shown, let id = presenterId(of: presented) else { return false }
        return gestureAction(.dismiss(presenter: id), state) != nil
    }

    /// A pull-down started: states wait until it ends (cancelled, or dismissed and answered).
    fileprivate func presentationWillDismiss(_ presented: UIViewController, coordinator: (any UIViewControllerTransitionCoordinator)?) {
        guard let id = presenterId(of: presented), let coordinator else { return }
        sheetsBeingPulled.insert(id)
        _ = coordinator.animate(alongsideTransition: nil) { [weak self] context in
            let cancelled = context.isCancelled
            MainActor.assumeIsolated {
                guard let self, cancelled else { return }
                self.sheetsBeingPulled.remove(id)
                self.settle()
            }
        }
    }

    /// A pull-down dismissed the presentation: post the dismissal; refused, present it again.
    fileprivate func presentationDidDismiss(_ presented: UIViewController) {
        guard let id = presenterId(of: presented) else { return }
        sheetsBeingPulled.remove(id)
        userDismissed[id] = presented
        presentedControllers[id] = nil
        // Refused: settle's restore presents it again, from the model that still shows it.
        post(.dismiss(presenter: id), undo: nil)
    }

    private func containerId(of controller: UIViewController) -> String? {
        containers.first { $0.value === controller }?.key
    }

    private func presenterId(of presented: UIViewController) -> String? {
        presentedControllers.first { $0.value === presented }?.key
    }

    // MARK: controllers

    /// Builds the controller of a node: its container with its entries (presentations come as
    /// their own steps).
    private func build(_ node: NavigationState.Node) -> UIViewController {
        if node.kind == "tabbed" {
            let tabs = UITabBarController()
            tabs.delegate = events
            tabs.setViewControllers(node.entries.map { controller(for: $0, inStack: false) }, animated: false)
            tabs.selectedIndex = node.selected ?? 0
            containers[node.id] = tabs
            return tabs
        }
        let stack = UINavigationController()
        let delegate = StackDelegate()
        delegate.renderer = self
        stack.delegate = delegate
        #if os(iOS) || os(visionOS)
        // The edge swipe asks the renderer before it starts (the recognizer exists once the
        // view is loaded).
        stack.loadViewIfNeeded()
        stack.interactivePopGestureRecognizer?.delegate = events
        #endif
        stackDelegates[node.id] = delegate
        stack.setViewControllers(node.entries.map { controller(for: $0, inStack: true) }, animated: false)
        containers[node.id] = stack
        updateBar(of: stack)
        return stack
    }

    /// A screen's controller (made once per entry id, again if the id now shows another
    /// feature), or a child flow's: wrapped when it goes into a stack, since a navigation
    /// controller cannot be pushed.
    private func controller(for entry: NavigationState.Entry, inStack: Bool) -> UIViewController {
        switch entry {
        case .screen(let screen):
            if let made = screens[screen.id], made.feature == screen.feature, made.handoff == screen.handoff { return made.controller }
            let made = makeScreen(screen)
            #if os(iOS) || os(visionOS)
            made.navigationItem.hidesBackButton = true  // until updateAffordances gives the top one its back
            #endif
            screens[screen.id] = ScreenController(feature: screen.feature, handoff: screen.handoff, controller: made)
            return made
        case .flow(let node):
            let child = containers[node.id] ?? build(node)
            guard inStack else { return child }
            if let wrapper = wrappers[node.id] { return wrapper }
            let wrapper = EmbeddedFlowController(child)
            wrappers[node.id] = wrapper
            return wrapper
        }
    }

    /// The controller shown for an entry id, if made.
    private func existingController(forEntry id: String) -> UIViewController? {
        screens[id]?.controller ?? wrappers[id]
    }

    /// A stack whose top is a child flow hides its own bar: the child shows one.
    private func updateBar(of stack: UINavigationController) {
        stack.setNavigationBarHidden(stack.topViewController is EmbeddedFlowController, animated: false)
    }

    private func rename(_ renamed: [String: String]) {
        guard !renamed.isEmpty else { return }
        func moved<V>(_ table: [String: V]) -> [String: V] {
            Dictionary(table.map { (renamed[$0.key] ?? $0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        }
        containers = moved(containers)
        screens = moved(screens)
        wrappers = moved(wrappers)
        presentedControllers = moved(presentedControllers)
        stackDelegates = moved(stackDelegates)
        userDismissed = moved(userDismissed)
    }

    private func report(_ problem: String) {
        lastProblem = problem
        onProblem?(problem)
    }

    /// Style, popover anchor and delegate of a presentation.
    private func configurePresentation(of controller: UIViewController, style: String?, over id: String, from presenter: UIViewController) {
        controller.modalPresentationStyle = Self.presentationStyle(style)
        #if os(iOS) || os(visionOS)
        if controller.modalPresentationStyle == .popover, let popover = controller.popoverPresentationController {
            // A popover with no source raises on iPad: anchor it at the middle of the
            // presenter's view, with no arrow (on iPhone it adapts to a sheet anyway).
            let bounds = presenter.view.bounds
            popover.sourceView = presenter.view
            popover.sourceRect = CGRect(x: bounds.midX, y: bounds.midY, width: 0, height: 0)
            popover.permittedArrowDirections = []
        }
        // Pull-downs and taps outside ask the renderer (presentationControllerShouldDismiss).
        controller.presentationController?.delegate = events
        if let state = shown {
            controller.isModalInPresentation = gestureAction(.dismiss(presenter: id), state) == nil
        }
        #endif
    }

    /// `fullScreen`, `sheet`/`pageSheet`, `formSheet`, `overFullScreen`, `popover`; anything
    /// else is automatic. tvOS has no sheets or popovers: they show full screen there.
    static func presentationStyle(_ style: String?) -> UIModalPresentationStyle {
        #if os(tvOS)
        switch style {
        case "overFullScreen": .overFullScreen
        case "fullScreen", "sheet", "pageSheet", "formSheet", "popover": .fullScreen
        default: .automatic
        }
        #else
        switch style {
        case "fullScreen": .fullScreen
        case "sheet", "pageSheet": .pageSheet
        case "formSheet": .formSheet
        case "overFullScreen": .overFullScreen
        case "popover": .popover
        default: .automatic
        }
        #endif
    }
}

/// A screen's controller with what it was made for.
struct ScreenController {
    var feature: String
    var handoff: String?
    var controller: UIViewController
}

/// A screen controller that shows new params in place (a result written into its screen);
/// controllers that are not keep what they show.
@MainActor
public protocol FlowScreenRefreshing: AnyObject {
    func refresh(with screen: NavigationState.Screen)
}

/// Calls its callback exactly once: when the step completes, when it fails, or after a timeout
/// (a UIKit completion that never comes must not leave the renderer running forever).
@MainActor
final class StepCompletion {
    private var callback: (@MainActor @Sendable (Bool, String?) -> Void)?
    private var timer: Task<Void, Never>?

    init(timeout: Duration, _ callback: @escaping @MainActor @Sendable (Bool, String?) -> Void) {
        self.callback = callback
        // Holds the completion until the timeout, so one that UIKit dropped still fires.
        timer = Task { @MainActor in
            try? await Task.sleep(for: timeout)
            self.finish(false, "no completion after \(timeout)")
        }
    }

    func succeed() { finish(true, nil) }

    func fail(_ problem: String) { finish(false, problem) }

    private func finish(_ succeeded: Bool, _ problem: String?) {
        guard let callback else { return }
        self.callback = nil
        timer?.cancel()
        callback(succeeded, problem)
    }
}

/// The delegate of the tab bars, edge swipes and presentations the renderer makes.
@MainActor
final class FlowUIKitEvents: NSObject, UITabBarControllerDelegate, UIGestureRecognizerDelegate {
    weak var renderer: FlowUIKitRenderer?

    func tabBarController(_ tabBarController: UITabBarController, shouldSelect viewController: UIViewController) -> Bool {
        renderer?.tabBarController(tabBarController, shouldSelect: viewController) ?? false
    }

    func gestureRecognizerShouldBegin(_ gestureRecognizer: UIGestureRecognizer) -> Bool {
        renderer?.edgeSwipeShouldBegin(gestureRecognizer) ?? false
    }
}

#if os(iOS) || os(visionOS)
extension FlowUIKitEvents: UIPopoverPresentationControllerDelegate {
    func presentationControllerShouldDismiss(_ presentationController: UIPresentationController) -> Bool {
        renderer?.presentationShouldDismiss(presentationController.presentedViewController) ?? false
    }

    func presentationControllerWillDismiss(_ presentationController: UIPresentationController) {
        let presented = presentationController.presentedViewController
        renderer?.presentationWillDismiss(
            presented, coordinator: presented.transitionCoordinator ?? presentationController.presentingViewController.transitionCoordinator)
    }

    func presentationControllerDidDismiss(_ presentationController: UIPresentationController) {
        renderer?.presentationDidDismiss(presentationController.presentedViewController)
    }
}
#endif

/// Holds a child flow's controller so a stack can show it as one entry.
@MainActor
final class EmbeddedFlowController: UIViewController {
    let child: UIViewController

    init(_ child: UIViewController) {
        self.child = child
        super.init(nibName: nil, bundle: nil)
    }

    @available(*, unavailable)
    required init?(coder: NSCoder) { nil }

    override func viewDidLoad() {
        super.viewDidLoad()
        addChild(child)
        child.view.frame = view.bounds
        child.view.autoresizingMask = [.flexibleWidth, .flexibleHeight]
        view.addSubview(child.view)
        child.didMove(toParent: self)
    }
}

/// Drives a stack's pop by a plan's interactive progress, and reports what the stack shows
/// once a transition ends (to catch the user's own pops).
@MainActor
final class StackDelegate: NSObject, UINavigationControllerDelegate {
    var interaction: UIPercentDrivenInteractiveTransition?
    weak var renderer: FlowUIKitRenderer?

    func navigationController(_ navigationController: UINavigationController, animationControllerFor operation: UINavigationController.Operation,
                              from fromVC: UIViewController, to toVC: UIViewController) -> (any UIViewControllerAnimatedTransitioning)? {
        // nil keeps UIKit's own animation, and its edge swipe.
        interaction == nil ? nil : SlideAnimator(operation: operation)
    }

    func navigationController(_ navigationController: UINavigationController,
                              interactionControllerFor animationController: any UIViewControllerAnimatedTransitioning)
        -> (any UIViewControllerInteractiveTransitioning)? {
        interaction
    }

    func navigationController(_ navigationController: UINavigationController, didShow viewController: UIViewController, animated: Bool) {
        renderer?.stackDidShow(navigationController)
    }
}

/// A plain horizontal slide, linear so the interactive progress maps onto it.
@MainActor
final class SlideAnimator: NSObject, UIViewControllerAnimatedTransitioning {
    let operation: UINavigationController.Operation

    init(operation: UINavigationController.Operation) {
        self.operation = operation
    }

    func transitionDuration(using transitionContext: (any UIViewControllerContextTransitioning)?) -> TimeInterval { 0.3 }

    func animateTransition(using context: any UIViewControllerContextTransitioning) {
        // The context is only touched on the main thread, in UIKit's own completion.
        nonisolated(unsafe) let context = context
        guard let fromView = context.view(forKey: .from), let toView = context.view(forKey: .to),
              let toController = context.viewController(forKey: .to) else {
            context.completeTransition(false)
            return
        }
        let container = context.containerView
        let width = container.bounds.width
        let popping = operation == .pop
        toView.frame = context.finalFrame(for: toController)
        if popping { container.insertSubview(toView, belowSubview: fromView) } else { container.addSubview(toView) }
        toView.transform = CGAffineTransform(translationX: popping ? -width / 3 : width, y: 0)
        UIView.animate(withDuration: transitionDuration(using: context), delay: 0, options: .curveLinear) {
            fromView.transform = CGAffineTransform(translationX: popping ? width : -width / 3, y: 0)
            toView.transform = .identity
        } completion: { _ in
            fromView.transform = .identity
            toView.transform = .identity
            context.completeTransition(!context.transitionWasCancelled)
        }
    }
}
#endif
