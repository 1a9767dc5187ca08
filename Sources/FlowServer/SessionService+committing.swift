// How a turn's write ends: an action's commit (success, conflict, a missing session, a failed
// database) or a deletion; the answer is given and the session's next request gets its turn.
import JSON
import FlowEngine
import FlowStore
import Foundation

extension SessionService {
    /// Deletes the session in the database (outside the lock, never on the writer thread),
    /// then ends the turn.
    func deleteNow(_ request: TurnRequest, slot: SessionSlot) {
        let answer: TurnAnswer
        let deleted: Bool
        do throws(SessionError) {
            if let leases {
                // Only under this node's lease: one that ran out since the turn judged the
                // delete, or was taken over meanwhile, deletes nothing (503; the client tries
                // again, and is sent to the owner).
                guard let epoch = leases.epoch(request.id),
                      try storage({ try leases.store.deleteLeasedSession(id: request.id, epoch: epoch) }) != nil else {
                    leases.forget(request.id)
                    throw .contention(request.id, reading: false)
                }
            } else {
                _ = try storage { try store.deleteSession(id: request.id) }
            }
            answer = .noContent
            deleted = true
        } catch {
            answer = .failed(error)
            deleted = false
        }
        var afters: [@Sendable () -> Void] = []
        slot.state.withLock { contents in
            let action = contents.turn.committed(deleted ? .deleted : .failed)
            drive(action, slot: slot, context: .writer, &contents, &afters)
        }
        if deleted { events.deleted(sessionId: request.id) }
        request.finish(answer, cache)
        for after in afters { after() }
    }

    /// An action's commit is over (on the writer thread): on success the session moves to its
    /// new version and the client gets its answer; then the session's next work has its turn.
    func committed(_ result: Result<Void, any Error>, _ step: ActionStep, _ request: TurnRequest, slot: SessionSlot) {
        let id = request.id
        let outcome: Turn.CommitOutcome
        // Given once the lock is released; none while the turn retries the request. A value, not
        // a closure: a closure holding the step would copy the whole session into its context.
        var answer: TurnAnswer?
        switch result {
        case .success:
            if !step.userChanges.isEmpty {
                users.apply(step.userChanges, to: step.next.userId)
            }
            answer = .state(version: step.next.version, body: step.answer ?? step.body,
                            form: step.answer == nil ? step.next.documentForm : nil)
            outcome = .success
        case .failure(CommitError.versionConflict):
            // The database moved past the cached state: another node wrote the session (on a
            // shared database), or another process the file. The turn reads it again (off this
            // thread) and applies again, on the newer state, before anything queued.
            if shared {
                users.forget(step.next.userId)  // the user's state may be what moved
            }
            outcome = .conflict
        case .failure(CommitError.sessionNotFound):
            answer = .failed(.notFound(id))
            outcome = .sessionNotFound
        case .failure(let error):
            // The commit may have happened (an answer lost with the connection): the cached
            // state is no longer known to be current, so the next request reads the database.
            answer = .failed(Self.storageError(error, logger: logger))
            outcome = .failed
        }
        var afters: [@Sendable () -> Void] = []
        slot.state.withLock { contents in
            if outcome == .success { contents.session = step.next }
            let action = contents.turn.committed(outcome)
            switch action {
            case .retry:
                counters.conflictsRetried.add(1, ordering: .relaxed)
                if !shared {
                    logger.warning("cached session was behind the database; reloading",
                                   metadata: ["session": "\(id)", "attempt": "\(contents.turn.conflicts)"])
                }
            case .contention:
                answer = .failed(.contention(id, reading: false))
            default:
                break
            }
            drive(action, slot: slot, context: .writer, &contents, &afters)
        }
        if outcome == .success {
            // Before the answer, and before the session's next commit can start: streams get
            // versions in order.
            events.published(sessionId: id, version: step.next.version, document: step.body)
        }
        if let answer { request.finish(answer, cache) }
        if outcome == .success {
            rollouts?.applied(step)
        }
        for after in afters { after() }
    }}
