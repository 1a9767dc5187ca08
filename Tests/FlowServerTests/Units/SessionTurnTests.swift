// The session turn state machine on its own: no store, no lock, no thread.
@testable import FlowServer
import Testing

/// A request in these tests: its number, and what its run comes to.
struct TurnProbe: Equatable, CustomStringConvertible {
    enum Kind: Equatable {
        /// Answered at once (a refusal, a replay).
        case answer
        /// Produces a commit.
        case commit
        /// Needs a read first, then produces a commit.
        case readThenCommit
        /// A deletion.
        case delete
    }

    let number: Int
    let kind: Kind

    var description: String { "#\(number)" }
}

/// What a probe's turn gathered: whether its read was made.
struct ProbeProgress: TurnProgress, Equatable {
    var read = false
}

typealias ProbeTurn = SessionTurn<TurnProbe, ProbeProgress>

/// Drives a `SessionTurn` as the service does, recording what each request was answered.
struct TurnDriver {
    var turn = ProbeTurn(maxConflictRetries: 2)
    /// What each request was answered, in the order the answers were given.
    var answers: [(number: Int, answer: String)] = []
    /// The effect under way outside the lock: a read or a commit, of that request.
    var reading: TurnProbe?
    var committing: TurnProbe?
    var stateDropped = 0
    var reruns = 0

    mutating func perform(_ action: ProbeTurn.Action) {
        var action = action
        while true {
            switch action {
            case .none:
                return
            case .run(let probe):
                switch probe.kind {
                case .answer:
                    answers.append((probe.number, "answered"))
                    action = turn.applied(commit: false)
                case .readThenCommit where !turn.progress.read:
                    action = turn.needsRead(ProbeProgress(read: true))
                case .commit, .readThenCommit, .delete:
                    action = turn.applied(commit: true)
                }
            case .read(let probe):
                #expect(reading == nil && committing == nil, "one effect at a time")
                reading = probe
                return
            case .submit(let probe):
                #expect(reading == nil && committing == nil, "one effect at a time")
                committing = probe
                return
            case .retry(let probe):
                stateDropped += 1
                reruns += 1
                reading = probe
                return
            case .answer(_, let dropState, let next):
                if dropState { stateDropped += 1 }
                guard let next else { return }
                action = .run(next)
            case .contention(let probe, let next):
                stateDropped += 1
                answers.append((probe.number, "contention"))
                guard let next else { return }
                action = .run(next)
            case .deleted(let probe, let orphans):
                stateDropped += 1
                answers.append((probe.number, "deleted"))
                for orphan in orphans { answers.append((orphan.number, "not found")) }
                return
            }
        }
    }

    mutating func arrive(_ probe: TurnProbe) {
        perform(turn.arrived(probe))
    }

    mutating func finishRead(failing: Bool = false) {
        guard let probe = reading.take() else { Issue.record("no read under way"); return }
        if failing {
            answers.append((probe.number, "read failed"))
            perform(turn.readFailed())
        } else {
            perform(turn.readFinished(turn.progress))
        }
    }

    /// Ends the commit under way; what the service answers comes first, as it does.
    mutating func finishCommit(_ outcome: ProbeTurn.CommitOutcome) {
        guard let probe = committing.take() else { Issue.record("no commit under way"); return }
        switch outcome {
        case .success: answers.append((probe.number, "committed"))
        case .sessionNotFound: answers.append((probe.number, "not found"))
        case .failed: answers.append((probe.number, "unavailable"))
        case .conflict, .deleted: break
        }
        perform(turn.committed(outcome))
    }

    var answered: [Int] { answers.map(\.number) }
}

struct SessionTurnTests {
    @Test func aRequestAloneRunsAtOnce() {
        var driver = TurnDriver()
        driver.arrive(TurnProbe(number: 1, kind: .answer))
        #expect(driver.answered == [1])
        #expect(driver.turn.phase == .idle)
        driver.arrive(TurnProbe(number: 2, kind: .commit))
        #expect(driver.turn.phase == .committing)
        driver.finishCommit(.success)
        #expect(driver.answers.map(\.answer) == ["answered", "committed"])
        #expect(driver.turn.phase == .idle)
        #expect(driver.turn.generation == 1)
    }

    /// What a turn gathers belongs to its request: the next request starts with nothing read,
    /// whether the one before ended in an answer, a commit or a failed read.
    @Test func progressStartsEmptyForEachRequest() {
        var driver = TurnDriver()
        driver.arrive(TurnProbe(number: 1, kind: .readThenCommit))
        driver.arrive(TurnProbe(number: 2, kind: .readThenCommit))
        #expect(driver.turn.progress.read)
        driver.finishRead()
        driver.finishCommit(.success)
        // #2 runs now, and needs its own read: #1's is not taken for it.
        #expect(driver.reading?.number == 2)
        driver.finishRead(failing: true)
        #expect(driver.turn.progress == ProbeProgress())
        #expect(driver.turn.phase == .idle)
    }

    /// A commit that conflicts goes back to reading with what the service gave `committed`
    /// (a batch's keys committed so far); without one, the progress of the try stays.
    @Test func aRetryStartsFromTheProgressTheCommitGave() {
        var turn = ProbeTurn(maxConflictRetries: 2)
        _ = turn.arrived(TurnProbe(number: 1, kind: .commit))
        _ = turn.applied(commit: true)
        #expect(turn.progress == ProbeProgress())
        guard case .retry(let probe) = turn.committed(.conflict, progress: ProbeProgress(read: true)) else {
            Issue.record("a first conflict is retried")
            return
        }
        #expect(probe.number == 1)
        #expect(turn.progress.read)
        guard case .run = turn.readFinished(turn.progress) else {
            Issue.record("the read's end runs the request again")
            return
        }
        _ = turn.applied(commit: true)
        _ = turn.committed(.conflict)
        #expect(turn.progress.read, "kept when the commit gives none")
    }

    /// A request that comes while another's read is under way waits, and runs after it.
    @Test func aSecondRequestDuringALoadWaits() {
        var driver = TurnDriver()
        driver.arrive(TurnProbe(number: 1, kind: .readThenCommit))
        #expect(driver.turn.phase == .reading)
        driver.arrive(TurnProbe(number: 2, kind: .answer))
        #expect(driver.answered.isEmpty)
        #expect(driver.turn.waiting.count == 1)
        driver.finishRead()
        #expect(driver.turn.phase == .committing)
        #expect(driver.answered.isEmpty)
        driver.finishCommit(.success)
        #expect(driver.answered == [1, 2])
        #expect(driver.turn.phase == .idle)
    }

    /// A request that comes during a commit waits for the commit to end.
    @Test func aSecondRequestDuringACommitWaits() {
        var driver = TurnDriver()
        driver.arrive(TurnProbe(number: 1, kind: .commit))
        driver.arrive(TurnProbe(number: 2, kind: .commit))
        driver.arrive(TurnProbe(number: 3, kind: .answer))
        #expect(driver.turn.waiting.map(\.number) == [2, 3])
        driver.finishCommit(.success)
        #expect(driver.answered == [1])
        #expect(driver.turn.phase == .committing)
        driver.finishCommit(.success)
        #expect(driver.answered == [1, 2, 3])
    }

    /// A conflict drops the cached state and reads again before anything queued runs; a
    /// request that keeps conflicting is answered with contention after the bounded retries.
    @Test func conflictsRetryThenGiveUp() {
        var driver = TurnDriver()
        driver.arrive(TurnProbe(number: 1, kind: .commit))
        driver.arrive(TurnProbe(number: 2, kind: .answer))
        driver.finishCommit(.conflict)
        #expect(driver.turn.phase == .reading)
        #expect(driver.stateDropped == 1)
        driver.finishRead()
        driver.finishCommit(.conflict)
        driver.finishRead()
        #expect(driver.answered.isEmpty)
        driver.finishCommit(.conflict)  // the third conflict: retries (2) are spent
        #expect(driver.answers.map(\.answer) == ["contention", "answered"])
        #expect(driver.reruns == 2)
        #expect(driver.turn.phase == .idle)
        // The next request starts with its own retries.
        driver.arrive(TurnProbe(number: 3, kind: .commit))
        driver.finishCommit(.conflict)
        driver.finishRead()
        driver.finishCommit(.success)
        #expect(driver.answers.last?.answer == "committed")
    }

    /// A failed commit drops the cached state (the next request reads the database) and the
    /// queue goes on.
    @Test func aFailedCommitDropsTheState() {
        var driver = TurnDriver()
        driver.arrive(TurnProbe(number: 1, kind: .commit))
        driver.arrive(TurnProbe(number: 2, kind: .answer))
        driver.finishCommit(.failed)
        #expect(driver.stateDropped == 1)
        #expect(driver.answers.map(\.answer) == ["unavailable", "answered"])
        driver.arrive(TurnProbe(number: 3, kind: .commit))
        driver.finishCommit(.sessionNotFound)
        #expect(driver.stateDropped == 2)
    }

    /// A deletion answers every request that waited behind it not found.
    @Test func aDeletedSessionAnswersWaitingRequestsNotFound() {
        var driver = TurnDriver()
        driver.arrive(TurnProbe(number: 1, kind: .delete))
        driver.arrive(TurnProbe(number: 2, kind: .commit))
        driver.arrive(TurnProbe(number: 3, kind: .answer))
        driver.finishCommit(.deleted)
        #expect(driver.answers.map(\.answer) == ["deleted", "not found", "not found"])
        #expect(driver.turn.phase == .idle)
        #expect(driver.turn.waiting.isEmpty)
    }

    /// A failed read answers its request; the next one runs.
    @Test func aFailedLoadAnswersAndGoesOn() {
        var driver = TurnDriver()
        driver.arrive(TurnProbe(number: 1, kind: .readThenCommit))
        driver.arrive(TurnProbe(number: 2, kind: .answer))
        driver.finishRead(failing: true)
        #expect(driver.answers.map(\.answer) == ["read failed", "answered"])
        #expect(driver.turn.phase == .idle)
    }

    /// Every order of arrivals and effect outcomes for three requests of every kind (one retry
    /// per conflict): each request is answered exactly once, in the order it came, and never
    /// two effects at once.
    @Test func everySmallInterleaving() {
        let kinds: [TurnProbe.Kind] = [.answer, .commit, .readThenCommit, .delete]
        var explored = 0
        var failures: [String] = []
        for a in kinds where a != .delete {
            for b in kinds where b != .delete {
                for c in kinds {
                    let probes = [a, b, c].enumerated().map { TurnProbe(number: $0.offset + 1, kind: $0.element) }
                    var driver = TurnDriver()
                    driver.turn.maxConflictRetries = 1
                    explore(driver, probes: probes[...], explored: &explored, failures: &failures)
                }
            }
        }
        let failed = failures.count
        let examples = failures.prefix(3).joined(separator: "; ")
        #expect(failed == 0, "orders answered wrongly, e.g. \(examples)")
        #expect(explored > 1_000)
        print("session turn: \(explored) interleavings explored")
    }

    private func explore(_ driver: TurnDriver, probes: ArraySlice<TurnProbe>, explored: inout Int, failures: inout [String]) {
        var choices: [(inout TurnDriver) -> Void] = []
        if let next = probes.first {
            choices.append { $0.arrive(next) }
        }
        if driver.reading != nil {
            choices.append { $0.finishRead() }
            choices.append { $0.finishRead(failing: true) }
        }
        if let committing = driver.committing {
            if committing.kind == .delete {
                choices.append { $0.finishCommit(.deleted) }
                choices.append { $0.finishCommit(.failed) }
            } else {
                for outcome in [ProbeTurn.CommitOutcome.success, .conflict, .sessionNotFound, .failed] {
                    choices.append { $0.finishCommit(outcome) }
                }
            }
        }
        guard !choices.isEmpty else {
            explored += 1
            let expected = Array(1...3)
            if driver.answered != expected || driver.turn.phase != .idle || !driver.turn.waiting.isEmpty || driver.turn.current != nil {
                failures.append("\(driver.answers)")
            }
            return
        }
        for (index, choice) in choices.enumerated() {
            var copy = driver
            choice(&copy)
            explore(copy, probes: index == 0 && probes.first != nil ? probes.dropFirst() : probes, explored: &explored,
                    failures: &failures)
        }
    }
}
