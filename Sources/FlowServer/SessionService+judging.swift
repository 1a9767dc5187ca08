// Judging a request in its turn, under the slot's lock: install what was read, check the token
// and expiry, and decide: answer now, read first, commit, or delete. Never reads the database.
import JSON
import FlowEngine
import FlowStore
import Foundation

extension SessionService {
    /// Judges `request` on the cached session, after installing what was read for it (taken
    /// out of `progress`); what it decides to read next, or to remember, goes into `progress`.
    func judge(_ request: TurnRequest, _ progress: inout RequestProgress, slot: SessionSlot,
               _ contents: inout SlotContents) -> Run {
        let id = request.id
        if case .evict = request.job {
            contents.session = nil
            return .answer(.noContent, dropState: true)
        }
        if progress.reads.missing {
            contents.session = nil
            return .answer(.failed(.notFound(id)), dropState: true)
        }
        if let leases, request.job.writes {
            if let floor = leases.owned(id) {
                if progress.reads.session == nil, let cached = contents.session?.version, cached < floor {
                    // Cached before this node took the lease: another node committed meanwhile.
                    progress.reads.reload = true
                    return .needsRead
                }
            } else if progress.leaseAsks == 0 || leases.epoch(id) == nil {
                // Only the lease's owner commits: take or renew it first (the read also says
                // whether the cached state is current).
                guard progress.leaseAsks < 3 else { return .answer(.failed(.contention(id, reading: false)), dropState: false) }
                progress.leaseAsks += 1
                progress.reads.lease = true
                return .needsRead
            }
            // Else this turn took the lease and read the head with it just now, while the node
            // does not trust its memory (a node without leases serves beside it, see
            // `ClusterMembership`): the cache was read again if it was behind, and a commit that
            // lands meanwhile makes this one's version check fail, and the action is judged again.
        }
        let justRead = progress.reads.session != nil
        if let loaded = progress.reads.session.take() {
            // Read while the turn waited for it: no commit of this node can have raced the read.
            contents.session = loaded
        }
        guard var session = contents.session.take() else {
            return .needsRead
        }
        let run = judge(request, &progress, on: &session, justRead: justRead, generation: contents.turn.generation)
        contents.session = consume session
        return run
    }

    /// Judges `request` on `session`, moved out of the slot meanwhile.
    /// `generation`: the turn's, to tell reads made before a commit of this session from fresh ones.
    private func judge(_ request: TurnRequest, _ progress: inout RequestProgress, on session: inout LiveSession,
                       justRead: Bool, generation: UInt64) -> Run {
        let id = request.id
        let access = SessionAccess.bearer(request.token)
        guard access.opens(&session) else {
            return .answer(.failed(access.refusal(id)), dropState: false)
        }
        if let expired = expiry.refusal(id, lastActiveAt: session.lastActiveAt) {  // expiry: the state leaves the slot
            if shared, !justRead {
                // Another node may have kept the session going meanwhile: judged again on the
                // stored state, as a refusal on a cached state is.
                progress.reads = TurnReads(reload: true)
                return .needsRead
            }
            return .answer(.failed(expired), dropState: true)
        }
        let fresh = progress.reads.generation == generation
        let answers = fresh ? progress.reads.answers : nil
        guard let user = (fresh ? progress.reads.user : nil) ?? users.cached(session.userId) else {
            return .needsRead
        }
        switch request.job {
        case .delete:
            return .delete
        case .evict:
            return .answer(.noContent, dropState: true)
        case .action(let action):
            var known: IdempotentAnswer?? = .none
            if let key = action.idempotency?.key {
                // Answers read in this turn come first: the filter is built from the keys the
                // store could list, and a key it missed (one written without its link, on
                // SQLite) must still be replayed, not refused by the unique index at each retry.
                if let answers {
                    known = .some(answers[key])
                } else if session.neverCommitted(CollectionOfOne(key)) {
                    counters.keyLookupsSpared.add(1, ordering: .relaxed)
                    known = .some(nil)
                } else {
                    return .needsRead
                }
            }
            let attempt: Attempt
            do throws(SessionError) {
                attempt = try applyLocked(action.action, to: &session, ifMatch: action.ifMatch, idempotency: action.idempotency,
                                          predict: action.predict, user: user, known: known)
            } catch {
                if shared, !progress.rechecked, error.dependsOnState {
                    // Refused on a cached state that another node may have moved on from: judge
                    // it again after checking the stored head.
                    progress.rechecked = true
                    progress.reads = TurnReads(recheck: true)
                    return .needsRead
                }
                if let refusal = error.refusal { rollouts?.refused(id, refusal) }
                return .answer(.failed(error), dropState: false)
            }
            switch attempt {
            case .replayed(let stored):
                if let body = stored.body {  // stored with its body (before migration 19 on SQLite, 16 on PostgreSQL)
                    return .answer(.replay(status: stored.status, version: stored.version, body: body), dropState: false)
                }
                if stored.version == session.version {
                    // The usual retry (the answer was lost on its way): this version's document.
                    return .answer(.replay(status: stored.status, version: stored.version, body: session.cachedStateDocument()),
                                   dropState: false)
                }
                return .replayOlder(stored, session)
            case .commit(let step): return .commit(step)
            case .reload:
                // The stored answer is newer than the session as read: read both again, a
                // bounded number of times, as a batch does (an answer whose version no stored
                // state reaches, a damaged row, would otherwise be read for ever).
                guard progress.staleReads < Self.sharedConflictRetries else {
                    return .answer(.failed(.contention(id, reading: false)), dropState: true)
                }
                counters.staleReloads.add(1, ordering: .relaxed)
                progress.staleReads += 1
                progress.reads = TurnReads(reload: true)
                return .needsRead
            }
        case .batch(let batch):
            let stored: [String: IdempotentAnswer]
            if let answers {  // read in this turn: first, as for one action
                stored = answers
            } else if session.neverCommitted(batch.items.lazy.map(\.key)) {
                counters.keyLookupsSpared.add(batch.items.count, ordering: .relaxed)
                stored = [:]
            } else {
                return .needsRead
            }
            let plan: BatchPlan
            do throws(SessionError) {
                plan = try judgeBatch(batch, &session, answers: stored, committed: progress.committed, user: user)
            } catch {
                return .answer(.failed(error), dropState: false)
            }
            if plan.stale {
                guard progress.staleReads < Self.sharedConflictRetries else {
                    return .answer(.failed(.batchIncomplete(.contention(session: id), applied: progress.committed.count)),
                                   dropState: false)
                }
                counters.staleReloads.add(1, ordering: .relaxed)
                progress.staleReads += 1
                progress.reads = TurnReads(reload: true)
                return .needsRead
            }
            if plan.refusal != nil, shared, !progress.rechecked {
                // Refused on a cached state that another node may have moved on from: judge the
                // whole batch again on the stored state before answering (nothing is committed yet).
                progress.rechecked = true
                progress.reads = TurnReads(recheck: true)
                return .needsRead
            }
            guard let last = plan.steps.last else {
                // Nothing to commit: every item skipped, or the first one not skipped refused.
                return .answer(.batch(batch, plan, version: session.version, state: session.cachedStateDocument()),
                               dropState: false)
            }
            return .commitBatch(plan, last: last, batch)
        }
    }
}
