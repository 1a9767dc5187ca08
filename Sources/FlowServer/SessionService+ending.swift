// A session ended by an admin: deleted with its audit entry, then forgotten by this node.
import FlowStore

extension SessionService {
    /// Ends session `id` for an admin (support ending one session, not the whole user): deletes
    /// it and appends `session.end` in one transaction (`FlowStore.endSession`), whatever its
    /// token and however long it was idle; then drops it from this node's cache and ends its
    /// event streams (`event: deleted`), as an erasure does for each of a user's sessions. The
    /// user's state and other sessions stay.
    ///
    /// From then on every route of the session answers 404, as for a session its holder
    /// deleted. Here its cached state is dropped at once, and an `evict` turn empties the slot
    /// again after a commit in flight (see `evictErased`); a commit that comes after the end
    /// fails (`sessionNotFound`: 404). Other nodes on a shared database check the head version
    /// on every read (none: 404), their commits fail, and their stream watchers see it gone.
    ///
    /// - Throws: `.notFound` when there is no such session (nothing is audited then).
    func end(_ id: String, by audit: AuditStamp) throws(SessionError) -> SessionEnding {
        guard Self.isPlausibleId(id) else { throw Self.notFound(id) }
        guard let ended = try storage({ try store.endSession(id: id, audit: audit) }) else { throw Self.notFound(id) }
        evict(id)
        events.deleted(sessionId: id)
        return ended
    }
}
