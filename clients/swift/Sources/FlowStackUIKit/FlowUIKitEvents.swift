// FlowUIKitEvents: the UIKit delegates the renderer installs — tab bars, edge swipes, presentations, stacks — and the slide of an interactive pop. Not built on Linux; see APPLE.md.

#if canImport(UIKit) && !os(watchOS)
import FlowStackClient
import UIKit

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
