// Batches of taps made offline (POST /v1/sessions/{id}/actions/batch): in order, one version
// each, once per key, stopping at the first refusal; on the run's store.
import FlowServer
import FlowStore
import Foundation
import HTTPServer
import HTTPTestClient
import JSON
import SQLiteStore
import StoreTestSupport
import Testing

/// One offline tap, as a test writes it.
struct Tap {
    var key: String
    var version: Int
    var action: String
    var at: String? = nil

    var json: String {
        let time = at.map { #","at":"\#($0)""# } ?? ""
        return #"{"key":"\#(key)","version":\#(version)\#(time),"action":\#(action)}"#
    }
}

extension SessionClient {
    /// Posts a batch of taps; the response is returned whatever its status.
    func batch(_ session: CreatedSession, _ taps: [Tap], headers: [(String, String)]? = nil) throws -> Response {
        try sender.send("POST", "/v1/sessions/\(session.id)/actions/batch",
                        body: #"{"actions":[\#(taps.map(\.json).joined(separator: ","))]}"#, headers: headers ?? session.auth)
    }

    func log(_ session: CreatedSession) throws -> [JSONValue] {
        try sender.send("GET", "/v1/sessions/\(session.id)/actions?limit=1000", headers: session.auth).json["actions"].arrayValue ?? []
    }
}

extension JSONValue {
    /// The `status` of each item of a batch answer.
    var batchStatuses: [String] { (self["results"].arrayValue ?? []).compactMap { $0["status"].stringValue } }
    var batchVersions: [Int?] { (self["results"].arrayValue ?? []).map { $0["version"].integerValue } }
}

struct BatchAPITests {
    /// The sample app walked offline: showSecond, completed, selectTab, presentModal, dismiss.
    static func offlineWalk(from first: String, prefix: String = "tap") -> [Tap] {
        [
            Tap(key: "\(prefix)-1", version: 0, action: #"{"type":"onboarding.showSecond","from":"\#(first)"}"#, at: "2026-11-25T10:00:00.123Z"),
            Tap(key: "\(prefix)-2", version: 1, action: #"{"type":"onboarding.completed"}"#, at: "2026-11-25T11:00:01.5+01:00"),
            Tap(key: "\(prefix)-3", version: 2, action: #"{"type":"home.selectTab","params":{"index":1}}"#),
            Tap(key: "\(prefix)-4", version: 3, action: #"{"type":"home.presentModal","params":{"content":"offline"}}"#),
            Tap(key: "\(prefix)-5", version: 4, action: #"{"type":"modal.dismiss"}"#, at: "2026-11-25T10:00:09Z"),
        ]
    }

    /// A batch of offline taps is applied in order, one version each: the answer has each
    /// item's version and the final state (as a read answers it, with its ETag), the log has one
    /// entry per tap with its client time, each key replays its own version when posted alone,
    /// and the user-state change is kept (the next session starts at home).
    @Test(arguments: SessionAPITests.Transport.allCases)
    func offlineTapsApplyInOrder(transport: SessionAPITests.Transport) throws {
        let test = try TestApp()
        try SessionAPITests.withClient(test, transport) { client in
            let session = try client.create(userId: "offline")
            let first = try #require(session.state["top"]["id"].stringValue)
            let response = try client.batch(session, Self.offlineWalk(from: first))
            #expect(response.status == 200, "\(response.text)")
            #expect(response.headers["ETag"] == "\"5\"")
            #expect(response.headers["Cache-Control"] == "no-store")
            let answer = response.json
            #expect(answer["applied"] == 5)
            #expect(answer["skipped"] == 0)
            #expect(answer["refused"] == .null)
            #expect(answer.batchStatuses == Array(repeating: "applied", count: 5))
            #expect(answer.batchVersions == [1, 2, 3, 4, 5])
            #expect(answer["results"][2]["key"] == "tap-3")
            #expect(answer["state"].features == ["home.second"])
            #expect(answer["state"]["transition"]["type"] == "dismiss")
            let read = try client.state(session)
            #expect(read.json == answer["state"])
            #expect(read.headers["ETag"] == "\"5\"")

            let log = try client.log(session)
            #expect(log.compactMap { $0["version"].integerValue } == [1, 2, 3, 4, 5])
            #expect(log.compactMap { $0["type"].stringValue } == ["onboarding.showSecond", "onboarding.completed", "home.selectTab",
                                                                  "home.presentModal", "modal.dismiss"])
            #expect(log.map { $0["clientAt"] } == ["2026-11-25T10:00:00.123Z", "2026-11-25T10:00:01.500Z", .null, .null,
                                                   "2026-11-25T10:00:09.000Z"])
            #expect(log.allSatisfy { $0["at"].stringValue?.hasSuffix("Z") == true })

            // Each key holds its own version's answer: posted alone, it replays that version.
            let replay = try client.act(session, #"{"type":"home.selectTab","params":{"index":1}}"#, headers: [("Idempotency-Key", "tap-3")])
            #expect(replay.status == 200)
            #expect(replay.headers["Idempotent-Replayed"] == "true")
            #expect(replay.headers["ETag"] == "\"3\"")
            #expect(replay.json.features == ["home.second"])
            #expect(try client.state(session).json["version"] == 5)

            #expect(try client.create(userId: "offline").state.features == ["home.first"])
        }
    }

    /// The versions a batch applies reach the session's event stream in order, ending at the
    /// last one (a stream may skip versions that come faster than it is sent, as SessionEvents
    /// says: a batch's versions come in a burst, so an unsent one is replaced by the next).
    @Test func streamsGetEachVersionOfABatch() throws {
        let test = try TestApp()
        try test.withServer { server in
            let client = SessionClient(sender: SocketSender(port: server.port))
            let session = try client.create(userId: "streamed-batch")
            let stream = try EventStreamClient(port: server.port, path: "/v1/sessions/\(session.id)/events", headers: session.auth)
            #expect(try stream.next()?.id == "0")
            let answer = try client.batch(session, Self.offlineWalk(from: try #require(session.state["top"]["id"].stringValue)))
            #expect(answer.status == 200)
            let events = try stream.events(through: 5)
            let ids = events.compactMap { $0.id.flatMap(Int.init) }
            #expect(ids.last == 5)
            #expect(zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 }, "in order: \(ids)")
            #expect(events.last?.data == answer.json["state"].jsonText)
        }
    }

    /// A session in an experiment records the funnel and the onboarding of taps applied in a batch, as of taps posted alone.
    @Test func batchesFeedTheExperimentReport() throws {
        let test = try TestApp()
        let admin = [("Authorization", "Bearer \(TestApp.adminToken)")]
        let put = try test.direct.send("PUT", "/v1/experiments/offline", body: #"{"variants":[{"key":"all","weight":1}]}"#, headers: admin)
        #expect(put.status == 201)
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "in-experiment")
        #expect(session.state["experiments"]["offline"] == "all")
        #expect(try client.batch(session, Self.offlineWalk(from: try #require(session.state["top"]["id"].stringValue))).status == 200)
        let report = try test.direct.send("GET", "/v1/experiments/offline/report", headers: admin).json
        #expect(report["variants"][0]["sessions"] == 1)
        #expect(report["variants"][0]["onboarded"] == 1)
        #expect(report["variants"][0]["funnel"] == ["onboarding.first": 1, "onboarding.second": 1, "home.first": 1, "home.second": 1, "modal": 1])
    }

    /// A batch stops at the first refusal: the items before it are applied and kept, the
    /// refused one and those after it are not; the refusal is the problem a single POST answers.
    @Test func partialBatchStopsAtTheRefusal() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "partial")
        let first = try #require(session.state["top"]["id"].stringValue)
        let taps = [
            Tap(key: "p-1", version: 0, action: #"{"type":"onboarding.showSecond","from":"\#(first)"}"#),
            Tap(key: "p-2", version: 1, action: #"{"type":"onboarding.showSecond","from":"\#(first)"}"#),  // e3 is no longer on top
            Tap(key: "p-3", version: 2, action: #"{"type":"back"}"#),
        ]
        let response = try client.batch(session, taps)
        #expect(response.status == 200)
        #expect(response.headers["ETag"] == "\"1\"")
        let answer = response.json
        #expect(answer["applied"] == 1)
        #expect(answer.batchStatuses == ["applied", "refused", "notApplied"])
        #expect(answer.batchVersions == [1, nil, nil])
        #expect(answer["refused"]["status"] == 409)
        #expect(answer["refused"]["code"] == "stale-source")
        let alone = try client.act(session, taps[1].action)
        #expect(alone.status == 409)
        #expect(alone.json == answer["refused"])
        #expect(answer["state"]["version"] == 1)
        #expect(answer["state"].features == ["onboarding.first", "onboarding.second"])
        #expect(try client.log(session).count == 1)
        // The refused keys were not used: they may carry other actions later.
        let later = try client.batch(session, [Tap(key: "p-2", version: 1, action: #"{"type":"back"}"#)])
        #expect(later.json.batchStatuses == ["applied"])
    }

    /// A batch sent twice applies once: the second answer skips every item (with the versions
    /// they produced) and shows the same state; the log does not grow.
    @Test(arguments: SessionAPITests.Transport.allCases)
    func repeatedBatchAppliesOnce(transport: SessionAPITests.Transport) throws {
        let test = try TestApp()
        try SessionAPITests.withClient(test, transport) { client in
            let session = try client.create(userId: "repeat")
            let taps = Self.offlineWalk(from: try #require(session.state["top"]["id"].stringValue))
            let once = try client.batch(session, taps)
            let twice = try client.batch(session, taps)
            #expect(once.status == 200)
            #expect(twice.status == 200)
            #expect(twice.json["applied"] == 0)
            #expect(twice.json["skipped"] == 5)
            #expect(twice.json.batchStatuses == Array(repeating: "skipped", count: 5))
            #expect(twice.json.batchVersions == [1, 2, 3, 4, 5])
            #expect(twice.json["state"] as JSONValue == once.json["state"] as JSONValue)
            #expect(twice.headers["ETag"] == "\"5\"")
            #expect(try client.log(session).count == 5)
            // A retry with one more tap at the end: the five are skipped, the new one applied.
            let more = taps + [Tap(key: "tap-6", version: 5, action: #"{"type":"home.selectTab","params":{"index":0}}"#)]
            let third = try client.batch(session, more)
            #expect(third.json.batchStatuses == Array(repeating: "skipped", count: 5) + ["applied"])
            #expect(third.json["state"]["version"] == 6)
        }
    }

    /// Refusals come as a single POST's problem: an action no flow handles (422 unhandled), an
    /// action the owning flow refuses on this screen (422 refused), a key used for another action
    /// (422 idempotency-key-reused); nothing of the refused item is kept.
    @Test func refusedItems() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "refused")
        let unhandled = try client.batch(session, [Tap(key: "r-1", version: 0, action: #"{"type":"nobody.handles"}"#)]).json
        #expect(unhandled.batchStatuses == ["refused"])
        #expect(unhandled["refused"]["status"] == 422)
        #expect(unhandled["refused"]["code"] == "unhandled")
        #expect(unhandled["refused"]["chain"].arrayValue?.isEmpty == false)
        #expect(unhandled["applied"] == 0)
        #expect(unhandled["state"]["version"] == 0)
        let wrongScreen = try client.batch(session, [Tap(key: "r-2", version: 0, action: #"{"type":"onboarding.completed"}"#)]).json
        #expect(wrongScreen["refused"]["status"] == 422)
        #expect(wrongScreen["refused"]["code"] == "refused")

        try client.apply(session, #"{"type":"onboarding.showSecond"}"#)  // with no key
        _ = try client.act(session, #"{"type":"back"}"#, headers: [("Idempotency-Key", "r-3")])
        let reused = try client.batch(session, [Tap(key: "r-3", version: 2, action: #"{"type":"onboarding.showSecond"}"#)]).json
        #expect(reused.batchStatuses == ["refused"])
        #expect(reused["refused"]["status"] == 422)
        #expect(reused["refused"]["type"] == "urn:flowstack:problem:idempotency-key-reused")
        #expect(try client.log(session).count == 2)
    }

    /// A key repeated inside one batch is judged as a POST repeating the key after the first:
    /// the same tap again is skipped (the client sent it twice), another action under it is
    /// refused 422 idempotency-key-reused; the tap is applied and logged once.
    @Test func aKeyRepeatedInOneBatchIsOneTap() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "repeated-key")
        let same = Tap(key: "k-1", version: 0, action: #"{"type":"onboarding.showSecond"}"#)
        let twice = try client.batch(session, [same, same]).json
        #expect(twice.batchStatuses == ["applied", "skipped"])
        #expect(twice["state"]["version"] == 1)
        let other = try client.batch(session, [Tap(key: "k-2", version: 1, action: #"{"type":"back"}"#),
                                               Tap(key: "k-2", version: 2, action: #"{"type":"onboarding.showSecond"}"#)]).json
        #expect(other.batchStatuses == ["applied", "refused"])
        #expect(other["refused"]["type"] == "urn:flowstack:problem:idempotency-key-reused")
        #expect(try client.log(session).count == 2)
    }

    /// A batch made on a version the session has left (another action came first) stops at its
    /// first item not already applied: 412 version-mismatch with the current version.
    @Test func staleBatchIsRefusedAtTheFirstMismatch() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "stale")
        let first = try #require(session.state["top"]["id"].stringValue)
        try client.apply(session, #"{"type":"onboarding.showSecond"}"#)  // another device, meanwhile
        let response = try client.batch(session, Self.offlineWalk(from: first))
        #expect(response.status == 200)
        let answer = response.json
        #expect(answer.batchStatuses == ["refused", "notApplied", "notApplied", "notApplied", "notApplied"])
        #expect(answer["refused"]["status"] == 412)
        #expect(answer["refused"]["type"] == "urn:flowstack:problem:version-mismatch")
        #expect(answer["refused"]["currentVersion"] == 1)
        #expect(answer["refused"]["errors"][0]["pointer"] == "/actions/0/version")
        #expect(answer["state"]["version"] == 1)
        #expect(response.headers["ETag"] == "\"1\"")
        #expect(try client.log(session).count == 1)
    }

    /// Taps posted one by one, then (the connection lost) sent again with the rest as a batch
    /// under the same keys: those that arrived are skipped, the rest applied. The key's hash is
    /// the parsed action's, so spacing and member order do not matter.
    @Test func keysPostedAloneAreSkippedInABatch() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "mixed")
        let taps = Self.offlineWalk(from: try #require(session.state["top"]["id"].stringValue), prefix: "m")
        let first = try client.act(session, taps[0].action.replacingOccurrences(of: ",", with: " , "),
                                   headers: [("Idempotency-Key", "m-1"), ("If-Match", "\"0\"")])
        #expect(first.status == 200)
        let second = try client.act(session, #"{ "params" : {}, "type" : "onboarding.completed", "interactive": false }"#,
                                    headers: [("Idempotency-Key", "m-2")])
        #expect(second.status == 200)
        let answer = try client.batch(session, taps).json
        #expect(answer.batchStatuses == ["skipped", "skipped", "applied", "applied", "applied"])
        #expect(answer.batchVersions == [1, 2, 3, 4, 5])
        #expect(answer["skipped"] == 2)
        #expect(answer["applied"] == 3)
        #expect(try client.log(session).count == 5)
        // And the other way: a key from the batch posted alone replays; with another action, 422.
        let replay = try client.act(session, taps[4].action, headers: [("Idempotency-Key", "m-5")])
        #expect(replay.headers["Idempotent-Replayed"] == "true")
        #expect(try client.act(session, #"{"type":"back"}"#, headers: [("Idempotency-Key", "m-5")]).status == 422)
    }

    /// Batches and single actions on one session take turns: a batch queued behind single
    /// actions is judged after them, and versions stay contiguous with a complete log.
    @Test func batchesTakeTheirTurn() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "turns")
        try client.apply(session, #"{"type":"onboarding.showSecond"}"#)
        try client.apply(session, #"{"type":"onboarding.completed"}"#)
        let sender = client.sender
        let path = "/v1/sessions/\(session.id)"
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for round in 0..<5 {
                if worker % 2 == 0 {
                    _ = try? sender.send("POST", path + "/actions", body: #"{"type":"home.selectTab","params":{"index":\#(round % 2)}}"#,
                                         headers: session.auth)
                } else {
                    // Made on whatever version the state shows now: applied, or refused as stale.
                    let version = (try? sender.send("GET", path, headers: session.auth).json["version"].integerValue) ?? 0
                    let taps = (0..<3).map { Tap(key: "w\(worker)-\(round)-\($0)", version: version + $0,
                                                 action: #"{"type":"home.selectTab","params":{"index":\#($0 % 2)}}"#) }
                    let answer = try? sender.send("POST", path + "/actions/batch", body: #"{"actions":[\#(taps.map(\.json).joined(separator: ","))]}"#,
                                                  headers: session.auth)
                    #expect(answer?.status == 200)
                }
            }
        }
        let final = try #require(try client.state(session).json["version"].integerValue)
        let log = try client.log(session)
        #expect(log.compactMap { $0["version"].integerValue } == Array(1...final))
        #expect(final >= 2 + 20)
    }

    /// A database that does not answer is a 503 problem for the whole batch (its keys make
    /// sending it again safe), never a 5xx that claims a refusal; the session is not lost.
    @Test func unavailableDatabaseIs503() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "unavailable")
        let taps = Self.offlineWalk(from: try #require(session.state["top"]["id"].stringValue))
        try test.store.close()
        let response = try client.batch(session, taps)
        #expect(response.status == 503)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        let reopened = try test.reopened()
        let again = try SessionClient(sender: reopened.direct).batch(session, taps)
        #expect(again.json.batchStatuses == Array(repeating: "applied", count: 5), "\(again.text)")
    }

    /// Every malformed batch is a 400 naming the JSON Pointer of each problem, before anything is applied.
    @Test(arguments: [
        ("{}", "/actions"),
        (#"{"actions":{}}"#, "/actions"),
        (#"{"actions":[]}"#, "/actions"),
        ("[]", ""),
        (#"{"actions":[1]}"#, "/actions/0"),
        (#"{"actions":[{"key":"a","version":0,"action":{"type":"back"}}],"extra":1}"#, "/extra"),
        (#"{"actions":[{"version":0,"action":{"type":"back"}}]}"#, "/actions/0/key"),
        (#"{"actions":[{"key":"","version":0,"action":{"type":"back"}}]}"#, "/actions/0/key"),
        (#"{"actions":[{"key":"a b","version":0,"action":{"type":"back"}}]}"#, "/actions/0/key"),
        (#"{"actions":[{"key":7,"version":0,"action":{"type":"back"}}]}"#, "/actions/0/key"),
        (#"{"actions":[{"key":"a","action":{"type":"back"}}]}"#, "/actions/0/version"),
        (#"{"actions":[{"key":"a","version":-1,"action":{"type":"back"}}]}"#, "/actions/0/version"),
        (#"{"actions":[{"key":"a","version":1.5,"action":{"type":"back"}}]}"#, "/actions/0/version"),
        (#"{"actions":[{"key":"a","version":"0","action":{"type":"back"}}]}"#, "/actions/0/version"),
        (#"{"actions":[{"key":"a","version":1e40,"action":{"type":"back"}}]}"#, "/actions/0/version"),
        (#"{"actions":[{"key":"a","version":0}]}"#, "/actions/0/action"),
        (#"{"actions":[{"key":"a","version":0,"action":"back"}]}"#, "/actions/0/action"),
        (#"{"actions":[{"key":"a","version":0,"action":{"type":"back","parmas":{}}}]}"#, "/actions/0/action/parmas"),
        (#"{"actions":[{"key":"a","version":0,"action":{"type":""}}]}"#, "/actions/0/action/type"),
        (#"{"actions":[{"key":"a","version":0,"action":{"type":"back"},"when":1}]}"#, "/actions/0/when"),
        (#"{"actions":[{"key":"a","version":0,"at":"yesterday","action":{"type":"back"}}]}"#, "/actions/0/at"),
        (#"{"actions":[{"key":"a","version":0,"at":"2026-11-25T10:00:00","action":{"type":"back"}}]}"#, "/actions/0/at"),
        (#"{"actions":[{"key":"a","version":0,"at":1764064800,"action":{"type":"back"}}]}"#, "/actions/0/at"),
    ])
    func malformedBatchesAreRefusedWhole(body: String, pointer: String) throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "malformed")
        try client.apply(session, #"{"type":"onboarding.showSecond"}"#)
        let response = try client.sender.send("POST", "/v1/sessions/\(session.id)/actions/batch", body: body, headers: session.auth)
        #expect(response.status == 400, "\(response.text)")
        #expect(response.headers["Content-Type"] == "application/problem+json")
        let pointers = (response.json["errors"].arrayValue ?? []).compactMap { $0["pointer"].stringValue }
        #expect(pointers.contains(pointer), "\(response.text)")
        #expect(try client.state(session).json["version"] == 1)
    }

    /// Over 100 items is a 400; a body over the server's limit a 413; no token, a wrong token, an
    /// unknown session: 401, 401, 404, as on the single route.
    @Test func limitsAndAccess() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "limits")
        let many = (0...100).map { Tap(key: "k\($0)", version: $0, action: #"{"type":"back"}"#) }
        let tooMany = try client.batch(session, many)
        #expect(tooMany.status == 400)
        #expect(tooMany.json["errors"][0]["pointer"] == "/actions")
        let tap = [Tap(key: "k", version: 0, action: #"{"type":"onboarding.showSecond"}"#)]
        #expect(try client.batch(session, tap, headers: []).status == 401)
        #expect(try client.batch(session, tap, headers: [("Authorization", "Bearer nope")]).status == 401)
        let unknown = CreatedSession(id: "s_AAAAAAAAAAAAAAAAAAAAAA", token: session.token, state: .null)
        #expect(try client.batch(unknown, tap).status == 404)
        #expect(try client.sender.send("GET", "/v1/sessions/\(session.id)/actions/batch", headers: session.auth).status == 405)
        try test.withLiveServer { sender in
            let huge = String(repeating: "x", count: 60_000)
            let taps = (0..<20).map { Tap(key: "h\($0)", version: $0, action: #"{"type":"back","params":{"p":"\#(huge)"}}"#) }
            let oversized = try SessionClient(sender: sender).batch(session, taps)
            #expect(oversized.status == 413)
        }
        #expect(try client.state(session).json["version"] == 0)
        #expect(try client.batch(session, tap).json.batchStatuses == ["applied"])
    }
}

@Suite(.enabled(if: TestStoreKind.isPostgreSQL, "several nodes share a PostgreSQL database"))
struct BatchMultiNodeTests {
    /// A batch sent to a node whose cached copy of the session is behind (another node acted)
    /// is judged on the stored state: made on the stored version, it is applied; made on the
    /// cached one, it is refused with the stored version; a key another node applied is skipped.
    @Test func batchesAreJudgedOnTheStoredState() throws {
        let (a, b) = try MultiNodeTests.nodes()
        let nodes = [SessionClient(sender: a.direct), SessionClient(sender: b.direct)]
        let session = try MultiNodeTests.onboarded(nodes[0], user: "batch-nodes")
        _ = try nodes[1].state(session)  // cached on b at version 2
        try nodes[0].apply(session, #"{"type":"home.selectTab","params":{"index":1}}"#)  // 3, through a
        let current = try nodes[1].batch(session, [Tap(key: "n-1", version: 3, action: #"{"type":"home.selectTab","params":{"index":0}}"#)])
        #expect(current.json.batchStatuses == ["applied"], "\(current.text)")
        #expect(current.json.batchVersions == [4])

        _ = try nodes[1].state(session)  // b at 4
        let applied = try nodes[0].batch(session, [Tap(key: "n-2", version: 4, action: #"{"type":"home.selectTab","params":{"index":1}}"#)])
        #expect(applied.json.batchVersions == [5])
        let stale = try nodes[1].batch(session, [Tap(key: "n-3", version: 4, action: #"{"type":"home.selectTab","params":{"index":0}}"#)])
        #expect(stale.json.batchStatuses == ["refused"], "\(stale.text)")
        #expect(stale.json["refused"]["currentVersion"] == 5)

        _ = try nodes[1].state(session)  // b at 5
        try nodes[0].act(session, #"{"type":"home.selectTab","params":{"index":0}}"#, headers: [("Idempotency-Key", "n-4")])  // 6
        let mixed = try nodes[1].batch(session, [
            Tap(key: "n-4", version: 5, action: #"{"type":"home.selectTab","params":{"index":0}}"#),
            Tap(key: "n-5", version: 6, action: #"{"type":"home.presentModal","params":{"content":"b"}}"#),
        ])
        #expect(mixed.json.batchStatuses == ["skipped", "applied"], "\(mixed.text)")
        #expect(mixed.json.batchVersions == [6, 7])
        #expect(try nodes[0].state(session).json["version"] == 7)
        #expect(try nodes[0].log(session).compactMap { $0["version"].integerValue } == Array(1...7))
    }
}

/// Commits that fail in the middle of a batch, made to happen with a trigger on the SQLite
/// file's action log: a tap whose `at` is the magic time below fails, or has another writer
/// take the next version right after it.
@Suite(.enabled(if: TestStoreKind.isSQLite, "puts a trigger in the SQLite file"))
struct BatchCommitFailureTests {
    static let magic = "2099-01-01T00:00:00.000Z"

    static func trigger(_ test: TestApp, _ sql: String) throws {
        let sqlite = try #require(test.store as? SQLiteStore)
        try sqlite.pool.write { db in try db.execute(sql: sql) }
    }

    /// A commit that fails after two taps of the batch were committed: 503 for the whole batch,
    /// saying two are known applied; nothing is lost or written twice, and the same batch sent
    /// again skips those two and applies the rest.
    @Test func failureMidBatchIs503AndTheSameBatchFinishesIt() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "mid-failure")
        var taps = BatchAPITests.offlineWalk(from: try #require(session.state["top"]["id"].stringValue))
        taps[2].at = Self.magic
        try Self.trigger(test, """
            CREATE TRIGGER fail_offline BEFORE INSERT ON actions WHEN NEW.client_at = '\(Self.magic)'
            BEGIN SELECT RAISE(ABORT, 'injected'); END
            """)
        let failed = try client.batch(session, taps)
        #expect(failed.status == 503)
        #expect(failed.headers["Content-Type"] == "application/problem+json")
        #expect(failed.json["applied"] == 2, "\(failed.text)")
        #expect(!failed.text.lowercased().contains("sqlite"))
        #expect(try client.log(session).compactMap { $0["version"].integerValue } == [1, 2])
        #expect(try client.state(session).json["version"] == 2)

        try Self.trigger(test, "DROP TRIGGER fail_offline")
        let again = try client.batch(session, taps)
        #expect(again.json.batchStatuses == ["skipped", "skipped", "applied", "applied", "applied"], "\(again.text)")
        #expect(again.json.batchVersions == [1, 2, 3, 4, 5])
        #expect(try client.log(session).compactMap { $0["version"].integerValue } == [1, 2, 3, 4, 5])
    }

    /// Another writer takes the next version right after the batch's first tap is committed:
    /// the rest of the batch conflicts, the batch runs again on the stored state, reports the
    /// first tap as applied by this request (not skipped), and refuses the second, now made on
    /// a version the session has left.
    @Test func conflictMidBatchRunsTheBatchAgain() throws {
        let test = try TestApp()
        let client = SessionClient(sender: test.direct)
        let session = try client.create(userId: "mid-conflict")
        var taps = BatchAPITests.offlineWalk(from: try #require(session.state["top"]["id"].stringValue))
        taps[0].at = Self.magic
        try Self.trigger(test, """
            CREATE TRIGGER elsewhere AFTER INSERT ON log_heads
            WHEN (SELECT client_at FROM actions WHERE rowid = NEW.newest) = '\(Self.magic)'
            BEGIN
                INSERT INTO actions (session_id, version, type, source, params, interactive, handled_by, transition, created_at, tree,
                                     previous)
                SELECT session_id, version + 1, 'elsewhere', NULL, '{}', 0, NULL, NULL, created_at,
                       (SELECT tree FROM sessions WHERE id = NEW.session_id), rowid
                FROM actions WHERE rowid = NEW.newest;
                UPDATE log_heads SET newest = last_insert_rowid() WHERE session_id = NEW.session_id;
            END
            """)
        let answer = try client.batch(session, taps)
        #expect(answer.status == 200)
        #expect(answer.json.batchStatuses == ["applied", "refused", "notApplied", "notApplied", "notApplied"], "\(answer.text)")
        #expect(answer.json.batchVersions == [1, nil, nil, nil, nil])
        #expect(answer.json["applied"] == 1)
        #expect(answer.json["refused"]["status"] == 412)
        #expect(answer.json["refused"]["currentVersion"] == 2)
        #expect(answer.json["state"]["version"] == 2)
        #expect(try client.log(session).compactMap { $0["type"].stringValue } == ["onboarding.showSecond", "elsewhere"])
    }
}
