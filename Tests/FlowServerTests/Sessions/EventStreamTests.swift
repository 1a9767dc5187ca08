// Live session events end to end through libmicrohttpd: order, resumption, tickets, deletes,
// shutdown, heartbeats, slow clients, and 2,000 open streams.
@testable import FlowServer
import FlowStore
import Foundation
import HTTPServer
import HTTPTestClient
import JSON
import Testing

struct EventStreamTests {
    static let showSecond = #"{"type":"onboarding.showSecond"}"#
    static let returnToFirst = #"{"type":"onboarding.returnToFirst"}"#

    /// `timeout` bounds each wait for an event: generous, since the whole suite runs in parallel
    /// on two cores in CI (a wait of 10 s ran out there once); the tests check what comes and in
    /// which order, not how fast.
    static func open(_ server: HTTPServer, _ session: CreatedSession, headers: [(String, String)] = [],
                     timeout: Duration = .seconds(30)) throws -> EventStreamClient {
        try EventStreamClient(port: server.port, path: "/v1/sessions/\(session.id)/events", headers: session.auth + headers,
                              timeout: timeout)
    }

    /// Moves the session forward by one version (onboarding's second screen and back, in turn).
    static func step(_ client: SessionClient, _ session: CreatedSession, _ index: Int) throws {
        try client.apply(session, index % 2 == 0 ? showSecond : returnToFirst)
    }

    /// The current state first, then one event per committed version, in order, each the state
    /// document a read of that version answers.
    @Test func firstTheStateThenEachVersionInOrder() throws {
        let test = try TestApp()
        try test.withServer { server in
            let client = SessionClient(sender: SocketSender(port: server.port))
            let session = try client.create(userId: "follower")
            let stream = try Self.open(server, session)
            #expect(stream.status == 200)
            #expect(stream.header("Content-Type") == "text/event-stream")
            #expect(stream.header("Cache-Control") == "no-store")
            let first = try #require(try stream.next())
            #expect(first.id == "0")
            #expect(first.event == "state")
            #expect(first.data == session.state.jsonText)
            #expect(stream.retry == 2000)
            for index in 0..<6 {
                try Self.step(client, session, index)
                let event = try #require(try stream.next())
                #expect(event.id == String(index + 1))
                #expect(event.event == "state")
                let read = try client.state(session)
                #expect(event.data == read.text, "the event carries the state a read answers")
            }
            #expect(test.app.metrics.events.open.load(ordering: .relaxed) == 1)
        }
    }

    /// A client resuming with the current version gets nothing until the next one; with an
    /// older one (or a garbled one) it gets the current state at once.
    @Test func lastEventIdResumes() throws {
        let test = try TestApp()
        try test.withServer { server in
            let client = SessionClient(sender: SocketSender(port: server.port))
            let session = try client.create(userId: "resumer")
            try Self.step(client, session, 0)
            try Self.step(client, session, 1)
            let current = try Self.open(server, session, headers: [("Last-Event-ID", "2")])
            let older = try Self.open(server, session, headers: [("Last-Event-ID", "1")])
            let garbled = try Self.open(server, session, headers: [("Last-Event-ID", "two")])
            #expect(try older.next()?.id == "2")
            #expect(try garbled.next()?.id == "2")
            try Self.step(client, session, 2)
            #expect(try current.next()?.id == "3", "the first event after resuming at the current version is the next one")
            #expect(try older.next()?.id == "3")
        }
    }

    /// Two followers of one session (a phone and a web view) see what either one does. A stream's
    /// unsent state is replaced by a newer one (a CI run once got fewer than the five
    /// events of four quick steps), so exact sequences are only expected where each version is read
    /// before the next.
    @Test func severalStreamsFollowOneSession() throws {
        let test = try TestApp()
        try test.withServer { server in
            let client = SessionClient(sender: SocketSender(port: server.port))
            let session = try client.create(userId: "two-windows")
            let phone = try Self.open(server, session)
            let web = try Self.open(server, session)
            #expect(try phone.next()?.id == "0")
            #expect(try web.next()?.id == "0")
            // Each version is read before the next is made, so neither stream may skip it.
            for index in 0..<4 {
                try Self.step(client, session, index)
                #expect(try phone.next()?.id == String(index + 1))
                #expect(try web.next()?.id == String(index + 1))
            }
            // Made faster than they are read, versions may be skipped (an unsent state is replaced
            // by a newer one), but they come in order, never twice, and the newest always comes.
            for index in 4..<10 { try Self.step(client, session, index) }
            for stream in [phone, web] {
                let ids = try stream.events(through: 10).compactMap { $0.id.flatMap(Int.init) }
                #expect(ids == ids.sorted() && Set(ids).count == ids.count, "\(ids)")
                #expect(ids.first.map { $0 > 4 } == true && ids.last == 10, "\(ids)")
            }
        }
    }

    /// Deleting the session sends `event: deleted` and ends its streams cleanly.
    @Test func deleteEndsStreams() throws {
        let test = try TestApp()
        try test.withServer { server in
            let sender = SocketSender(port: server.port)
            let client = SessionClient(sender: sender)
            let session = try client.create(userId: "leaver")
            let stream = try Self.open(server, session)
            _ = try stream.next()
            let deleted = try sender.send("DELETE", "/v1/sessions/\(session.id)", headers: session.auth)
            #expect(deleted.status == 204)
            let last = try #require(try stream.next())
            #expect(last.event == "deleted")
            #expect(last.data.contains(session.id))
            #expect(try stream.next() == nil)
            #expect(stream.endedCleanly)
            let again = try Self.open(server, session)
            #expect(again.status == 404)
        }
    }

    /// A graceful stop ends open streams with the chunked encoding's last chunk, at once.
    @Test func shutdownEndsStreamsCleanly() throws {
        let test = try TestApp()
        var configuration = ServerConfiguration()
        configuration.port = 0
        let server = HTTPServer(configuration: configuration, handler: test.app.handle)
        try server.start()
        let client = SessionClient(sender: SocketSender(port: server.port))
        let session = try client.create(userId: "stopper")
        let streams = try (0..<3).map { _ in try Self.open(server, session) }
        for stream in streams { _ = try stream.next() }
        let started = ContinuousClock.now
        server.shutdown(gracePeriod: .seconds(20))
        #expect(ContinuousClock.now - started < .seconds(10), "streams do not hold the stop for its grace period")
        for stream in streams {
            #expect(try stream.next() == nil)
            #expect(stream.endedCleanly)
        }
        #expect(server.openStreams == 0)
    }

    /// Idle streams get a comment now and then, so proxies keep them open.
    @Test func heartbeatsKeepIdleStreamsAlive() throws {
        var options = EventOptions()
        options.heartbeat = .milliseconds(100)
        let test = try TestApp(events: options)
        try test.withServer { server in
            let client = SessionClient(sender: SocketSender(port: server.port))
            let session = try client.create(userId: "quiet")
            let stream = try Self.open(server, session)
            _ = try stream.next()
            Thread.sleep(forTimeInterval: 1.5)  // 15 beats' time: two come even on a loaded machine
            try Self.step(client, session, 0)
            #expect(try stream.next()?.id == "1")
            #expect(stream.comments.filter { $0 == "keepalive" }.count >= 2, "comments: \(stream.comments)")
        }
    }

    /// A client that leaves an idle stream is noticed within a second or two, without any write
    /// to its stream, and the stream is released.
    @Test func departedClientsAreReleased() throws {
        let test = try TestApp()
        try test.withServer { server in
            let client = SessionClient(sender: SocketSender(port: server.port))
            let session = try client.create(userId: "gone")
            var stream: EventStreamClient? = try Self.open(server, session)
            _ = try stream?.next()
            #expect(server.openStreams == 1)
            stream = nil  // closes the socket
            let deadline = ContinuousClock.now + .seconds(5)
            while server.openStreams > 0 && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.02) }
            #expect(server.openStreams == 0)
            #expect(test.app.metrics.events.open.load(ordering: .relaxed) == 0)
        }
    }

    /// A state document larger than a stream's queue limit is still streamed whole.
    @Test func largeStatesAreStreamed() throws {
        let test = try TestApp()
        let chunk = String(repeating: "x", count: 60_000)
        let flag = #"{"variants":{"big":["\#(chunk)","\#(chunk)","\#(chunk)","\#(chunk)","\#(chunk)"],"small":""},"defaultVariant":"big"}"#
        #expect(try test.direct.send("PUT", "/v1/flags/big", body: flag, headers: FlowAdminTests.admin).status == 201)
        try test.withServer { server in
            let client = SessionClient(sender: SocketSender(port: server.port))
            let session = try client.create(userId: "hoarder")
            let stream = try Self.open(server, session)
            let first = try #require(try stream.next())
            #expect(first.data.utf8.count > SessionEvents.queueLimit)
            try Self.step(client, session, 0)
            try Self.step(client, session, 1)
            #expect(try stream.events(through: 2).last?.id == "2")
        }
    }

    /// A client that reads late skips versions but never goes back, and ends at the newest.
    @Test func slowClientsSkipVersionsInOrder() throws {
        let test = try TestApp()
        try test.withServer { server in
            let client = SessionClient(sender: SocketSender(port: server.port))
            let session = try client.create(userId: "slow")
            let stream = try Self.open(server, session)
            for index in 0..<200 { try Self.step(client, session, index) }
            let ids = try stream.events(through: 200).compactMap { $0.id.flatMap(Int.init) }
            #expect(ids.last == 200)
            #expect(zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 }, "versions only go forward")
        }
    }

    // MARK: Credentials

    /// Without the token, with another session's token, or for an unknown session: refused.
    @Test func streamsNeedTheSessionsToken() throws {
        let test = try TestApp()
        try test.withServer { server in
            let client = SessionClient(sender: SocketSender(port: server.port))
            let session = try client.create(userId: "guarded")
            let other = try client.create(userId: "intruder")
            let path = "/v1/sessions/\(session.id)/events"
            #expect(try EventStreamClient(port: server.port, path: path).status == 401)
            #expect(try EventStreamClient(port: server.port, path: path, headers: other.auth).status == 401)
            #expect(try EventStreamClient(port: server.port, path: "/v1/sessions/s_nope/events", headers: session.auth).status == 404)
            let head = try EventStreamClient(port: server.port, path: path, method: "HEAD", headers: session.auth)
            #expect(head.status == 200)
            #expect(test.app.metrics.events.open.load(ordering: .relaxed) == 0 || server.openStreams == 0)
        }
    }

    // MARK: Many streams

    /// 2,000 streams on 100 sessions each follow their session to its newest version.
    @Test func twoThousandStreams() throws {
        let test = try TestApp()
        try test.withServer({ $0.perIPConnectionLimit = 4096 }) { server in
            let client = SessionClient(sender: SocketSender(port: server.port))
            let sessions = try (0..<100).map { try client.create(userId: "crowd-\($0)") }
            var streams: [(session: Int, stream: EventStreamClient)] = []
            for index in 0..<2000 {
                streams.append((index % 100, try Self.open(server, sessions[index % 100])))
            }
            #expect(server.openStreams == 2000)
            #expect(test.app.metrics.events.open.load(ordering: .relaxed) == 2000)
            for (index, session) in sessions.enumerated() {
                for step in 0..<(1 + index % 3) { try Self.step(client, session, step) }
            }
            var wrong = 0
            for (index, stream) in streams {
                let expected = 1 + index % 3
                let ids = try stream.events(through: expected).compactMap { $0.id.flatMap(Int.init) }
                if ids.last != expected || ids.first != 0 { wrong += 1 }
            }
            #expect(wrong == 0)
            streams.removeAll()
            let deadline = ContinuousClock.now + .seconds(10)
            // Closed sockets are noticed at the next write: a delete writes to each stream.
            for session in sessions { _ = try SocketSender(port: server.port).send("DELETE", "/v1/sessions/\(session.id)", headers: session.auth) }
            while server.openStreams > 0 && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.05) }
            #expect(server.openStreams == 0)
        }
    }
}
