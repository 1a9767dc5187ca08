// FlowSession+reading: what the app reads — the state shown and confirmed, the actions it can post, and the event and state streams.

import FlowEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JSON

extension FlowSession {
    /// What to show now: the confirmed state with the taps not yet confirmed applied.
    public var state: NavigationState { machine.shown }
    /// The last state the server answered.
    public var confirmedState: NavigationState { machine.confirmed }
    /// The session's id (`s_…`); a new one after the session was deleted or expired in use (see
    /// ``lastRestart``).
    public nonisolated var sessionId: String { currentId.value }
    /// The session's token, as kept in the store (support asks for it to look a session up).
    public var token: String { stored.token }
    /// Taps shown and not yet confirmed.
    public var pendingCount: Int { machine.queue.count }
    /// The taps not yet confirmed, oldest first, with their keys.
    public var pending: [QueuedAction] { machine.queue }
    /// True while the server cannot be reached (or ``setOffline(_:)`` said so).
    public var isOffline: Bool { machine.offline }
    /// True when taps run on the local engine (the session's bundle is loaded).
    public var hasLocalEngine: Bool { machine.engine != nil }
    /// The session's flag values and experiment variants.
    public var flags: SessionFlags { SessionFlags(machine.shown) }

    /// The actions the screen on top can post now, from the local engine (with their params), or
    /// else from the last answer's predictions (those that need no params), which are for the
    /// confirmed state only: none while a tap shown ahead of them waits for its answer.
    public var availableActions: [AvailableAction] {
        if let engine = machine.engine {
            return FlowEngine.availableActions(in: engine.tree, catalog: engine.catalog, context: engine.context)
        }
        guard machine.shown == machine.confirmed else { return [] }
        var seen = Set<String>()
        return machine.predictions.compactMap { prediction in
            guard seen.insert(prediction.action.type).inserted else { return nil }
            return AvailableAction(type: prediction.action.type, handledBy: prediction.state.handledBy ?? "", interactive: prediction.action.interactive)
        }
    }

    /// A stream of what happens: confirmations, corrections, other devices' versions, offline and
    /// back online, restarts. Each call makes a new stream; it ends when the session is closed.
    /// Nothing is dropped: a subscriber that falls behind (a long offline queue confirmed while
    /// its loop waits) still reads every correction, so the events wait for it in memory. A
    /// subscriber that stops reading should end its loop, which ends its stream.
    public func events() -> AsyncStream<ClientEvent> {
        let (stream, continuation) = AsyncStream<ClientEvent>.makeStream(bufferingPolicy: .unbounded)
        let id = UUID()
        subscribers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(id) }
        }
        return stream
    }

    /// Every state the app should show, in order: the one shown now first, then each change (a
    /// tap shown at once, a correction, another device's version, a new session after a
    /// restart). A renderer follows it and draws `NavigationPlan(from: previous, to: next)`.
    /// Each call makes a new stream; it ends when the session is closed.
    ///
    /// ```swift
    /// var shown: NavigationState?
    /// for await state in await session.states() {
    ///     if let shown { renderer.apply(NavigationPlan(from: shown, to: state)) }
    ///     shown = state
    /// }
    /// ```
    public func states() -> AsyncStream<NavigationState> {
        let (stream, continuation) = AsyncStream<NavigationState>.makeStream(bufferingPolicy: .unbounded)
        let id = UUID()
        continuation.yield(published)
        stateSubscribers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribeStates(id) }
        }
        return stream
    }

    func unsubscribe(_ id: UUID) { subscribers[id] = nil }
    func unsubscribeStates(_ id: UUID) { stateSubscribers[id] = nil }

    func emit(_ events: [ClientEvent]) {
        for event in events {
            switch event {
            case .corrected(let correction):
                // A tap that waited and was not taken: its caller is told why.
                let status = correction.problem?["status"]?.integerValue ?? 409
                for tap in correction.taps where waiters[tap.key] != nil {
                    refusals[tap.key] = ActionRefused(action: tap.action, status: status, problem: correction.problem)
                }
            case .restarted(let restart):
                lastRestart = restart
                for tap in restart.dropped where waiters[tap.key] != nil {
                    refusals[tap.key] = ActionRefused(action: tap.action, status: restart.status, problem: restart.problem)
                }
            default:
                break
            }
            history.append(event)
            for subscriber in subscribers.values { subscriber.yield(event) }
        }
        if history.count > 1000 { history.removeFirst(history.count - 1000) }
        publish()
    }

    /// Sends the state shown to the ``states()`` streams when it changed.
    func publish() {
        let shown = machine.shown
        guard shown != published else { return }
        published = shown
        for subscriber in stateSubscribers.values { subscriber.yield(shown) }
    }
}
