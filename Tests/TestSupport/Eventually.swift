// Waiting for what a test needs rather than for a set time.
import Foundation

/// Waits until `condition` holds, for at most `limit`; false when it never did. The steps of a
/// test on a loaded machine take what they take, so tests wait for what they need (a thread
/// that ran, a file that shrank) and fail only when it never comes.
public func eventually(_ limit: Duration = .seconds(20), _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.01)
    }
    return condition()
}

/// `eventually` for a condition that awaits; sleeps without holding a thread. Waits longer by
/// default: the clients' tests wait for a server process and its retries.
public func eventually(_ limit: Duration = .seconds(30), _ condition: @Sendable () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return await condition()
}
