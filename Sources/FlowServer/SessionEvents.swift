// Live session events: Server-Sent Events streams that get a session's state at each version.
import Foundation
import FlowStore
import HTTPServer
import Locking
import Logging
import Synchronization

/// The open event streams of this node, by session, and what feeds them: the commits this node
/// makes (`published`), and on a shared database the versions other nodes commit (`watch`).
///
/// Each event is the whole state document of one version:
/// ```
/// id: 7
/// event: state
/// data: {"sessionId":"s_…","version":7,…}
///
/// ```
/// A stream gets versions in increasing order and never one twice. A client slower than the
/// session may skip versions: an unsent state is replaced by a newer one, so a stream's queue
/// holds at most the event being sent and the newest one; if it still grows past its limit
/// (heartbeats behind a client that stopped reading), the stream is cut off.
final class SessionEvents: Sendable {
    /// One open stream and the newest version it was given.
    final class Subscriber: Sendable {
        let sessionId: String
        let stream: ResponseStream
        /// Newest version written to the stream (−1: none yet); guards the order of writes.
        let delivered = PThreadMutex<Int>(-1)

        init(sessionId: String, stream: ResponseStream) {
            self.sessionId = sessionId
            self.stream = stream
        }

        /// Writes `event` of `version` unless the stream already has that version or a newer one.
        func deliver(version: Int, event: [UInt8]) {
            delivered.withLock { newest in
                guard version > newest else { return }
                newest = version
                stream.write(event, replacingQueued: true)
            }
        }
    }

    /// Most bytes waiting for one client: two state documents and then some.
    static let queueLimit = 256 * 1024
    /// How long a client waits before reconnecting, told at the start of each stream (ms).
    static let retryMilliseconds = 2000

    private let subscribers = PThreadMutex<[String: [Int: Subscriber]]>([:])
    private let nextKey = Atomic<Int>(0)
    /// `counters.open`: streams open now, read without the lock on every commit.
    let counters: EventCounters
    private let stop = DispatchSemaphore(value: 0)
    private let logger: Logger

    init(logger: Logger, counters: EventCounters = EventCounters()) {
        self.logger = logger
        self.counters = counters
    }

    deinit {
        // Wakes the heartbeat and watch threads, which then see this object gone.
        stop.signal()
        stop.signal()
    }

    var openStreams: Int { counters.open.load(ordering: .relaxed) }

    // MARK: Streams

    /// Opens a stream on session `sessionId`: registered first, so no version committed from now
    /// on is missed, then given the current state from `current` unless `lastEventId` says the
    /// client has it. Returns the streamed response.
    func openStream(sessionId: String, lastEventId: Int?, current: () throws(ResponseError) -> (version: Int, document: [UInt8])) throws(ResponseError) -> Response {
        let subscriberKey = nextKey.add(1, ordering: .relaxed).newValue
        let stream = ResponseStream(queueLimit: Self.queueLimit) { [weak self] in
            self?.remove(sessionId: sessionId, key: subscriberKey)
        }
        let subscriber = Subscriber(sessionId: sessionId, stream: stream)
        subscribers.withLock { $0[sessionId, default: [:]][subscriberKey] = subscriber }
        counters.open.add(1, ordering: .relaxed)
        counters.opened.add(1, ordering: .relaxed)
        stream.write(Array(": session \(sessionId)\nretry: \(Self.retryMilliseconds)\n\n".utf8))
        let state: (version: Int, document: [UInt8])
        do throws(ResponseError) {
            state = try current()
        } catch {
            stream.abort()
            remove(sessionId: sessionId, key: subscriberKey)
            throw error
        }
        if let lastEventId, lastEventId == state.version {
            // The client has this version: nothing until the next one.
            subscriber.delivered.withLock { $0 = max($0, state.version) }
        } else {
            subscriber.deliver(version: state.version, event: Self.stateEvent(version: state.version, document: state.document))
        }
        var headers = HTTPHeaders(capacity: 4)
        headers.add(name: "Content-Type", value: "text/event-stream")
        headers.add(name: "Cache-Control", value: "no-store")
        // Proxies such as nginx would otherwise hold events back to fill a buffer.
        headers.add(name: "X-Accel-Buffering", value: "no")
        return .stream(stream, headers: headers)
    }

    private func remove(sessionId: String, key: Int) {
        let removed = subscribers.withLock { all -> Bool in
            guard all[sessionId]?.removeValue(forKey: key) != nil else { return false }
            if all[sessionId]?.isEmpty == true { all[sessionId] = nil }
            return true
        }
        if removed { counters.open.subtract(1, ordering: .relaxed) }
    }

    private func streams(of sessionId: String) -> [Subscriber] {
        guard counters.open.load(ordering: .relaxed) > 0 else { return [] }
        return subscribers.withLock { all in all[sessionId].map { Array($0.values) } ?? [] }
    }

    // MARK: Feeding

    /// Session `sessionId` is now at `version`, whose state document is `document`.
    func published(sessionId: String, version: Int, document: [UInt8]) {
        let targets = streams(of: sessionId)
        guard !targets.isEmpty else { return }
        let event = Self.stateEvent(version: version, document: document)
        for subscriber in targets { subscriber.deliver(version: version, event: event) }
        counters.events.add(targets.count, ordering: .relaxed)
    }

    /// Session `sessionId` was deleted: its streams get `event: deleted` and end.
    func deleted(sessionId: String) {
        let targets = streams(of: sessionId)
        guard !targets.isEmpty else { return }
        let event = Array("event: deleted\ndata: {\"sessionId\":\"\(sessionId)\"}\n\n".utf8)
        for subscriber in targets {
            subscriber.delivered.withLock { _ in
                subscriber.stream.write(event)
                subscriber.stream.finish()
            }
        }
    }

    /// `id: <version>`, `event: state`, `data: <document>` (the document is one line of JSON).
    static func stateEvent(version: Int, document: [UInt8]) -> [UInt8] {
        var event: [UInt8] = []
        event.reserveCapacity(document.count + 40)
        event.append(contentsOf: "id: \(version)\nevent: state\ndata: ".utf8)
        event.append(contentsOf: document)
        event.append(contentsOf: "\n\n".utf8)
        return event
    }

    // MARK: Threads

    /// Writes a comment to every idle stream every `interval`, so that proxies and clients do not
    /// take a quiet stream for a dead one; and every second (or `interval`, if shorter) releases
    /// the streams whose client left (a suspended connection's socket is not read otherwise).
    func startHeartbeat(every interval: Duration) {
        let stop = self.stop
        let comment = Array(": keepalive\n\n".utf8)
        let tick = min(interval, .seconds(1))
        let thread = Thread { [weak self] in
            Thread.current.name = "fs-heartbeat"
            let clock = ContinuousClock()
            var nextBeat = clock.now + interval
            while stop.wait(timeout: .now() + Self.dispatchInterval(tick)) == .timedOut {
                guard let self else { return }
                let all = subscribers.withLock { all in all.values.flatMap { $0.values } }
                let beat = clock.now >= nextBeat
                if beat { nextBeat = clock.now + interval }
                for subscriber in all {
                    if subscriber.stream.abortIfClientLeft() { continue }
                    if beat { subscriber.stream.writeIfIdle(comment) }
                }
            }
        }
        thread.start()
    }

    /// On a shared database: every `interval`, asks for the head versions of the sessions this
    /// node streams (one query for all of them) and publishes the ones another node moved,
    /// read through `current` (nil when the session is gone).
    func watch(store: any SessionRecordStore, every interval: Duration,
               current: @escaping @Sendable (String) -> (version: Int, document: [UInt8])?) {
        let stop = self.stop
        let thread = Thread { [weak self] in
            Thread.current.name = "fs-events-watch"
            while stop.wait(timeout: .now() + Self.dispatchInterval(interval)) == .timedOut {
                guard let self else { return }
                pollOtherNodes(store: store, current: current)
            }
        }
        thread.start()
    }

    private func pollOtherNodes(store: any SessionRecordStore, current: (String) -> (version: Int, document: [UInt8])?) {
        guard counters.open.load(ordering: .relaxed) > 0 else { return }
        // The oldest version each session's streams have, to tell which ones fell behind.
        let watched = subscribers.withLock { all -> [String: Int] in
            var oldest: [String: Int] = [:]
            for (session, streams) in all {
                oldest[session] = streams.values.map { $0.delivered.withLock { $0 } }.min() ?? -1
            }
            return oldest
        }
        guard !watched.isEmpty else { return }
        let heads: [String: Int]
        do {
            heads = try store.headVersions(sessionIds: Array(watched.keys))
        } catch {
            logger.debug("event streams not checked", metadata: ["error": "\(error)"])
            return
        }
        counters.polls.add(1, ordering: .relaxed)
        for (session, oldest) in watched {
            guard let head = heads[session] else {
                deleted(sessionId: session)
                continue
            }
            guard head > oldest else { continue }
            if let state = current(session) {
                published(sessionId: session, version: state.version, document: state.document)
            } else {
                deleted(sessionId: session)
            }
        }
    }

    static func dispatchInterval(_ interval: Duration) -> DispatchTimeInterval {
        .milliseconds(max(1, Int(interval.components.seconds * 1000 + interval.components.attoseconds / 1_000_000_000_000_000)))
    }
}

/// What the event streams did, for `/metrics`.
public final class EventCounters: Sendable {
    let open = Atomic<Int>(0)
    let opened = Atomic<Int>(0)
    let events = Atomic<Int>(0)
    let polls = Atomic<Int>(0)
}
