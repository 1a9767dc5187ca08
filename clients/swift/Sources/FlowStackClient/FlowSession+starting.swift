// FlowSession+starting: resuming the kept session or creating one, online or from the store alone when offline.

import FlowEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JSON

extension FlowSession {
    /// Resumes the session kept in `configuration.store` for this server and user, or starts a
    /// new one. A kept session the server no longer knows (a 401 or 404 problem) is replaced by a
    /// new one, and ``lastRestart`` (and a `.restarted` event) says so, with the taps it dropped.
    /// Taps kept in the store are sent, under the keys they were made with.
    ///
    /// When no working server answers (no answer, a 5xx, a body that is not FlowStack's, after
    /// the retries) and the store kept the session's confirmed state, the session starts from the
    /// store alone, offline: the local engine from the kept bundle, the kept taps replayed on it
    /// so the app shows what the user last saw, new taps shown at once and queued, a probe of
    /// `/healthz` with backoff, and the queue sent as batches when the server is back. A
    /// predictions-only client (`usesBundle: false`, or no bundle kept) shows the confirmed
    /// state; its kept taps stay queued (not shown) and are sent when back, and a new tap cannot
    /// be shown until then (`send` throws ``Unreachable``; the tap stays queued).
    ///
    /// - Throws: ``Failure`` when the server refuses to create the session (a 422
    ///   `unsupported-client`: show "update the app"), or ``Unreachable`` when no working server
    ///   answers and there is no kept session to start from ("offline at first launch").
    public static func start(_ configuration: Configuration) async throws -> FlowSession {
        let transport = configuration.transport
            ?? URLSessionTransport(server: configuration.server, timeout: configuration.timeout, latency: configuration.simulatedLatency)
        // The slot of this server and user no other running session of the store holds (see
        // `SessionSlots`); let go when the session closes, or here when it does not start.
        let (key, keptInSlot, claim) = try SessionSlots.claim(configuration.key, in: configuration.store)
        var gone: (kept: StoredSession, status: Int, problem: JSONValue)?
        if let kept = keptInSlot {
            let (reply, answer) = await attempt(configuration.retry, transport, FlowRequest(
                method: "GET", path: "/v1/sessions/\(kept.sessionId)", query: "predict=true",
                headers: ["Authorization": "Bearer \(kept.token)"]))
            switch ClientMachine.classify(reply) {
            case .success(let json):
                if let (state, predictions) = try? ClientMachine.read(json), state.sessionId == kept.sessionId {
                    var machine = ClientMachine(confirmed: state, predictions: configuration.usesPredictions ? predictions : [],
                                                retry: configuration.retry)
                    machine.restore(kept.queue)
                    // The kept bundle, when it is at the version the server is at: the engine is
                    // there from the first tap, and revalidated (If-None-Match) in the background.
                    let bundle = configuration.usesBundle ? keptBundle(kept, at: state.version) : nil
                    if let bundle { machine.loaded(bundle.read.state) }
                    let session = FlowSession(configuration: configuration, transport: transport, stored: kept, machine: machine,
                                              claim: claim)
                    if let bundle {
                        await session.resumedOnline(bundle, tag: kept.bundleTag)
                    } else if !kept.queue.isEmpty && configuration.usesBundle {
                        // Taps kept from before the kill are replayed on the bundle, so they show again at once.
                        await session.loadBundleBeforeSending()
                    }
                    await session.afterStart()
                    return session
                }
                fallthrough
            case .unknown:
                // No working server: start from what the store kept, offline.
                if let session = await restoredOffline(kept, configuration: configuration, transport: transport, claim: claim) {
                    return session
                }
                if let answer { throw Failure(answer) }
                if case .noAnswer(let detail) = reply { throw Unreachable(detail: detail) }
                throw Unreachable(detail: "no answer")
            case .gone(let status, let problem):
                gone = (kept, status, problem)
            case .refusal, .versionMismatch:
                throw answer.map(Failure.init) ?? Unreachable(detail: "no answer")
            }
        }
        let (reply, answer) = await attempt(configuration.retry, transport, FlowRequest(
            method: "POST", path: "/v1/sessions", query: "predict=true",
            headers: configuration.clientKey.map { ["X-API-Key": $0] } ?? [:], body: createBody(configuration)), success: 201)
        guard let answer else {
            if case .noAnswer(let detail) = reply { throw Unreachable(detail: detail) }
            throw Unreachable(detail: "no answer")
        }
        guard let (id, token, state, predictions) = created(answer, configuration: configuration) else {
            if case .unknown(let detail) = ClientMachine.classify(reply, success: 201) { throw Unreachable(detail: detail) }
            throw Failure(answer)
        }
        let stored = StoredSession(server: key.server, sessionId: id, token: token, userId: configuration.userId, slot: key.slot)
        // A store that fails now (a full disk, a keychain error) does not keep the app from its
        // first screen, nor leave the server a session nobody uses: like every save the session
        // makes (`save()`), a failed one is tried again with backoff until one keeps the session.
        var unsaved: (any Error)?
        do { try configuration.store.save(stored) } catch { unsaved = error }
        var machine = ClientMachine(confirmed: state, predictions: predictions, retry: configuration.retry)
        var events: [ClientEvent] = []
        if let gone {
            machine.restore(gone.kept.queue)
            events = machine.restarted(state, predictions: predictions, oldSession: gone.kept.sessionId, status: gone.status, problem: gone.problem)
        }
        let session = FlowSession(configuration: configuration, transport: transport, stored: stored, machine: machine, claim: claim)
        if let unsaved { await session.failedFirstSave(unsaved) }
        await session.emit(events)
        await session.afterStart()
        return session
    }

    /// The store refused the new session's first save: recorded, and tried again by `afterStart`'s
    /// `persist()` (then with backoff, `save()`).
    func failedFirstSave(_ error: any Error) {
        lastStoreError = error
        saveFailures = 1
    }

    /// Sends `request` until it has an answer that says something (a success or a problem
    /// document), or the retry policy's tries are spent: the last reply, and its answer if any.
    static func attempt(_ policy: RetryPolicy, _ transport: any FlowTransport, _ request: FlowRequest,
                                success: Int = 200) async -> (ClientMachine.Reply, FlowAnswer?) {
        var attempt = 1
        while true {
            var answer: FlowAnswer?
            let reply: ClientMachine.Reply
            do {
                answer = try await transport.send(request)
                reply = answer!.reply
            } catch {
                reply = .noAnswer((error as? Unreachable)?.detail ?? "\(error)")
            }
            if case .unknown = ClientMachine.classify(reply, success: success), attempt < policy.attempts {
                try? await Task.sleep(for: policy.delay(before: attempt))
                attempt += 1
                continue
            }
            return (reply, answer)
        }
    }

    /// A session-creation answer: the new id and token, its state and predictions; nil when it is
    /// not a 201 with all of them.
    static func created(_ answer: FlowAnswer, configuration: Configuration)
        -> (String, String, NavigationState, [(action: FlowAction, state: NavigationState)])? {
        guard answer.status == 201, let json = answer.json, let id = json["session"]?["id"]?.stringValue,
              let token = json["session"]?["token"]?.stringValue, let stateJSON = json["state"],
              let (state, predictions) = try? ClientMachine.read(stateJSON) else { return nil }
        return (id, token, state, configuration.usesPredictions ? predictions : [])
    }

    /// The bundle the store kept for `kept`, when it reads and is at `version`.
    static func keptBundle(_ kept: StoredSession, at version: Int? = nil) -> (read: SessionBundle, json: JSONValue, bytes: [UInt8])? {
        guard let bytes = kept.bundle, let json = try? JSONParser.parse(bytes), let read = try? SessionBundle(json: json),
              read.state.sessionId == kept.sessionId, version == nil || read.state.version == version else { return nil }
        return (read, json, bytes)
    }

    /// Resumed online on the kept bundle: it is what the store has, and the first request the
    /// drain makes when idle is its revalidation.
    func resumedOnline(_ bundle: (read: SessionBundle, json: JSONValue, bytes: [UInt8]), tag: String?) {
        rememberBundle(bundle.read, json: bundle.json, bytes: bundle.bytes, tag: tag)
        persistedBundleVersion = bundle.read.state.version
        revalidateBundle = true
    }

    /// A session made from the store alone: the confirmed state, the bundle (its engine), the
    /// queued taps replayed on it; offline, probing `/healthz`. Nil when the store kept no state
    /// (written by an older version) or what it kept does not read.
    static func restoredOffline(_ kept: StoredSession, configuration: Configuration, transport: any FlowTransport,
                                claim: SlotClaim?) async -> FlowSession? {
        guard let document = kept.confirmed, let confirmed = try? NavigationState(json: document),
              confirmed.sessionId == kept.sessionId else { return nil }
        let bundle = configuration.usesBundle ? keptBundle(kept) : nil
        let machine = ClientMachine.restoredOffline(confirmed: confirmed, bundle: bundle?.read.state, queue: kept.queue,
                                                    retry: configuration.retry)
        let session = FlowSession(configuration: configuration, transport: transport, stored: kept, machine: machine, claim: claim)
        await session.resumedOffline(bundle, tag: kept.bundleTag)
        return session
    }

    func resumedOffline(_ bundle: (read: SessionBundle, json: JSONValue, bytes: [UInt8])?, tag: String?) {
        persistedConfirmedVersion = machine.confirmed.version
        if let bundle {
            rememberBundle(bundle.read, json: bundle.json, bytes: bundle.bytes, tag: tag)
            persistedBundleVersion = bundle.read.state.version
        }
        emit([.offline])
        persist()
        startProbe()
    }

    func loadBundleBeforeSending() async {
        bundleTriedAt = machine.confirmed.version
        await refreshBundle()
        // Not loaded: the kept taps were made on an earlier version (the server applied them and
        // the answer was lost when the app was killed). Once they are answered the bundle is
        // asked for again (a 304), or the session would go on without an engine and every later
        // tap would wait for the network.
        if machine.needsBundle { bundleTriedAt = nil }
    }

    func afterStart() {
        persist()
        publish()
        drain()
    }

    static func createBody(_ configuration: Configuration) -> [UInt8] {
        var members: [JSONObject.Member] = [JSONObject.Member(key: "userId", value: .string(configuration.userId))]
        if let hash = configuration.userHash { members.append(JSONObject.Member(key: "userHash", value: .string(hash))) }
        if !configuration.attributes.isEmpty { members.append(JSONObject.Member(key: "attributes", value: .object(configuration.attributes))) }
        if !configuration.traits.isEmpty {
            members.append(JSONObject.Member(key: "traits", value: .object(JSONObject(configuration.traits.sorted { $0.key < $1.key }
                .map { JSONObject.Member(key: $0.key, value: .string($0.value)) }))))
        }
        if let client = configuration.client {
            members.append(JSONObject.Member(key: "client", value: [
                "platform": .string(client.platform), "appVersion": .string(client.appVersion),
                "features": .array(client.features.map(JSONValue.string)),
            ]))
        }
        var writer = JSONWriter()
        writer.writeValue(.object(JSONObject(uniqueMembers: members)))
        return writer.takeBytes()
    }
}
