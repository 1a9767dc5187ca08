// The session's turn, driven: requests arrive, run under the slot's lock, read outside it,
// commit, and only then are answered. SessionTurn says what happens next; this file does it.
// See SessionTurn.swift for which thread does what, SessionService+judging.swift for what a
// run decides, SessionService+committing.swift for how a commit ends.
import JSON
import FlowEngine
import FlowStore
import Foundation

extension SessionService {
    /// Where a turn's work is driven from: an HTTP thread (reads are made there, inline), or
    /// the writer thread or read threads (reads go to the read threads).
    enum TurnContext {
        case request
        case writer
    }

    /// A session's turn, as the service keeps it in the session's slot.
    typealias Turn = SessionTurn<TurnRequest, RequestProgress>

    /// Applies `action` to session `id`: checks `If-Match`, replays an `Idempotency-Key`,
    /// applies through the engine, commits, and only then answers. The answer comes later
    /// (the route returns `Response.later`): the commit is written by the store's writer
    /// thread, with the actions of other requests, and no thread waits for it.
    func apply(_ action: FlowAction, to id: String, token: String?, ifMatch: IfMatch?,
               idempotency: (key: String, bodyHash: [UInt8])?, predict: Bool = false,
               reply: any SessionReply) throws(SessionError) {
        let request = ActionRequest(action: action, ifMatch: ifMatch, idempotency: idempotency, predict: predict)
        try enqueue(.action(request), id: id, token: token, reply: reply)
    }

    /// Deletes session `id` after checking its token, in the session's turn (after the actions
    /// that came before it are committed); the cached state goes with it, under the session's
    /// lock, so no request can see the session after the delete is answered; requests that
    /// waited behind it are answered not found.
    func delete(_ id: String, token: String?, reply: any SessionReply) throws(SessionError) {
        try enqueue(.delete, id: id, token: token, reply: reply)
    }

    /// Pins the session's slot (checking the token of a session not cached without touching
    /// the cache), and gives the request its turn or queues it; `reply` gets the answer, and
    /// the slot is unpinned then.
    func enqueue(_ job: TurnRequest.Job, id: String, token: String?, reply: any SessionReply) throws(SessionError) {
        let slot = try pinnedForLater(id, token: token)
        let request = TurnRequest(job: job, id: id, token: token, slot: slot, answer: reply)
        let maxRetries = shared ? Self.sharedConflictRetries : 2
        var afters: [@Sendable () -> Void] = []
        slot.state.withLock { contents in
            contents.turn.maxConflictRetries = maxRetries
            let action = contents.turn.arrived(request)
            drive(action, slot: slot, context: .request, &contents, &afters)
        }
        for after in afters { after() }
    }

    /// Performs the turn's `action` under the slot's lock, and the ones it leads to; what must
    /// happen outside the lock (answers, reads, commits) is appended to `afters`, in order.
    func drive(_ action: Turn.Action, slot: SessionSlot, context: TurnContext,
               _ contents: inout SlotContents, _ afters: inout [@Sendable () -> Void]) {
        var action = action
        while true {
            switch action {
            case .none, .submit:
                return
            case .run(let request):
                action = run(request, slot: slot, context: context, &contents, &afters)
            case .read(let request):
                var reads = contents.turn.progress.reads
                reads.generation = contents.turn.generation
                afters.append(readLater(request, reads,
                                        cached: contents.session.map { ($0.version, $0.userId) }, slot: slot, context: context))
                return
            case .retry(let request):
                contents.session = nil
                afters.append(readLater(request, TurnReads(generation: contents.turn.generation), cached: nil, slot: slot, context: .writer))
                return
            case .answer(_, let dropState, let next):
                if dropState { contents.session = nil }
                guard let next else { return }
                action = .run(next)
            case .contention(_, let next):
                contents.session = nil
                guard let next else { return }
                action = .run(next)
            case .deleted(let request, let orphans):
                contents.session = nil
                cache.remove(request.id, slot: slot)
                for orphan in orphans {
                    afters.append { [cache] in orphan.finish(.failed(.notFound(orphan.id)), cache) }
                }
                return
            }
        }
    }

    /// The reads `request` needs, outside the lock: on this thread when it is an HTTP thread,
    /// else on the read threads (never on the writer thread). Then the turn goes on.
    ///
    /// `reads` says what to read (a reload, a recheck) and is what the turn gets back, with what
    /// was read; the rest of the turn's progress is untouched meanwhile (the turn is `reading`).
    private func readLater(_ request: TurnRequest, _ reads: TurnReads, cached: (version: Int, userId: String)?,
                           slot: SessionSlot, context: TurnContext) -> @Sendable () -> Void {
        let work: @Sendable () -> Void = { [self] in
            let outcome: Result<TurnReads, SessionError>
            do throws(SessionError) {
                outcome = .success(try read(for: request, reads, cached: cached))
            } catch {
                outcome = .failure(error)
            }
            var afters: [@Sendable () -> Void] = []
            slot.state.withLock { contents in
                switch outcome {
                case .success(let reads):
                    let progress = RequestProgress(reads: reads, of: contents.turn.progress)
                    drive(contents.turn.readFinished(progress), slot: slot, context: .request, &contents, &afters)
                case .failure(let error):
                    afters.append { [cache] in request.finish(.failed(error), cache) }
                    drive(contents.turn.readFailed(), slot: slot, context: .request, &contents, &afters)
                }
            }
            for after in afters { after() }
        }
        switch context {
        case .request: return work
        case .writer: return { [readThreads] in readThreads.run(work) }
        }
    }

    /// What running a request under the lock came to.
    enum Run {
        /// Read first, as the progress's `reads` say (a reload, a recheck).
        case needsRead
        case answer(TurnAnswer, dropState: Bool)
        /// Answer the replay of a key whose version is older than `session`'s, made again from
        /// the log on the read threads; nothing waits for it in the turn.
        case replayOlder(IdempotentAnswer, LiveSession)
        case commit(ActionStep)
        case commitBatch(BatchPlan, last: ActionStep, BatchRequest)
        case delete
    }

    /// The request's turn, under the slot's lock: installs what was read, checks the token,
    /// and judges the job on the cached session; never reads the database.
    private func run(_ request: TurnRequest, slot: SessionSlot, context: TurnContext,
                     _ contents: inout SlotContents, _ afters: inout [@Sendable () -> Void]) -> Turn.Action {
        var progress = contents.turn.progress
        switch judge(request, &progress, slot: slot, &contents) {
        case .needsRead:
            // What the run decided (a recheck, a reload) goes to the read through the turn.
            return contents.turn.needsRead(progress)
        case .answer(let answer, let dropState):
            if dropState {
                // No such session: its slot goes, so it holds no place in the cache; not while
                // requests wait in its turn (a slot of the same id made meanwhile would run a
                // second turn beside theirs): the last of them removes it.
                contents.session = nil
                if contents.turn.waiting.isEmpty { cache.remove(request.id, slot: slot) }
            }
            afters.append { [cache] in request.finish(answer, cache) }
            return contents.turn.applied(commit: false, progress: progress)
        case .replayOlder(let stored, let session):
            // The turn is over for this request: the versions the rebuild reads are committed
            // and never change, so it needs none of the turn's order, and on the read threads it
            // delays neither the session's next request (whose work this thread does next)
            // nor the writer thread.
            afters.append { [self, readThreads, cache] in
                readThreads.run { request.finish(self.rebuiltReplay(stored, of: session), cache) }
            }
            return contents.turn.applied(commit: false, progress: progress)
        case .commit(let step):
            _ = contents.turn.applied(commit: true, progress: progress)
            afters.append { [self] in
                store.submit(step.commit) { [self] result in
                    committed(result, step, request, slot: slot)
                }
            }
            return .none
        case .commitBatch(let plan, let last, let batch):
            _ = contents.turn.applied(commit: true, progress: progress)
            let commits = plan.steps.map(\.commit)
            let earlier = progress.committed
            afters.append { [self] in
                store.submit(commits) { [self] results in
                    batchCommitted(results, plan, last: last, batch, earlier: earlier, request, slot: slot)
                }
            }
            return .none
        case .delete:
            _ = contents.turn.applied(commit: true, progress: progress)
            let work: @Sendable () -> Void = { [self] in deleteNow(request, slot: slot) }
            switch context {
            case .request: afters.append(work)
            case .writer: afters.append { [readThreads] in readThreads.run(work) }
            }
            return .none
        }
    }
}
