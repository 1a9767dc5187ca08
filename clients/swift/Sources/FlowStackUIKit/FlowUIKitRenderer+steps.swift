// FlowUIKitRenderer+steps: a plan's steps performed on UIKit one after another — pushes, pops, tabs, presentations, a new root. Not built on Linux; see APPLE.md.

#if canImport(UIKit) && !os(watchOS)
import FlowStackClient
import UIKit

@MainActor
extension FlowUIKitRenderer {
    /// A plan step with what the renderer's model shows once it is applied.
    struct PlannedStep: Sendable {
        var step: NavigationPlan.Step
        var after: RenderedTree
    }

    /// The plan's steps, each with the model after it, and the model at the end.
    static func planned(_ plan: NavigationPlan, from tree: RenderedTree) throws(RenderError) -> ([PlannedStep], RenderedTree) {
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
    func rebuild(_ state: NavigationState) {
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

    func run(_ steps: [PlannedStep], for state: NavigationState, rebuilding: Bool) {
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

    func runSteps(_ steps: ArraySlice<PlannedStep>, then done: @escaping @MainActor @Sendable (Bool) -> Void) {
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

    func perform(_ planned: PlannedStep, then completion: StepCompletion) {
        let step = planned.step
        if case .stack = step.container {} else if step.interaction != nil && step.interaction != .finish {
            // Only stacks are driven by progress; other interactive changes apply when they finish.
            return completion.succeed()
        }
        switch (step.container, step.operation) {
        case (_, .refresh(let screen)):
            (screens[screen.id]?.controller as? FlowScreenRefreshing)?.refresh(with: screen)
            completion.succeed()
        case (_, .updateList(let id, let changes, let sections)):
            (screens[id]?.controller as? FlowListRendering)?.updateList(sections, changes: changes, animated: step.animated)
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

    func performOnStack(_ stack: UINavigationController, id: String, _ planned: PlannedStep, then completion: StepCompletion) {
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
    func whenIdle(_ controller: UIViewController, _ body: @escaping @MainActor @Sendable () -> Void) {
        guard let coordinator = controller.transitionCoordinator else { return body() }
        _ = coordinator.animate(alongsideTransition: nil) { _ in MainActor.assumeIsolated { body() } }
    }

    func afterTransition(of stack: UINavigationController, animated: Bool, then done: @escaping @MainActor @Sendable () -> Void) {
        guard animated, let coordinator = stack.transitionCoordinator else { return done() }
        _ = coordinator.animate(alongsideTransition: nil) { _ in MainActor.assumeIsolated { done() } }
    }

    /// Presents `controller` from `presenter`, or from the top of what it already presents
    /// (an alert of the app's own). A presenter not yet in a window (built a moment ago) is
    /// retried a few times; a presentation UIKit refuses fails the step.
    func present(_ controller: UIViewController, from presenter: UIViewController, animated: Bool, attempts: Int,
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
    func dismiss(_ presented: UIViewController, animated: Bool, then completion: StepCompletion) {
        guard let host = presented.presentingViewController else { return completion.succeed() }
        whenIdle(presented) {
            guard presented.presentingViewController != nil else { return completion.succeed() }
            host.dismiss(animated: animated) { MainActor.assumeIsolated { completion.succeed() } }
        }
    }

    func replaceRoot(with node: NavigationState.Node, animated: Bool, then completion: StepCompletion) {
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
}
#endif
