// A session ended by an admin: deleted with its audit entry, then forgotten by this node.
import FlowStore
import Foundation

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
    /// before a read of a session they do not own (none: 404), their commits fail, and their
    /// stream watchers see it gone. Another node may own it and answer its reads from memory
    /// until its lease runs out (it cannot renew the lease of a session that is gone): with
    /// leases, the end is answered once that is over, as an erasure is.
    ///
    /// - Throws: `.notFound` when there is no such session (nothing is audited then).
    func end(_ id: String, by audit: AuditStamp) throws(SessionError) -> SessionEnding {
        guard Self.isPlausibleId(id) else { throw Self.notFound(id) }
        guard let ended = try storage({ try store.endSession(id: id, audit: audit) }) else { throw Self.notFound(id) }
        evict(id)
        events.deleted(sessionId: id)
        waitOutOtherOwners()
        return ended
    }
}

extension SessionService {
    /// With leases, waits one lease length: a session removed through this node (ended, its
    /// user erased) may be owned by another node, which answers its reads from memory until its
    /// lease runs out; it cannot renew the lease of a session that is gone.
    func waitOutOtherOwners() {
        guard let leases else { return }
        Thread.sleep(forTimeInterval: Double((leases.duration / .milliseconds(1)).rounded(.up)) / 1000)
    }
}
