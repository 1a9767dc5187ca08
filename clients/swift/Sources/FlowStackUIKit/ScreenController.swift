// ScreenController: a screen's controller with what it was made for, the step completion that bounds a UIKit transition, and the wrapper of a child flow. Not built on Linux; see APPLE.md.

#if canImport(UIKit) && !os(watchOS)
import FlowStackClient
import UIKit

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

/// A screen controller that shows a list: it gets the new list and the exact changes from
/// the list it showed (``FlowListSnapshot`` turns them into a diffable data source's snapshot).
@MainActor
public protocol FlowListRendering: AnyObject {
    func updateList(_ sections: [ListSection], changes: ListChanges, animated: Bool)
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
#endif
