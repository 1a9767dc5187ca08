// Nodes that own sessions under leases (issue 35): the owner reads from memory with no round
// trip, the other nodes forward its writes to it, and once an owner stops answering its
// sessions are taken over after its lease, and it never answers from memory after that.
import FlowServer
import FlowStore
import Foundation
import HTTPServer
import HTTPTestClient
import StoreTestSupport
import Synchronization
import Testing

@Suite(.enabled(if: TestStoreKind.isPostgreSQL, "leases are kept in a shared PostgreSQL database"))
struct SessionLeaseTests {
    /// Two lease-holding nodes on one fresh database, each with the port it will listen on.
    /// Two owners on one database. Both trust their memory for 20 s after a look at the other
    /// nodes (2 s in a server), so that reads counted as owned stay owned on a loaded machine.
    static func nodes(lease: Duration) throws -> (TestApp, Int, TestApp, Int) {
        let (portA, portB) = (try TestPostgresServer.freePort(), try TestPostgresServer.freePort())
        let a = try TestApp(node: "http://127.0.0.1:\(portA)", lease: lease, trust: .seconds(20))
        let b = try TestApp(node: "http://127.0.0.1:\(portB)", lease: lease, trust: .seconds(20), beside: a)
        return (a, portA, b, portB)
    }

    static func version(_ response: Response) -> Int? { response.json["version"].integerValue }

    /// The node that read a session first owns it: its next reads make no round trip at all,
    /// and a write sent to the other node is forwarded to it, applied once, and seen in its
    /// memory at once.
    @Test func ownerReadsFromMemoryAndGetsTheOtherNodesWrites() throws {
        let (a, portA, b, portB) = try Self.nodes(lease: .seconds(30))
        try a.withServer({ $0.port = portA }) { _ in
            try b.withServer({ $0.port = portB }) { _ in
                let onA = SessionClient(sender: SocketSender(port: portA))
                let onB = SessionClient(sender: SocketSender(port: portB))
                let session = try MultiNodeTests.onboarded(onA, user: "owned")
                #expect(Self.version(try onA.state(session)) == 2)
                let counters = a.app.metrics.cluster
                let (owned, asked, checked, loads) = (counters.ownedReads.load(ordering: .relaxed), counters.leaseRequests.load(ordering: .relaxed),
                                                      counters.headChecks.load(ordering: .relaxed), counters.sessionLoads.load(ordering: .relaxed))
                for _ in 0..<20 { #expect(Self.version(try onA.state(session)) == 2) }
                #expect(counters.ownedReads.load(ordering: .relaxed) == owned + 20)
                #expect(counters.leaseRequests.load(ordering: .relaxed) == asked, "an owned read makes no round trip")
                #expect(counters.headChecks.load(ordering: .relaxed) == checked)
                #expect(counters.sessionLoads.load(ordering: .relaxed) == loads)
                let applied = try onB.act(session, #"{"type":"home.selectTab","params":{"index":1}}"#)
                #expect(applied.status == 200)
                #expect(Self.version(applied) == 3)
                #expect(b.app.metrics.cluster.forwardedWrites.load(ordering: .relaxed) == 1)
                #expect(Self.version(try onA.state(session)) == 3, "the owner applied it, in memory")
                #expect(Self.version(try onB.state(session)) == 3, "the other node reads the head")
                let log = try onB.sender.send("GET", "/v1/sessions/\(session.id)/actions", headers: session.auth)
                #expect(log.json["actions"].arrayValue?.count == 3, "applied once")
                // Not forwarded twice: a request that says it was forwarded under another lease is refused.
                var headers = session.auth
                headers.append(("X-FlowStack-Lease-Epoch", "987654321"))
                let stale = try onA.act(session, #"{"type":"home.selectTab","params":{"index":0}}"#, headers: headers)
                #expect(stale.status == 503)
                #expect(Self.version(try onA.state(session)) == 3)
                // Its holder deletes it through the other node: forwarded, deleted under the
                // owner's lease, gone from both.
                let deleted = try onB.sender.send("DELETE", "/v1/sessions/\(session.id)", headers: session.auth)
                #expect(deleted.status == 204)
                #expect(b.app.metrics.cluster.forwardedWrites.load(ordering: .relaxed) == 2)
                #expect(try onA.state(session).status == 404)
                #expect(try onB.state(session).status == 404)
            }
        }
    }

    /// An owner keeps its lease by renewing it in the background, in one round trip for every
    /// lease due: over several lease lengths of reads, every read is answered from memory and
    /// the only round trips are the renewals.
    @Test func ownedReadsNeverWaitForARenewal() throws {
        let (a, portA, _, _) = try Self.nodes(lease: .seconds(8))
        try a.withServer({ $0.port = portA }) { _ in
            let onA = SessionClient(sender: SocketSender(port: portA))
            let sessions = try (0..<3).map { try MultiNodeTests.onboarded(onA, user: "renewed-\($0)") }
            for session in sessions { #expect(Self.version(try onA.state(session)) == 2) }
            let counters = a.app.metrics.cluster
            let (owned, asked, renewed) = (counters.ownedReads.load(ordering: .relaxed), counters.leaseRequests.load(ordering: .relaxed),
                                           counters.leaseRenewals.load(ordering: .relaxed))
            // Reads until the leases were renewed: each falls due with half of it left (4 s),
            // and its renewal, an eighth of a lease later, has 3 s more to land before a read
            // would need to ask. Not a set number of rounds: a loaded machine is slower.
            let deadline = ContinuousClock.now + .seconds(40)
            var reads = 0
            while counters.leaseRenewals.load(ordering: .relaxed) == renewed, ContinuousClock.now < deadline {
                for session in sessions { #expect(Self.version(try onA.state(session)) == 2) }
                reads += sessions.count
                Thread.sleep(forTimeInterval: 0.04)
            }
            for session in sessions { #expect(Self.version(try onA.state(session)) == 2, "read after the renewal") }
            reads += sessions.count
            #expect(counters.ownedReads.load(ordering: .relaxed) - owned == reads, "every read from memory")
            #expect(counters.leaseRequests.load(ordering: .relaxed) == asked, "no read asked for its lease")
            #expect(counters.leaseRenewals.load(ordering: .relaxed) - renewed >= 1, "renewed in the background")
        }
    }

    /// A node that takes a lease back does not trust what it cached before: another node
    /// committed meanwhile (it owned the session in between), so the first read after reads
    /// the session again. Here the lease is taken back by a write that fails in its route.
    @Test func aLeaseTakenBackDoesNotTrustAnOlderCache() throws {
        let (a, portA, b, portB) = try Self.nodes(lease: .milliseconds(500))
        try a.withServer({ $0.port = portA }) { _ in
            try b.withServer({ $0.port = portB }) { _ in
                let onA = SessionClient(sender: SocketSender(port: portA))
                let onB = SessionClient(sender: SocketSender(port: portB))
                let session = try MultiNodeTests.onboarded(onA, user: "taken-back")
                #expect(Self.version(try onA.state(session)) == 2)
                Thread.sleep(forTimeInterval: 0.7)  // A's lease runs out
                #expect(Self.version(try onB.act(session, #"{"type":"home.selectTab","params":{"index":1}}"#)) == 3)
                Thread.sleep(forTimeInterval: 0.7)  // and B's
                let malformed = try onA.act(session, "{not json")
                #expect(malformed.status == 400)
                #expect(Self.version(try onA.state(session)) == 3, "read again, not the state cached at version 2")
            }
        }
    }

    /// An erasure made through a node that does not own the user's session answers once the
    /// owner's lease has run out: the owner cannot renew a lease of a session that is gone, so
    /// from the erasure's answer on, no node answers the session from memory.
    @Test func anErasureOutlastsTheOwnersLease() throws {
        let (a, portA, b, portB) = try Self.nodes(lease: .milliseconds(800))
        try a.withServer({ $0.port = portA }) { _ in
            try b.withServer({ $0.port = portB }) { _ in
                let onA = SessionClient(sender: SocketSender(port: portA))
                let session = try MultiNodeTests.onboarded(onA, user: "erased")
                #expect(Self.version(try onA.state(session)) == 2)
                let started = ContinuousClock.now
                let erased = try SocketSender(port: portB).send("DELETE", "/v1/users/erased",
                                                                headers: [("Authorization", "Bearer \(TestApp.adminToken)")])
                #expect(erased.status == 200)
                #expect(ContinuousClock.now - started >= .milliseconds(800), "answered after a lease's length")
                #expect(try onA.state(session).status == 404, "the owner no longer answers from memory")
            }
        }
    }

    /// An owner that stops answering (here: its server is gone, its lease not renewed) loses
    /// its sessions after its lease: a write sent to the other node waits the lease out, takes
    /// the session over and applies; the old owner, answering again, does not read from memory
    /// (its lease ran out on its own clock): it sees the new version, and its writes go to the
    /// new owner.
    @Test func aSilentOwnerIsTakenOverAndNeverAnswersStale() throws {
        let (a, portA, b, portB) = try Self.nodes(lease: .seconds(2))
        let onA = SessionClient(sender: SocketSender(port: portA))
        let onB = SessionClient(sender: SocketSender(port: portB))
        let session = try a.withServer({ $0.port = portA }) { _ in
            let session = try MultiNodeTests.onboarded(onA, user: "silent")
            #expect(Self.version(try onA.state(session)) == 2)
            return session
        }
        try b.withServer({ $0.port = portB }) { _ in
            let started = ContinuousClock.now
            let applied = try onB.act(session, #"{"type":"home.selectTab","params":{"index":1}}"#)
            #expect(applied.status == 200, "taken over: \(applied.status) \(String(decoding: applied.body, as: UTF8.self))")
            #expect(Self.version(applied) == 3)
            #expect(ContinuousClock.now - started < .seconds(8), "within the lease's length and a little (more on a loaded machine)")
            try a.withServer({ $0.port = portA }) { _ in
                #expect(Self.version(try onA.state(session)) == 3, "the old owner reads the head, not its memory")
                let next = try onA.act(session, #"{"type":"home.selectTab","params":{"index":0}}"#)
                #expect(next.status == 200)
                #expect(Self.version(next) == 4)
                #expect(a.app.metrics.cluster.forwardedWrites.load(ordering: .relaxed) >= 1, "forwarded to the new owner")
                #expect(Self.version(try onB.state(session)) == 4)
            }
        }
    }

    /// A wrong token on a write forwarded to the owner is counted by the node the client
    /// reached, against the client's address (its burst of three, then 429), and not by the
    /// owner, which would charge it to the forwarding node's address: the owner still gives a
    /// wrong token sent straight to it its own burst.
    @Test func forwardedFailuresAreCountedWhereTheClientIs() throws {
        var access = AccessOptions()
        access.sessionRate = RateLimit("0.01/3")
        let (portA, portB) = (try TestPostgresServer.freePort(), try TestPostgresServer.freePort())
        let a = try TestApp(node: "http://127.0.0.1:\(portA)", lease: .seconds(30), access: access)
        let b = try TestApp(node: "http://127.0.0.1:\(portB)", lease: .seconds(30), beside: a, access: access)
        try a.withServer({ $0.port = portA }) { _ in
            try b.withServer({ $0.port = portB }) { _ in
                let onA = SessionClient(sender: SocketSender(port: portA))
                let session = try MultiNodeTests.onboarded(onA, user: "guessed")
                let tap = #"{"type":"home.selectTab","params":{"index":1}}"#
                let wrong = [("Authorization", "Bearer wrong-guess")]
                let throughB = try (0..<5).map { _ in
                    try SocketSender(port: portB).send("POST", "/v1/sessions/\(session.id)/actions", body: tap, headers: wrong).status
                }
                #expect(throughB == [401, 401, 401, 429, 429])
                #expect(b.app.metrics.cluster.forwardedWrites.load(ordering: .relaxed) == 5)
                let straight = try (0..<4).map { _ in
                    try SocketSender(port: portA).send("POST", "/v1/sessions/\(session.id)/actions", body: tap, headers: wrong).status
                }
                #expect(straight == [401, 401, 401, 429], "the owner counted none of the forwarded ones")
                let applied = try SessionClient(sender: SocketSender(port: portB)).act(session, tap)
                #expect(applied.status == 200, "a valid token is served through either node")
            }
        }
    }

    /// A node without leases started beside an owner (leases being turned on or off, one node
    /// at a time) waits until the owner stops trusting its memory: the owner's reads then check
    /// the database, so a write committed by the new node is read at once; once that node has
    /// stopped, the owner reads from memory again.
    @Test func aNodeWithoutLeasesMakesOwnersReadTheDatabase() throws {
        let portA = try TestPostgresServer.freePort()
        let a = try TestApp(node: "http://127.0.0.1:\(portA)", lease: .seconds(30))
        try a.withServer({ $0.port = portA }) { _ in
            let onA = SessionClient(sender: SocketSender(port: portA))
            let session = try MultiNodeTests.onboarded(onA, user: "mixed")
            let counters = a.app.metrics.cluster
            #expect(Self.version(try onA.state(session)) == 2)
            let owned = counters.ownedReads.load(ordering: .relaxed)
            #expect(Self.version(try onA.state(session)) == 2)
            #expect(counters.ownedReads.load(ordering: .relaxed) == owned + 1, "alone in its kind, the owner reads from memory")
            let started = ContinuousClock.now
            let plain = try TestApp(beside: a)
            #expect(ContinuousClock.now - started >= .seconds(2), "the node without leases waited out the owner's trust")
            let applied = try SessionClient(sender: plain.direct).act(session, #"{"type":"home.selectTab","params":{"index":1}}"#)
            #expect(applied.status == 200)
            #expect(Self.version(applied) == 3)
            let before = counters.ownedReads.load(ordering: .relaxed)
            #expect(Self.version(try onA.state(session)) == 3, "the owner read the other node's commit")
            #expect(counters.ownedReads.load(ordering: .relaxed) == before, "not from memory")
            // Writes go on through both: the owner's under its lease, after reading the head.
            let onOwner = try onA.act(session, #"{"type":"home.selectTab","params":{"index":0}}"#)
            #expect(onOwner.status == 200, "\(onOwner.status) \(String(decoding: onOwner.body, as: UTF8.self))")
            #expect(Self.version(onOwner) == 4)
            let again = try SessionClient(sender: plain.direct).act(session, #"{"type":"home.selectTab","params":{"index":1}}"#)
            #expect(Self.version(again) == 5)
            let next = try onA.act(session, #"{"type":"home.selectTab","params":{"index":0}}"#)
            #expect(Self.version(next) == 6, "the owner's cache was behind: read again, then applied")
            #expect(Self.version(try onA.state(session)) == 6)
            plain.app.releaseLeases()
            let deadline = ContinuousClock.now + .seconds(5)
            var fromMemory = false
            while !fromMemory, ContinuousClock.now < deadline {
                let reads = counters.ownedReads.load(ordering: .relaxed)
                #expect(Self.version(try onA.state(session)) == 6)
                fromMemory = counters.ownedReads.load(ordering: .relaxed) > reads
                if !fromMemory { Thread.sleep(forTimeInterval: 0.1) }
            }
            #expect(fromMemory, "once the node without leases stopped, the owner reads from memory again")
        }
    }
}
