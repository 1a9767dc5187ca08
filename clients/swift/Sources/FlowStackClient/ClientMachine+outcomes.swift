// ClientMachine+outcomes: what the machine does once an answer says what happened — confirm, roll back, reload, adopt, restart, go offline.

import FlowEngine
import JSON

extension ClientMachine {
    /// The server stored `key` (a post's 200, or its replay) and is at `state`.
    public mutating func answered(key: String, state: NavigationState, predictions: [(action: FlowAction, state: NavigationState)] = []) -> [ClientEvent] {
        inFlight = 0
        failures = 0
        streak = 0
        guard let index = queue.firstIndex(where: { $0.key == key }) else { return [] }
        let item = queue[index]
        for taken in queue[...index] where taken.key != key { enginesAfter[taken.key] = nil }
        queue.removeFirst(index + 1)
        // An answer older than the state confirmed is a replay: a tap kept by a store that missed
        // the saves after it (a full disk), sent again once the server had moved on. The tap is
        // stored; the state it made then is not the session's now, and is not shown again.
        guard state.version >= confirmed.version else {
            enginesAfter[key] = nil
            if queue.isEmpty {
                shown = confirmed
                engine = confirmedEngine
                needsBundle = engine == nil
            }
            return []
        }
        return settle(state, predictions: predictions, after: item)
    }

    /// The server's answer after `last` was stored: confirmed when it is what was shown; a tap
    /// that showed nothing takes the answer as what to show; any other answer is adopted, and the
    /// taps still queued (made on a state the server did not reach) are reported.
    mutating func settle(_ state: NavigationState, predictions: [(action: FlowAction, state: NavigationState)],
                                 after last: QueuedAction, refusal: JSONValue? = nil) -> [ClientEvent] {
        confirmed = state
        // When a batch stopped at a refusal, that is why the rest is dropped.
        let reason: Correction.Reason = refusal == nil ? .differentAnswer : refusal?["status"]?.integerValue == 412 ? .versionMismatch : .refused
        if let expected = last.expected {
            guard expected == state else {
                return adopt(state, predictions: predictions, dropped: queue, problem: refusal, reason: reason)
            }
            confirmedEngine = enginesAfter.removeValue(forKey: last.key)
            self.predictions = predictions
            if queue.isEmpty { shown = state }
            showFirstWaiting()
            return [.confirmed(state)]
        }
        // A tap that showed nothing: the answer is what to show. Later taps that showed nothing
        // either still wait on it.
        confirmedEngine = nil
        engine = nil
        needsBundle = true
        enginesAfter = [:]
        guard queue.allSatisfy({ $0.expected == nil }) else {
            return adopt(state, predictions: predictions, dropped: queue, problem: refusal, reason: reason)
        }
        shown = state
        self.predictions = predictions
        showFirstWaiting()
        return [.confirmed(state)]
    }

    /// The oldest queued tap, when it waits right after the confirmed state, is shown from the
    /// answer's predictions if one is for it (so a tap made while the one before it was on the
    /// wire waits one round trip, not two). Its action takes the prediction's `from` only if it
    /// never went out under its key.
    mutating func showFirstWaiting() {
        guard let first = queue.first, first.expected == nil, !sent.contains(first.key), shown == confirmed,
              let prediction = predicted(first.action, version: first.version) else { return }
        queue[0].action = prediction.action
        queue[0].expected = prediction.state
        shown = prediction.state
    }

    /// The server refused a posted action (or a batch as a whole). A 412 asks for a reload; the
    /// others roll back to the confirmed state, dropping the refused tap and those after it,
    /// which are reported (even when nothing on screen changes: a tap that waited).
    public mutating func refused(key: String, status: Int, problem: JSONValue?) -> [ClientEvent] {
        inFlight = 0
        failures = 0
        streak = 0
        if status == 412 {
            reloadPending = .some(problem)
            return []
        }
        guard let index = queue.firstIndex(where: { $0.key == key }) else { return [] }
        let dropped = Array(queue[index...])
        queue.removeSubrange(index...)
        let from = shown
        for item in dropped { enginesAfter[item.key] = nil }
        if queue.isEmpty {
            engine = confirmedEngine
            shown = confirmed
        } else {
            engine = queue.last.flatMap { enginesAfter[$0.key] }
            shown = queue.last(where: { $0.expected != nil })?.expected ?? confirmed
        }
        needsBundle = engine == nil
        return [.corrected(Correction(from: from, to: shown, taps: dropped, problem: problem, reason: .refused))]
    }

    /// The server's state, read after a 412: adopted, the queue dropped and reported.
    public mutating func reloaded(_ state: NavigationState, predictions: [(action: FlowAction, state: NavigationState)] = []) -> [ClientEvent] {
        inFlight = 0
        failures = 0
        streak = 0
        let problem = reloadPending ?? nil
        reloadPending = nil
        return adopt(state, predictions: predictions, dropped: queue, problem: problem, reason: .versionMismatch)
    }

    /// The answer to a batch of the `sent` oldest queued taps: `done` the keys applied or skipped
    /// (already applied), `refusal` the problem that stopped it, `state` the session after it.
    /// Taps made while it was on the wire stay queued (they follow the last one sent).
    public mutating func batchAnswered(sent: Int, done: Set<String>, refusal: JSONValue?, state: NavigationState) -> [ClientEvent] {
        inFlight = 0
        failures = 0
        streak = 0
        let sentItems = queue.prefix(sent)
        let taken = sentItems.prefix(while: { done.contains($0.key) }).count
        if taken == 0 && refusal == nil {
            // Nothing taken and no reason given: the same batch goes again.
            return unknownOutcome("a batch answered with nothing applied and no refusal")
        }
        var events: [ClientEvent] = []
        if taken > 0 {
            let last = queue[taken - 1]
            for item in queue.prefix(taken - 1) { enginesAfter[item.key] = nil }
            queue.removeFirst(taken)
            events = settle(state, predictions: [], after: last, refusal: refusal)
            if case .corrected = events.first { return events }  // adopted: the queue is already dropped
        }
        guard let refusal else { return events }
        let reason: Correction.Reason = refusal["status"]?.integerValue == 412 ? .versionMismatch : .refused
        guard state == confirmed, confirmedEngine == nil || confirmedEngine?.version == state.version else {
            return events + adopt(state, predictions: [], dropped: queue, problem: refusal, reason: reason)
        }
        // The server is where the client last confirmed: roll back to it, the engine with it.
        let from = shown
        let dropped = queue
        queue = []
        enginesAfter = [:]
        shown = confirmed
        engine = confirmedEngine
        needsBundle = engine == nil
        return events + [.corrected(Correction(from: from, to: shown, taps: dropped, problem: refusal, reason: reason))]
    }

    /// A version from the event stream. Adopted when nothing of this client's is pending and it
    /// is newer than the confirmed one; while taps are pending, their answers settle it.
    public mutating func received(_ state: NavigationState) -> [ClientEvent] {
        guard state.version > confirmed.version, queue.isEmpty, inFlight == 0, gone == nil else { return [] }
        confirmed = state
        let from = shown
        shown = state
        engine = nil
        confirmedEngine = nil
        needsBundle = true
        predictions = []
        return from == state ? [] : [.remote(state)]
    }

    /// The server said the session is gone: the next command creates a new one.
    mutating func sessionGone(status: Int, problem: JSONValue?) -> [ClientEvent] {
        inFlight = 0
        failures = 0
        streak = 0
        gone = (status, problem)
        return []
    }

    /// The session is gone (``gone``, or found gone at start) and `state` is the new one's: it is
    /// shown, and the taps queued on the old one are reported as dropped.
    public mutating func restarted(_ state: NavigationState, predictions: [(action: FlowAction, state: NavigationState)] = [],
                                   oldSession: String, status: Int? = nil, problem: JSONValue? = nil) -> [ClientEvent] {
        let status = status ?? gone?.status ?? 404
        let problem = problem ?? gone?.problem
        let dropped = queue
        self = ClientMachine(confirmed: state, predictions: predictions, retry: retry)
        let reason = "session \(oldSession) is gone (\(status))"
            + (dropped.isEmpty ? "" : "; \(dropped.count) queued tap(s) were dropped") + "; started a new one"
        return [.restarted(Restart(reason: reason, state: state, dropped: dropped, status: status, problem: problem))]
    }

    /// The answer to ``Command/create`` could not be read (no answer, a 5xx): the same goes again.
    public mutating func createFailed(_ detail: String) -> [ClientEvent] {
        unknownOutcome(detail)
    }

    /// A request the driver could not make (a route the server lacks): its taps stay queued.
    public mutating func unsent() { inFlight = 0 }

    /// The server could not be reached (or the app said so): taps run locally and queue.
    public mutating func unreachable() -> [ClientEvent] {
        inFlight = 0
        pauseOwed = nil
        if offline { return [] }
        offline = true
        return [.offline]
    }

    /// The server answers again: what is queued goes next, after the backoff the unknown outcomes
    /// in a row reached (none after an answer that said what happened, or an outage the app made).
    public mutating func reachable() -> [ClientEvent] {
        failures = 0
        guard offline else { return [] }
        if streak > 0 { pauseOwed = retry.delay(before: streak) }
        offline = false
        return [.online]
    }

    /// Adopts the server's state, dropping the queue (reported unless empty); the local engine is
    /// gone until the bundle is fetched again.
    mutating func adopt(_ state: NavigationState, predictions: [(action: FlowAction, state: NavigationState)], dropped: [QueuedAction],
                                problem: JSONValue?, reason: Correction.Reason) -> [ClientEvent] {
        let from = shown
        confirmed = state
        shown = state
        queue = []
        enginesAfter = [:]
        engine = nil
        confirmedEngine = nil
        needsBundle = true
        self.predictions = predictions
        if from == state && dropped.isEmpty { return [.confirmed(state)] }
        return [.corrected(Correction(from: from, to: state, taps: dropped, problem: problem, reason: reason))]
    }
}
