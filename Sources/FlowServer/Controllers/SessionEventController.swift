// The event routes of a session: its state pushed at each version (Server-Sent Events), and the
// tickets that let a browser's EventSource open one without a header (see StreamTickets).
import FlowStore
import Foundation
import HTTPServer

/// `POST /v1/sessions/{id}/events/ticket` and `GET /v1/sessions/{id}/events`.
struct SessionEventController: Controller {
    let sessions: SessionService
    let events: SessionEvents
    let tickets: StreamTickets
    let options: EventOptions
    let limits: BodyLimits

    func register(on router: inout Router) {
        router.route("POST", "/v1/sessions/{id}/events/ticket", limits: limits, ticket)
        router.route("GET", "/v1/sessions/{id}/events", limits: limits, stream)
    }

    func ticket(_ request: SessionRequest) throws(ResponseError) -> StreamTicketAnswer {
        _ = try sessionCall { () throws(SessionError) in
            try sessions.withSession(request.id, token: request.token) { $0.version }
        }
        return StreamTicketAnswer(ticket: try tickets.issue(for: request.id),
                                  expiresIn: Int(options.ticketLifetime.components.seconds),
                                  reconnectWindow: Int(options.reconnectWindow.components.seconds),
                                  maxLifetime: Int(options.ticketMaxLifetime.components.seconds))
    }

    func stream(_ request: EventStreamRequest) throws(ResponseError) -> Response {
        let id = request.id
        let access: SessionAccess
        var hold: StreamTicketHold?
        switch request.credential {
        case .bearer(let token):
            access = .bearer(token)
        case .ticket(let ticket):
            hold = try tickets.take(ticket, for: id)
            access = .server
        }
        let response = try events.openStream(sessionId: id, lastEventId: request.lastEventId) { () throws(ResponseError) in
            try sessionCall { () throws(SessionError) in
                try sessions.withSession(id, access: access) { session in (session.version, session.cachedStateDocument()) }
            }
        }
        if let hold, let stream = response.stream { tickets.attach(hold, sessionId: id, stream: stream) }
        return response
    }
}

/// `GET /v1/sessions/{id}/events`: a bearer token or `?ticket=` (never a token in the URL, 400;
/// neither, 401), and `Last-Event-ID`, the version a resuming client has.
struct EventStreamRequest: RouteRequest {
    enum Credential {
        case bearer(String)
        case ticket(String)
    }

    let id: String
    let credential: Credential
    /// Anything unreadable counts as none.
    let lastEventId: Int?

    init(_ request: Request, limits: BodyLimits) throws(ResponseError) {
        id = request.parameter("id")
        if request.queryValue("token") != nil || request.queryValue("access_token") != nil {
            throw ResponseError(.problem(
                400, "A session token never goes in a URL (URLs end up in logs): send it as Authorization: Bearer, or ask POST /v1/sessions/\(id)/events/ticket for a ticket and pass ?ticket=.",
                type: ProblemType.malformed, errors: [.init(pointer: "token", detail: "not accepted in the query")]))
        }
        if let token = BearerToken.presented(in: request) {
            credential = .bearer(token)
        } else if let ticket = request.queryValue("ticket") {
            credential = .ticket(ticket)
        } else {
            throw ResponseError(SessionError.unauthorized(.missingForEvents(session: id)))
        }
        lastEventId = request.headers["Last-Event-ID"].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    }
}
