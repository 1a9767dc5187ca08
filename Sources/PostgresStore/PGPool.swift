// A bounded pool of libpq connections shared by the HTTP threads and the writer thread.
import Dispatch
import Foundation
import Locking

/// Hands out connections, one thread each at a time; opens them on demand up to `capacity`,
/// drops broken ones, and reopens after the database comes back.
///
/// A circuit breaker keeps an outage cheap: when a connection breaks or a deadline passes, the
/// pool is *down*, its idle connections are dropped, and until one request (the probe) has
/// connected again every other request fails at once, without touching the network. So a
/// database that does not answer costs one request its deadline, not every request, and the
/// HTTP threads stay free for what the cache can answer.
final class PGPool: @unchecked Sendable {
    // @unchecked: `idle` holds non-Sendable connections, moved in and out under `state`'s lock,
    // each used by one thread at a time.
    private struct State {
        var idle: [PGConnection] = []
        var down = false
        var probing = false
        var lastFailure = ""
        var closed = false
    }

    /// How a request gets its connection.
    private enum Ticket {
        case idle(PGConnection)
        case open
        case probe
        case refused(String)
    }

    let uri: String
    let capacity: Int
    private let setup: [PGStatement]
    private let permits: DispatchSemaphore
    private let state = PThreadMutex(State())

    init(uri: String, capacity: Int, setup: [PGStatement]) {
        self.uri = uri
        self.capacity = max(1, capacity)
        self.setup = setup
        self.permits = DispatchSemaphore(value: max(1, capacity))
    }

    /// Whether the last attempt found the database unreachable (and no probe has succeeded since).
    var isDown: Bool { state.withLock { $0.down } }

    /// Runs `body` with a connection. A connection that broke is dropped and the pool marked
    /// down. When `body` failed on a connection taken from the idle list before anything
    /// reached the server (or when `idempotent`), it runs once more on a new connection: an
    /// idle connection can have died with a database restart without anyone noticing.
    func withConnection<T>(deadline: ContinuousClock.Instant, idempotent: Bool = false,
                           _ body: (PGConnection) throws(PGError) -> T) throws(PGError) -> T {
        guard permits.wait(timeout: Self.dispatchTime(deadline)) == .success else {
            throw .connection("all \(capacity) database connections are busy", sent: false)
        }
        defer { permits.signal() }
        var (connection, reused) = try take(deadline: deadline)
        while true {
            do throws(PGError) {
                let result = try body(connection)
                give(connection)
                return result
            } catch {
                guard connection.broken else {
                    give(connection)
                    throw error
                }
                markDown(error)
                // Retried once, on a fresh connection (as the probe), when that cannot apply twice.
                guard reused, error.unsent || idempotent else { throw error }
                connection = try take(deadline: deadline).0
                reused = false
            }
        }
    }

    /// Closes the idle connections; later calls fail.
    func close() {
        let idle = state.withLock { state -> [PGConnection] in
            state.closed = true
            defer { state.idle.removeAll() }
            return state.idle
        }
        _ = idle  // released here: PQfinish in deinit
    }

    private func take(deadline: ContinuousClock.Instant) throws(PGError) -> (PGConnection, reused: Bool) {
        let ticket = state.withLock { state -> Ticket in
            if state.closed { return .refused("the store is closed") }
            if state.down {
                if state.probing { return .refused(state.lastFailure) }
                state.probing = true
                return .probe
            }
            if let connection = state.idle.popLast() { return .idle(connection) }
            return .open
        }
        switch ticket {
        case .idle(let connection):
            return (connection, true)
        case .refused(let reason):
            throw .connection(reason, sent: false)
        case .open, .probe:
            do throws(PGError) {
                let connection = try PGConnection.connect(uri: uri, setup: setup, deadline: deadline)
                state.withLock { state in
                    state.down = false
                    state.probing = false
                }
                return (connection, false)
            } catch {
                state.withLock { $0.probing = false }
                markDown(error)
                throw error
            }
        }
    }

    private func markDown(_ error: PGError) {
        let idle = state.withLock { state -> [PGConnection] in
            state.down = true
            state.lastFailure = error.description
            defer { state.idle.removeAll() }
            return state.idle
        }
        _ = idle  // connections opened before the failure may be dead too: dropped
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
