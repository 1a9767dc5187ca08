// Blocking work in tests runs on threads of its own, not on Dispatch's global queue.
import Foundation

/// Runs `body` on a new thread, entered in `group` until it returns. Work that blocks (a
/// request waiting for a lock, a socket read) belongs here: Dispatch's global queue on Linux is
/// about as wide as the machine has cores and adds a thread for blocked work only about once
/// a second, so four blocked requests queued there took four seconds to start on two cores.
public func onOwnThread(_ group: DispatchGroup, _ body: @escaping @Sendable () -> Void) {
    group.enter()
    Thread {
        body()
        group.leave()
    }.start()
}

/// Runs `body(0)`, …, `body(count - 1)` each on a thread of its own, and waits for all:
/// `concurrentPerform` would run them two at a time on two cores, one after the other.
public func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let done = DispatchGroup()
    for index in 0..<count {
        onOwnThread(done) { body(index) }
    }
    done.wait()
}
