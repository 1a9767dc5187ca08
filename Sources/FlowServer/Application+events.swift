// Event routes: a session's state pushed at each version (Server-Sent Events), and the
// tickets that let a browser's EventSource open one without a header (see StreamTickets).
import FlowStore
import Foundation
import HTTPServer
import JSON

/// How event streams behave.
public struct EventOptions: Sendable {
    /// A comment is written to each idle stream this often, so proxies keep it open.
    public var heartbeat: Duration = .seconds(15)
    /// On a shared database, how often the sessions streamed here are checked for versions
    /// committed through other nodes.
    public var watchInterval: Duration = .milliseconds(100)
    /// How long a stream ticket may wait before it is first used.
    public var ticketLifetime: Duration = .seconds(30)
    /// How long after its last stream ended a ticket may open the stream again (an
    /// EventSource reconnecting by itself to the same URL).
    public var reconnectWindow: Duration = .seconds(60)
    /// How long after it was made a ticket opens nothing any more, whatever its streams did;
    /// a stream it opened ends then (`event: expired`).
    public var ticketMaxLifetime: Duration = .seconds(3600)

    public init() {}
}

extension Application {
    static func addEventRoutes(to router: inout Router, sessions: SessionService, events: SessionEvents, tickets: StreamTickets,
                               options: EventOptions) {
        let lifetime = Int(options.ticketLifetime.components.seconds)
        let window = Int(options.reconnectWindow.components.seconds)
        let maxLifetime = Int(options.ticketMaxLifetime.components.seconds)

        router.route("POST", "/v1/sessions/{id}/events/ticket") { request throws(ResponseError) in
            let id = request.pathParameters["id"] ?? ""
            _ = try sessionCall { () throws(SessionError) in
                try sessions.withSession(id, token: BearerToken.presented(in: request)) { $0.version }
            }
            let ticket = try tickets.issue(for: id)
            var writer = JSONWriter(capacity: 128)
            writer.beginObject()
            writer.writeKey("ticket")
            writer.writeString(ticket)
            writer.writeKey("expiresIn")
            writer.writeInteger(lifetime)
            writer.writeKey("reconnectWindow")
            writer.writeInteger(window)
            writer.writeKey("maxLifetime")
            writer.writeInteger(maxLifetime)
            writer.endObject()
            var response = Response.json(writer.takeBytes(), status: 201)
            response.headers["Cache-Control"] = "no-store"
            return response
        }

        router.route("GET", "/v1/sessions/{id}/events") { request throws(ResponseError) in
            let id = request.pathParameters["id"] ?? ""
            if request.queryValue("token") != nil || request.queryValue("access_token") != nil {
                throw ResponseError(.problem(
                    400, "A session token never goes in a URL (URLs end up in logs): send it as Authorization: Bearer, or ask POST /v1/sessions/\(id)/events/ticket for a ticket and pass ?ticket=.",
                    type: ProblemType.malformed, errors: [.init(pointer: "token", detail: "not accepted in the query")]))
            }
            let access: SessionAccess
            var hold: StreamTicketHold?
            if let token = BearerToken.presented(in: request) {
                access = .bearer(token)
            } else if let ticket = request.queryValue("ticket") {
                hold = try tickets.take(ticket, for: id)
                access = .server
            } else {
                throw ResponseError(SessionError.unauthorized(.missingForEvents(session: id)))
            }
            // A client resuming says which version it has; anything unreadable counts as none.
            let lastEventId = request.headers["Last-Event-ID"].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            let response = try events.openStream(sessionId: id, lastEventId: lastEventId) { () throws(ResponseError) in
                try sessionCall { () throws(SessionError) in
                    try sessions.withSession(id, access: access) { session in (session.version, session.cachedStateDocument()) }
                }
            }
            if let hold, let stream = response.stream { tickets.attach(hold, sessionId: id, stream: stream) }
            return response
        }
    }

    static func milliseconds() -> Int {
        Int((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }
}
