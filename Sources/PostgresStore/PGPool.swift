// A bounded pool of libpq connections shared by the HTTP threads and the writer thread.
import Dispatch
import Foundation
import Locking

/// Hands out connections, one thread each at a time; opens them on demand up to `capacity`,
/// drops broken ones, and reopens after the database comes back.
///
/// While the database is unreachable, a failed connect is remembered for `retryPause`: the
/// requests in that window fail at once instead of each waiting for a connect of its own, so a
/// database outage answers 503 quickly and the server keeps its threads.
final class PGPool: @unchecked Sendable {
    // @unchecked: `idle` holds non-Sendable connections, moved in and out under `state`'s lock,
    // each used by one thread at a time.
    private struct State {
        var idle: [PGConnection] = []
        var failedAt: ContinuousClock.Instant?
        var lastFailure = ""
        var closed = false
    }

    let uri: String
    let location: String
    let capacity: Int
    private let setup: [PGStatement]
    private let permits: DispatchSemaphore
    private let state = PThreadMutex(State())
    private let retryPause: Duration = .milliseconds(250)

    init(uri: String, location: String, capacity: Int, setup: [PGStatement]) {
        self.uri = uri
        self.location = location
        self.capacity = max(1, capacity)
        self.setup = setup
        self.permits = DispatchSemaphore(value: max(1, capacity))
    }

    /// Runs `body` with a connection. A connection that broke is dropped. When `body` failed
    /// on a connection taken from the idle list before anything reached the server (or when
    /// `idempotent`), it runs once more on a new connection: an idle connection can have died
    /// with a database restart without anyone noticing.
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
                // Dropped here; retried once, on a fresh connection, when that cannot apply twice.
                guard reused, error.unsent || idempotent else { throw error }
                connection = try open(deadline: deadline)
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
        let taken = state.withLock { state -> (PGConnection?, closed: Bool) in
            (state.idle.popLast(), state.closed)
        }
        if taken.closed { throw .connection("the store is closed", sent: false) }
        if let connection = taken.0 { return (connection, true) }
        return (try open(deadline: deadline), false)
    }

    private func open(deadline: ContinuousClock.Instant) throws(PGError) -> PGConnection {
        let recent = state.withLock { state -> String? in
            guard let failedAt = state.failedAt, failedAt.duration(to: .now) < retryPause else { return nil }
            return state.lastFailure
        }
        if let recent { throw .connection(recent, sent: false) }
        do throws(PGError) {
            let connection = try PGConnection.connect(uri: uri, setup: setup, deadline: deadline)
            state.withLock { $0.failedAt = nil }
            return connection
        } catch {
            state.withLock { state in
                state.failedAt = .now
                state.lastFailure = error.description
            }
            throw error
        }
    }

    private func give(_ connection: PGConnection) {
        guard !connection.broken else { return }
        state.withLock { state in
            if !state.closed { state.idle.append(connection) }
        }
    }

    private static func dispatchTime(_ deadline: ContinuousClock.Instant) -> DispatchTime {
        let remaining = ContinuousClock.now.duration(to: deadline)
        guard remaining > .zero else { return .now() }
        let nanoseconds = remaining.components.seconds * 1_000_000_000 + remaining.components.attoseconds / 1_000_000_000
        return .now() + .nanoseconds(Int(nanoseconds))
    }
}
