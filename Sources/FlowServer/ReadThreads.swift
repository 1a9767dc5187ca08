// Threads of the server's own for the reads a session's turn hands off.
import Foundation

/// Runs work on threads of its own, starting one when none is free (up to `limit`) and
/// letting one go once it has been idle for `idleTime`.
///
/// ```swift
/// let reads = ReadThreads(name: "fs-read")
/// reads.run { request.finish(rebuiltReplay(stored, of: session), cache) }
/// ```
/// Not libdispatch's global pool: a process shares that pool with Swift concurrency (on Linux
/// its cooperative threads are that pool's workers), and once every worker blocks, the pool
/// takes on another thread at most once a second, or none at all. A test runner whose tests
/// wait on their requests while the reads that answer them queued behind the tests held one
/// libmicrohttpd test for five minutes; a replay made again from the log waited out a blocked
/// pool whole (`ReadThreadsTests`).
final class ReadThreads: @unchecked Sendable {
    private let name: String
    private let limit: Int
    private let idleTime: TimeInterval
    /// Guards everything below; a thread waits on it for work.
    private let condition = NSCondition()
    /// Work in order from `next`; a slot before it has run and holds `ran` in its place, so a
    /// backlog that never drains keeps only what waits (not what each closure captured).
    private var work: [@Sendable () -> Void] = []
    private static let ran: @Sendable () -> Void = {}
    private var next = 0
    private var threads = 0
    /// Threads waiting for work that no `run` has woken yet.
    private var idle = 0
    /// Wakes given and not yet taken (any waiting thread may take any).
    private var wakes = 0

    /// `limit`: at most this many threads (more work waits for one to be free).
    init(name: String, limit: Int = 32, idleTime: Duration = .seconds(10)) {
        self.name = name
        self.limit = max(1, limit)
        self.idleTime = TimeInterval(idleTime.components.seconds) + TimeInterval(idleTime.components.attoseconds) / 1e18
    }

    /// Runs `body` on one of the threads, at once when one is free or may be started.
    func run(_ body: @escaping @Sendable () -> Void) {
        condition.lock()
        work.append(body)
        let start: Bool
        if idle > 0 {
            idle -= 1
            wakes += 1
            condition.signal()
            start = false
        } else {
            start = threads < limit
            if start { threads += 1 }
        }
        condition.unlock()
        if start { startThread() }
    }

    /// How many threads there are now, for tests.
    var threadCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return threads
    }

    private func startThread() {
        let thread = Thread { [self] in
            Thread.current.name = name
            serve()
        }
        thread.start()
    }

    /// A thread's life: takes work in order until it has waited `idleTime` for none. Each
    /// thread holds this object, so it lives until its last thread ends.
    private func serve() {
        condition.lock()
        while true {
            if next < work.count {
                let body = work[next]
                work[next] = Self.ran
                next += 1
                if next == work.count {
                    work.removeAll(keepingCapacity: true)
                    next = 0
                } else if next >= 1_024 && next * 2 >= work.count {
                    // Most of the array has run: drop it, at a cost spread over what ran.
                    work.removeFirst(next)
                    next = 0
                }
                condition.unlock()
                body()
                condition.lock()
                continue
            }
            idle += 1
            let deadline = Date(timeIntervalSinceNow: idleTime)
            var signalled = true
            while wakes == 0 && signalled {
                signalled = condition.wait(until: deadline)
            }
            if wakes > 0 {
                wakes -= 1
                continue
            }
            // Timed out, and no `run` counted on this thread.
            idle -= 1
            if next < work.count { continue }
            threads -= 1
            condition.unlock()
            return
        }
    }
}
