// One session's turns as a value: which request runs, which wait, what the service must do next.
//
// DESIGN: threads and who does what on the session path.
// - HTTP threads (libmicrohttpd's pool) parse a request, pin the session's slot, and feed the
//   slot's `SessionTurn` an arrival under the slot's lock. On the fast path (session cached,
//   user state held, no key to look up) the request is checked and applied there and then,
//   under that one lock, and its commit submitted once the lock is released: no extra hop.
//   When the request needs the database first (a session not cached, an Idempotency-Key to
//   look up, a user state not held, a head check), the turn goes to `reading` and the read is
//   made on the same HTTP thread, outside the lock; the result comes back as `readFinished`.
// - The fs-commit writer thread (GroupCommit) runs a commit's completion: it takes the slot's
//   lock only to record the outcome (`committed`) and to apply the next waiting request when
//   that needs no read. It never reads the database: a retry after a conflict, or a waiting
//   request that needs a read, is handed to the read threads (`SessionService.readThreads`).
// - The read threads (`ReadThreads`, the server's own, not libdispatch's global pool) make
//   those reads, then feed `readFinished`.
//   A slow or failing read delays only its own session's turn.
// - Event streams (SessionEvents) get each committed version from the completion, before the
//   answer and before the session's next commit can start; their own threads only read.
// - The rollout queue (RolloutService) gets the counts of each answer off the action's path.
// No database call is made while a slot's lock is held.

/// What the running request's turn has come to know or decide so far: what was read for it,
/// whether a refusal was checked again, what an earlier try committed. A request itself never
/// changes; this does, and only through the turn's events. Each request starts from `init()`.
protocol TurnProgress {
    init()
}

/// The turn state of one session: idle, running a request (checking and applying it, under
/// the slot's lock), reading for it (outside the lock), or committing its result; and the
/// requests that wait, in the order they came. Each event returns what the service must do.
/// It does no I/O and holds no lock or closure: `Pending` is the service's request, which
/// never changes, and `Progress` what the running request's turn has gathered so far.
struct SessionTurn<Pending, Progress: TurnProgress> {
    enum Phase: Equatable {
        case idle
        /// `current` is being checked and applied (under the slot's lock).
        case running
        /// The database is being read for `current` (outside the lock).
        case reading
        /// `current`'s commit (or deletion) is being written.
        case committing
    }

    enum Action {
        /// Nothing to do now: the request waits for its turn.
        case none
        /// Check and apply this request now, under the lock, then report `applied` or `needsRead`.
        case run(Pending)
        /// Read what this request needs, outside the lock; then `readFinished` or `readFailed`.
        case read(Pending)
        /// Submit this request's commit (or deletion), outside the lock; then `committed`.
        case submit(Pending)
        /// The commit conflicted: drop the cached state and read the session again (never on
        /// the writer thread), then `readFinished` runs the request again.
        case retry(Pending)
        /// Answer this request (with the response the service made for it), dropping the
        /// cached state first when `dropState`; then run `next`, if any.
        case answer(Pending, dropState: Bool, next: Pending?)
        /// The commit conflicted too often: answer this request with contention, drop the cached
        /// state; then run `next`.
        case contention(Pending, next: Pending?)
        /// The session is deleted: answer the deletion, then every waiting request not found.
        case deleted(Pending, notFound: [Pending])
    }

    /// How a commit ended.
    enum CommitOutcome {
        case success
        case conflict
        case sessionNotFound
        /// The database failed (its outcome may be unknown): the cached state is not trusted.
        case failed
        /// A deletion was written.
        case deleted
    }

    private(set) var phase = Phase.idle
    /// The request whose turn it is.
    private(set) var current: Pending?
    /// What `current`'s turn has gathered so far (reads, rechecks, commits of earlier tries);
    /// empty again for each request.
    private(set) var progress = Progress()
    /// Requests waiting for their turn, first come first.
    private(set) var waiting: [Pending] = []
    /// Commits that ended on this session: a look-up made before the turn at an older
    /// generation may have missed a key a commit since stored.
    private(set) var generation: UInt64 = 0
    /// Conflicts of `current` so far.
    private(set) var conflicts = 0
    /// How many conflicts `current` may retry before it is answered with contention.
    var maxConflictRetries: Int

    init(maxConflictRetries: Int) {
        self.maxConflictRetries = maxConflictRetries
    }

    /// A request arrived: it runs now when nothing else does, else it waits.
    mutating func arrived(_ request: Pending) -> Action {
        guard phase == .idle else {
            waiting.append(request)
            return .none
        }
        return start(request)
    }

    /// The running request needs the database first; `progress` is what its run decided the
    /// read is for (a reload, a recheck), and goes to the read.
    mutating func needsRead(_ progress: Progress) -> Action {
        precondition(phase == .running, "needsRead outside a run")
        phase = .reading
        self.progress = progress
        return .read(running)
    }

    /// The reads are done; `progress` carries them: run the request again.
    mutating func readFinished(_ progress: Progress) -> Action {
        precondition(phase == .reading, "readFinished without a read")
        phase = .running
        self.progress = progress
        return .run(running)
    }

    /// The reads failed: the request is answered with the failure; the cached state stays
    /// unless `dropState` (a session found unreadable).
    mutating func readFailed(dropState: Bool = false) -> Action {
        precondition(phase == .reading, "readFailed without a read")
        return finish(dropState: dropState)
    }

    /// The running request was judged: answered now (a refusal, a replay, a read), or it
    /// produced a commit to submit; `progress` is what its run left (the reads it used up).
    mutating func applied(commit: Bool, progress: Progress? = nil) -> Action {
        precondition(phase == .running, "applied outside a run")
        if let progress { self.progress = progress }
        if commit {
            phase = .committing
            return .submit(running)
        }
        return finish(dropState: false)
    }

    /// The running request's commit ended; `progress`, when given, is what a retry starts
    /// from (the keys this try committed, say).
    mutating func committed(_ outcome: CommitOutcome, progress: Progress? = nil) -> Action {
        precondition(phase == .committing, "committed without a commit")
        generation &+= 1
        if let progress { self.progress = progress }
        switch outcome {
        case .success:
            return finish(dropState: false)
        case .conflict where conflicts < maxConflictRetries:
            conflicts += 1
            phase = .reading
            return .retry(running)
        case .conflict:
            let request = running
            let next = advance()
            return .contention(request, next: next)
        case .sessionNotFound, .failed:
            return finish(dropState: true)
        case .deleted:
            let request = running
            let orphans = waiting
            waiting = []
            current = nil
            self.progress = Progress()
            conflicts = 0
            phase = .idle
            return .deleted(request, notFound: orphans)
        }
    }

    /// The request whose turn it is; only asked for in a phase that has one.
    private var running: Pending {
        guard let current else { preconditionFailure("no request is running") }
        return current
    }

    private mutating func start(_ request: Pending) -> Action {
        phase = .running
        current = request
        progress = Progress()
        conflicts = 0
        return .run(request)
    }

    private mutating func finish(dropState: Bool) -> Action {
        let request = running
        let next = advance()
        return .answer(request, dropState: dropState, next: next)
    }

    /// Ends the current turn and starts the next waiting request, if any.
    private mutating func advance() -> Pending? {
        conflicts = 0
        progress = Progress()
        guard !waiting.isEmpty else {
            current = nil
            phase = .idle
            return nil
        }
        let next = waiting.removeFirst()
        current = next
        phase = .running
        return next
    }
}
