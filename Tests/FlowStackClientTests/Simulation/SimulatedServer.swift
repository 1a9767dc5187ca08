// SimulatedServer: FlowStack's session routes as the client simulation needs them, over the real
// engine, in memory: If-Match, Idempotency-Key replays, batches that stop at the first refusal,
// predictions, bundles, sessions deleted, and another device acting. Its answers are the real
// server's shapes (state documents byte for byte, problem documents with status and code); the
// real-server runs (ClientFaultTests, scripts/client_faults.py) check the client against the real one.
import FlowEngine
import FlowStackClient
import Foundation
import JSON
import TestSupport

final class SimulatedServer: @unchecked Sendable {
    /// One session: its engine state, and every version's state document, in order.
    struct Session {
        var id: String
        var token: String
        var userId: String
        var state: SessionState
        var alive = true
        /// The state document of each version (index = version).
        var documents: [[UInt8]]
    }

    /// One stored action: which session, the version it made, its key (nil for another
    /// device's), and its type.
    struct LogEntry: Equatable {
        var session: String
        var version: Int
        var key: String?
        var type: String
    }

    private let lock = NSLock()
    private let catalog: FlowCatalog
    private(set) var sessions: [String: Session] = [:]
    private(set) var log: [LogEntry] = []
    /// Stored answers by session and key: the action (to refuse a key reused for another) and the body.
    private var answers: [String: [String: (action: FlowAction, version: Int, body: [UInt8])]] = [:]
    private var userStates: [String: [String: JSONValue]] = [:]
    private var nextId = 1
    /// While down, every request finds no server (the transport says so).
    var down = false

    init(catalog: FlowCatalog) {
        self.catalog = catalog
    }

    /// The sample app's definitions, read once from flows/.
    static let sampleDefinitions = SampleApp.definitions

    /// The sample app's catalog.
    static let sampleCatalog: FlowCatalog = FlowCatalog.parse(sampleDefinitions.map { ($0.name, $0.json) }).catalog

    func withLock<T>(_ body: () throws -> T) rethrows -> T { try lock.withLock(body) }

    // MARK: what the checker reads

    /// The stored entries of a key, over every session.
    func entries(key: String) -> [LogEntry] { lock.withLock { log.filter { $0.key == key } } }

    /// Every key stored, with how many times, over every session (`all`), and over the sessions
    /// still there (`live`: a deleted session's log is deleted with it on the real server).
    func keyCounts() -> (all: [String: Int], live: [String: Int]) {
        lock.withLock {
            var all: [String: Int] = [:]
            var live: [String: Int] = [:]
            for entry in log {
                guard let key = entry.key else { continue }
                all[key, default: 0] += 1
                if sessions[entry.session]?.alive == true { live[key, default: 0] += 1 }
            }
            return (all, live)
        }
    }

    /// The state document a session had at a version, if it had one.
    func document(session: String, version: Int) -> [UInt8]? {
        lock.withLock { sessions[session].flatMap { $0.documents.indices.contains(version) ? $0.documents[version] : nil } }
    }

    func session(_ id: String) -> Session? { lock.withLock { sessions[id] } }

    // MARK: the routes

    /// Answers one request as FlowStack would.
    func handle(_ request: FlowRequest) -> FlowAnswer {
        lock.withLock { route(request) }
    }

    private func route(_ request: FlowRequest) -> FlowAnswer {
        let parts = request.path.split(separator: "/").map(String.init)
        let predict = request.query?.contains("predict=true") ?? false
        if request.method == "GET", request.path == "/healthz" { return FlowAnswer(status: 200, body: Array("ok".utf8)) }
        if request.method == "POST", parts == ["v1", "sessions"] { return create(request.body ?? [], predict: predict) }
        guard parts.count >= 3, parts[0] == "v1", parts[1] == "sessions" else { return problem(404, "not-found", "no route") }
        let id = parts[2]
        guard var session = sessions[id], session.alive else { return problem(404, "not-found", "There is no session \(id).") }
        guard request.headers["Authorization"] == "Bearer \(session.token)" else { return problem(401, "unauthorized", "wrong token") }
        switch (request.method, Array(parts.dropFirst(3))) {
        case ("GET", []):
            return FlowAnswer(status: 200, body: Self.body(session.state, predict: predict))
        case ("GET", ["bundle"]):
            var writer = JSONWriter(capacity: 8192)
            SessionBundle.write(session.state, flowVersions: [:], definitions: Self.sampleDefinitions, into: &writer)
            return FlowAnswer(status: 200, etag: "\"\(session.state.version)\"", body: writer.takeBytes())
        case ("POST", ["actions"]):
            guard let body = request.body, let json = try? JSONParser.parse(body), let action = try? FlowAction(json: json) else {
                return problem(400, "malformed", "not an action")
            }
            let ifMatch = request.headers["If-Match"].flatMap { Int($0.trimmingCharacters(in: CharacterSet(charactersIn: "\""))) }
            let answer = apply(action, key: request.headers["Idempotency-Key"], ifMatch: ifMatch, to: &session, predict: predict)
            sessions[id] = session
            return answer
        case ("POST", ["actions", "batch"]):
            guard let body = request.body, let json = try? JSONParser.parse(body), let items = json["actions"]?.arrayValue else {
                return problem(400, "malformed", "not a batch")
            }
            let answer = batch(items, to: &session)
            sessions[id] = session
            return answer
        default:
            return problem(404, "not-found", "no route")
        }
    }

    private func create(_ body: [UInt8], predict: Bool) -> FlowAnswer {
        guard let json = try? JSONParser.parse(body), let userId = json["userId"]?.stringValue else { return problem(400, "malformed", "no userId") }
        let id = "s_\(nextId)"
        let token = "t_\(nextId)"
        nextId += 1
        let context = FlowContext(userId: userId, user: userStates[userId] ?? [:])
        guard let tree = try? FlowEngine.start(catalog: catalog, context: context) else { return problem(500, "broken", "cannot start") }
        let state = SessionState(sessionId: id, userId: userId, version: 0, tree: tree, context: context, catalog: catalog,
                                 flagsJSON: Array("{}".utf8), experimentsJSON: Array("{}".utf8))
        sessions[id] = Session(id: id, token: token, userId: userId, state: state, documents: [state.document()])
        var writer = JSONWriter(capacity: 4096)
        writer.beginObject()
        writer.writeKey("session")
        writer.writeValue(["id": .string(id), "token": .string(token)])
        writer.writeKey("state")
        writer.writeRawValue(Self.body(state, predict: predict))
        writer.endObject()
        return FlowAnswer(status: 201, body: writer.takeBytes())
    }

    /// One action under the rules of `POST …/actions`: a known key replays its answer (or is
    /// refused when it came with another action), then If-Match, then the engine.
    private func apply(_ action: FlowAction, key: String?, ifMatch: Int?, to session: inout Session, predict: Bool) -> FlowAnswer {
        if let key, let stored = answers[session.id]?[key] {
            guard stored.action == action else { return problem(422, "idempotency-key-reused", "key \(key) was used for another action") }
            return FlowAnswer(status: 200, body: stored.body)
        }
        if let ifMatch, ifMatch != session.state.version {
            return problem(412, "version-mismatch", "If-Match asks for \(ifMatch), the session is at \(session.state.version)",
                           extra: [("currentVersion", .integer(session.state.version))])
        }
        switch commit(action, key: key, to: &session) {
        case .success:
            let body = Self.body(session.state, predict: predict)
            if let key { answers[session.id, default: [:]][key] = (action, session.state.version, body) }
            return FlowAnswer(status: 200, body: body)
        case .failure(let error):
            return problem(error.code == "stale-source" ? 409 : 422, error.code, error.description)
        }
    }

    private func commit(_ action: FlowAction, key: String?, to session: inout Session) -> Result<Void, FlowError> {
        do throws(FlowError) {
            let (next, _) = try session.state.applying(action)
            session.state = next
            session.documents.append(next.document())
            userStates[session.userId] = next.context.user
            log.append(LogEntry(session: session.id, version: next.version, key: key, type: action.type))
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    /// `POST …/actions/batch`: each item as if posted with its key and version, in order,
    /// stopping at the first refusal.
    private func batch(_ items: [JSONValue], to session: inout Session) -> FlowAnswer {
        var results: [JSONValue] = []
        var refused: JSONValue = nil
        var applied = 0
        var skipped = 0
        for (index, item) in items.enumerated() {
            guard let key = item["key"]?.stringValue, let version = item["version"]?.integerValue, let raw = item["action"],
                  let action = try? FlowAction(json: raw) else { return problem(400, "malformed", "item \(index) is malformed") }
            if refused != nil {
                results.append(["key": .string(key), "status": "notApplied"])
                continue
            }
            if let stored = answers[session.id]?[key] {
                if stored.action == action {
                    skipped += 1
                    results.append(["key": .string(key), "status": "skipped", "version": .integer(stored.version)])
                } else {
                    refused = problemJSON(422, "idempotency-key-reused", "key \(key) was used for another action")
                    results.append(["key": .string(key), "status": "refused"])
                }
                continue
            }
            if version != session.state.version {
                refused = problemJSON(412, "version-mismatch", "item \(index) was made on \(version), the session is at \(session.state.version)")
                results.append(["key": .string(key), "status": "refused"])
                continue
            }
            switch commit(action, key: key, to: &session) {
            case .success:
                applied += 1
                answers[session.id, default: [:]][key] = (action, session.state.version, Self.body(session.state, predict: false))
                results.append(["key": .string(key), "status": "applied", "version": .integer(session.state.version)])
            case .failure(let error):
                refused = problemJSON(error.code == "stale-source" ? 409 : 422, error.code, error.description)
                results.append(["key": .string(key), "status": "refused"])
            }
        }
        var writer = JSONWriter(capacity: 4096)
        writer.beginObject()
        writer.writeKey("applied")
        writer.writeInteger(applied)
        writer.writeKey("skipped")
        writer.writeInteger(skipped)
        writer.writeKey("results")
        writer.writeValue(.array(results))
        writer.writeKey("refused")
        writer.writeValue(refused)
        writer.writeKey("state")
        writer.writeRawValue(session.state.document())
        writer.endObject()
        return FlowAnswer(status: 200, body: writer.takeBytes())
    }

    // MARK: what happens outside the client

    /// Another device posts one of the actions the session accepts now (no key, no If-Match).
    @discardableResult
    func actAsAnotherDevice(_ id: String, random: inout SeededGenerator) -> Bool {
        lock.withLock {
            guard var session = sessions[id], session.alive else { return false }
            let available = session.state.predictions()
            guard !available.isEmpty else { return false }
            let pick = available[Int(random.next() % UInt64(available.count))]
            guard case .success = commit(pick.action, key: nil, to: &session) else { return false }
            sessions[id] = session
            return true
        }
    }

    /// The session is deleted (support ended it, or it expired): its routes answer 404.
    func delete(_ id: String) {
        lock.withLock { sessions[id]?.alive = false }
    }

    // MARK: documents

    /// A state document, with `predictions` when asked, as the server writes it.
    static func body(_ state: SessionState, predict: Bool) -> [UInt8] {
        let document = state.document()
        guard predict else { return document }
        var writer = JSONWriter(capacity: 8192)
        writer.beginArray()
        for prediction in state.predictions() {
            writer.beginObject()
            writer.writeKey("action")
            writer.writeValue(prediction.action.json)
            writer.writeKey("state")
            writer.writeRawValue(prediction.next.document())
            writer.endObject()
        }
        writer.endArray()
        var body = Array(document.dropLast())
        body.append(contentsOf: Array(#","predictions":"#.utf8))
        body.append(contentsOf: writer.takeBytes())
        body.append(UInt8(ascii: "}"))
        return body
    }

    private func problemJSON(_ status: Int, _ code: String, _ detail: String, extra: [(String, JSONValue)] = []) -> JSONValue {
        var members: [JSONObject.Member] = [
            JSONObject.Member(key: "type", value: .string("https://flowstack.dev/problems/\(code)")),
            JSONObject.Member(key: "title", value: .string(code)),
            JSONObject.Member(key: "status", value: .integer(status)),
            JSONObject.Member(key: "detail", value: .string(detail)),
            JSONObject.Member(key: "code", value: .string(code)),
        ]
        for (key, value) in extra { members.append(JSONObject.Member(key: key, value: value)) }
        return .object(JSONObject(uniqueMembers: members))
    }

    private func problem(_ status: Int, _ code: String, _ detail: String, extra: [(String, JSONValue)] = []) -> FlowAnswer {
        var writer = JSONWriter()
        writer.writeValue(problemJSON(status, code, detail, extra: extra))
        return FlowAnswer(status: status, contentType: "application/problem+json", body: writer.takeBytes())
    }
}
