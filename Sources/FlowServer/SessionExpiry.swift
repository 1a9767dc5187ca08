// Sessions idle for longer than `--session-idle` stop opening: 401 `session-expired`.
import Foundation

/// The idle limit of sessions. A session's activity is its creation and each applied action
/// (`LiveSession.lastActiveAt`: the newest log entry's time, or the row's, when read from the
/// database); reads do not count, so a session is judged the same on every node without a
/// write per read. Past the limit its token stops working: every session route answers 401
/// `session-expired` with `WWW-Authenticate: Bearer` (to the token holder only: a wrong token
/// is `unauthorized` as before), and the session leaves the cache. Its rows go with the
/// retention run once it has been idle for `--session-idle` plus `--retention`; then its id
/// answers 404.
struct SessionExpiry: Sendable {
    /// How long a session may stay idle.
    var idle: Duration = .seconds(30 * 86_400)
    /// Counts the refusals (`flowstack_retention_sessions_expired_total`).
    var counters = RetentionCounters()

    /// Throws 401 `session-expired` when session `id`, last active at `lastActiveAt`, has been
    /// idle for longer than `idle`.
    func check(_ id: String, lastActiveAt: Date, now: Date = Date()) throws(SessionError) {
        guard now.timeIntervalSince(lastActiveAt) > DurationText.seconds(idle) else { return }
        counters.sessionsExpired.add(1, ordering: .relaxed)
        throw .expired(id, idle: idle)
    }

    /// The 401 `session-expired` refusal when session `id`, last active at `lastActiveAt`, has
    /// been idle for longer than `idle`; nil while it is not.
    func refusal(_ id: String, lastActiveAt: Date, now: Date = Date()) -> SessionError? {
        do throws(SessionError) {
            try check(id, lastActiveAt: lastActiveAt, now: now)
            return nil
        } catch {
            return error
        }
    }

    /// The time of a stored time (`Timestamp.string`); now when it does not read (a session
    /// whose time is unreadable is not judged idle).
    static func date(_ stored: String) -> Date {
        (try? Date(stored, strategy: style)) ?? Date()
    }

    private static let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
}

extension SessionService {
    /// Drops sessions that retention removed from the database out of the cache, so that
    /// sessions that expired and were never asked for again do not stay in memory (until the
    /// cache's bound pushed them out). A request holding one meanwhile reads the database: 404.
    func evictRemoved(_ ids: [String]) {
        for id in ids { evict(id) }
    }
}
