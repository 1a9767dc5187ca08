// An answer a handler gives later, from another thread, while its connection waits without a thread.
import Dispatch
import Synchronization

/// The answer to a request that is not ready when its handler returns, such as an action
/// waiting for its commit. The handler returns `Response.later(answer)`; whoever finishes the
/// work calls `complete(_:)`, from any thread.
///
/// ```swift
/// let answer = DeferredResponse()
/// queue.async { answer.complete(.text("done")) }
/// return .later(answer)
/// ```
/// Served by `HTTPServer`, the connection is suspended meanwhile (`MHD_suspend_connection`), so
/// no server thread waits; `Response.settled()` waits for it where there is no connection.
public final class DeferredResponse: Sendable {
    private struct State {
        var response: Response?
        var observers: [@Sendable (Response) -> Void] = []
    }

    private let state = Mutex(State())

    public init() {}

    /// The answer, once given.
    public var response: Response? { state.withLock { $0.response } }

    /// Gives the answer; the first call wins and returns true, later ones change nothing.
    /// Observers run on the calling thread, before this returns.
    @discardableResult
    public func complete(_ response: Response) -> Bool {
        let observers = state.withLock { state -> [@Sendable (Response) -> Void]? in
            guard state.response == nil else { return nil }
            state.response = response
            defer { state.observers = [] }
            return state.observers
        }
        guard let observers else { return false }
        for observer in observers { observer(response) }
        return true
    }

    /// Calls `observer` once with the answer: when it is given, or at once (on this thread) if it
    /// already was.
    public func whenComplete(_ observer: @escaping @Sendable (Response) -> Void) {
        let given = state.withLock { state -> Response? in
            if let response = state.response { return response }
            state.observers.append(observer)
            return nil
        }
        if let given { observer(given) }
    }

    /// Waits for the answer.
    public func wait() -> Response {
        if let response { return response }
        let semaphore = DispatchSemaphore(value: 0)
        whenComplete { _ in semaphore.signal() }
        semaphore.wait()
        return response ?? .problem(500, "The answer was lost.")
    }
}
