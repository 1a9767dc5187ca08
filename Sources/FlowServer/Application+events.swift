// Event routes: a session's state pushed at each version (Server-Sent Events), and the
// single-use tickets that let a browser's EventSource open one without a header.
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
    /// How long a stream ticket may wait before it is used.
    public var ticketLifetime: Duration = .seconds(30)

    public init() {}
}

extension Application {
    static func addEventRoutes(to router: inout Router, sessions: SessionService, events: SessionEvents, options: EventOptions) {
        let lifetime = Int(options.ticketLifetime.components.seconds)

        router.route("POST", "/v1/sessions/{id}/events/ticket") { request throws(ResponseError) in
            let id = request.pathParameters["id"] ?? ""
            _ = try sessions.withSession(id, token: BearerToken.presented(in: request)) { $0.version }
            let ticket = "st_" + BearerToken.generate()
            let now = Self.milliseconds()
            try sessions.storage {
                try sessions.store.insertStreamTicket(
                    hash: BearerToken.hash(ticket), sessionId: id, expiresAt: now + lifetime * 1000, now: now)
            }
            var writer = JSONWriter(capacity: 128)
            writer.beginObject()
            writer.writeKey("ticket")
            writer.writeString(ticket)
            writer.writeKey("expiresIn")
            writer.writeInteger(lifetime)
            writer.endObject()
            var response = Response.json(writer.takeBytes(), status: 201)
            response.headers["Cache-Control"] = "no-store"
            return response
        }

        router.route("GET", "/v1/sessions/{id}/events") { request throws(ResponseError) in
            let id = request.pathParameters["id"] ?? ""
            if request.queryValue("token") != nil || request.queryValue("access_token") != nil {
                throw ResponseError(.problem(
                    400, "A session token never goes in a URL (URLs end up in logs): send it as Authorization: Bearer, or ask POST /v1/sessions/\(id)/events/ticket for a single-use ticket and pass ?ticket=.",
                    type: ProblemType.malformed, errors: [.init(pointer: "token", detail: "not accepted in the query")]))
            }
            let access: SessionAccess
            if let token = BearerToken.presented(in: request) {
                access = .bearer(token)
            } else if let ticket = request.queryValue("ticket") {
                try Self.redeem(ticket: ticket, for: id, sessions: sessions)
                access = .server
            } else {
                throw SessionService.unauthorized(
                    "This route needs Authorization: Bearer <session token>, or ?ticket= from POST /v1/sessions/\(id)/events/ticket.")
            }
            // A client resuming says which version it has; anything unreadable counts as none.
            let lastEventId = request.headers["Last-Event-ID"].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            return try events.openStream(sessionId: id, lastEventId: lastEventId) { () throws(ResponseError) in
                try sessions.withSession(id, access: access) { session in (session.version, session.cachedStateDocument()) }
            }
        }
    }

    /// Takes a stream ticket out of the database; refuses one that is unknown, used, expired or
    /// made for another session (it is used up all the same).
    private static func redeem(ticket: String, for id: String, sessions: SessionService) throws(ResponseError) {
        guard (1...128).contains(ticket.utf8.count), ticket.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw SessionService.unauthorized("The ticket is not one this server makes.")
        }
        guard let record = try sessions.storage({ try sessions.store.consumeStreamTicket(hash: BearerToken.hash(ticket)) }) else {
            throw SessionService.unauthorized("The ticket is unknown or was used already; a ticket opens one stream. Ask for a new one.")
        }
        guard record.sessionId == id else {
            throw SessionService.unauthorized("The ticket was made for another session.")
        }
        guard record.expiresAt >= milliseconds() else {
            throw SessionService.unauthorized("The ticket expired; ask for a new one just before opening the stream.")
        }
    }

    static func milliseconds() -> Int {
        Int((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }
}
