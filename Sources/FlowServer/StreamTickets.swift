// Stream tickets: what lets a browser's plain EventSource open a session's event stream, and
// reconnect with the same URL through a network blip, without the URL becoming a lasting key.
import Foundation
import FlowStore
import HTTPServer
import Locking
import Logging

/// Issues stream tickets, takes them when a stream opens, and holds the ones this node's open
/// streams use.
///
/// The rules (kept in the database, so they hold across nodes):
/// - A new ticket may open a stream within `EventOptions.ticketLifetime` (30 s).
/// - Opening a stream takes the ticket: it gets a new generation, and the stream that held it
///   before, on any node, ends with `event: replaced` (at once on this node; on another one at
///   its next renewal, within a quarter of the reconnection window). One live stream per ticket.
/// - While its stream is open the node keeps the ticket's window `reconnectWindow` ahead
///   (renewed every quarter of it); once the stream ends (the client left, the connection
///   dropped, the node stopped) the window runs out `reconnectWindow` later (60 s), so an
///   EventSource reconnecting by itself to the same URL within it is let in, with
///   `Last-Event-ID`; after it, 401. A node that dies stops renewing: its tickets' windows run
///   out the same way.
/// - Never past `ticketMaxLifetime` (1 h) after it was made: reconnecting is refused, and an
///   open stream ends with `event: expired` (the page asks for a new ticket).
/// - Deleting the session deletes its tickets (and ends its streams with `event: deleted`).
final class StreamTickets: Sendable {
    private struct Held {
        var hold: StreamTicketHold
        var sessionId: String
        var stream: ResponseStream
    }

    /// Where tickets are kept (shared by the nodes of one database).
    private let store: any StreamTicketStore
    private let sessions: SessionService
    private let options: EventOptions
    private let logger: Logger
    /// The tickets this node's streams hold, by ticket hash.
    private let held = PThreadMutex<[[UInt8]: Held]>([:])
    private let stop = DispatchSemaphore(value: 0)

    init(store: any StreamTicketStore, sessions: SessionService, options: EventOptions, logger: Logger) {
        self.store = store
        self.sessions = sessions
        self.options = options
        self.logger = logger
    }

    deinit {
        stop.signal()
    }

    var windowMilliseconds: Int { Self.milliseconds(options.reconnectWindow) }

    /// A new ticket for session `id` (whose token the caller checked).
    func issue(for id: String) throws(ResponseError) -> String {
        let ticket = "st_" + BearerToken.generate()
        let now = Application.milliseconds()
        let ends = now + Self.milliseconds(options.ticketMaxLifetime)
        try sessionCall { () throws(SessionError) in
            try sessions.storage {
                try store.insertStreamTicket(
                    hash: BearerToken.hash(ticket), sessionId: id,
                    expiresAt: min(ends, now + Self.milliseconds(options.ticketLifetime)), endsAt: ends, now: now)
            }
        }
        return ticket
    }

    /// Takes `ticket` to open a stream of session `id`: 401 unless it was made for that session,
    /// is within its window and before its end.
    func take(_ ticket: String, for id: String) throws(ResponseError) -> StreamTicketHold {
        guard (1...128).contains(ticket.utf8.count), ticket.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw ResponseError(SessionError.unauthorized(.malformedTicket))
        }
        let now = Application.milliseconds()
        guard let hold = try sessionCall({ () throws(SessionError) in
            try sessions.storage {
                try store.takeStreamTicket(hash: BearerToken.hash(ticket), sessionId: id, now: now, holdUntil: now + windowMilliseconds)
            }
        }) else {
            throw ResponseError(SessionError.unauthorized(.ticketRefused(session: id, window: Int(options.reconnectWindow.components.seconds))))
        }
        return hold
    }

    /// The stream opened with `hold` is `stream`: an older stream of the same ticket on this
    /// node ends with `event: replaced`.
    func attach(_ hold: StreamTicketHold, sessionId: String, stream: ResponseStream) {
        let replaced = held.withLock { all -> ResponseStream? in
            if let older = all[hold.hash], older.hold.generation > hold.generation {
                // A newer stream of this ticket got here first: this one is the replaced one.
                return stream
            }
            let older = all[hold.hash]?.stream
            all[hold.hash] = Held(hold: hold, sessionId: sessionId, stream: stream)
            return older
        }
        if let replaced { Self.end(replaced, event: "replaced", sessionId: sessionId) }
    }

    /// Starts the thread that renews the held tickets' windows, lets go of the ones whose
    /// stream ended (their window then runs out `reconnectWindow` later), ends the streams a
    /// newer one replaced on another node, and those whose ticket reached its end.
    func start() {
        let stop = self.stop
        let window = options.reconnectWindow
        let tick = min(.seconds(1), window / 4)
        let thread = Thread { [weak self] in
            Thread.current.name = "fs-stream-tickets"
            let clock = ContinuousClock()
            var nextRenewal = clock.now
            while stop.wait(timeout: .now() + SessionEvents.dispatchInterval(tick)) == .timedOut {
                guard let self else { return }
                let renewAll = clock.now >= nextRenewal
                if renewAll { nextRenewal = clock.now + window / 4 }
                self.maintain(renewAll: renewAll)
            }
        }
        thread.start()
    }

    /// One turn of the thread (see `start`); tests call it directly.
    func maintain(renewAll: Bool) {
        let now = Application.milliseconds()
        let (ended, expired, open) = held.withLock { all -> ([Held], [Held], [Held]) in
            var ended: [Held] = [], expired: [Held] = [], open: [Held] = []
            for (hash, entry) in all {
                if !entry.stream.isOpen {
                    ended.append(entry)
                    all[hash] = nil
                } else if entry.hold.endsAt < now {
                    expired.append(entry)
                    all[hash] = nil
                } else {
                    open.append(entry)
                }
            }
            return (ended, expired, open)
        }
        for entry in expired { Self.end(entry.stream, event: "expired", sessionId: entry.sessionId) }
        let renewing = ended + (renewAll ? open : [])
        guard !renewing.isEmpty else { return }
        let lost: [StreamTicketHold]
        do {
            lost = try store.renewStreamTickets(renewing.map(\.hold), until: now + windowMilliseconds)
        } catch {
            // The database is away: streams stay open; the next turn tries again.
            logger.debug("stream tickets not renewed", metadata: ["error": "\(error)"])
            if !ended.isEmpty { held.withLock { all in for entry in ended where all[entry.hold.hash] == nil { all[entry.hold.hash] = entry } } }
            return
        }
        guard !lost.isEmpty else { return }
        let lostSet = Set(lost)
        let replaced = held.withLock { all -> [Held] in
            var replaced: [Held] = []
            for entry in open where lostSet.contains(entry.hold) {
                if all[entry.hold.hash]?.hold.generation == entry.hold.generation { all[entry.hold.hash] = nil }
                replaced.append(entry)
            }
            return replaced
        }
        for entry in replaced { Self.end(entry.stream, event: "replaced", sessionId: entry.sessionId) }
    }

    /// Tickets held by this node's open streams.
    var heldCount: Int { held.withLock { $0.count } }

    private static func end(_ stream: ResponseStream, event: String, sessionId: String) {
        stream.write(Array("event: \(event)\ndata: {\"sessionId\":\"\(sessionId)\"}\n\n".utf8))
        stream.finish()
    }

    static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }
}
