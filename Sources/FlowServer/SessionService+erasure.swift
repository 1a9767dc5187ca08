// A user's data erased: this node forgets their sessions and their state, and ends their streams.

extension SessionService {
    /// Called once the store has erased user `userId` and the sessions `sessionIds`: evicts
    /// each session cached here, ends its event streams (`event: deleted`, as a delete does)
    /// and forgets the user's state.
    ///
    /// A session's cached state is dropped at once, under its slot's lock, so no read answers
    /// from it after the erasure is answered; and an `evict` turn is queued, so that when one
    /// of its actions is being committed, the slot is emptied again right after that commit's
    /// turn ends, under the same lock: a commit that succeeded before the erasure puts its
    /// state back into the slot, and its user-state change into the user cache, when its turn
    /// ends. One that comes after the erasure fails (`sessionNotFound`) and answers 404.
    ///
    /// Other nodes on a shared database find out by themselves: their reads check the head
    /// version (none: 404), their commits fail, and their stream watchers see the session gone.
    func evictErased(userId: String, sessionIds: [String]) {
        users.forget(userId)
        for id in sessionIds {
            evict(id) { [users] in users.forget(userId) }
            events.deleted(sessionId: id)
        }
    }

    /// Drops session `id`'s cached state, if it is cached: at once, and again in the session's
    /// turn (after a commit in flight), where its slot leaves the cache once no request waits
    /// in it; `then` runs after that turn.
    func evict(_ id: String, then: @escaping @Sendable () -> Void = {}) {
        guard let slot = cache.pinIfCached(id) else { return }
        let answer = ServerReply { _ in then() }
        let request = TurnRequest(job: .evict, id: id, token: nil, slot: slot, answer: answer)
        var afters: [@Sendable () -> Void] = []
        slot.state.withLock { contents in
            contents.session = nil
            drive(contents.turn.arrived(request), slot: slot, context: .request, &contents, &afters)
        }
        for after in afters { after() }
    }
}
