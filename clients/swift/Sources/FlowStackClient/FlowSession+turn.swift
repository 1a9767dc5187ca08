// FlowSession+turn: the drain that performs what ClientMachine asks, one request at a time, and the restarts, bundles and probes around it.

import FlowEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JSON

extension FlowSession {
    func drain() {
        guard !draining, !closed else { return }
        draining = true
        Task { await self.drainLoop() }
    }

    /// Performs what the machine asks, one request at a time, and hands each reply back to it.
    func drainLoop() async {
        // A closed session sends nothing more (the request on the wire when it closed is read,
        // not kept: `persist` writes nothing once closed).
        while !closed {
            if let command = machine.nextCommand(batches: batchSupported) {
                switch command {
                case .pause(let delay):
                    try? await Task.sleep(for: delay)
                case .post(let item):
                    emit(machine.handle(await perform(requests.post(item, predict: machine.engine == nil && configuration.usesPredictions)), to: command))
                case .batch(let items):
                    let reply = await perform(requests.batch(items))
                    if case .answer(405, _) = reply {
                        // A server without the batch route: the same taps go one by one.
                        batchSupported = false
                        machine.unsent()
                    } else {
                        emit(machine.handle(reply, to: command))
                    }
                case .reload:
                    emit(machine.handle(await perform(requests.reload()), to: command))
                case .create:
                    await recreate()
                }
                honourRetryAfter()
                if machine.offline && !forcedOffline { startProbe() }
                persist()
                publish()
                resolveWaiters()
                continue
            }
            if configuration.usesBundle, !machine.offline,
               revalidateBundle || (machine.needsBundle && machine.queue.allSatisfy({ $0.expected == nil }) && bundleTriedAt != machine.confirmed.version) {
                revalidateBundle = false
                bundleTriedAt = machine.confirmed.version
                await refreshBundle()
                persist()
                publish()
                resolveWaiters()
                continue
            }
            break
        }
        draining = false
        resolveWaiters()
        notifySettled()
    }

    /// Sends one request: the answer as a reply for the machine, or no answer.
    func perform(_ request: FlowRequest) async -> ClientMachine.Reply {
        lastRetryAfter = nil
        do {
            let answer = try await transport.send(request)
            if answer.status == 429 || answer.status == 503 { lastRetryAfter = answer.retryAfter }
            return answer.reply
        } catch {
            return .noAnswer((error as? Unreachable)?.detail ?? "\(error)")
        }
    }

    /// The last answer asked for a wait (`Retry-After` on a 429 or 503): the machine's pause is
    /// at least that long, and so is the probe's first wait when it went offline.
    func honourRetryAfter() {
        guard let wait = lastRetryAfter else { return }
        lastRetryAfter = nil
        machine.retryAfter(wait)
        if machine.offline { probeWait = max(probeWait, wait) }
    }

    /// The requests of the session as it is now (a restart changes its id and token).
    var requests: SessionRequests { SessionRequests(sessionId: stored.sessionId, token: stored.token) }

    /// Resolves the callers of taps that waited: with the state they show once they show one,
    /// with the server's reason when they were not taken, and with ``Unreachable`` while offline
    /// (the tap stays queued).
    func resolveWaiters() {
        for (key, waiter) in waiters {
            if let item = machine.queue.first(where: { $0.key == key }) {
                if let expected = item.expected {
                    waiters[key] = nil
                    waiter.resume(returning: expected)
                } else if machine.offline {
                    waiters[key] = nil
                    waiter.resume(throwing: Unreachable(detail: "offline, and no bundle or prediction to show the tap with; it stays queued"))
                }
                continue
            }
            waiters[key] = nil
            if let refusal = refusals.removeValue(forKey: key) {
                waiter.resume(throwing: refusal)
            } else {
                waiter.resume(returning: machine.shown)
            }
        }
    }

    /// The session is gone (the machine read a 401 or 404 problem for it): a new one is created
    /// for the same user and the machine restarts on it, reporting the taps it drops; a creation
    /// that gets no usable answer is retried like any unknown outcome.
    func recreate() async {
        let old = stored.sessionId
        let request = FlowRequest(method: "POST", path: "/v1/sessions", query: "predict=true",
                                  headers: configuration.clientKey.map { ["X-API-Key": $0] } ?? [:], body: Self.createBody(configuration))
        var answer: FlowAnswer?
        do { answer = try await transport.send(request) } catch { emit(machine.createFailed("no answer: \(error)")); return }
        guard let answer, let (id, token, state, predictions) = Self.created(answer, configuration: configuration) else {
            emit(machine.createFailed("session creation answered \(answer?.status ?? 0)"))
            return
        }
        stopStream()
        stored = StoredSession(server: configuration.key.server, sessionId: id, token: token, userId: configuration.userId,
                               slot: stored.slot)
        currentId.value = id
        fetchedBundle = nil
        bundleTag = nil
        bundleCache = nil
        bundleTriedAt = nil
        persistedConfirmedVersion = nil
        persistedBundleVersion = nil
        lastEventId = nil
        batchSupported = true
        let events = machine.restarted(state, predictions: predictions, oldSession: old)
        save()
        persist()
        emit(events)
        if following { connectEvents() }
    }

    func refreshBundle() async {
        var headers = requests.authorization
        if let bundleTag { headers["If-None-Match"] = bundleTag }
        guard let answer = try? await transport.send(FlowRequest(method: "GET", path: "/v1/sessions/\(stored.sessionId)/bundle", headers: headers))
        else { return }
        if answer.status == 304, let bundleCache {
            machine.loaded(bundleCache)
            return
        }
        guard answer.status == 200, let json = answer.json, let bundle = try? SessionBundle(json: json) else { return }
        rememberBundle(bundle, json: json, bytes: answer.body, tag: answer.etag)
        bundleTag = answer.etag
        bundleCache = bundle.state
        machine.loaded(bundle.state)
    }

    /// Probes `/healthz` with backoff until the server answers, then sends what is queued (after
    /// the pause the machine owes for the unknown outcomes in a row, which do not start again at
    /// the first delay).
    func startProbe() {
        guard probe == nil, !forcedOffline, !closed else { return }
        let policy = configuration.retry
        let transport = transport
        // The backoff goes on from where the unknown outcomes left it (a server that answers
        // `/healthz` and fails every request is not asked at the first delay after each probe),
        // and the first wait is at least what a `Retry-After` asked for.
        let streak = machine.streak
        var firstWait = probeWait
        probeWait = .zero
        probe = Task { [weak self] in
            var attempt = 1
            while !Task.isCancelled {
                try? await Task.sleep(for: max(policy.delay(before: streak + attempt - 1), firstWait))
                firstWait = .zero
                attempt += 1
                if let answer = try? await transport.send(FlowRequest(method: "GET", path: "/healthz")), answer.status == 200 {
                    await self?.backOnline()
                    return
                }
            }
        }
    }

    func backOnline() {
        probe = nil
        guard !forcedOffline else { return }
        emit(machine.reachable())
        bundleTriedAt = nil
        drain()
    }
}
