// The session path's own read threads: they run work whatever libdispatch's global pool does.
@testable import FlowServer
import Foundation
import Synchronization
import Testing

@Suite("Read threads")
struct ReadThreadsTests {
    /// Occupies `count` of the global pool's workers (Swift concurrency's on Linux) until
    /// `release` is signalled `count` times or `seconds` pass.
    static func blockGlobalPool(_ count: Int, release: DispatchSemaphore, seconds: Int) {
        for _ in 0..<count { DispatchQueue.global().async { _ = release.wait(timeout: .now() + .seconds(seconds)) } }
        // Let them take the workers first.
        Thread.sleep(forTimeInterval: 0.2)
    }

    /// Work runs at once while every worker of the global pool is blocked.
    @Test func workRunsWhileTheGlobalPoolIsBlocked() {
        let threads = ReadThreads(name: "fs-test-read")
        let release = DispatchSemaphore(value: 0)
        let blockers = ProcessInfo.processInfo.activeProcessorCount * 4
        Self.blockGlobalPool(blockers, release: release, seconds: 10)
        defer { for _ in 0..<blockers { release.signal() } }
        let ran = DispatchSemaphore(value: 0)
        threads.run { ran.signal() }
        #expect(ran.wait(timeout: .now() + 2) == .success, "the work waited for the global pool")
    }

    /// Blocking work gets a thread each up to the limit; the rest waits for one to be free,
    /// in order, and all of it runs.
    @Test func blockedWorkGetsAThreadEachUpToTheLimit() {
        let threads = ReadThreads(name: "fs-test-read", limit: 3)
        let gate = DispatchSemaphore(value: 0)
        let started = Mutex<[Int]>([])
        let finished = DispatchSemaphore(value: 0)
        for index in 0..<7 {
            threads.run {
                started.withLock { $0.append(index) }
                gate.wait()
                finished.signal()
            }
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while started.withLock({ $0.count }) < 3 && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.005) }
        Thread.sleep(forTimeInterval: 0.1)
        #expect(started.withLock { Set($0) } == [0, 1, 2], "three at once, the first three")
        #expect(threads.threadCount == 3)
        for _ in 0..<7 { gate.signal() }
        for _ in 0..<7 { #expect(finished.wait(timeout: .now() + 5) == .success) }
        #expect(started.withLock { Set($0.dropFirst(3)) } == [3, 4, 5, 6])
    }

    /// Idle threads end; work after that starts one again.
    @Test func idleThreadsEndAndStartAgain() {
        let threads = ReadThreads(name: "fs-test-read", limit: 4, idleTime: .milliseconds(50))
        let ran = DispatchSemaphore(value: 0)
        for _ in 0..<4 { threads.run { Thread.sleep(forTimeInterval: 0.02); ran.signal() } }
        for _ in 0..<4 { #expect(ran.wait(timeout: .now() + 5) == .success) }
        let deadline = ContinuousClock.now + .seconds(5)
        while threads.threadCount > 0 && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(threads.threadCount == 0, "idle threads ended")
        threads.run { ran.signal() }
        #expect(ran.wait(timeout: .now() + 2) == .success)
    }

    /// Work that has run lets go of what it captured while later work still waits: a backlog
    /// that never drains does not hold every closure it ever ran.
    @Test func runWorkIsReleasedWhileABacklogWaits() {
        final class Capture: @unchecked Sendable {
            let released: DispatchSemaphore
            init(_ released: DispatchSemaphore) { self.released = released }
            deinit { released.signal() }
        }
        let threads = ReadThreads(name: "fs-test-read", limit: 1)
        let gate = DispatchSemaphore(value: 0)
        let ran = DispatchSemaphore(value: 0)
        let released = DispatchSemaphore(value: 0)
        threads.run { gate.wait() }
        do {
            let capture = Capture(released)
            threads.run { _ = capture; ran.signal() }
        }
        threads.run { gate.wait() }
        threads.run {}
        gate.signal()
        #expect(ran.wait(timeout: .now() + 5) == .success)
        #expect(released.wait(timeout: .now() + 5) == .success, "the queue still held work that had run")
        gate.signal()
    }

    /// A backlog of thousands on one thread, growing while it runs, runs whole and in order
    /// (the queue drops what has run as it goes).
    @Test func aLongBacklogRunsInOrder() {
        let threads = ReadThreads(name: "fs-test-read", limit: 1)
        let gate = DispatchSemaphore(value: 0)
        let order = Mutex<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        let total = 10_000
        threads.run { gate.wait() }
        for index in 0..<total / 2 { threads.run { order.withLock { $0.append(index) } } }
        gate.signal()
        for index in total / 2..<total {
            threads.run {
                order.withLock { $0.append(index) }
                if index == total - 1 { done.signal() }
            }
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        let ran = order.withLock { $0 }
        #expect(ran.count == total)
        #expect(ran.elementsEqual(0..<total), "out of order from \(ran.indices.first { ran[$0] != $0 } ?? -1)")
    }

    /// Many short runs from many threads: every one runs exactly once.
    @Test func everyRunRunsOnce() {
        let threads = ReadThreads(name: "fs-test-read", limit: 4, idleTime: .milliseconds(1))
        let count = Atomic<Int>(0)
        let done = DispatchSemaphore(value: 0)
        let senders = 8, each = 2_000
        DispatchQueue.concurrentPerform(iterations: senders) { _ in
            for _ in 0..<each {
                threads.run {
                    if count.add(1, ordering: .relaxed).newValue == senders * each { done.signal() }
                }
            }
        }
        #expect(done.wait(timeout: .now() + 20) == .success)
        Thread.sleep(forTimeInterval: 0.05)
        #expect(count.load(ordering: .relaxed) == senders * each)
    }
}
