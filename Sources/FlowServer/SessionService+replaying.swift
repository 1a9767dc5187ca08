// A replayed Idempotency-Key of a version older than the session's: its answer made again from the log.
import FlowEngine
import FlowStore

extension SessionService {
    /// The answer of a key used before, whose action made `stored.version`, older than
    /// `session`'s: the state document of that version (without predictions), rebuilt from the
    /// nearest kept tree with the engine (`LogRebuild`, as the history does), byte for byte the
    /// body the action was answered with by a build that encodes documents as this one does.
    ///
    /// Where that version cannot be made again (a damaged log; or its entries compacted while
    /// the key was kept: retention prunes keys first, but on PostgreSQL nodes stamp times with
    /// their own clocks, so a key within their skew of the horizon can outlive its entries),
    /// the answer is the session's state as `session` holds it, with its own version: the
    /// action was applied once, and the client learns where the session stands. A session
    /// deleted meanwhile answers 404; a failed read answers as any read does (503).
    func rebuiltReplay(_ stored: IdempotentAnswer, of session: LiveSession) -> TurnAnswer {
        let rebuilt: [UInt8]?
        do throws(SessionError) {
            rebuilt = try document(atVersion: stored.version, of: session)
        } catch {
            return .failed(error)
        }
        if let rebuilt {
            counters.replaysRebuilt.add(1, ordering: .relaxed)
            return .replay(status: stored.status, version: stored.version, body: rebuilt)
        }
        counters.replaysNotRebuilt.add(1, ordering: .relaxed)
        logger.warning("a replayed key's version does not rebuild from the log; answered with the current state", metadata: [
            "session": "\(session.id)", "version": "\(stored.version)", "current": "\(session.version)",
        ])
        return .replay(status: stored.status, version: session.version, body: session.stateDocument())
    }

    /// The state document session `session` showed at `version`, rebuilt from its log; nil when
    /// the log no longer holds every entry from a kept tree to that version, or one does not
    /// rebuild. Throws `.notFound` when the session is no longer stored.
    func document(atVersion version: Int, of session: LiveSession) throws(SessionError) -> [UInt8]? {
        guard version >= 1, version <= session.version else { return nil }
        // No slice: the session was deleted since it was judged (by its holder, an admin, an
        // erasure), and answers as deleted.
        guard let slice = try storage({ try store.actionLog(sessionId: session.id, after: version, limit: 0) }) else {
            throw .notFound(session.id)
        }
        guard let start = try? FlowTree(storage: slice.startTree) else { return nil }
        let tree: FlowTree
        let record: ActionRecord
        if slice.startVersion == version {
            // A snapshot: its entry keeps its handler and transition beside the tree. (The
            // session's row at that version, where the log was folded into it, has no entry.)
            guard let entry = try storage({ try store.actions(sessionId: session.id, after: version - 1, limit: 1) }).first,
                  entry.version == version else { return nil }
            (tree, record) = (start, entry)
        } else {
            let contiguous = slice.entries.enumerated().allSatisfy { $1.action.version == slice.startVersion + 1 + $0 }
            guard contiguous, slice.entries.last?.action.version == version,
                  let last = LogRebuild(catalog: session.catalog, context: session.context)
                      .steps(from: start, entries: slice.entries, transitions: .last)?.last
            else { return nil }
            (tree, record) = (last.tree, last.record)
        }
        return SessionState.document(
            sessionId: session.id, userId: session.userId, version: version, tree: tree,
            transitionJSON: record.transition.map { Array($0.utf8) }, handledBy: record.handledBy,
            flagsJSON: session.flagsJSON, experimentsJSON: session.experimentsJSON)
    }
}
