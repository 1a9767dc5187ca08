// FlowUIKitRenderer: a session's flow tree in UIKit, driven by NavigationPlan. Not built on Linux; see README.md.
#if canImport(UIKit)
import UIKit

/// Shows a session's states with UIKit: a `UINavigationController` per stacked node, a
/// `UITabBarController` per tabbed node, a modal presentation per presented node, changed step
/// by step as ``NavigationPlan`` says.
///
/// The app supplies the screens; the renderer never moves by itself. The system back button and
/// edge swipe are turned off on the stacks it makes: the app posts `back` (interactive from its
/// own edge gesture, if it likes) and the next state comes back here.
///
/// ```swift
/// let renderer = FlowUIKitRenderer(window: window) { screen in
///     switch screen.feature {
///     case "home.first": HomeViewController()
///     default: PlaceholderViewController(title: screen.feature)
///     }
/// }
/// renderer.show(state)            // every state the client publishes, in order
/// ```
@MainActor
public final class FlowUIKitRenderer {
    /// Makes the view controller of a screen (its feature and params). Called once per entry id.
    public typealias ScreenFactory = @MainActor (NavigationState.Screen) -> UIViewController

    typealias Completion = @MainActor @Sendable () -> Void

    public let window: UIWindow
    private let makeScreen: ScreenFactory
    /// The state shown, and the renderer's model of it (checked before touching UIKit).
    private var shown: NavigationState?
    private var model = RenderedTree()
    /// Controllers by flow node id (navigation or tab bar controllers) and by screen entry id.
    private var containers: [String: UIViewController] = [:]
    private var screens: [String: UIViewController] = [:]
    /// Wrappers that put a child flow's controller inside a stack, by node id.
    private var wrappers: [String: EmbeddedFlowController] = [:]
    /// What each node presents, by the presenter's node id.
    private var presentedControllers: [String: UIViewController] = [:]
    private var stackDelegates: [String: StackDelegate] = [:]
    /// States that arrived while a plan was still running; only the last one matters.
    private var running = false
    private var waiting: NavigationState?

    public init(window: UIWindow, makeScreen: @escaping ScreenFactory) {
        self.window = window
        self.makeScreen = makeScreen
    }

    /// Shows `state`: applies the plan from what is shown. A plan the renderer's model refuses
    /// (it never should) is replaced by a rebuild from nothing.
    public func show(_ state: NavigationState) {
        guard !running else {
            waiting = state
            return
        }
        var plan = NavigationPlan(from: shown, to: state)
        var next = model
        do throws(RenderError) {
            try next.apply(plan)
        } catch {
            plan = NavigationPlan(from: nil, to: state)
            next = RenderedTree(state)
        }
        model = next
        shown = state
        rename(plan.renamed)
        running = true
        run(plan.steps[...]) { [weak self] in
            guard let self else { return }
            self.running = false
            if let waiting = self.waiting {
                self.waiting = nil
                self.show(waiting)
            }
        }
    }

    // MARK: steps

    private func run(_ steps: ArraySlice<NavigationPlan.Step>, then done: @escaping Completion) {
        guard let step = steps.first else { return done() }
        perform(step) { [weak self] in self?.run(steps.dropFirst(), then: done) }
    }

    private func perform(_ step: NavigationPlan.Step, then done: @escaping Completion) {
        if case .stack = step.container {} else if step.interaction != nil && step.interaction != .finish {
            // Only stacks are driven by progress; other interactive changes apply when they finish.
            return done()
        }
        switch (step.container, step.operation) {
        case (_, .refresh(let screen)):
            (screens[screen.id] as? FlowScreenRefreshing)?.refresh(with: screen)
            done()
        case (.window, .replaceRoot(let node)):
            replaceRoot(with: node, animated: step.animated, then: done)
        case (.stack(let id), _):
            guard let stack = containers[id] as? UINavigationController else { return done() }
            performOnStack(stack, id: id, step, then: done)
        case (.tabs(let id), .selectTab(let index)):
            (containers[id] as? UITabBarController)?.selectedIndex = index
            done()
        case (.tabs(let id), .setTabs(let entries, let selected)):
            guard let tabs = containers[id] as? UITabBarController else { return done() }
            tabs.setViewControllers(entries.map { controller(for: $0, inStack: false) }, animated: false)
            tabs.selectedIndex = selected
            done()
        case (.presentation(let id), .present(let node)):
            guard let presenter = containers[id] else { return done() }
            let controller = build(node)
            controller.modalPresentationStyle = Self.presentationStyle(node.style ?? step.style)
            presentedControllers[id] = controller
            presenter.present(controller, animated: step.animated) { MainActor.assumeIsolated { done() } }
        case (.presentation(let id), .dismiss):
            guard let presented = presentedControllers.removeValue(forKey: id), let presenter = presented.presentingViewController else {
                return done()
            }
            presenter.dismiss(animated: step.animated) { MainActor.assumeIsolated { done() } }
        default:
            done()
        }
    }

    private func performOnStack(_ stack: UINavigationController, id: String, _ step: NavigationPlan.Step,
                                then done: @escaping Completion) {
        let delegate = stackDelegates[id]
        switch step.interaction {
        case .progress(let progress):
            if let interaction = delegate?.interaction {
                interaction.update(CGFloat(progress))
                return done()
            }
            delegate?.interaction = UIPercentDrivenInteractiveTransition()
        case .finish, .cancel:
            if let interaction = delegate?.interaction {
                if step.interaction == .finish { interaction.finish() } else { interaction.cancel() }
                return afterTransition(of: stack, animated: true) { [weak self] in
                    delegate?.interaction = nil
                    self?.updateBar(of: stack)
                    done()
                }
            }
            // Nothing was started here (the renderer came in mid-swipe): a cancel changes
            // nothing, a finish applies the step now.
            if step.interaction == .cancel { return done() }
        case nil:
            break
        }
        let animated = step.animated || step.interaction != nil
        switch step.operation {
        case .push(let entry):
            stack.pushViewController(controller(for: entry, inStack: true), animated: animated)
        case .pop:
            stack.popViewController(animated: animated)
        case .popTo(let target):
            let controller: UIViewController? = screens[target] ?? wrappers[target]
            if let controller { stack.popToViewController(controller, animated: animated) }
        case .setStack(let entries):
            stack.setViewControllers(entries.map { controller(for: $0, inStack: true) }, animated: animated)
        default:
            break
        }
        if case .progress(let progress) = step.interaction {
            delegate?.interaction?.update(CGFloat(progress))
            return done()  // held until finish or cancel
        }
        updateBar(of: stack)
        afterTransition(of: stack, animated: animated, then: done)
    }

    private func afterTransition(of stack: UINavigationController, animated: Bool, then done: @escaping Completion) {
        guard animated, let coordinator = stack.transitionCoordinator else { return done() }
        coordinator.animate(alongsideTransition: nil) { _ in MainActor.assumeIsolated { done() } }
    }

    private func replaceRoot(with node: NavigationState.Node, animated: Bool, then done: @escaping Completion) {
        let old = window.rootViewController
        // A presented controller outlives a root swap unless dismissed first.
        if old?.presentedViewController != nil { old?.dismiss(animated: false) }
        containers = [:]
        screens = [:]
        wrappers = [:]
        presentedControllers = [:]
        stackDelegates = [:]
        window.rootViewController = build(node)
        window.makeKeyAndVisible()
        guard animated, old != nil else { return done() }
        UIView.transition(with: window, duration: 0.3, options: .transitionCrossDissolve, animations: nil) { _ in
            MainActor.assumeIsolated { done() }
        }
    }

    // MARK: controllers

    /// Builds the controller of a node: its container with its entries (presentations come as
    /// their own steps).
    private func build(_ node: NavigationState.Node) -> UIViewController {
        if node.kind == "tabbed" {
            let tabs = UITabBarController()
            tabs.setViewControllers(node.entries.map { controller(for: $0, inStack: false) }, animated: false)
            tabs.selectedIndex = node.selected ?? 0
            containers[node.id] = tabs
            return tabs
        }
        let stack = UINavigationController()
        let delegate = StackDelegate()
        stack.delegate = delegate
        stack.interactivePopGestureRecognizer?.isEnabled = false
        stackDelegates[node.id] = delegate
        stack.setViewControllers(node.entries.map { controller(for: $0, inStack: true) }, animated: false)
        containers[node.id] = stack
        updateBar(of: stack)
        return stack
    }

    /// A screen's controller (made once per entry id), or a child flow's: wrapped when it goes
    /// into a stack, since a navigation controller cannot be pushed.
    private func controller(for entry: NavigationState.Entry, inStack: Bool) -> UIViewController {
        switch entry {
        case .screen(let screen):
            if let made = screens[screen.id] { return made }
            let made = makeScreen(screen)
            made.navigationItem.hidesBackButton = true
            screens[screen.id] = made
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
    }

    /// `fullScreen`, `sheet`, `formSheet`, `overFullScreen`, `popover`; anything else is automatic.
    static func presentationStyle(_ style: String?) -> UIModalPresentationStyle {
        switch style {
        case "fullScreen": .fullScreen
        case "sheet", "pageSheet": .pageSheet
        case "formSheet": .formSheet
        case "overFullScreen": .overFullScreen
        case "popover": .popover
        default: .automatic
        }
    }
}

/// A screen controller that shows new params in place (a result written into its screen);
/// controllers that are not keep what they show.
@MainActor
public protocol FlowScreenRefreshing: AnyObject {
    func refresh(with screen: NavigationState.Screen)
}

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

/// Drives a stack's pop by a plan's interactive progress instead of the system's edge swipe.
@MainActor
final class StackDelegate: NSObject, UINavigationControllerDelegate {
    var interaction: UIPercentDrivenInteractiveTransition?

    func navigationController(_ navigationController: UINavigationController, animationControllerFor operation: UINavigationController.Operation,
                              from fromVC: UIViewController, to toVC: UIViewController) -> (any UIViewControllerAnimatedTransitioning)? {
        interaction == nil ? nil : SlideAnimator(operation: operation)
    }

    func navigationController(_ navigationController: UINavigationController,
                              interactionControllerFor animationController: any UIViewControllerAnimatedTransitioning)
        -> (any UIViewControllerInteractiveTransitioning)? {
        interaction
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
