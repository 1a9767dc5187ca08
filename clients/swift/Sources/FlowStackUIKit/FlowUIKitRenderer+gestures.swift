// FlowUIKitRenderer+gestures: the user's own gestures posted as actions, and what they changed put back when not taken. Not built on Linux; see APPLE.md.

#if canImport(UIKit) && !os(watchOS)
import FlowStackClient
import UIKit

@MainActor
extension FlowUIKitRenderer {
    /// Once nothing runs: puts back what the user changed and the session did not take, sets
    /// the back buttons and sheets for the state shown, then shows the state that waited.
    func settle() {
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
    func restoreUserChanges() {
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
    func updateAffordances() {
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
    func post(_ intent: NavigationIntent, undo: (@MainActor @Sendable () -> Void)?) {
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
    func tabBarController(_ tabs: UITabBarController, shouldSelect controller: UIViewController) -> Bool {
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
    func stackDidShow(_ stack: UINavigationController) {
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

    func restoreStack(_ id: String) {
        guard let stack = containers[id] as? UINavigationController, let node = model.root?.node(withId: id) else { return }
        whenIdle(stack) { [weak self] in
            guard let self else { return }
            stack.setViewControllers(node.entries.map { self.controller(for: $0, inStack: true) }, animated: true)
            self.updateBar(of: stack)
        }
    }

    /// Whether the system edge swipe may start on `recognizer`'s stack: only when it pops the
    /// stack that the generic back pops, with an action for it, and nothing else is moving.
    func edgeSwipeShouldBegin(_ recognizer: UIGestureRecognizer) -> Bool {
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
    func presentationShouldDismiss(_ presented: UIViewController) -> Bool {
        guard !isBusy, let state = shown, let id = presenterId(of: presented) else { return false }
        return gestureAction(.dismiss(presenter: id), state) != nil
    }

    /// A pull-down started: states wait until it ends (cancelled, or dismissed and answered).
    func presentationWillDismiss(_ presented: UIViewController, coordinator: (any UIViewControllerTransitionCoordinator)?) {
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
    func presentationDidDismiss(_ presented: UIViewController) {
        guard let id = presenterId(of: presented) else { return }
        sheetsBeingPulled.remove(id)
        userDismissed[id] = presented
        presentedControllers[id] = nil
        // Refused: settle's restore presents it again, from the model that still shows it.
        post(.dismiss(presenter: id), undo: nil)
    }

    func containerId(of controller: UIViewController) -> String? {
        containers.first { $0.value === controller }?.key
    }

    func presenterId(of presented: UIViewController) -> String? {
        presentedControllers.first { $0.value === presented }?.key
    }
}
#endif
