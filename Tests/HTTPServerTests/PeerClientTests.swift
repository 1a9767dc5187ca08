// The client a node forwards writes with, against a real libmicrohttpd socket and against peers
// that misbehave: every answer read whole, kept connections used again, and a failure that says
// whether the request may have reached the peer.
import Foundation
@testable import HTTPServer
import Synchronization
import Testing

struct PeerClientTests {
    static let router: Router = {
        var router = Router()
        router.add("POST", "/echo/{id}") { request in
            let header = request.headers["X-Test"] ?? "-"
            let body = "\(request.method) \(request.pathParameters["id"] ?? "") q=\(request.queryValue("q") ?? "") h=\(header) "
            return .bytes(Array(body.utf8) + request.body, contentType: "text/plain")
        }
        router.add("GET", "/big") { _ in .bytes([UInt8](repeating: 65, count: 300_000), contentType: "text/plain") }
        return router
    }()

    /// Method, path, query (escaped again), headers and body reach the peer, the answer comes
    /// back whole (a body larger than one read), and the next request goes on the kept connection.
    @Test func forwardsAndReadsWholeAnswers() throws {
        let live = try LiveServer(maxBody: 1 << 20, router: Self.router)
        let peers = PeerClient()
        var request = Request(method: "POST", path: "/echo/s1", query: [("q", "a b&c")], body: Array("payload".utf8))
        request.headers.add(name: "X-Test", value: "yes")
        request.headers.add(name: "Connection", value: "close")  // hop-by-hop: not forwarded
        for _ in 0..<3 {
            let answer = try peers.send(request, to: "http://127.0.0.1:\(live.port)")
            #expect(answer.status == 200)
            #expect(String(decoding: answer.body, as: UTF8.self) == "POST s1 q=a b&c h=yes payload")
        }
        let big = try peers.send(Request(method: "GET", path: "/big"), to: "http://127.0.0.1:\(live.port)/")
        #expect(big.body.count == 300_000)
    }

    /// Nothing listening: not sent. A peer that takes the request and closes without a word, or
    /// answers garbage: sent (it may have applied it).
    @Test func failuresSayWhetherTheRequestWasSent() throws {
        let peers = PeerClient(timeout: .seconds(1))
        let free = try Self.freePort()
        #expect(throws: PeerClient.Failure.self) { try peers.send(Request(method: "GET", path: "/"), to: "http://127.0.0.1:\(free)") }
        do {
            _ = try peers.send(Request(method: "GET", path: "/"), to: "http://127.0.0.1:\(free)")
        } catch {
            #expect(!error.sent)
        }
        for reply in ["", "garbage\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort"] {
            let port = try Self.oneShotPeer(reply: reply)
            do {
                _ = try peers.send(Request(method: "POST", path: "/x", body: [1]), to: "http://127.0.0.1:\(port)")
                Issue.record("an answer from a peer that replied \(reply.debugDescription)")
            } catch {
                #expect(error.sent, "\(reply.debugDescription): \(error)")
            }
        }
    }

    @Test func addresses() {
        for (address, host, port) in [("http://10.0.0.1:8080", "10.0.0.1", 8080), ("http://node2/", "node2", 80), ("http://[::1]:9000", "::1", 9000)] {
            let parsed = PeerClient.hostAndPort(address)
            #expect(parsed?.0 == host && parsed?.1 == port, "\(address)")
        }
        for bad in ["https://a:1", "http://", "http://a:0", "http://a:x", "http://a/b", "ftp://a"] {
            #expect(PeerClient.hostAndPort(bad) == nil, "\(bad)")
        }
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// A peer on a free port that accepts one connection, reads the request, writes `reply` and
    /// closes.
    static func oneShotPeer(reply: String) throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        listen(fd, 1)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        let listener = fd
        Thread.detachNewThread {
            let connection = accept(listener, nil, nil)
            _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
            var buffer = [UInt8](repeating: 0, count: 4096)
            _ = recv(connection, &buffer, buffer.count, 0)
            _ = Array(reply.utf8).withUnsafeBytes { send(connection, $0.baseAddress, $0.count, 0) }
            close(connection)
            close(listener)
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
