// SimulatedTransport: FlowSession's requests to a SimulatedServer, with seeded faults and delays,
// so the actor itself (its drain loop, retries, probe, start and store) meets the schedules the
// machine simulation draws. The delays are real (a few hundred microseconds), so taps interleave
// with requests on the wire; the faults are seeded.
import FlowStackClient
import Foundation
import JSON
import TestSupport

final class SimulatedTransport: FlowTransport, @unchecked Sendable {
    struct Faults: Sendable {
        /// Chances per thousand requests.
        var lostRequest = 50
        var lostAnswer = 50
        var errorBefore = 30
        var errorAfter = 30
        var garbageAfter = 30
    }

    private let lock = NSLock()
    private let server: SimulatedServer
    private var random: SeededGenerator
    private var faults: Faults
    private var killed = false
    private(set) var requests = 0
    private(set) var faultsInjected = 0

    init(server: SimulatedServer, seed: UInt64, faults: Faults = Faults()) {
        self.server = server
        self.random = SeededGenerator(seed: seed)
        self.faults = faults
    }

    /// The app was killed: nothing it sends from now on reaches the server.
    func kill() { lock.withLock { killed = true } }

    private var failing = false

    /// Every request meets a 500 from a broken node (nothing reaches the server), or not.
    func failEverything(_ on: Bool) { lock.withLock { failing = on } }

    /// The faults stop.
    func heal() { lock.withLock { faults = Faults(lostRequest: 0, lostAnswer: 0, errorBefore: 0, errorAfter: 0, garbageAfter: 0) } }

    private func draw() -> (delay: UInt64, roll: Int) {
        lock.withLock { (random.next() % 400, Int(random.next() % 1000)) }
    }

    func send(_ request: FlowRequest) async throws -> FlowAnswer {
        try? await Task.sleep(for: .microseconds(draw().delay))
        let (killed, down, faults) = lock.withLock { (self.killed, server.down, self.faults) }
        if killed || down { throw Unreachable(detail: killed ? "the app was killed" : "connection refused") }
        lock.withLock { requests += 1 }
        if lock.withLock({ failing }) {
            return FlowAnswer(status: 500, contentType: "text/html", body: Array("<html>Internal Server Error</html>".utf8))
        }
        var roll = draw().roll
        if roll < faults.lostRequest { return try fault(Unreachable(detail: "request lost")) }
        roll -= faults.lostRequest
        if roll < faults.errorBefore { return fault(FlowAnswer(status: 500, contentType: "text/html", body: Array("<html>Internal Server Error</html>".utf8))) }
        let answer = server.handle(request)
        if FlowSessionSimulationTests.tracing {
            let version = (try? JSONParser.parse(answer.body)).flatMap { $0["version"]?.integerValue ?? $0["state"]?["version"]?.integerValue }
            print("  \(ObjectIdentifier(self).hashValue % 1000) \(request.method) \(request.path) \(request.query ?? "") If-Match \(request.headers["If-Match"] ?? "-") key \(request.headers["Idempotency-Key"]?.prefix(4) ?? "-") → \(answer.status) v\(version ?? -1)")
        }
        try? await Task.sleep(for: .microseconds(draw().delay))
        if lock.withLock({ self.killed }) { throw Unreachable(detail: "the app was killed") }
        roll = draw().roll
        if roll < faults.lostAnswer { return try fault(Unreachable(detail: "answer lost")) }
        roll -= faults.lostAnswer
        if roll < faults.errorAfter { return fault(FlowAnswer(status: 502, contentType: "text/html", body: Array("<html>Bad Gateway</html>".utf8))) }
        roll -= faults.errorAfter
        if roll < faults.garbageAfter { return fault(FlowAnswer(status: answer.status, body: Array("<html>cut".utf8))) }
        return answer
    }

    private func fault(_ answer: FlowAnswer) -> FlowAnswer {
        lock.withLock { faultsInjected += 1 }
        return answer
    }

    private func fault(_ error: Unreachable) throws -> FlowAnswer {
        lock.withLock { faultsInjected += 1 }
        throw error
    }
}

/// A store the killed app can no longer write: FlowSession keeps running in the test process
/// after a simulated kill, but a killed app writes nothing. It notes what its launch asked to
/// keep, and whether the last of it was refused, for the checker to tell a tap the disk lost.
final class KillableStore: SessionStore, @unchecked Sendable {
    private let base: any SessionStore
    private let lock = NSLock()
    private var killed = false
    private var keys = Set<String>()
    private var refused = false

    init(_ base: any SessionStore) { self.base = base }

    /// Killed: returns whether the last save this launch asked for was refused (none taken since),
    /// so taps made since then are nowhere but in the dead app's memory.
    @discardableResult
    func kill() -> Bool { lock.withLock { killed = true; return refused } }

    /// The keys of every queue this launch asked to keep, taken or refused: every tap it made.
    var asked: Set<String> { lock.withLock { keys } }

    func load(_ key: SessionKey) throws -> StoredSession? { try base.load(key) }
    func save(_ session: StoredSession) throws {
        guard !lock.withLock({ killed }) else { return }
        lock.withLock { keys.formUnion(session.queue.map(\.key)) }
        do {
            try base.save(session)
            lock.withLock { refused = false }
        } catch {
            lock.withLock { refused = true }
            throw error
        }
    }
    func remove(_ key: SessionKey) throws {
        guard !lock.withLock({ killed }) else { return }
        try base.remove(key)
    }
}

/// The disk under the app's store, the same for every launch: while full (stretches the schedule
/// chooses, which outlast a kill as a full disk would) it refuses every save and removal, and it
/// keeps the keys of every queue a save it took held, which are the taps a kill cannot lose.
final class RefusingDisk: SessionStore, @unchecked Sendable {
    struct Full: Error, CustomStringConvertible {
        var description: String { "No space left on device (simulated)" }
    }

    private let base: any SessionStore
    private let lock = NSLock()
    private var full: Bool
    private var kept = Set<String>()
    private var refused = 0

    init(_ base: any SessionStore, full: Bool = false) {
        self.base = base
        self.full = full
    }

    var isFull: Bool {
        get { lock.withLock { full } }
        set { lock.withLock { full = newValue } }
    }

    /// Saves and removals refused so far.
    var refusals: Int { lock.withLock { refused } }

    /// The keys of every queue a save held that the store took.
    var saved: Set<String> { lock.withLock { kept } }

    func load(_ key: SessionKey) throws -> StoredSession? { try base.load(key) }
    func save(_ session: StoredSession) throws {
        try lock.withLock {
            try refuseWhileFull()
            try base.save(session)
            kept.formUnion(session.queue.map(\.key))
        }
    }
    func remove(_ key: SessionKey) throws {
        try lock.withLock {
            try refuseWhileFull()
            try base.remove(key)
        }
    }

    /// Called under the lock.
    private func refuseWhileFull() throws {
        guard full else { return }
        refused += 1
        throw Full()
    }
}
