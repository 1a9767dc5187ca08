// Acting on a session: actions, batches and deletions run in the session's turn (SessionTurn),
// are committed, and only then answered. See SessionTurn.swift for which thread does what.
import JSON
import FlowEngine
import FlowStore
import Foundation
import Synchronization

/// A request waiting for, or having, its session's turn: the job, who asked, where its answer
/// goes, and what was read for it outside the slot's lock.
///
/// A reference, not a value: the turn hands a request through its actions, its queue and the
/// closures that submit and answer it several times per action, and as a struct (the job with
/// its action, the ids, token, reply and reads) each of those moves copied every field and
/// retained each reference in it (bench/actions.lua: memmove, retains and value-witness copies
/// were some 4 % more of the server's CPU than before the turn machine). Its `var`s change
/// only where the turn gives the request to one party at a time: under the slot's lock, or in
/// the one read made for it while its turn is `reading` (the lock taken after the read, or the
/// read queue, orders that with the turn's other steps); hence `@unchecked Sendable`.
final class TurnRequest: @unchecked Sendable {
    enum Job: Sendable {
        case action(SessionService.ActionRequest)
        case batch(SessionService.BatchRequest)
        case delete
        /// The server's own: the session's data was erased; its cached state leaves the slot
        /// in the session's turn, after a commit in flight (see `evictErased`).
        case evict
    }

    var job: Job
    let id: String
    let token: String?
    /// The session's slot, pinned until the request is answered.
    let slot: SessionSlot
    let answer: any SessionReply
    var reads = TurnReads()

    init(job: Job, id: String, token: String?, slot: SessionSlot, answer: any SessionReply) {
        self.job = job
        self.id = id
        self.token = token
        self.slot = slot
        self.answer = answer
    }

    /// Answers the request, and unpins its slot (once: later answers change nothing).
    func finish(_ outcome: TurnAnswer, _ cache: SessionCache) {
        if answer.finish(outcome) { cache.unpin(slot) }
    }
}

/// Where the answer of a request that waits for its session's turn goes. A client's request
/// gives the HTTP edge's `DeferredResponse` (SessionError+problem.swift); the server's own
/// requests give a `ServerReply`.
protocol SessionReply: AnyObject, Sendable {
    /// Gives the answer; the first call wins and returns true, later ones change nothing.
    func finish(_ answer: TurnAnswer) -> Bool
}

/// What a request that waited for its session's turn is answered, in the service's terms.
enum TurnAnswer: Sendable {
    /// The session's state document at `version` (an applied action).
    case state(version: Int, body: [UInt8])
    /// The stored answer of an `Idempotency-Key` used before.
    case replay(IdempotentAnswer)
    /// Done, nothing to show (a deletion, an eviction).
    case noContent
    /// A batch's results and the state it left.
    case batch(SessionService.BatchRequest, SessionService.BatchPlan, version: Int, state: [UInt8])
    case failed(SessionError)
}

/// The answer of a request the server makes of itself (a new session's link, an eviction),
/// to wait for or to act on.
final class ServerReply: SessionReply {
    private let answer = Mutex<TurnAnswer?>(nil)
    private let given = DispatchSemaphore(value: 0)
    /// Runs once, on the thread that gives the answer, before `wait` returns it.
    private let onFinish: (@Sendable (TurnAnswer) -> Void)?

    init(onFinish: (@Sendable (TurnAnswer) -> Void)? = nil) {
        self.onFinish = onFinish
    }

    func finish(_ answer: TurnAnswer) -> Bool {
        let first = self.answer.withLock { (held: inout TurnAnswer?) -> Bool in
            guard held == nil else { return false }
            held = answer
            return true
        }
        guard first else { return false }
        onFinish?(answer)
        given.signal()
        return true
    }

    /// Waits for the answer.
    func wait() -> TurnAnswer {
        given.wait()
        given.signal()
        return answer.withLock { $0 } ?? .failed(.linkNotApplied(""))
    }
}

/// What the database said for a request, read outside the slot's lock.
struct TurnReads: Sendable {
    /// The session as stored, to be cached (nil: nothing read). Kept in a box: a request moves
    /// by value through the turn's actions several times per action, and a `LiveSession` inline
    /// made each of those moves a copy of several hundred bytes (memmove was 1.5 % more of the
    /// server's CPU than before the turn machine, under bench/actions.lua).
    var session: LiveSession? {
        get { loaded?.session }
        set { loaded = newValue.map(LoadedSession.init) }
    }
    private var loaded: LoadedSession?

    init(generation: UInt64 = 0, reload: Bool = false, recheck: Bool = false) {
        self.generation = generation
        self.reload = reload
        self.recheck = recheck
    }
    /// The session is not stored.
    var missing = false
    /// The user's state as read.
    var user: UserStates.Held?
    /// The request's idempotency keys looked up, at turn generation `generation`.
    var answers: [String: IdempotentAnswer]?
    var generation: UInt64 = 0
    /// The session must be read again (a conflict, a stale cache).
    var reload = false
    /// A refusal on the cached state is to be checked against the stored head first.
    var recheck = false
}

extension SessionService {
    /// Where a turn's work is driven from: an HTTP thread (reads are made there, inline), or
    /// the writer thread or read queue (reads go to the read queue).
    enum TurnContext {
        case request
        case writer
    }

    /// An action request, as it waits for its session's turn.
    struct ActionRequest: Sendable {
        let action: FlowAction
        let ifMatch: IfMatch?
        let idempotency: (key: String, bodyHash: [UInt8])?
        /// The answer carries the predictions of the new version (`?predict=true`).
        var predict = false
        /// Already judged again on the stored state after a refusal on a cached one.
        var rechecked = false
    }

    /// How often an action is applied again after losing a race to another node's commit on the
    /// same session. Each try is a reload and a commit (a few ms); while another node streams
    /// actions on the session, this one can lose several in a row (8 was seen to run out in CI
    /// with 4 clients per node on one session), and running out answers 503.
    static let sharedConflictRetries = 32

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
    func drive(_ action: SessionTurn<TurnRequest>.Action, slot: SessionSlot, context: TurnContext,
               _ contents: inout SlotContents, _ afters: inout [@Sendable () -> Void]) {
        var action = action
        while true {
            switch action {
            case .none, .submit:
                return
            case .run(let request):
                action = run(request, slot: slot, context: context, &contents, &afters)
            case .read(let request):
                request.reads.generation = contents.turn.generation
                afters.append(readLater(request, cached: contents.session.map { ($0.version, $0.userId) }, slot: slot, context: context))
                return
            case .retry(let request):
                contents.session = nil
                request.reads = TurnReads(generation: contents.turn.generation)
                afters.append(readLater(request, cached: nil, slot: slot, context: .writer))
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
    /// else on the read queue (never on the writer thread). Then the turn goes on.
    private func readLater(_ request: TurnRequest, cached: (version: Int, userId: String)?, slot: SessionSlot,
                           context: TurnContext) -> @Sendable () -> Void {
        let work: @Sendable () -> Void = { [self] in
            let outcome: Result<TurnRequest, SessionError>
            do throws(SessionError) {
                outcome = .success(try read(for: request, cached: cached))
            } catch {
                outcome = .failure(error)
            }
            var afters: [@Sendable () -> Void] = []
            slot.state.withLock { contents in
                switch outcome {
                case .success(let read):
                    drive(contents.turn.readFinished(read), slot: slot, context: .request, &contents, &afters)
                case .failure(let error):
                    afters.append { [cache] in request.finish(.failed(error), cache) }
                    drive(contents.turn.readFailed(), slot: slot, context: .request, &contents, &afters)
                }
            }
            for after in afters { after() }
        }
        switch context {
        case .request: return work
        case .writer: return { [readQueue] in readQueue.async(execute: work) }
        }
    }

    /// Reads what `request` needs from the database: the session when it is not cached (or
    /// must be read again), its keys' stored answers, and the user's state; returns it with
    /// them (its reads stay as they were when a read fails).
    func read(for request: TurnRequest, cached: (version: Int, userId: String)?) throws(SessionError) -> TurnRequest {
        var reads = request.reads
        var reload = reads.reload || cached == nil
        if reads.recheck, let cached {
            let head = try storage { try store.headVersion(sessionId: request.id) }
            if head != cached.version {
                counters.refusalsRechecked.add(1, ordering: .relaxed)
                reload = true
            }
        }
        reads.recheck = false
        reads.reload = false
        var version = cached?.version
        var userId = cached?.userId
        if reload {
            counters.sessionLoads.add(1, ordering: .relaxed)
            guard let loaded = try load(request.id) else {
                reads.missing = true
                request.reads = reads
                return request
            }
            version = loaded.version
            userId = loaded.userId
            reads.session = loaded
        }
        let keys: [String]
        switch request.job {
        case .action(let action): keys = action.idempotency.map { [$0.key] } ?? []
        case .batch(let batch): keys = batch.items.map(\.key)
        case .delete, .evict: keys = []
        }
        if !keys.isEmpty {
            let answers: [String: IdempotentAnswer]
            if keys.count == 1 {
                answers = try storage { try store.idempotentAnswer(sessionId: request.id, key: keys[0]) }.map { [keys[0]: $0] } ?? [:]
            } else {
                answers = try storage { try store.idempotentAnswers(sessionId: request.id, keys: keys) }
            }
            reads.answers = answers
            if let version, answers.values.contains(where: { $0.version > version }), let loaded = try load(request.id) {
                // Applied, but its answer never reached this cache (a commit whose answer was
                // lost, or another node): what follows starts from the stored state.
                counters.sessionLoads.add(1, ordering: .relaxed)
                reads.session = loaded
            }
        }
        if let userId {
            reads.user = try storage { try users.held(userId, store: store) }
        }
        request.reads = reads
        return request
    }

    /// What running a request under the lock came to.
    private enum Run {
        case needsRead(TurnRequest)
        case answer(TurnAnswer, dropState: Bool)
        case commit(ActionStep)
        case commitBatch(BatchPlan, last: ActionStep, BatchRequest)
        case delete
    }

    /// The request's turn, under the slot's lock: installs what was read, checks the token,
    /// and judges the job on the cached session; never reads the database.
    private func run(_ request: TurnRequest, slot: SessionSlot, context: TurnContext,
                     _ contents: inout SlotContents, _ afters: inout [@Sendable () -> Void]) -> SessionTurn<TurnRequest>.Action {
        switch judge(request, slot: slot, &contents) {
        case .needsRead(let pending):
            // The request as updated (a recheck, a reload) is the turn's current one.
            return contents.turn.needsRead(pending)
        case .answer(let answer, let dropState):
            if dropState {
                // No such session: its slot goes, so it holds no place in the cache; not while
                // requests wait in its turn (a slot of the same id made meanwhile would run a
                // second turn beside theirs): the last of them removes it.
                contents.session = nil
                if contents.turn.waiting.isEmpty { cache.remove(request.id, slot: slot) }
            }
            afters.append { [cache] in request.finish(answer, cache) }
            return contents.turn.applied(commit: false)
        case .commit(let step):
            _ = contents.turn.applied(commit: true)
            afters.append { [self] in
                store.submit(step.commit) { [self] result in
                    committed(result, step, request, slot: slot)
                }
            }
            return .none
        case .commitBatch(let plan, let last, let batch):
            _ = contents.turn.applied(commit: true)
            let commits = plan.steps.map(\.commit)
            afters.append { [self] in
                store.submit(commits) { [self] results in
                    batchCommitted(results, plan, last: last, batch, request, slot: slot)
                }
            }
            return .none
        case .delete:
            _ = contents.turn.applied(commit: true)
            let work: @Sendable () -> Void = { [self] in deleteNow(request, slot: slot) }
            switch context {
            case .request: afters.append(work)
            case .writer: afters.append { [readQueue] in readQueue.async(execute: work) }
            }
            return .none
        }
    }

    /// Judges `request` on the cached session (after installing what was read for it).
    private func judge(_ request: TurnRequest, slot: SessionSlot, _ contents: inout SlotContents) -> Run {
        let id = request.id
        if case .evict = request.job {
            contents.session = nil
            return .answer(.noContent, dropState: true)
        }
        if request.reads.missing {
            contents.session = nil
            return .answer(.failed(.notFound(id)), dropState: true)
        }
        let justRead = request.reads.session != nil
        if let loaded = request.reads.session.take() {
            // Read while the turn waited for it: no commit of this node can have raced the read.
            contents.session = loaded
        }
        guard var session = contents.session.take() else {
            return .needsRead(request)
        }
        let run = judge(request, &session, justRead: justRead, turn: contents.turn)
        contents.session = consume session
        return run
    }

    /// Judges `request` on `session`, moved out of the slot meanwhile.
    private func judge(_ request: TurnRequest, _ session: inout LiveSession, justRead: Bool,
                       turn: borrowing SessionTurn<TurnRequest>) -> Run {
        let id = request.id
        let access = SessionAccess.bearer(request.token)
        guard access.opens(session.tokenHash) else {
            return .answer(.failed(access.refusal(id)), dropState: false)
        }
        if let expired = expiry.refusal(id, lastActiveAt: session.lastActiveAt) {  // expiry: the state leaves the slot
            if shared, !justRead {
                // Another node may have kept the session going meanwhile: judged again on the
                // stored state, as a refusal on a cached state is.
                request.reads = TurnReads(reload: true)
                return .needsRead(request)
            }
            return .answer(.failed(expired), dropState: true)
        }
        let fresh = request.reads.generation == turn.generation
        let answers = fresh ? request.reads.answers : nil
        guard let user = (fresh ? request.reads.user : nil) ?? users.cached(session.userId) else {
            return .needsRead(request)
        }
        switch request.job {
        case .delete:
            return .delete
        case .evict:
            return .answer(.noContent, dropState: true)
        case .action(let action):
            var known: IdempotentAnswer?? = .none
            if let key = action.idempotency?.key {
                guard let answers else { return .needsRead(request) }
                known = .some(answers[key])
            }
            let attempt: Attempt
            do throws(SessionError) {
                attempt = try applyLocked(action.action, to: &session, ifMatch: action.ifMatch, idempotency: action.idempotency,
                                          predict: action.predict, user: user, known: known)
            } catch {
                if shared, !action.rechecked, error.dependsOnState {
                    // Refused on a cached state that another node may have moved on from: judge
                    // it again after checking the stored head.
                    var rechecking = action
                    rechecking.rechecked = true
                    request.job = .action(rechecking)
                    request.reads = TurnReads(recheck: true)
                    return .needsRead(request)
                }
                if let refusal = error.refusal { rollouts?.refused(id, refusal) }
                return .answer(.failed(error), dropState: false)
            }
            switch attempt {
            case .replayed(let stored): return .answer(.replay(stored), dropState: false)
            case .commit(let step): return .commit(step)
            case .reload:
                request.reads = TurnReads(reload: true)
                return .needsRead(request)
            }
        case .batch(var batch):
            guard let answers else { return .needsRead(request) }
            let plan: BatchPlan
            do throws(SessionError) {
                plan = try judgeBatch(batch, &session, answers: answers, user: user)
            } catch {
                return .answer(.failed(error), dropState: false)
            }
            if plan.stale {
                guard batch.staleReads < Self.sharedConflictRetries else {
                    return .answer(.failed(.batchIncomplete(.contention(session: id), applied: batch.committed.count)),
                                   dropState: false)
                }
                counters.staleReloads.add(1, ordering: .relaxed)
                batch.staleReads += 1
                request.job = .batch(batch)
                request.reads = TurnReads(reload: true)
                return .needsRead(request)
            }
            if plan.refusal != nil, shared, !batch.rechecked {
                // Refused on a cached state that another node may have moved on from: judge the
                // whole batch again on the stored state before answering (nothing is committed yet).
                batch.rechecked = true
                request.job = .batch(batch)
                request.reads = TurnReads(recheck: true)
                return .needsRead(request)
            }
            guard let last = plan.steps.last else {
                // Nothing to commit: every item skipped, or the first one not skipped refused.
                return .answer(.batch(batch, plan, version: session.version, state: session.cachedStateDocument()),
                               dropState: false)
            }
            return .commitBatch(plan, last: last, batch)
        }
    }

    /// Deletes the session in the database (outside the lock, never on the writer thread),
    /// then ends the turn.
    private func deleteNow(_ request: TurnRequest, slot: SessionSlot) {
        let answer: TurnAnswer
        let deleted: Bool
        do throws(SessionError) {
            _ = try storage { try store.deleteSession(id: request.id) }
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
    private func committed(_ result: Result<Void, any Error>, _ step: ActionStep, _ request: TurnRequest, slot: SessionSlot) {
        let id = request.id
        let outcome: SessionTurn<TurnRequest>.CommitOutcome
        // Given once the lock is released; none while the turn retries the request. A value, not
        // a closure: a closure holding the step would copy the whole session into its context.
        var answer: TurnAnswer?
        switch result {
        case .success:
            if !step.userChanges.isEmpty {
                users.apply(step.userChanges, to: step.next.userId)
            }
            answer = .state(version: step.next.version, body: step.answer ?? step.body)
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
            rollouts?.applied(id, tree: step.next.tree, catalog: step.next.catalog, context: step.next.context,
                              userChanges: step.userChanges)
        }
        for after in afters { after() }
    }

    /// What one try at applying an action came to.
    enum Attempt {
        /// The stored answer of the request's `Idempotency-Key`, to be given again.
        case replayed(IdempotentAnswer)
        /// The key's answer is of a version newer than the cached session: read it again.
        case reload
        /// Applied in memory: to be committed, then answered.
        case commit(ActionStep)
    }

    /// An applied action waiting for its commit: the session it leads to, the answer's body, and
    /// the user-state changes to keep once committed.
    ///
    /// A reference: a step holds the next session whole and its commit, and goes from the judge
    /// (under the slot's lock) through the turn's run, the submit and the writer thread's
    /// completion; as a value each of those hand-overs moved several hundred bytes.
    final class ActionStep: Sendable {
        let commit: ActionCommit
        let next: LiveSession
        let body: [UInt8]
        let userChanges: [(key: String, value: JSONValue)]
        /// The answer when it differs from `body` (the stored one): with predictions.
        let answer: [UInt8]?

        init(commit: ActionCommit, next: LiveSession, body: [UInt8], userChanges: [(key: String, value: JSONValue)],
             answer: [UInt8]? = nil) {
            self.commit = commit
            self.next = next
            self.body = body
            self.userChanges = userChanges
            self.answer = answer
        }
    }

    /// Applies an action to a session whose lock the caller holds; `session` is replaced only
    /// after the commit. It reads nothing: `user` is the user's state as held or read before
    /// the turn, and `known` the stored answer of the request's key (`.some(nil)`: looked up,
    /// unused), looked up before the turn.
    ///
    /// A batch of offline taps (`SessionService+batch.swift`) passes the client's time of each,
    /// and the user's state as its earlier, not yet committed, steps left it.
    func applyLocked(_ action: FlowAction, to session: inout LiveSession, ifMatch: IfMatch?,
                     idempotency: (key: String, bodyHash: [UInt8])?, predict: Bool = false, clientAt: String? = nil,
                     user: UserStates.Held, known: IdempotentAnswer??) throws(SessionError) -> Attempt {
        let id = session.id
        if let idempotency, case .some(.some(let stored)) = known {
            guard BearerToken.constantTimeEquals(stored.requestHash, idempotency.bodyHash) else {
                throw .idempotencyKeyReused(idempotency.key)
            }
            // Applied, but its answer never reached this cache (a commit whose answer was lost,
            // or another node): what follows starts from the stored state.
            if stored.version > session.version { return .reload }
            return .replayed(stored)
        }
        try Self.check(ifMatch, session)
        session.context.user = user.state
        let outcome: ActionOutcome
        do throws(FlowError) {
            outcome = try FlowEngine.apply(action, to: session.tree, catalog: session.catalog, context: session.context)
        } catch {
            throw .refused(error)
        }
        var next = session
        next.version += 1
        next.tree = outcome.tree
        next.handledBy = outcome.handledBy
        next.lastTransitionJSON = outcome.transition.map(SessionState.encode)
        var userPatch: String?
        if !outcome.userChanges.isEmpty {
            var writer = JSONWriter()
            writer.beginObject()
            for change in outcome.userChanges {
                writer.writeKey(change.key)
                writer.writeValue(change.value)
            }
            writer.endObject()
            userPatch = String(decoding: writer.takeBytes(), as: UTF8.self)
        }
        let body = next.cachedStateDocument()
        let record = ActionRecord(
            version: next.version, type: action.type, source: action.from,
            params: JSONValue.object(action.params).jsonText, interactive: action.interactive,
            handledBy: outcome.handledBy,
            transition: next.lastTransitionJSON.map { String(decoding: $0, as: UTF8.self) },
            createdAt: Timestamp.string(), clientAt: clientAt)
        let reached = session.inExperiment && outcome.tree.top?.feature != session.tree.top?.feature ? outcome.tree.top?.feature : nil
        let commit = ActionCommit(
            sessionId: id, userId: session.userId, version: next.version, tree: next.tree.storageBytes(),
            action: record, userPatch: userPatch,
            idempotency: idempotency.map {
                ($0.key, IdempotentAnswer(requestHash: $0.bodyHash, status: 200, version: next.version, body: body))
            },
            reachedFeature: reached,
            completesOnboarding: session.inExperiment && outcome.userChanges.contains { $0.key == "onboarded" && $0.value == true },
            userRevision: shared ? user.revision : nil)
        var answer: [UInt8]?
        if predict {
            var userAfter = user.state
            for change in outcome.userChanges { userAfter[change.key] = change.value }
            answer = LiveSession.withPredictions(body, next.cachedPredictions(user: userAfter))
        }
        return .commit(ActionStep(commit: commit, next: next, body: body,
                                  userChanges: outcome.userChanges.map { ($0.key, $0.value) }, answer: answer))
    }
}

/// A session read from the database, on its way into the slot (see `TurnReads.session`).
final class LoadedSession: Sendable {
    let session: LiveSession

    init(_ session: LiveSession) { self.session = session }
}
