// A value guarded by a plain pthread mutex, for locks that many threads take briefly.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value that one thread at a time reads or changes, guarded by a `pthread_mutex_t`.
///
/// ```swift
/// let counts = PThreadMutex([String: Int]())
/// counts.withLock { $0["GET", default: 0] += 1 }
/// ```
/// Use it instead of `Synchronization.Mutex` for a lock shared by every request. On Linux,
/// Swift 6.3's `Mutex` is a priority-inheritance futex (`FUTEX_LOCK_PI`): a contended unlock
/// hands the lock to a sleeping waiter, and nobody can take it until the scheduler runs that
/// thread. With more threads than cores this makes a convoy (swiftlang/swift#88440): at 16 HTTP
/// threads on 2 cores, cached session reads fell from ~85k to ~25k requests/s, 43% of the time
/// spinning in `_MutexHandle._lockSlow` and most of the rest in the scheduler. glibc's default
/// mutex lets a running thread take a free lock at once, so a short critical section never
/// waits for a thread that is not running.
public final class PThreadMutex<Value> {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline @exclusivity(unchecked) var value: Value

    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the value, under the lock; keep it short, and do not block in it.
    /// Inlinable, so that each caller's closure is inlined and the value's type known: a generic
    /// call here cost every look-up under the lock its type's metadata and value witnesses.
    @inlinable
    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

/// Shared between threads only when its value may be: the lock makes access exclusive, but a
/// value that is not `Sendable` (a class with unguarded state, a non-`Sendable` closure) could
/// still leak out of `withLock` and be used from two threads at once.
extension PThreadMutex: @unchecked Sendable where Value: Sendable {}
