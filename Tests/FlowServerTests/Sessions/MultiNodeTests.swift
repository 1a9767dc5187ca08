// Two applications on one PostgreSQL database, as two nodes behind a load balancer that moved
// a session: any node serves any session, and the database keeps them right.
import FlowServer
import FlowStore
import Foundation
import HTTPServer
import HTTPTestClient
import StoreTestSupport
import Synchronization
import Testing

@Suite(.enabled(if: TestStoreKind.isPostgreSQL, "several nodes share a PostgreSQL database"))
struct MultiNodeTests {
    /// Two nodes on one fresh database.
    static func nodes() throws -> (TestApp, TestApp) {
        let first = try TestApp()
        return (first, try TestApp(beside: first))
    }

    /// A stream opened on one node gets every version, in order, whichever node committed it;
    /// a ticket made through one node opens a stream on the other; a delete through one node
    /// ends the other's stream.
    @Test func streamsSeeVersionsCommittedThroughAnyNode() throws {
        let (a, b) = try Self.nodes()
        try a.withServer { serverA in
            try b.withServer { serverB in
                let nodes = [SessionClient(sender: SocketSender(port: serverA.port)), SessionClient(sender: SocketSender(port: serverB.port))]
                let session = try Self.onboarded(nodes[0], user: "streamed")
                let onB = try EventStreamClient(port: serverB.port, path: "/v1/sessions/\(session.id)/events", headers: session.auth)
                #expect(try onB.next()?.id == "2")
                let ticket = try nodes[0].sender.send("POST", "/v1/sessions/\(session.id)/events/ticket", headers: session.auth)
                let ticketText = try #require(ticket.json["ticket"].stringValue)
                let viaTicket = try EventStreamClient(port: serverB.port, path: "/v1/sessions/\(session.id)/events?ticket=\(ticketText)")
                #expect(viaTicket.status == 200)
                #expect(try viaTicket.next()?.id == "2")
                for step in 0..<6 {
                    try nodes[step % 2].apply(session, #"{"type":"home.selectTab","params":{"index":\#(step % 2)}}"#)
                }
                for stream in [onB, viaTicket] {
                    let ids = try stream.events(through: 8).compactMap { $0.id.flatMap(Int.init) }
                    #expect(ids.last == 8)
                    #expect(zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 }, "in order: \(ids)")
                }
                let deleted = try nodes[0].sender.send("DELETE", "/v1/sessions/\(session.id)", headers: session.auth)
                #expect(deleted.status == 204)
                #expect(try onB.next()?.event == "deleted")
                #expect(try onB.next() == nil)
            }
        }
    }

    /// A ticket is one per stream across nodes: a stream opened with it on one node replaces
    /// the one on the other (`event: replaced` at the other's next renewal); the connection
    /// dropped, the same URL reconnects through either node within the window, and not after.
    @Test func ticketsReconnectAndReplaceAcrossNodes() throws {
        var options = EventOptions()
        options.reconnectWindow = .seconds(3)  // renewed every 750 ms
        let a = try TestApp(events: options)
        let b = try TestApp(beside: a, events: options)
        try a.withServer { serverA in
            try b.withServer { serverB in
                let sender = SocketSender(port: serverA.port)
                let session = try SessionClient(sender: sender).create(userId: "roaming")
                let ticket = try StreamTicketTests.ticket(sender, session)
                let onA = try StreamTicketTests.open(serverA, session, ticket: ticket)
                #expect(try onA.next()?.id == "0")
                var onB: EventStreamClient? = try StreamTicketTests.open(serverB, session, ticket: ticket)
                #expect(try onB?.next()?.id == "0")
                let started = ContinuousClock.now
                #expect(try onA.next()?.event == "replaced")
                #expect(try onA.next() == nil)
                #expect(ContinuousClock.now - started < .seconds(10), "found out at A's next renewal")
                onB = nil
                StreamTicketTests.waitReleased(b, serverB)
                var again: EventStreamClient? = try StreamTicketTests.open(serverA, session, ticket: ticket, lastEventId: 0)
                #expect(again?.status == 200, "reconnects through the other node within the window")
                again = nil
                StreamTicketTests.waitReleased(a, serverA)
                Thread.sleep(forTimeInterval: 4)
                #expect(try StreamTicketTests.open(serverB, session, ticket: ticket).status == 401)
                #expect(try StreamTicketTests.open(serverA, session, ticket: ticket).status == 401)
            }
        }
    }

    /// Walks a new session through onboarding on `node`; returns it at home.
    static func onboarded(_ node: SessionClient, user: String) throws -> CreatedSession {
        let session = try node.create(userId: user)
        try node.apply(session, #"{"type":"onboarding.showSecond"}"#)
        try node.apply(session, #"{"type":"onboarding.completed"}"#)
        return session
    }

    /// Whatever node acknowledged version v, a read on the other answers v: nodes take turns
    /// writing one session and each read sees the other's last write.
    @Test func readsSeeWritesOfTheOtherNode() throws {
        let (a, b) = try Self.nodes()
        let nodes = [SessionClient(sender: a.direct), SessionClient(sender: b.direct)]
        let session = try Self.onboarded(nodes[0], user: "ryw")
        _ = try nodes[1].state(session)  // cached on b at version 2
        for step in 0..<10 {
            let writer = nodes[step % 2], reader = nodes[(step + 1) % 2]
            let written = try writer.apply(session, #"{"type":"home.selectTab","params":{"index":\#(step % 2)}}"#)
            let read = try reader.state(session).json
            #expect(read["version"] == written["version"], "step \(step)")
            #expect(read.features == written.features, "step \(step)")
        }
    }

    /// Actions posted to both nodes at once on one session all apply, one after the other: the
    /// loser of a race reloads and applies on the newer state; versions are 1…n without a gap.
    @Test func concurrentActionsOnBothNodesApplyInTurn() throws {
        let (a, b) = try Self.nodes()
        let nodes = [SessionClient(sender: a.direct), SessionClient(sender: b.direct)]
        let session = try Self.onboarded(nodes[0], user: "race")
        let statuses = Mutex<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for step in 0..<5 {
                let response = try? nodes[worker % 2].act(session, #"{"type":"home.selectTab","params":{"index":\#((worker + step) % 2)}}"#)
                statuses.withLock { $0.append(response?.status ?? 0) }
            }
        }
        let answered = statuses.withLock { $0 }
        #expect(answered.allSatisfy { $0 == 200 }, "statuses: \(answered.filter { $0 != 200 })")
        let log = try nodes[1].sender.send("GET", "/v1/sessions/\(session.id)/actions?limit=100", headers: session.auth).json
        let versions = log["actions"].arrayValue?.compactMap { $0["version"].integerValue } ?? []
        #expect(versions == Array(1...42))
        #expect(try nodes[0].state(session).json["version"] == 42)
    }

    /// A retry on the other node with the same Idempotency-Key replays the stored answer and
    /// applies nothing twice.
    @Test func idempotencyKeyReplaysOnTheOtherNode() throws {
        let (a, b) = try Self.nodes()
        let nodes = [SessionClient(sender: a.direct), SessionClient(sender: b.direct)]
        let session = try Self.onboarded(nodes[0], user: "retry")
        let body = #"{"type":"home.selectTab","params":{"index":1}}"#
        let first = try nodes[0].act(session, body, headers: [("Idempotency-Key", "tap-9")])
        let again = try nodes[1].act(session, body, headers: [("Idempotency-Key", "tap-9")])
        #expect(first.status == 200 && again.status == 200)
        #expect(again.headers["Idempotent-Replayed"] == "true")
        #expect(again.body == first.body)
        #expect(try nodes[1].state(session).json["version"] == 3)
    }

    /// A user who completed onboarding through one node starts at home in a session made on the other.
    @Test func userStateIsSharedByNodes() throws {
        let (a, b) = try Self.nodes()
        let nodes = [SessionClient(sender: a.direct), SessionClient(sender: b.direct)]
        _ = try nodes[1].create(userId: "shared")  // b has seen this user before onboarding
        _ = try Self.onboarded(nodes[0], user: "shared")
        #expect(try nodes[1].create(userId: "shared").state.features == ["home.first"])
    }

    /// A refusal judged on a stale cached state is judged again on the stored one: the other
    /// node moved the session to the second screen, so an action only valid there applies, and
    /// an If-Match on the new version matches.
    @Test func refusalsAreJudgedOnTheStoredState() throws {
        let (a, b) = try Self.nodes()
        let nodes = [SessionClient(sender: a.direct), SessionClient(sender: b.direct)]
        let session = try nodes[0].create(userId: "stale-refusal")
        _ = try nodes[1].state(session)  // b caches version 0, on onboarding.first
        try nodes[0].apply(session, #"{"type":"onboarding.showSecond"}"#)
        let matched = try nodes[1].act(session, #"{"type":"onboarding.returnToFirst"}"#, headers: [("If-Match", "\"1\"")])
        #expect(matched.status == 200, "\(matched.text)")
        try nodes[0].apply(session, #"{"type":"onboarding.showSecond"}"#)
        let completed = try nodes[1].act(session, #"{"type":"onboarding.completed"}"#)
        #expect(completed.status == 200, "\(completed.text)")
        #expect(completed.json.features == ["home.first"])
    }

    /// A flow version made live through one node is used by the other for sessions created
    /// within a second; sessions made before keep their version.
    @Test func definitionsChangedOnOneNodeReachTheOther() throws {
        let (a, b) = try Self.nodes()
        let before = try SessionClient(sender: b.direct).create(userId: "before")
        let admin = [("Authorization", "Bearer \(TestApp.adminToken)")]
        let put = try a.direct.send("PUT", "/v1/flows/onboarding?activate=true", body: """
            {"name": "onboarding", "kind": "stacked", "initial": ["onboarding.first"],
             "on": {"onboarding.completed": [{"from": "onboarding.first", "do": [{"replaceRoot": "home"}, {"setUser": {"onboarded": true}}]}]}}
            """, headers: admin)
        #expect(put.status == 201, "\(put.text)")
        let acknowledged = ContinuousClock.now
        let clientB = SessionClient(sender: b.direct)
        var oneScreen = false
        // A poll is 250 ms; the bound is for a loaded machine, where a poll's thread waits its turn.
        while !oneScreen && acknowledged.duration(to: .now) < .seconds(10) {
            let session = try clientB.create(userId: "after-\(UUID().uuidString.prefix(8))")
            oneScreen = try clientB.act(session, #"{"type":"onboarding.completed"}"#).status == 200
            if !oneScreen { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(oneScreen, "node b did not use the new live version within 10 s")
        #expect(try clientB.act(before, #"{"type":"onboarding.completed"}"#).status == 422)
        #expect(try b.direct.send("GET", "/v1/flows/onboarding", headers: admin).json["version"] == 2)
    }

    /// A flag changed through one node is used by the very next session created through the
    /// other, without waiting for a poll: the new session reads the definitions' fingerprint in
    /// the round trip that reads its user, and reads the definitions again when it moved. Five
    /// changes in a row, each seen at once (a poll every 250 ms could show one by chance, not
    /// five).
    @Test func aSessionCreatedJustAfterAChangeElsewhereUsesIt() throws {
        let (a, b) = try Self.nodes()
        let admin = [("Authorization", "Bearer \(TestApp.adminToken)")]
        let clientB = SessionClient(sender: b.direct)
        for (round, variant) in ["on", "off", "on", "off", "on"].enumerated() {
            let put = try a.direct.send("PUT", "/v1/flags/eu-face-scan",
                                        body: #"{"variants":{"on":true,"off":false},"defaultVariant":"\#(variant)"}"#, headers: admin)
            #expect(put.status == 200, "\(put.text)")
            let session = try clientB.create(userId: "round-\(round)", attributes: #"{"country":"US"}"#)
            #expect(session.state["flags"]["eu-face-scan"]["variant"].stringValue == variant, "round \(round)")
        }
    }

    /// An admin request on one node sees a definition stored through the other a moment before:
    /// an experiment pinning a flow version just uploaded elsewhere is accepted at once.
    @Test func adminRoutesSeeDefinitionsStoredElsewhere() throws {
        let (a, b) = try Self.nodes()
        let admin = [("Authorization", "Bearer \(TestApp.adminToken)")]
        let put = try a.direct.send("PUT", "/v1/flows/onboarding", body: """
            {"name": "onboarding", "kind": "stacked", "initial": ["onboarding.first"],
             "on": {"onboarding.completed": [{"from": "onboarding.first", "do": [{"replaceRoot": "home"}, {"setUser": {"onboarded": true}}]}]}}
            """, headers: admin)
        #expect(put.status == 201, "\(put.text)")
        let experiment = try b.direct.send("PUT", "/v1/experiments/short", body: """
            {"variants": [{"key": "control", "weight": 0.5}, {"key": "short", "weight": 0.5, "flows": {"onboarding": 2}}]}
            """, headers: admin)
        #expect(experiment.status == 201 || experiment.status == 200, "\(experiment.text)")
        #expect(try a.direct.send("GET", "/v1/experiments/short", headers: admin).status == 200)
    }

    /// Flag evaluations on one node share reads of the fingerprint, and each still sees a flag
    /// changed through the other node before it was sent, without waiting for a poll: while four
    /// clients evaluate through a real socket without pause, the flag is changed 20 times, and
    /// every evaluation sent after a change was acknowledged answers that change or a later one
    /// (one joining a read begun before it would answer the one before). The GrowthBook
    /// payload, which shares the reads too, carries the last change.
    @Test func flagEvaluationsSeeAChangeMadeElsewhereJustBefore() throws {
        let (a, b) = try Self.nodes()
        let admin = [("Authorization", "Bearer \(TestApp.adminToken)")]
        let key = try OFREPTests.clientKey(a.direct).key
        func put(_ value: Int) throws {
            let put = try a.direct.send("PUT", "/v1/flags/race", body: #"{"variants": {"v": \#(value)}, "defaultVariant": "v"}"#,
                                        headers: admin)
            try #require(put.status == 200 || put.status == 201, "\(put.text)")
        }
        try put(0)
        try b.withServer { serverB in
            let sender = SocketSender(port: serverB.port)
            let evaluations = Mutex<[(sent: ContinuousClock.Instant, value: Int?)]>([])
            let done = Atomic<Bool>(false)
            let clients = DispatchGroup()
            for _ in 0..<4 {
                DispatchQueue.global().async(group: clients) {
                    while !done.load(ordering: .relaxed) {
                        let sent = ContinuousClock.now
                        let value = (try? sender.send("POST", OFREPTests.single + "race", body: OFREPTests.body(#"{"targetingKey":"ada"}"#),
                                                      headers: [("Authorization", "Bearer \(key)")]))?.json["value"].integerValue
                        evaluations.withLock { $0.append((sent, value)) }
                    }
                }
            }
            var acknowledged: [ContinuousClock.Instant] = []
            for change in 1...20 {
                try put(change)
                acknowledged.append(.now)
                // Eight more evaluations answered before the next change (within 10 s, however
                // busy the machine and the database are).
                let answered = evaluations.withLock { $0.count }
                let deadline = ContinuousClock.now + .seconds(10)
                while evaluations.withLock({ $0.count }) < answered + 8, ContinuousClock.now < deadline {
                    Thread.sleep(forTimeInterval: 0.002)
                }
            }
            done.store(true, ordering: .relaxed)
            clients.wait()
            let seen = evaluations.withLock { $0 }
            #expect(seen.count >= 160 && seen.allSatisfy { $0.value != nil }, "\(seen.count) evaluations")
            var stale: [String] = []
            for evaluation in seen {
                let newest = acknowledged.lastIndex { $0 < evaluation.sent }.map { $0 + 1 } ?? 0
                if let value = evaluation.value, value < newest { stale.append("sent after change \(newest), answered \(value)") }
            }
            #expect(stale.isEmpty, "\(stale.count) of \(seen.count): \(stale.prefix(5))")
            let payload = try sender.send("GET", "/api/features/\(key)")
            #expect(payload.status == 200)
            #expect(payload.json["features"]["race"]["defaultValue"].integerValue == 20, "\(payload.text)")
        }
    }

    /// The database round trips `node` has made so far (`flowstack_db_round_trips_total`); the
    /// test fails when `/metrics` has no such count.
    static func roundTrips(_ node: TestApp) throws -> Int {
        let metrics = try node.direct.send("GET", "/metrics").text
        let line = metrics.split(separator: "\n").first { $0.hasPrefix("flowstack_db_round_trips_total ") }
        return try #require(line?.split(separator: " ").last.flatMap { Int($0) })
    }

    /// A flag evaluation that presents no client key, or something that cannot be one (a
    /// session's token, a key of the wrong form), is refused without waiting for the
    /// definitions' read: a client without a key costs the database nothing, however often it
    /// asks. One that could be a key, an escaped one in the GrowthBook path included, is read.
    @Test func anEvaluationWithoutAKeyCostsNoRoundTrip() throws {
        let (a, b) = try Self.nodes()
        let key = try OFREPTests.clientKey(a.direct).key
        let body = OFREPTests.body(#"{"targetingKey":"ada"}"#)
        let session = try b.direct.send("POST", "/v1/sessions", body: #"{"userId":"ada"}"#, headers: [("X-API-Key", key)])
        #expect(session.status == 201)
        let token = try #require(session.json["session"]["token"].stringValue)
        let refused: [(String, String, [(String, String)])] = [
            (OFREPTests.single + "eu-face-scan", "POST", []),
            (OFREPTests.single + "eu-face-scan", "POST", [("Authorization", "Bearer \(token)")]),
            ("/ofrep/v1/evaluate/flags", "POST", [("X-API-Key", "not-a-key")]),
            ("/ofrep/v1/evaluate/flags", "POST", [("X-API-Key", "fsk_" + String(repeating: "x", count: 200))]),
            ("/api/features/" + token, "GET", []),
        ]
        let before = try Self.roundTrips(b)
        for _ in 0..<8 {
            for (path, method, headers) in refused {
                let answer = try b.direct.send(method, path, body: method == "POST" ? body : nil, headers: headers)
                #expect(answer.status == 401, "\(method) \(path)")
            }
        }
        let spent = try Self.roundTrips(b) - before
        #expect(spent < 8, "40 evaluations without a key: \(spent) round trips (the node's polls only)")

        // Escaped, a key in the path is decoded first, then checked: read, and it opens.
        let escaped = "/api/features/" + key.replacingOccurrences(of: "_", with: "%5F")
        let beforeEscaped = try Self.roundTrips(b)
        #expect(try b.direct.send("GET", escaped).status == 200)
        #expect(try Self.roundTrips(b) - beforeEscaped >= 1)
    }

    /// A node keeps the client keys it checked while the definitions' revision stays, and a key
    /// revoked through another node opens nothing on it from the next request: warm evaluations
    /// cost the fingerprint's read and no look-up of the key, and the ones after the revocation
    /// are refused, OFREP's and the GrowthBook payload's.
    @Test func aKeyRevokedThroughOneNodeOpensNothingOnTheOther() throws {
        let (a, b) = try Self.nodes()
        let (id, key) = try OFREPTests.clientKey(a.direct)
        let evaluate = { try b.direct.send("POST", OFREPTests.single + "eu-face-scan", body: OFREPTests.body(#"{"targetingKey":"ada"}"#),
                                           headers: [("Authorization", "Bearer \(key)")]) }
        #expect(try evaluate().status == 200)
        #expect(try b.direct.send("GET", "/api/features/\(key)").status == 200)
        let before = try Self.roundTrips(b)
        for _ in 0..<20 { #expect(try evaluate().status == 200) }
        let spent = try Self.roundTrips(b) - before
        #expect(spent >= 20 && spent < 30, "20 evaluations: \(spent) round trips (one fingerprint each, and a poll or two)")

        let unknown = "fsk_" + String(repeating: "x", count: 43)
        let beforeUnknown = try Self.roundTrips(b)
        for _ in 0..<10 { #expect(try b.direct.send("GET", "/api/features/\(unknown)").status == 401) }
        let spentOnUnknown = try Self.roundTrips(b) - beforeUnknown
        #expect(spentOnUnknown >= 10 && spentOnUnknown < 16, "an unknown key, 10 times: \(spentOnUnknown) round trips (looked up once)")

        #expect(try a.direct.send("DELETE", "/v1/client-keys/\(id)", headers: OFREPTests.admin).status == 204)
        #expect(try evaluate().status == 401, "revoked elsewhere: refused at once")
        #expect(try b.direct.send("GET", "/api/features/\(key)").status == 401)
        let other = try OFREPTests.clientKey(a.direct, name: "android app").key
        #expect(try b.direct.send("GET", "/api/features/\(other)").status == 200, "made elsewhere: opens at once")
    }

    /// A new session's client key is checked at the definitions' revision read with its user:
    /// kept keys cost no round trip of their own, and a key revoked or made through another node
    /// is refused or accepted by the next creation.
    @Test func aNewSessionsKeyIsCheckedWithItsUser() throws {
        let (a, b) = try Self.nodes()
        let (id, key) = try OFREPTests.clientKey(a.direct)
        var users = 0
        func create(_ key: String?) throws -> Int {
            users += 1
            return try b.direct.send("POST", "/v1/sessions", body: #"{"userId":"keyed-\#(users)"}"#,
                                     headers: key.map { [("X-API-Key", $0)] } ?? []).status
        }
        func spentOn20(key: String?) throws -> Int {
            let before = try Self.roundTrips(b)
            for _ in 0..<20 { #expect(try create(key) == 201) }
            return try Self.roundTrips(b) - before
        }
        #expect(try create(key) == 201)
        let keyed = try spentOn20(key: key)
        let unkeyed = try spentOn20(key: nil)
        // Each creation reads the user with the revision, then inserts; the node's polls come on top of both.
        #expect(keyed >= 40 && unkeyed >= 40 && keyed < unkeyed + 10,
                "20 keyed creations: \(keyed) round trips, 20 without a key: \(unkeyed)")

        #expect(try a.direct.send("DELETE", "/v1/client-keys/\(id)", headers: OFREPTests.admin).status == 204)
        #expect(try create(key) == 401, "revoked elsewhere: refused at once")
        let other = try OFREPTests.clientKey(a.direct, name: "android app").key
        #expect(try create(other) == 201, "made elsewhere: opens at once")
        #expect(try create("fsk_" + String(repeating: "x", count: 43)) == 401)
    }

    /// `/metrics` shows what an operator of several nodes watches.
    @Test func metricsShowCacheAndDatabaseWork() throws {
        let (a, b) = try Self.nodes()
        let nodes = [SessionClient(sender: a.direct), SessionClient(sender: b.direct)]
        let session = try Self.onboarded(nodes[0], user: "metrics")
        _ = try nodes[1].state(session)
        try nodes[0].apply(session, #"{"type":"home.selectTab","params":{"index":1}}"#)
        _ = try nodes[1].state(session)
        let text = try b.direct.send("GET", "/metrics").text
        for name in ["flowstack_session_cache_hits_total", "flowstack_session_stale_reloads_total 1",
                     "flowstack_session_head_checks_total", "flowstack_version_conflicts_retried_total",
                     "flowstack_db_round_trips_total", "flowstack_db_errors_total", "flowstack_db_commit_batches_total"] {
            #expect(text.contains(name), "\(name) missing")
        }
    }
}
