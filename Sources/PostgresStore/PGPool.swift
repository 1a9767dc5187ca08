// A bounded pool of libpq connections shared by the HTTP threads and the writer thread.
import Dispatch
import FlowStore
import Foundation
import Locking

/// Hands out connections, one thread each at a time; opens them on demand up to `capacity`,
/// drops broken ones, and reopens after the database comes back.
///
/// A circuit breaker keeps an outage cheap: when a connection breaks or a deadline passes, the
/// pool is *down*, its idle connections are dropped, and every request fails at once, without
/// touching the network, until a thread of the pool's own (`fs-pg-probe`, every 200 ms)
/// has connected again. So a database that does not answer costs the requests in flight
/// their deadline, not every request after them, and the HTTP threads stay free for what the
/// cache can answer; a request queued behind a failed one never starts a wait of its own.
final class PGPool: @unchecked Sendable {
    // @unchecked: `idle` holds non-Sendable connections, moved in and out under `state`'s lock,
    // each used by one thread at a time.
    private struct State {
        var idle: [PGConnection] = []
        var down = false
        var lastFailure = ""
        var closed = false
    }

    /// How a request gets its connection.
    private enum Ticket {
        case idle(PGConnection)
        case open
        case refused(String)
    }

    let uri: String
    let capacity: Int
    private let setup: [PGStatement]
    private let permits: DispatchSemaphore
    private let state = PThreadMutex(State())
    /// Signalled when the pool goes down (the probe starts) and when it closes.
    private let wake = DispatchSemaphore(value: 0)
    private let probeStopped = DispatchSemaphore(value: 0)
    /// How long a stale idle connection's replacement may take to connect.
    private let replacementTimeout: Duration = .milliseconds(300)

    let counters: StoreCounters
    /// Decides which connections may be used (the writable host of a multi-host URL), or none.
    let admission: FailoverGuard?

    init(uri: String, capacity: Int, setup: [PGStatement], counters: StoreCounters, admission: FailoverGuard? = nil) {
        self.uri = uri
        self.admission = admission
        self.counters = counters
        self.capacity = max(1, capacity)
        self.setup = setup
        self.permits = DispatchSemaphore(value: max(1, capacity))
        let thread = Thread { [self] in
            Thread.current.name = "fs-pg-probe"
            probe()
        }
        thread.start()
    }

    /// Runs `body` with a connection. A connection that broke is dropped and the pool marked
    /// down. When `body` failed on a connection taken from the idle list before anything
    /// reached the server (or when `idempotent`), it runs once more on a new connection, if
    /// one connects within 300 ms: an idle connection can have died with a database restart
    /// that is over by now.
    func withConnection<T>(deadline: ContinuousClock.Instant, idempotent: Bool = false,
                           _ body: (PGConnection) throws(PGError) -> T) throws(PGError) -> T {
        guard permits.wait(timeout: Self.dispatchTime(deadline)) == .success else {
            throw .connection("all \(capacity) database connections are busy", sent: false)
        }
        defer { permits.signal() }
        var (connection, reused) = try take(deadline: deadline)
        while true {
            do throws(PGError) {
                counters.roundTrips.add(1, ordering: .relaxed)
                let result = try body(connection)
                give(connection)
                return result
            } catch {
                counters.errors.add(1, ordering: .relaxed)
                guard connection.broken else {
                    give(connection)
                    throw error
                }
                guard case .connection = error else {
                    throw error  // the server refused a statement: dropped, but the database is up
                }
                guard reused, error.unsent || idempotent else {
                    markDown(error)
                    throw error
                }
                do throws(PGError) {
                    connection = try connect(deadline: min(deadline, .now + replacementTimeout))
                } catch {
                    markDown(error)
                    throw error
                }
                reused = false
            }
        }
    }

    /// Closes the idle connections and stops the probe; later calls fail.
    func close() {
        let (idle, first) = state.withLock { state -> ([PGConnection], Bool) in
            let first = !state.closed
            state.closed = true
            defer { state.idle.removeAll() }
            return (state.idle, first)
        }
        _ = idle  // released here: PQfinish in deinit
        guard first else { return }
        wake.signal()
        probeStopped.wait()
    }

    private func take(deadline: ContinuousClock.Instant) throws(PGError) -> (PGConnection, reused: Bool) {
        if let reason = admission?.refusal() { throw .connection(reason, sent: false) }
        let ticket = state.withLock { state -> Ticket in
            if state.closed { return .refused("the store is closed") }
            if state.down { return .refused(state.lastFailure) }
            if let connection = state.idle.popLast() { return .idle(connection) }
            return .open
        }
        switch ticket {
        case .idle(let connection):
            if let reason = admission?.admit(endpoint: connection.endpoint) {
                throw .connection(reason, sent: false)  // opened before a failover: dropped
            }
            return (connection, true)
        case .refused(let reason):
            throw .connection(reason, sent: false)
        case .open:
            do throws(PGError) {
                return (try connect(deadline: deadline), false)
            } catch {
                markDown(error)
                throw error
            }
        }
    }

    /// The probe's thread: while the pool is down, tries to connect every 200 ms; the first
    /// connection that works brings the pool up and becomes its first idle connection.
    private func probe() {
        while true {
            wake.wait()
            while true {
                let (down, closed) = state.withLock { ($0.down, $0.closed) }
                if closed { probeStopped.signal(); return }
                guard down else { break }
                do throws(PGError) {
                    let connection = try connect(deadline: .now + .seconds(1))
                    state.withLock { state in
                        state.down = false
                        state.idle.append(connection)
                    }
                } catch {
                    state.withLock { $0.lastFailure = error.description }
                    // Woken early only by close(), checked at the top of the loop.
                    _ = wake.wait(timeout: .now() + .milliseconds(200))
                }
            }
        }
    }

    /// A new connection, refused (and closed) when the failover guard does not admit its host.
    private func connect(deadline: ContinuousClock.Instant) throws(PGError) -> PGConnection {
        let connection = try PGConnection.connect(uri: uri, setup: setup, deadline: deadline)
        if let reason = admission?.admit(endpoint: connection.endpoint) {
            throw .connection(reason, sent: false)
        }
        return connection
    }

    private func markDown(_ error: PGError) {
        let (idle, wasDown) = state.withLock { state -> ([PGConnection], Bool) in
            let wasDown = state.down
            state.down = true
            state.lastFailure = error.description
            defer { state.idle.removeAll() }
            return (state.idle, wasDown)
        }
        _ = idle  // connections opened before the failure may be dead too: dropped
        if !wasDown { wake.signal() }
    }

    private func give(_ connection: PGConnection) {
        guard !connection.broken else { return }
        state.withLock { state in
            if !state.closed && !state.down { state.idle.append(connection) }
        }
    }

    private static func dispatchTime(_ deadline: ContinuousClock.Instant) -> DispatchTime {
        let remaining = ContinuousClock.now.duration(to: deadline)
        guard remaining > .zero else { return .now() }
        let nanoseconds = remaining.components.seconds * 1_000_000_000 + remaining.components.attoseconds / 1_000_000_000
        return .now() + .nanoseconds(Int(nanoseconds))
    }
}
