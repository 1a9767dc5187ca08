// A user's data erased: this node forgets their sessions and their state, and ends their streams.

extension SessionService {
    /// Called once the store has erased user `userId` and the sessions `sessionIds`: evicts
    /// each session cached here, ends its event streams (`event: deleted`, as a delete does)
    /// and forgets the user's state.
    ///
    /// A session's cached state is dropped at once, under its slot's lock, so no read answers
    /// from it after the erasure is answered; when one of its actions is being committed, the
    /// slot is emptied again right after that commit's turn ends (first in its queue): a commit
    /// that succeeded before the erasure puts its state back into the slot, and its user-state
    /// change into the user cache, when its turn ends. One that comes after the erasure fails
    /// (`sessionNotFound`) and answers 404.
    ///
    /// Other nodes on a shared database find out by themselves: their reads check the head
    /// version (none: 404), their commits fail, and their stream watchers see the session gone.
    func evictErased(userId: String, sessionIds: [String]) {
        users.forget(userId)
        for id in sessionIds {
            if let slot = cache.pinIfCached(id) {
                let evict: SessionWork = { [cache, users] contents in
                    contents.session = nil
                    cache.remove(id, slot: slot)
                    users.forget(userId)
                    return {}
                }
                let after = slot.state.withLock { contents -> (@Sendable () -> Void)? in
                    contents.session = nil
                    guard contents.committing else { return evict(&contents) }
                    contents.queue.insert(evict, at: 0)
                    return nil
                }
                after?()
                cache.unpin(slot)
            }
            events.deleted(sessionId: id)
        }
    }
}
