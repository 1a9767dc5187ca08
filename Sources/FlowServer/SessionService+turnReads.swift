// What a request's turn reads from the database, outside the slot's lock: the session when it
// is not cached or must be read again, its idempotency keys' stored answers, the user's state.
import JSON
import FlowEngine
import FlowStore
import Foundation

extension SessionService {
    /// Reads what `request` needs from the database, as `reads` asks: the session when it is
    /// not cached (or must be read again), its keys' stored answers, and the user's state;
    /// returns `reads` with them (the turn keeps its reads as they were when a read fails).
    func read(for request: TurnRequest, _ reads: TurnReads, cached: (version: Int, userId: String)?) throws(SessionError) -> TurnReads {
        var reads = reads
        var reload = reads.reload || cached == nil
        if reads.lease, let leases {
            reads.lease = false
            switch try storage({ try leases.acquire(request.id) }) {
            case .granted(_, let head):
                if head != cached?.version { reload = true }
            case .held:
                // Another node took the session meanwhile; the client tries again (and is
                // forwarded to the owner then, see `OwnerRouting`).
                throw .contention(request.id, reading: false)
            case .missing:
                reads.missing = true
                return reads
            }
        }
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
                return reads
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
            counters.keyLookups.add(keys.count, ordering: .relaxed)
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
        return reads
    }
}
