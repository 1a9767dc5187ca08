// FlowUIKitRenderer+controllers: the view controllers of nodes and entries, their bars, and how presentations are styled. Not built on Linux; see APPLE.md.

#if canImport(UIKit) && !os(watchOS)
import FlowStackClient
import UIKit

@MainActor
extension FlowUIKitRenderer {
    /// Builds the controller of a node: its container with its entries (presentations come as
    /// their own steps).
    func build(_ node: NavigationState.Node) -> UIViewController {
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
    func controller(for entry: NavigationState.Entry, inStack: Bool) -> UIViewController {
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
    func existingController(forEntry id: String) -> UIViewController? {
        screens[id]?.controller ?? wrappers[id]
    }

    /// A stack whose top is a child flow hides its own bar: the child shows one.
    func updateBar(of stack: UINavigationController) {
        stack.setNavigationBarHidden(stack.topViewController is EmbeddedFlowController, animated: false)
    }

    func rename(_ renamed: [String: String]) {
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

    func report(_ problem: String) {
        lastProblem = problem
        onProblem?(problem)
    }

    /// Style, popover anchor and delegate of a presentation.
    func configurePresentation(of controller: UIViewController, style: String?, over id: String, from presenter: UIViewController) {
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
#endif
