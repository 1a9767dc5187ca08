// A request in its session's turn, where its answer goes, and what its turn gathers on the way.
// The request never changes once made; what its turn reads and decides (`RequestProgress`)
// changes only through `SessionTurn`'s events. See SessionTurn.swift for which thread does what.
import JSON
import FlowEngine
import FlowStore
import Foundation
import Synchronization

/// A request waiting for, or having, its session's turn: the job, who asked, and where its
/// answer goes. It never changes: what its turn reads and decides is `RequestProgress`, which
/// the turn keeps.
///
/// A reference, not a value: the turn hands a request through its actions, its queue and the
/// closures that submit and answer it several times per action, and as a struct (the job with
/// its action, the ids, token and reply) each of those moves copied every field and retained
/// each reference in it (bench/actions.lua: memmove, retains and value-witness copies were
/// some 4 % more of the server's CPU than before the turn machine).
final class TurnRequest: Sendable {
    enum Job: Sendable {
        case action(SessionService.ActionRequest)
        case batch(SessionService.BatchRequest)
        case delete
        /// The server's own: the session's data was erased; its cached state leaves the slot
        /// in the session's turn, after a commit in flight (see `evictErased`).
        case evict

        /// Whether the job writes the session (on a shared database, only its lease's owner may).
        var writes: Bool {
            switch self {
            case .action, .batch, .delete: true
            case .evict: false
            }
        }
    }

    let job: Job
    let id: String
    let token: String?
    /// The session's slot, pinned until the request is answered.
    let slot: SessionSlot
    let answer: any SessionReply

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
    /// The session's state document at `version` (an applied action), with the gzip form the
    /// session keeps for it (nil when the body is not that document: with predictions).
    case state(version: Int, body: [UInt8], form: DocumentForm?)
    /// The answer of an `Idempotency-Key` used before: the status and the state document of
    /// the version its action made (see `SessionService.rebuiltReplay`).
    case replay(status: Int, version: Int, body: [UInt8])
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
    /// The session's lease is to be taken or renewed first (a write on a shared database whose
    /// nodes own sessions, see `SessionLeases`).
    var lease = false
}

/// What a request's turn has gathered so far, kept by `SessionTurn` beside the request: what was
/// read for it, and what its earlier tries decided. Empty for each new request.
struct RequestProgress: TurnProgress, Sendable {
    var reads = TurnReads()
    /// Already judged again on the stored state after a refusal on a cached one.
    var rechecked = false
    /// Keys a batch's earlier try committed, with their versions: a conflict on a later item
    /// runs the batch again, where these are found stored; they are still reported as applied
    /// by this request, not as skipped.
    var committed: [String: Int] = [:]
    /// Times a batch found the cache behind the store under items already judged.
    var staleReads = 0
    /// Times the session's lease was asked for in this request's turn.
    var leaseAsks = 0

    init() {}

    init(reads: TurnReads, of earlier: RequestProgress) {
        self = earlier
        self.reads = reads
    }
}

/// A session read from the database, on its way into the slot (see `TurnReads.session`).
final class LoadedSession: Sendable {
    let session: LiveSession

    init(_ session: LiveSession) { self.session = session }
}
