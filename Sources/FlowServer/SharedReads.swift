// One read of the database shared by the requests that come while one is under way.
import Foundation
import Synchronization

/// Runs work once a read begun after it came has ended, on the thread that made the read, with
/// what the read found. Every call made while a read is under way waits for the next one, which
/// they all share: a node answering many flag evaluations at once reads the definitions'
/// revision once for all that came meanwhile, instead of once each, and each still sees every
/// change committed before it came.
///
/// ```swift
/// let reads = SharedReads(thread: "fs-definitions-reads") { sync.refresh() }
/// reads.afterFreshRead { revision in answer(request, checkedAt: revision) }
/// ```
final class SharedReads: Sendable {
    private let read: @Sendable () -> String?
    private let waiting = Mutex<[@Sendable (String?) -> Void]>([])
    private let wake = DispatchSemaphore(value: 0)

    /// `read`: what a batch waits for (nil: nothing could be read; the work then runs on what
    /// the node holds). It runs on a thread of its own, named `thread`, which ends once this
    /// object is released.
    init(thread name: String, read: @escaping @Sendable () -> String?) {
        self.read = read
        let wake = self.wake
        let reader = Thread { [weak self] in
            Thread.current.name = name
            while true {
                wake.wait()
                guard let self else { return }
                let batch = waiting.withLock { waiting in
                    defer { waiting = [] }
                    return waiting
                }
                guard !batch.isEmpty else { continue }
                let seen = self.read()
                for work in batch { work(seen) }
            }
        }
        reader.start()
    }

    deinit {
        wake.signal()
        // None can be left (each holds what answers it, which holds this), but none is dropped.
        for work in waiting.withLock({ $0 }) { work(nil) }
    }

    /// Runs `work` with what a read begun after this call found, on the thread that read it.
    func afterFreshRead(_ work: @escaping @Sendable (_ seen: String?) -> Void) {
        let first = waiting.withLock { waiting in
            waiting.append(work)
            return waiting.count == 1
        }
        // Only the first of a batch wakes the reader: it takes every call queued until it does.
        if first { wake.signal() }
    }
}
