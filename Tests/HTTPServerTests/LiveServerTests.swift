// The HTTP server through a real libmicrohttpd socket on an ephemeral loopback port.
import Foundation
import HTTPServer
import HTTPTestClient
import Synchronization
import Testing
import TestSupport

/// Starts a server on port 0 for one test and stops it afterwards.
final class LiveServer: Sendable {
    let server: HTTPServer
    var port: Int { server.port }

    init(maxBody: Int = 1024, timeout: Int = 30, threads: Int = 2, connectionLimit: Int = 8192,
         router: Router = LiveServer.testRouter) throws {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.connectionLimit = connectionLimit
        configuration.maxBodyBytes = maxBody
        configuration.connectionTimeoutSeconds = timeout
        configuration.threads = threads
        server = HTTPServer(configuration: configuration, handler: router.handle)
        try server.start()
    }

    deinit { server.shutdown(gracePeriod: .seconds(2)) }

    static let testRouter: Router = {
        var router = Router()
        router.add("GET", "/items/{id}") { .text("item \($0.pathParameters["id"] ?? "") q=\($0.queryValue("q") ?? "")") }
        router.add("POST", "/echo") { request in .bytes(request.body, contentType: "application/octet-stream") }
        // Answers once the test opens `slowGate` (at most 30 s later), on the thread it came on.
        router.add("GET", "/slow") { _ in
            _ = LiveServer.slowGate.wait(timeout: .now() + 30)
            return .text("slow done")
        }
        // Answered later, from another thread, as an action is once its commit is written.
        router.add("GET", "/later/{ms}") { request in
            let answer = DeferredResponse()
            let milliseconds = Int(request.pathParameters["ms"] ?? "") ?? 0
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) {
                answer.complete(.text("later \(milliseconds)"))
            }
            return .later(answer)
        }
        router.add("GET", "/never") { _ in .later(LiveServer.neverAnswered) }
        return router
    }()

    /// An answer nobody gives: shutdown must answer it.
    static let neverAnswered = DeferredResponse()
    /// Holds `/slow` until the test signals it.
    static let slowGate = DispatchSemaphore(value: 0)

    /// Shuts the server down on a thread of its own (Dispatch's global queue may start it a
    /// second or more later on a loaded machine) and signals `stopped` when it has.
    func shutDownInBackground(gracePeriod: Duration, stopped: DispatchSemaphore) {
        let server = server
        Thread.detachNewThread {
            server.shutdown(gracePeriod: gracePeriod)
            stopped.signal()
        }
    }
}

@Suite(.serialized)
struct LiveServerTests {
    /// Path parameters and query values arrive through a real socket.
    @Test func routesWithParameters() throws {
        let live = try LiveServer()
        let response = try SocketSender(port: live.port).send("GET", "/items/i-7?q=blue")
        #expect(response.status == 200)
        #expect(response.text == "item i-7 q=blue")
        #expect(response.headers["X-Request-Id"]?.isEmpty == false)
    }

    /// Unknown routes are 404 and wrong methods 405 with Allow, as problem+json.
    @Test func notFoundAndMethodNotAllowed() throws {
        let live = try LiveServer()
        let sender = SocketSender(port: live.port)
        let missing = try sender.send("GET", "/nothing/here")
        #expect(missing.status == 404)
        #expect(missing.headers["Content-Type"] == "application/problem+json")
        let wrong = try sender.send("DELETE", "/items/1")
        #expect(wrong.status == 405)
        #expect(wrong.headers["Allow"] == "GET, HEAD")
    }

    /// Encoded characters stay inside their segment: %2F is not a separator and %00 does not cut
    /// the path; query values are decoded, + as a space.
    @Test func escapesAreDecodedPerSegment() throws {
        let live = try LiveServer()
        let sender = SocketSender(port: live.port)
        #expect(try sender.send("GET", "/items/a%2Fb?q=x+y%21").text == "item a/b q=x y!")
        #expect(try sender.send("GET", "/items/a%2Fb%2Fc").text == "item a/b/c q=")
        #expect(try sender.send("GET", "/items%2F7").status == 404)
        #expect(try sender.send("GET", "/items/7%00/x").status == 404)
        #expect(try sender.send("GET", "/it%65ms/7").text == "item 7 q=")
    }

    /// HEAD answers with the GET route's headers, Content-Length included, and no body.
    @Test func headKeepsContentLength() throws {
        let live = try LiveServer()
        let connection = try RawConnection(port: live.port)
        try connection.send("HEAD /items/42 HTTP/1.1\r\nHost: t\r\n\r\n")
        let head = try connection.readResponse(headRequest: true)
        #expect(head.status == 200)
        #expect(head.headers.first { $0.0 == "Content-Length" }?.1 == String("item 42 q=".utf8.count))
        try connection.send("GET /items/43 HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(String(decoding: try connection.readResponse().body, as: UTF8.self) == "item 43 q=")
    }

    /// Headers fit in the connection's 16 KiB: 8 KiB of them are served, on the same connection
    /// as the next request too (the memory is reset between requests); past the limit,
    /// libmicrohttpd answers 431 itself.
    @Test func headersUpToTheConnectionMemoryAreServed() throws {
        let live = try LiveServer()
        let sender = SocketSender(port: live.port)
        let large = String(repeating: "h", count: 8 * 1024)
        #expect(try sender.send("GET", "/items/7", headers: [("X-Large", large)]).status == 200)
        let connection = try RawConnection(port: live.port)
        for index in 0..<3 {
            try connection.send("GET /items/\(index) HTTP/1.1\r\nHost: t\r\nX-Large: \(large)\r\n\r\n")
            #expect(String(decoding: try connection.readResponse().body, as: UTF8.self) == "item \(index) q=")
        }
        let tooLarge = String(repeating: "h", count: ServerConfiguration().connectionMemoryBytes + 1024)
        #expect(try sender.send("GET", "/items/7", headers: [("X-Large", tooLarge)]).status == 431)
    }

    /// The client's X-Request-Id is echoed; a missing or unusable one is replaced.
    @Test func requestIdIsKeptOrMade() throws {
        let live = try LiveServer()
        let sender = SocketSender(port: live.port)
        #expect(try sender.send("GET", "/items/1", headers: [("X-Request-Id", "abc-123")]).headers["X-Request-Id"] == "abc-123")
        let replaced = try sender.send("GET", "/items/1", headers: [("X-Request-Id", "has space")]).headers["X-Request-Id"]
        #expect(replaced != nil && replaced != "has space")
    }

    /// A body within the limit reaches the handler intact.
    @Test func bodyWithinLimitArrives() throws {
        let live = try LiveServer(maxBody: 1024)
        let body = String(repeating: "x", count: 1024)
        let response = try SocketSender(port: live.port).send("POST", "/echo", body: body)
        #expect(response.status == 200)
        #expect(response.text == body)
    }

    /// A Content-Length over the limit is refused with 413 before the body is read.
    @Test func contentLengthOverLimitIs413() throws {
        let live = try LiveServer(maxBody: 1024)
        let connection = try RawConnection(port: live.port)
        try connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5000000\r\n\r\n")
        let response = try connection.readResponse()
        #expect(response.status == 413)
        #expect(response.headers.contains { $0.0 == "Content-Type" && $0.1 == "application/problem+json" })
    }

    /// A chunked body that grows over the limit is answered 413, and the server keeps serving.
    @Test func chunkedBodyOverLimitIs413() throws {
        let live = try LiveServer(maxBody: 1024)
        let connection = try RawConnection(port: live.port)
        var request = "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
        for _ in 0..<4 { request += "200\r\n" + String(repeating: "y", count: 512) + "\r\n" }
        request += "0\r\n\r\n"
        try connection.send(request)
        #expect(try connection.readResponse().status == 413)
        #expect(try SocketSender(port: live.port).send("GET", "/items/2").status == 200)
    }

    /// A request whose headers leave the body's length unclear (a coding other than chunked,
    /// chunked with a Content-Length, or two lengths) is refused with 400 at once and its
    /// connection closed, instead of being read until the client gives up or framed one of two ways.
    @Test(arguments: [
        "Transfer-Encoding: gzip\r\n",
        "Transfer-Encoding: gzip, chunked\r\n",
        "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n",
        "Content-Length: 5\r\nContent-Length: 7\r\n",
    ])
    func unclearBodyLengthIs400(framing: String) throws {
        let live = try LiveServer()
        let connection = try RawConnection(port: live.port, timeout: .seconds(5))
        let started = ContinuousClock.now
        try connection.send("POST /echo HTTP/1.1\r\nHost: t\r\n" + framing + "\r\n5\r\nhello\r\n0\r\n\r\n")
        let response = try connection.readResponse()
        #expect(response.status == 400)
        #expect(response.headers.contains { $0.0 == "Content-Type" && $0.1 == "application/problem+json" })
        #expect(connection.waitForClose())
        #expect(ContinuousClock.now - started < .seconds(10), "closed, not left to the 30 s connection timeout")
    }

    /// A chunked body within the limit is gathered across upload calls.
    @Test func chunkedBodyWithinLimitArrives() throws {
        let live = try LiveServer(maxBody: 1024)
        let connection = try RawConnection(port: live.port)
        try connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
        let response = try connection.readResponse()
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "hello world")
    }

    /// A client that sends half a request and stalls does not keep others waiting: with a 30 s
    /// connection timeout, others are answered long before it (were they waiting for the
    /// stalled one, they would be answered only once it timed out).
    @Test func stalledClientDoesNotBlockOthers() throws {
        let live = try LiveServer(timeout: 30, threads: 1)
        let stalled = try RawConnection(port: live.port)
        try stalled.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nonly part")
        let started = ContinuousClock.now
        for _ in 0..<5 {
            #expect(try SocketSender(port: live.port).send("GET", "/items/3").status == 200)
        }
        #expect(ContinuousClock.now - started < .seconds(15))
    }

    /// The connection timeout closes a client that sent half a request and stalled.
    @Test func stalledClientIsClosedAtItsTimeout() throws {
        let live = try LiveServer(timeout: 1, threads: 1)
        let stalled = try RawConnection(port: live.port, timeout: .seconds(30))
        try stalled.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nonly part")
        let started = ContinuousClock.now
        #expect(stalled.waitForClose())
        #expect(ContinuousClock.now - started < .seconds(15), "closed by the server's 1 s timeout, not the test's 30 s")
    }

    /// 200 concurrent requests on 200 connections are all answered.
    @Test func answersConcurrentRequests() throws {
        let live = try LiveServer()
        let port = live.port
        let answered = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 200) { index in
            if let response = try? SocketSender(port: port).send("GET", "/items/\(index)"),
               response.status == 200, response.text == "item \(index) q=" {
                answered.add(1, ordering: .relaxed)
            }
        }
        #expect(answered.load(ordering: .relaxed) == 200)
    }

    /// At the connection limit a new client is not accepted and closed: it waits in the kernel's
    /// backlog, unanswered, and is served as soon as another connection closes.
    @Test func aClientOverTheConnectionLimitWaitsUntilOneCloses() throws {
        let live = try LiveServer(connectionLimit: 2)
        var first: RawConnection? = try RawConnection(port: live.port)
        let second = try RawConnection(port: live.port)
        for connection in [first, second].compactMap({ $0 }) {
            try connection.send("GET /items/kept HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try connection.readResponse().status == 200)
        }
        #expect(eventually { live.server.openConnections == 2 })
        let third = try RawConnection(port: live.port)
        try third.send("GET /items/third HTTP/1.1\r\nHost: t\r\n\r\n")
        var waiting = pollfd(fd: third.descriptor, events: Int16(POLLIN), revents: 0)
        #expect(poll(&waiting, 1, 500) == 0, "neither answered nor closed while two connections are open")
        first = nil
        let response = try third.readResponse()
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "item third q=")
        #expect(eventually { live.server.openConnections == 2 }, "the second and the third")
    }

    /// A port another server listens on is refused at start, saying so.
    @Test func aPortInUseIsRefusedAtStart() throws {
        let live = try LiveServer()
        var configuration = ServerConfiguration()
        configuration.port = live.port
        let second = HTTPServer(configuration: configuration, handler: LiveServer.testRouter.handle)
        #expect {
            try second.start()
        } throws: { error in
            "\(error)".contains("could not listen on 127.0.0.1:\(live.port)") && "\(error)".contains("in use")
        }
        #expect(try SocketSender(port: live.port).send("GET", "/items/still").status == 200)
    }

    /// A client stalled mid-upload does not hold up shutdown.
    @Test func stalledUploadDoesNotDelayShutdown() throws {
        let live = try LiveServer()
        let stalled = try RawConnection(port: live.port)
        try stalled.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nabcd")
        Thread.sleep(forTimeInterval: 0.1)
        let started = ContinuousClock.now
        live.server.shutdown(gracePeriod: .seconds(20))
        #expect(ContinuousClock.now - started < .seconds(10), "not held for the grace period")
    }

    /// An answer given later from another thread reaches its client, while the server's two
    /// threads go on serving others: 64 requests waiting at once hold no thread.
    @Test func deferredAnswersHoldNoThread() throws {
        let live = try LiveServer(threads: 2)
        let sender = SocketSender(port: live.port)
        let texts = Mutex<[String]>([])
        let started = ContinuousClock.now
        let group = DispatchGroup()
        for index in 0..<64 {
            // A thread per client (concurrentPerform would run only as many as there are cores).
            group.enter()
            Thread.detachNewThread {
                let response = try? sender.send("GET", "/later/\(200 + index % 3)")
                if response?.status == 200, let text = response?.text { texts.withLock { $0.append(text) } }
                group.leave()
            }
        }
        group.wait()
        #expect(texts.withLock { $0.count } == 64)
        #expect(texts.withLock { Set($0) } == ["later 200", "later 201", "later 202"])
        // With a thread held per waiting request this would take 32 rounds of 200 ms.
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(try sender.send("GET", "/items/after").status == 200)
    }

    /// An answer still missing when the grace period ends is answered 503 with a close, and the
    /// server stops.
    @Test func shutdownAnswersWhatIsStillAwaited() throws {
        let live = try LiveServer()
        let connection = try RawConnection(port: live.port)
        try connection.send("GET /never HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(eventually { live.server.requestsInFlight == 1 })
        let stopped = DispatchSemaphore(value: 0)
        live.shutDownInBackground(gracePeriod: .milliseconds(300), stopped: stopped)
        let response = try connection.readResponse()
        #expect(response.status == 503)
        #expect(response.headers.contains { $0.0 == "Connection" && $0.1 == "close" })
        #expect(stopped.wait(timeout: .now() + 20) == .success)
        #expect(LiveServer.neverAnswered.complete(.text("too late")) == false)
    }

    /// Shutdown stops accepting but lets a request in flight finish with its answer.
    @Test func gracefulShutdownFinishesRequestInFlight() throws {
        let live = try LiveServer()
        let port = live.port
        let connection = try RawConnection(port: port)
        try connection.send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(eventually { live.server.requestsInFlight == 1 })
        let stopped = DispatchSemaphore(value: 0)
        live.shutDownInBackground(gracePeriod: .seconds(30), stopped: stopped)
        #expect(eventually { (try? RawConnection(port: port)) == nil }, "no new connection after shutdown began")
        LiveServer.slowGate.signal()  // the request in flight finishes only now, during shutdown
        let response = try connection.readResponse()
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "slow done")
        #expect(response.headers.contains { $0.0 == "Connection" && $0.1 == "close" })
        #expect(stopped.wait(timeout: .now() + 30) == .success)
    }
}
