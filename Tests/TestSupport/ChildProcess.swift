// A program a test starts and stops (a server, a stand-in parent), with posix_spawn and waitpid.
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process that inherits no descriptor above standard error, and whose end is known
/// from `waitpid` alone.
///
/// Not Foundation's `Process`: on Linux it learns that a child ended when a socket that only
/// the child holds is closed. That socket is made without close-on-exec, so a program that
/// another test thread starts at the same moment can get a copy of it; the child's end is then
/// not seen until that program ends too, and `waitUntilExit()` blocks the thread it runs on,
/// a thread of the concurrency pool that every other test shares (two on two cores), for as
/// long as that takes: an hour, for a `sleep 3600`.
public final class ChildProcess: @unchecked Sendable {
    public let pid: pid_t
    private let lock = NSLock()
    /// The wait status, once reaped (after which the pid may belong to another process).
    private var status: Int32?

    /// Starts `argv` (a path first), standard output and error appended to `output`.
    public init(_ argv: [String], environment: [String: String]? = nil, output: String = "/dev/null") throws {
        pid = try spawn(argv, environment: environment, output: output)
    }

    deinit {
        // A child nobody stopped is not left behind as a zombie, nor left running.
        kill()
    }

    /// Whether it has not ended yet.
    public var isRunning: Bool {
        lock.withLock { reapIfEnded() == nil }
    }

    /// Its exit status once it has ended; nil while it runs, or when a signal ended it.
    public var exitStatus: Int32? {
        lock.withLock { reapIfEnded().flatMap(exitCode) }
    }

    /// Sends `signal`, unless it has ended (its pid may be another process's by then).
    public func send(_ signal: Int32) {
        lock.withLock {
            if reapIfEnded() == nil { _ = Glibc.kill(pid, signal) }
        }
    }

    /// Waits at most `limit` for it to end; false if it still runs.
    @discardableResult
    public func wait(upTo limit: Duration) -> Bool {
        eventually(limit) { !isRunning }
    }

    /// Ends it with SIGKILL (which no signal mask blocks) and reaps it.
    public func kill() {
        lock.withLock {
            guard reapIfEnded() == nil else { return }
            _ = Glibc.kill(pid, SIGKILL)
            status = reap(pid)
        }
    }

    /// Called under the lock.
    private func reapIfEnded() -> Int32? {
        if status == nil {
            var result: Int32 = 0
            var reaped: pid_t
            repeat { reaped = waitpid(pid, &result, WNOHANG) } while reaped < 0 && errno == EINTR
            // ECHILD: reaped already, which only this class does; it has ended either way.
            if reaped == pid || (reaped < 0 && errno == ECHILD) { status = result }
        }
        return status
    }
}
