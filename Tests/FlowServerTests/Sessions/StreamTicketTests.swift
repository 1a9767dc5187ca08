// Stream tickets through libmicrohttpd: what a browser's EventSource does with one (open, lose
// the connection, reconnect to the same URL), and where a ticket stops: its session, its
// reconnection window, its end, a newer stream of the same ticket, the session's deletion.
@testable import FlowServer
import FlowStore
import Foundation
import HTTPServer
import HTTPTestClient
import JSON
import Testing

struct StreamTicketTests {
    /// A fresh ticket for `session`.
    static func ticket(_ sender: SocketSender, _ session: CreatedSession) throws -> String {
        let response = try sender.send("POST", "/v1/sessions/\(session.id)/events/ticket", headers: session.auth)
        #expect(response.status == 201)
        return try #require(response.json["ticket"].stringValue)
    }

    static func open(_ server: HTTPServer, _ session: CreatedSession, ticket: String,
                     lastEventId: Int? = nil) throws -> EventStreamClient {
        try EventStreamClient(port: server.port, path: "/v1/sessions/\(session.id)/events?ticket=\(ticket)",
                              headers: lastEventId.map { [("Last-Event-ID", String($0))] } ?? [])
    }

    /// Waits until the server let go of every stream (its client left) and of their tickets.
    static func waitReleased(_ test: TestApp, _ server: HTTPServer) {
        let deadline = ContinuousClock.now + .seconds(20)
        while (server.openStreams > 0 || test.app.tickets.heldCount > 0) && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    static func shortWindow(_ window: Duration = .seconds(1), maxLifetime: Duration = .seconds(3600)) -> EventOptions {
        var options = EventOptions()
        options.reconnectWindow = window
        options.ticketMaxLifetime = maxLifetime
        return options
    }

    /// A ticket says how long it waits, how long it lets a stream reconnect, and when it ends;
    /// it is checked before a stream opens: its session, its form; tokens never go in URLs.
    @Test func ticketsAreCheckedBeforeTheyOpenAStream() throws {
        let test = try TestApp()
        try test.withServer { server in
            let sender = SocketSender(port: server.port)
            let client = SessionClient(sender: sender)
            let session = try client.create(userId: "browser")
            let other = try client.create(userId: "someone-else")
            let made = try sender.send("POST", "/v1/sessions/\(session.id)/events/ticket", headers: session.auth)
            #expect(made.json["expiresIn"] == 30)
            #expect(made.json["reconnectWindow"] == 60)
            #expect(made.json["maxLifetime"] == 3600)
            #expect(made.headers["Cache-Control"] == "no-store")

            let foreign = try Self.ticket(sender, other)
            let wrongSession = try Self.open(server, session, ticket: foreign)
            #expect(wrongSession.status == 401)
            #expect(String(decoding: wrongSession.body, as: UTF8.self).contains("another session"))
            #expect(try Self.open(server, other, ticket: foreign).status == 200, "tried on another session, it still opens its own")

            let stale = "st_expired-ticket"
            let now = Application.milliseconds()
            try test.store.insertStreamTicket(hash: BearerToken.hash(stale), sessionId: session.id, expiresAt: now - 1, endsAt: now + 60_000,
                                              now: now - 60_000)
            let expired = try Self.open(server, session, ticket: stale)
            #expect(expired.status == 401)
            #expect(String(decoding: expired.body, as: UTF8.self).contains("expired"))

            for query in ["ticket=nonsense", "ticket=", "ticket=" + String(repeating: "x", count: 500)] {
                let response = try EventStreamClient(port: server.port, path: "/v1/sessions/\(session.id)/events?\(query)")
                #expect(response.status == 401, "\(query)")
                #expect(response.header("Content-Type") == "application/problem+json")
            }
            let inURL = try EventStreamClient(port: server.port, path: "/v1/sessions/\(session.id)/events?token=\(session.token)")
            #expect(inURL.status == 400)
            #expect(try EventStreamClient(port: server.port, path: "/v1/sessions/\(session.id)/events").status == 401)
            #expect(try sender.send("POST", "/v1/sessions/\(session.id)/events/ticket").status == 401)
            #expect(try sender.send("POST", "/v1/sessions/\(session.id)/events/ticket", headers: other.auth).status == 401)
            #expect(try sender.send("POST", "/v1/sessions/s_unknown/events/ticket", headers: session.auth).status == 404)
        }
    }

    /// The connection drops; the same URL, within the window, opens the stream again, and
    /// `Last-Event-ID` says what the client has: the versions committed meanwhile come as the
    /// newest state at once, nothing twice.
    @Test func aTicketReconnectsWithinItsWindowAndResumes() throws {
        let test = try TestApp()
        try test.withServer { server in
            let sender = SocketSender(port: server.port)
            let client = SessionClient(sender: sender)
            let session = try client.create(userId: "blip")
            let ticket = try Self.ticket(sender, session)
            var stream: EventStreamClient? = try Self.open(server, session, ticket: ticket)
            #expect(try stream?.next()?.id == "0")
            stream = nil
            Self.waitReleased(test, server)
            try EventStreamTests.step(client, session, 0)
            try EventStreamTests.step(client, session, 1)
            let again = try Self.open(server, session, ticket: ticket, lastEventId: 0)
            #expect(again.status == 200)
            let missed = try #require(try again.next())
            #expect(missed.id == "2")
            #expect(missed.data == (try client.state(session)).text)
            try EventStreamTests.step(client, session, 2)
            #expect(try again.next()?.id == "3")

            // Resuming with the current version: nothing until the next one.
            let current = try Self.open(server, session, ticket: ticket, lastEventId: 3)
            #expect(current.status == 200)
            try EventStreamTests.step(client, session, 3)
            #expect(try current.next()?.id == "4")
        }
    }

    /// After the window has run out since its last stream ended, the same URL is refused, for
    /// good; while a stream is open the window is kept ahead, however long it stays open.
    @Test func aTicketIsRefusedAfterItsWindow() throws {
        // A window of 3 s, renewed every 750 ms while the stream is open: long next to a
        // request, so that a loaded machine's stalls fit in it.
        let test = try TestApp(events: Self.shortWindow(.seconds(3)))
        try test.withServer { server in
            let sender = SocketSender(port: server.port)
            let client = SessionClient(sender: sender)
            let session = try client.create(userId: "gone-for-long")
            let ticket = try Self.ticket(sender, session)
            var stream: EventStreamClient? = try Self.open(server, session, ticket: ticket)
            #expect(try stream?.next()?.id == "0")
            Thread.sleep(forTimeInterval: 7)  // longer than two windows: kept ahead while open
            stream = try Self.open(server, session, ticket: ticket)
            #expect(stream?.status == 200, "an open stream keeps its ticket's window ahead")
            stream = nil
            Self.waitReleased(test, server)
            Thread.sleep(forTimeInterval: 0.3)
            var soon: EventStreamClient? = try Self.open(server, session, ticket: ticket)
            #expect(soon?.status == 200, "within the window after the stream ended")
            soon = nil
            Self.waitReleased(test, server)
            Thread.sleep(forTimeInterval: 4)
            let late = try Self.open(server, session, ticket: ticket)
            #expect(late.status == 401)
            #expect(String(decoding: late.body, as: UTF8.self).contains("reconnection window"))
        }
    }

    /// Past its maximum lifetime a ticket opens nothing, and the stream it opened ends with
    /// `event: expired`, however active.
    @Test func aTicketEndsAtItsMaximumLifetime() throws {
        // 5 s: a ticket, a stream and a step fit in it on a loaded machine.
        let test = try TestApp(events: Self.shortWindow(.seconds(1), maxLifetime: .seconds(5)))
        try test.withServer { server in
            let sender = SocketSender(port: server.port)
            let client = SessionClient(sender: sender)
            let session = try client.create(userId: "long-lived")
            let ticket = try Self.ticket(sender, session)
            let stream = try Self.open(server, session, ticket: ticket)
            #expect(try stream.next()?.id == "0")
            try EventStreamTests.step(client, session, 0)
            #expect(try stream.next()?.id == "1")
            let last = try #require(try stream.next())
            #expect(last.event == "expired")
            #expect(try stream.next() == nil)
            #expect(stream.endedCleanly)
            let again = try Self.open(server, session, ticket: ticket)
            #expect(again.status == 401)
            // A header token is not a ticket: it still opens streams.
            #expect(try EventStreamTests.open(server, session).status == 200)
        }
    }

    /// One live stream per ticket: a newer one replaces the older (`event: replaced`, end),
    /// also when many open at once; only the newest gets later versions.
    @Test func aNewerStreamReplacesTheOlder() throws {
        let test = try TestApp()
        try test.withServer { server in
            let sender = SocketSender(port: server.port)
            let client = SessionClient(sender: sender)
            let session = try client.create(userId: "twice")
            let ticket = try Self.ticket(sender, session)
            let older = try Self.open(server, session, ticket: ticket)
            #expect(try older.next()?.id == "0")
            let newer = try Self.open(server, session, ticket: ticket)
            #expect(try newer.next()?.id == "0")
            let replaced = try #require(try older.next())
            #expect(replaced.event == "replaced")
            #expect(try older.next() == nil)
            try EventStreamTests.step(client, session, 0)
            #expect(try newer.next()?.id == "1")

            let racers = Racers()
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                if let stream = try? Self.open(server, session, ticket: ticket, lastEventId: 1) { racers.add(stream) }
            }
            let streams = [newer] + racers.streams
            #expect(streams.count == 9)
            #expect(streams.allSatisfy { $0.status == 200 })
            try EventStreamTests.step(client, session, 1)
            var following = 0
            var ended = 0
            for stream in streams {
                var events: [EventStreamClient.Event] = []
                while let event = try stream.next() {
                    events.append(event)
                    if event.id == "2" { break }
                }
                if events.last?.id == "2" { following += 1 }
                if events.last?.event == "replaced" && stream.ended { ended += 1 }
            }
            #expect(following == 1, "one live stream per ticket")
            #expect(ended == 8)
            #expect(test.app.tickets.heldCount == 1)
        }
    }

    /// Deleting the session ends its streams and its tickets: the URL opens nothing after.
    @Test func deletingTheSessionEndsItsTickets() throws {
        let test = try TestApp()
        try test.withServer { server in
            let sender = SocketSender(port: server.port)
            let client = SessionClient(sender: sender)
            let session = try client.create(userId: "deleted")
            let ticket = try Self.ticket(sender, session)
            let stream = try Self.open(server, session, ticket: ticket)
            #expect(try stream.next()?.id == "0")
            #expect(try sender.send("DELETE", "/v1/sessions/\(session.id)", headers: session.auth).status == 204)
            #expect(try stream.next()?.event == "deleted")
            #expect(try stream.next() == nil)
            #expect(try Self.open(server, session, ticket: ticket).status == 401)
        }
    }
}

/// Streams opened by concurrent threads (each client is used by one thread at a time).
private final class Racers: @unchecked Sendable {
    private let lock = NSLock()
    private var opened: [EventStreamClient] = []

    func add(_ stream: EventStreamClient) { lock.withLock { opened.append(stream) } }
    var streams: [EventStreamClient] { lock.withLock { opened } }
}
