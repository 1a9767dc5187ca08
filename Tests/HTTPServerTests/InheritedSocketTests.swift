// Sockets and child processes. Tests start servers as child processes (flowstack, PostgreSQL)
// and watchdogs for them while other tests hold connections open; a socket a child inherits
// stays open after its owner closes it, so the server on the other end waits for a close that
// comes only when the child exits. (A test waited 30 s for one, and the tests running beside it
// starved for the pool thread it held.)
import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import HTTPServer
import HTTPTestClient
import Testing
import TestSupport

struct InheritedSocketTests {
    /// Connections open while children start (a program a test runs, a watchdog, as every
    /// test's server has; both started with posix_spawn) are closed for the server as soon as their
    /// owners close them: the tests' raw connection, and the peer client's kept one.
    @Test func aChildProcessDoesNotKeepAClosedConnectionOpen() throws {
        let live = try LiveServer()
        var raw: RawConnection? = try RawConnection(port: live.port)
        try raw?.send("GET /items/raw HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try raw?.readResponse().status == 200)
        #expect(raw.map { fcntl($0.descriptor, F_GETFD) & FD_CLOEXEC } == FD_CLOEXEC, "a program a test runs does not get it")
        var peers: PeerClient? = PeerClient()
        #expect(try peers?.send(Request(method: "GET", path: "/items/peer"), to: "http://127.0.0.1:\(live.port)").status == 200)
        #expect(eventually { live.server.openConnections == 2 }, "the raw connection and the peer client's kept one")

        let child = try ChildProcess(["/bin/sleep", "3600"])
        // The watchdog leaves within a second of the child's end.
        defer { child.kill() }
        try cleanUpAfterExit(unlessGone: child.pid, run: ["/bin/kill", "-KILL", String(child.pid)])

        raw = nil
        peers = nil
        #expect(eventually(.seconds(5)) { live.server.openConnections == 0 },
                "a connection closed by its owner is still open: a child process holds a copy of it")
    }
}
