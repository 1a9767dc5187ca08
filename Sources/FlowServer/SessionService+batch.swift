// Batches of taps made offline: applied in the session's turn, in order, each as its own version.
import JSON
import FlowEngine
import FlowStore

extension SessionService {
    /// What became of one item of a batch.
    enum BatchItemStatus: String, Sendable {
        /// Applied now, as its own version.
        case applied
        /// Its key was applied before (by a single POST or an earlier batch): not applied again.
        case skipped
        /// The first item the server refused; the answer's `refused` says why.
        case refused
        /// After the refused item: not tried.
        case notApplied
    }

    struct BatchItemResult: Sendable {
        let key: String
        let status: BatchItemStatus
        /// The version the item produced (applied), or produced when its key was first applied (skipped).
        let version: Int?
    }

    /// A batch as it waits for its session's turn (what its tries learn is its turn's
    /// `RequestProgress`: the keys an earlier try committed, the stale reads, a recheck).
    struct BatchRequest: Sendable {
        let items: [BatchItem]
        let id: String
        let token: String?
    }

    /// A batch judged on the session in memory: the steps to commit, in order, and what became
    /// of each item judged.
    struct BatchPlan: Sendable {
        var steps: [ActionStep] = []
        /// The item of each step.
        var stepItems: [Int] = []
        var results: [BatchItemResult] = []
        /// Why the refused item was refused, as a single POST would have been (but a version
        /// mismatch, which names the item).
        var refusal: SessionError?
        /// The stored state was newer than the cache under items already judged: judge again.
        var stale = false
    }

    /// Applies a batch of offline taps to session `id`: in its turn (after the actions already
    /// queued for it), in order, each item as if posted alone with `If-Match` on its `version`
    /// and `Idempotency-Key` its `key`, stopping at the first refusal. The steps are committed
    /// back to back into the store's group commit (one transaction where they fit) and the
    /// turn is held until the last is over; the answer comes then (the route returns `Response.later`).
    func applyBatch(_ items: [BatchItem], to id: String, token: String?, reply: any SessionReply) throws(SessionError) {
        try enqueue(.batch(BatchRequest(items: items, id: id, token: token)), id: id, token: token, reply: reply)
    }

    /// Judges the items in order on a copy of the committed session, each on the state the
    /// previous one left; `session` itself changes only by a reload (a key stored by a commit
    /// the cache missed). `committed`: the keys an earlier try of this batch committed.
    func judgeBatch(_ request: BatchRequest, _ session: inout LiveSession, answers stored: [String: IdempotentAnswer],
                    committed: [String: Int], user held: UserStates.Held) throws(SessionError) -> BatchPlan {
        var plan = BatchPlan()
        var working = session
        // The user's state as the steps judged so far leave it.
        var user = held
        // `stored`: every key at once, read before the turn (one round trip to PostgreSQL, not
        // one per tap). A key not found stays unused while the session's turn lasts, but for
        // another node, whose commit of it makes this batch's commit a conflict (the database
        // checks keys): the batch then runs again. The keys of the items judged here join them,
        // so an item repeating an earlier item's key is judged as a POST repeating that key
        // after it: the same action is skipped, another is refused (`idempotency-key-reused`).
        var answers = stored
        for (index, item) in request.items.enumerated() {
            let attempt: Attempt
            do throws(SessionError) {
                attempt = try applyLocked(item.action, to: &working, ifMatch: IfMatch(version: item.version),
                                          idempotency: (item.key, item.requestHash), clientAt: item.clientAt, user: user,
                                          known: .some(answers[item.key]))
            } catch {
                // The database not answering is no refusal of the item: the whole request fails.
                guard !error.isServerFailure else { throw error }
                if let refusal = error.refusal { rollouts?.refused(session.id, refusal) }
                plan.results.append(BatchItemResult(key: item.key, status: .refused, version: nil))
                if case .versionMismatch = error {
                    plan.refusal = .batchVersionMismatch(index: index, key: item.key, itemVersion: item.version,
                                                         session: working.id, version: working.version)
                } else {
                    plan.refusal = error
                }
                break
            }
            switch attempt {
            case .reload:
                // The key was stored by a commit this cache never saw: the state is read again
                // and the batch judged from the start.
                return BatchPlan(stale: true)
            case .replayed(let stored):
                let version: Int? = stored.version
                let status: BatchItemStatus = committed[item.key] != nil ? .applied : .skipped
                plan.results.append(BatchItemResult(key: item.key, status: status, version: committed[item.key] ?? version))
            case .commit(var step):
                if let previous = plan.stepItems.last {
                    // Written only on top of the previous tap: if another writer takes that one's
                    // version, this one must not land on it (the database checks the key).
                    var commit = step.commit
                    commit.follows = request.items[previous].key
                    step = ActionStep(commit: commit, next: step.next, body: step.body, userChanges: step.userChanges)
                }
                if !step.userChanges.isEmpty {
                    // The next items see what this one changed, as they would after its commit;
                    // on a shared database its commit raises the revision the next one requires.
                    for change in step.userChanges { UserChange.apply(key: change.key, value: change.value, to: &user.state) }
                    user.revision += 1
                }
                if let idempotency = step.commit.idempotency { answers[idempotency.key] = idempotency.answer }
                plan.steps.append(step)
                plan.stepItems.append(index)
                plan.results.append(BatchItemResult(key: item.key, status: .applied, version: step.next.version))
                working = step.next
            }
        }
        for item in request.items.dropFirst(plan.results.count) {
            plan.results.append(BatchItemResult(key: item.key, status: .notApplied, version: nil))
        }
        return plan
    }

    /// The batch's commits are over: the session moves to the last version committed, streams
    /// get each committed version in order, and the client gets its answer (or the batch runs
    /// again after a conflict, where what was committed is found stored); then the session's
    /// next work has its turn. `earlier`: the keys earlier tries of this batch committed.
    func batchCommitted(_ results: [Result<Void, any Error>], _ plan: BatchPlan, last: ActionStep,
                        _ request: BatchRequest, earlier: [String: Int], _ turn: TurnRequest, slot: SessionSlot) {
        let id = request.id
        let failure = results.firstIndex { if case .failure = $0 { true } else { false } }
        let committed = Array(plan.steps.prefix(failure ?? plan.steps.count))
        for step in committed where !step.userChanges.isEmpty {
            users.apply(step.userChanges, to: step.next.userId)
        }
        for step in committed {
            rollouts?.applied(step)
        }
        let publish: @Sendable () -> Void = { [events] in
            // Before the answer, and before the session's next commit can start: streams get
            // versions in order.
            for step in committed {
                events.published(sessionId: id, version: step.next.version, document: step.body)
            }
        }
        var first: @Sendable () -> Void = publish
        let outcome: Turn.CommitOutcome
        // The keys committed so far, when the batch runs again after a conflict: given to the
        // turn's progress under the lock.
        var again: [String: Int]?
        if let failure, case .failure(let error) = results[failure] {
            switch error {
            case CommitError.versionConflict:
                // The database moved past the cached state (another node, or another process on
                // the file). The turn reads it again (off this thread) and runs the batch again
                // before anything queued: the items committed now are found stored and reported
                // as applied.
                if shared { users.forget(last.next.userId) }
                var keys = earlier
                for (step, item) in zip(committed, plan.stepItems) { keys[request.items[item].key] = step.next.version }
                again = keys
                let applied = committed.count + earlier.count
                let failed = TurnAnswer.failed(.batchIncomplete(.contention(session: id), applied: applied))
                first = { [cache] in publish(); turn.finish(failed, cache) }  // used only when the turn gives up
                outcome = .conflict
            case CommitError.sessionNotFound:
                first = { [cache] in publish(); turn.finish(.failed(.notFound(id)), cache) }
                outcome = .sessionNotFound
            default:
                // The commit may have happened (an answer lost with the connection): the cached
                // state is no longer known to be current, so the next request reads the database.
                _ = Self.storageError(error, logger: logger)
                let unknown: Bool
                if case StoreError.outcomeUnknown = error { unknown = true } else { unknown = false }
                let failed = TurnAnswer.failed(.batchIncomplete(unknown ? .outcomeUnknown : .failed,
                                                                applied: committed.count + earlier.count))
                first = { [cache] in publish(); turn.finish(failed, cache) }
                outcome = .failed
            }
        } else {
            let answer = TurnAnswer.batch(request, plan, version: last.next.version, state: last.body)
            first = { [cache] in publish(); turn.finish(answer, cache) }
            outcome = .success
        }
        var afters: [@Sendable () -> Void] = []
        slot.state.withLock { contents in
            if outcome == .success { contents.session = last.next }
            var progress: RequestProgress?
            if let again {
                progress = contents.turn.progress
                progress?.committed = again
            }
            let action = contents.turn.committed(outcome, progress: progress)
            if case .retry = action {
                counters.conflictsRetried.add(1, ordering: .relaxed)
                if !shared {
                    logger.warning("cached session was behind the database; reloading",
                                   metadata: ["session": "\(id)", "attempt": "\(contents.turn.conflicts)"])
                }
                first = publish
            }
            drive(action, slot: slot, context: .writer, &contents, &afters)
        }
        first()
        for after in afters { after() }
    }
}

extension IfMatch {
    /// `If-Match: "version"`, as a batch item's `version` says.
    init(version: Int) {
        self.any = false
        self.versions = [version]
        self.weakVersions = []
        self.tags = ["\"\(version)\""]
    }
}
