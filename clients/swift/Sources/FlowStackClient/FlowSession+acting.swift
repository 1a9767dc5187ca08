// FlowSession+acting: taps shown at once and queued, offline on demand, waiting until settled, closing, and what the store keeps.

import FlowEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JSON

extension FlowSession {
    /// Applies `action` and returns what to show, at once when the local engine (or a prediction)
    /// can tell; then posts it with `If-Match` and an idempotency key in the background (a
    /// UUIDv7, which sorts by the time the tap was made). The answer confirms it, or corrects it
    /// (a `.corrected` event). With neither engine nor prediction, it waits for the answer.
    ///
    /// ```swift
    /// let next = try await session.send(FlowAction(type: "home.selectTab", params: ["index": 1]))
    /// ```
    ///
    /// - Throws: the engine's ``FlowError`` when the local engine refuses it (nothing is posted),
    ///   ``ActionRefused`` when a tap that waited was not taken by the server, or ``Unreachable``
    ///   when a tap that waited cannot be answered because the client is offline (it stays
    ///   queued and is sent when the server is back), or when the session is closed (nothing is
    ///   queued: a closed session sends nothing and writes nothing to the store).
    public func send(_ action: FlowAction) async throws -> NavigationState {
        guard !closed else { throw Unreachable(detail: "the session is closed; the tap was not queued") }
        let key = IdempotencyKey.make()
        let result = try machine.tap(action, key: key, at: Self.timestamp())
        persist()
        publish()
        switch result {
        case .shown(let state):
            drain()
            return state
        case .waiting(let key):
            return try await withCheckedThrowingContinuation { continuation in
                waiters[key] = continuation
                drain()
                resolveWaiters()
            }
        }
    }

    /// Now, as RFC 3339 with milliseconds in UTC (a batch item's `at`).
    static func timestamp() -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date())
    }

    /// Simulates losing the network (true) or getting it back (false): while offline, taps are
    /// applied locally and queued; when back, the queue goes in batches.
    public func setOffline(_ offline: Bool) {
        forcedOffline = offline
        if offline {
            emit(machine.unreachable())
            stopStream()
            probe?.cancel()
            probe = nil
        } else {
            emit(machine.reachable())
            if following { connectEvents() }
            drain()
        }
    }

    /// Returns when nothing is queued or on the wire (after coming back online if need be).
    public func settled() async {
        if isSettled || closed { return }
        await withCheckedContinuation { settleWaiters.append($0) }
    }

    var isSettled: Bool { machine.queue.isEmpty && !draining && machine.gone == nil }

    func notifySettled() {
        guard isSettled else { return }
        let waiting = settleWaiters
        settleWaiters = []
        for waiter in waiting { waiter.resume() }
    }

    /// Stops following events, probing and sending; the session stays on the server (and in the
    /// store, with the taps not yet confirmed: the next `start` sends them). A tap still waiting
    /// for its answer throws ``Unreachable``, ``settled()`` returns, and a later ``send(_:)``
    /// throws ``Unreachable``. Nothing is written to the store after `close` returns: an answer
    /// still on the wire is not kept (the tap stays queued in the store, and the next `start`
    /// sends it again under its key, answered from the server's log), so a new session started on
    /// the same store (the app's view made again) is not written over by this one. The session's
    /// slot of the store is let go: the next session started for the user resumes it.
    public func close() {
        // What changed since the last save (or a save that failed and waits for its retry) is
        // written now: it is the last chance.
        if !closed { persist() }
        closed = true
        // The slot is free for a session started next (the app's view made again) to resume.
        slotClaim?.release()
        saveRetry?.cancel()
        saveRetry = nil
        following = false
        stopStream()
        probe?.cancel()
        probe = nil
        for (key, waiter) in waiters {
            waiters[key] = nil
            waiter.resume(throwing: Unreachable(detail: "the session was closed; the tap stays queued in the store"))
        }
        let settling = settleWaiters
        settleWaiters = []
        for waiter in settling { waiter.resume() }
        for subscriber in subscribers.values { subscriber.finish() }
        subscribers = [:]
        for subscriber in stateSubscribers.values { subscriber.finish() }
        stateSubscribers = [:]
    }

    /// Writes the store when what it keeps changed: the queue (on every tap), the confirmed
    /// state (when its version moves), the bundle (when the engine at the confirmed version
    /// moves: the fetched bundle as it came, or the engine's state written with its definitions).
    /// Nothing once closed.
    func persist() {
        // Once closed, the store is no longer this session's: a new one may have started on it.
        guard !closed else { return }
        var changed = false
        let queue = machine.queue
        // What was kept is the queue's start: only the taps after it are added.
        if StoredSessions.continues(stored.queue, in: queue) {
            if queue.count > stored.queue.count {
                stored.queue.append(contentsOf: queue[stored.queue.count...].map(\.kept))
                changed = true
            }
        } else {
            stored.queue = queue.map(\.kept)
            changed = true
        }
        if persistedConfirmedVersion != machine.confirmed.version {
            persistedConfirmedVersion = machine.confirmed.version
            stored.confirmed = machine.confirmed.document
            changed = true
        }
        if configuration.usesBundle, let engine = machine.confirmedEngine, engine.version == machine.confirmed.version,
           persistedBundleVersion != engine.version, let fetched = fetchedBundle {
            persistedBundleVersion = engine.version
            if fetched.version == engine.version {
                stored.bundle = fetched.bytes
                stored.bundleTag = fetched.tag
            } else {
                var writer = JSONWriter(capacity: fetched.bytes.count + 1024)
                SessionBundle.write(engine, flowVersions: fetched.flowVersions, definitions: fetched.definitions, into: &writer)
                stored.bundle = writer.takeBytes()
                stored.bundleTag = nil
            }
            changed = true
        }
        if changed || saveFailures > 0 { save() }
    }

    /// Writes what the store keeps. A save the store refuses is tried again with the retry
    /// policy's backoff, and by any later change, until one succeeds (``lastStoreError``).
    func save() {
        guard !closed else { return }
        do {
            try configuration.store.save(stored)
            saveFailures = 0
        } catch {
            lastStoreError = error
            saveFailures += 1
            guard saveRetry == nil else { return }
            let delay = configuration.retry.delay(before: saveFailures)
            saveRetry = Task { [weak self] in
                try? await Task.sleep(for: delay)
                await self?.retrySave()
            }
        }
    }

    func retrySave() {
        saveRetry = nil
        if saveFailures > 0 { save() }
    }

    func rememberBundle(_ bundle: SessionBundle, json: JSONValue, bytes: [UInt8], tag: String?) {
        guard let members = json["definitions"]?.objectValue else { return }
        var definitions: [(name: String, json: [UInt8])] = []
        for member in members {
            var writer = JSONWriter(capacity: 1024)
            writer.writeValue(member.value)
            definitions.append((member.key, writer.takeBytes()))
        }
        fetchedBundle = FetchedBundle(version: bundle.state.version, bytes: bytes, tag: tag, flowVersions: bundle.flowVersions,
                                      definitions: definitions)
        bundleTag = tag
        bundleCache = bundle.state
    }
}
