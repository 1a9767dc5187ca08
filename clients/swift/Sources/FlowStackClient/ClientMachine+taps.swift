// ClientMachine+taps: the bundle loaded, taps kept across a restart, a tap shown at once, and what to send next.

import FlowEngine
import JSON

extension ClientMachine {
    /// The session's bundle arrived: its state becomes the local engine if it is at the
    /// confirmed version and nothing shown is queued; taps queued without a state shown (kept
    /// across a restart, or waiting) are replayed on it.
    public mutating func loaded(_ bundle: SessionState) {
        guard bundle.version == confirmed.version else { return }
        guard queue.isEmpty || (inFlight == 0 && queue.allSatisfy({ $0.expected == nil }) && queue.first?.version == bundle.version) else { return }
        confirmedEngine = bundle
        engine = bundle
        needsBundle = false
        if !queue.isEmpty { replayQueue(on: bundle) }
    }

    /// Taps queued before the app restarted, put back in the queue (shown once the bundle loads
    /// and they replay on it).
    public mutating func restore(_ queued: [QueuedAction]) {
        queue = queued.map(\.kept)
        if let engine = confirmedEngine, engine.version == confirmed.version { replayQueue(on: engine) }
    }

    /// A client started again while the server cannot be reached, from what the store kept: the
    /// confirmed state, the bundle at that version (when kept), and the queued taps replayed on it,
    /// so it shows what the user last saw; offline, so taps run locally and queue until the
    /// server answers. Without a bundle nothing can be replayed: it shows `confirmed`, the kept
    /// taps stay queued (sent when back), and a new tap waits for the server.
    public static func restoredOffline(confirmed: NavigationState, bundle: SessionState?, queue: [QueuedAction],
                                       retry: RetryPolicy = RetryPolicy()) -> ClientMachine {
        var machine = ClientMachine(confirmed: confirmed, retry: retry)
        machine.restore(queue)
        if let bundle { machine.loaded(bundle) }
        machine.offline = true
        return machine
    }

    /// Replays the queue on the engine as far as it applies; a tap that no longer applies (or was
    /// made on another version) stays queued unshown, and so do those after it: the server
    /// decides them, and a refusal is reported. Nothing is dropped here.
    mutating func replayQueue(on start: SessionState) {
        var current = start
        for index in queue.indices {
            let item = queue[index]
            guard item.version == current.version, let (next, _) = try? current.applying(item.action),
                  let state = try? NavigationState(next) else { break }
            queue[index].expected = state
            enginesAfter[item.key] = next
            current = next
        }
        engine = queue.allSatisfy({ $0.expected != nil }) ? current : nil
        shown = queue.last(where: { $0.expected != nil })?.expected ?? confirmed
    }

    // MARK: taps

    /// A tap: applied on the local engine (or matched to a prediction) and queued.
    ///
    /// - Throws: the engine's refusal, when the local engine refuses the action (nothing is queued:
    ///   the server would refuse it too).
    public mutating func tap(_ action: FlowAction, key: String, at: String? = nil) throws(FlowError) -> TapResult {
        let version = queue.last.map { $0.version + 1 } ?? confirmed.version
        // The taps shown are the queue's start (a tap after one that waits waits too), so the
        // last one tells whether all are.
        if let engine, engine.version == version, queue.last.map({ $0.expected != nil }) ?? true {
            let (next, _) = try engine.applying(action)
            if let state = try? NavigationState(next) {
                self.engine = next
                enginesAfter[key] = next
                queue.append(QueuedAction(key: key, version: version, action: action, expected: state, at: at))
                shown = state
                return .shown(state)
            }
        }
        if queue.isEmpty, let prediction = predicted(action, version: version) {
            queue.append(QueuedAction(key: key, version: version, action: prediction.action, expected: prediction.state, at: at))
            shown = prediction.state
            return .shown(prediction.state)
        }
        queue.append(QueuedAction(key: key, version: version, action: action, expected: nil, at: at))
        return .waiting(key: key)
    }

    /// The prediction of the last answer for `action`, when it is for the version confirmed: the
    /// action to post (the tap, with `from` the screen the prediction was made from when the tap
    /// named none, since the server keeps the action as posted, in a guard's pending actions for
    /// one) and the state it shows.
    func predicted(_ action: FlowAction, version: Int) -> (action: FlowAction, state: NavigationState)? {
        guard version == confirmed.version, shown == confirmed,
              let prediction = predictions.first(where: { Self.matches($0.action, action, top: confirmed.top?.id) }) else { return nil }
        var posted = action
        if posted.from == nil { posted.from = prediction.action.from }
        return (posted, prediction.state)
    }

    /// A prediction is for a tap when the type, tapped row, params and interactivity agree and
    /// `from` is the same screen (a tap without `from` acts on the screen on top). A row tap
    /// reaches its rule with the row's id and values, so a prediction of the plain action is not
    /// one of it.
    static func matches(_ predicted: FlowAction, _ action: FlowAction, top: String?) -> Bool {
        predicted.type == action.type && predicted.row == action.row && predicted.params == action.params
            && predicted.interactive == action.interactive
            && (predicted.from ?? top) == (action.from ?? top)
    }

    /// The state a queued tap shows, when it shows one (nil while it waits).
    public func expected(forKey key: String) -> NavigationState? {
        queue.first(where: { $0.key == key })?.expected
    }

    // MARK: what to send

    /// The next thing to do, if any: a pause owed after an unknown outcome, a new session for one
    /// that is gone, a reload after a 412, then one action, or the oldest queued ones as a batch
    /// (after being offline, or when taps came faster than answers). Nothing while offline or
    /// while a request is on the wire.
    public mutating func nextCommand(batches: Bool = true) -> Command? {
        guard !offline, inFlight == 0 else { return nil }
        if let pause = pauseOwed {
            pauseOwed = nil
            return .pause(pause)
        }
        if gone != nil {
            inFlight = -1
            return .create
        }
        if reloadPending != nil {
            inFlight = -1
            return .reload
        }
        guard let first = queue.first else { return nil }
        if sent.count > 2 * queue.count + 16 { sent.formIntersection(queue.map(\.key)) }  // keys answered since
        if queue.count > 1 && batches {
            let items = Array(queue.prefix(Self.batchLimit))
            inFlight = items.count
            for item in items { sent.insert(item.key) }
            return .batch(items)
        }
        inFlight = 1
        sent.insert(first.key)
        return .post(first)
    }

    /// True while a request is on the wire.
    public var busy: Bool { inFlight != 0 }
}
