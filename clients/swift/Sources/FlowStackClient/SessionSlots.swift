// SessionSlots: which slot of a store's server and user each running FlowSession of the process writes.
import Foundation

/// The slots (``SessionKey/slot``) the running `FlowSession`s of this process hold, per store
/// scope (``SessionStore/slotScope``), server and user. Two sessions of one user running at once
/// (two windows of an iPad app) would otherwise resume the same stored session and write their
/// queues over each other, losing a tap one of them queued offline when the other saved.
///
/// A session starting claims, among the slots no running session holds, looked at in order up
/// to the first that keeps nothing: the first that keeps taps not yet sent (a window closed
/// offline), else the first (the session the user last had). It holds it until it is closed or
/// let go. Without a scope, or with every slot held, it uses slot 1 unclaimed, as before. This
/// is the JavaScript client's claiming of `localStorage` slots for tabs, with the process for
/// the origin and a running session for a tab; another process on the same file (an app
/// extension) is not seen.
enum SessionSlots {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var held: [Scope: Set<Int>] = [:]

    private struct Scope: Hashable {
        var store: String
        var server: String
        var userId: String
    }

    /// Set in the process's environment (`FLOWSTACK_SLOTS_UNCLAIMED=1`), sessions claim no slot:
    /// for a test to show what the slots prevent.
    private static let unclaimed = ProcessInfo.processInfo.environment["FLOWSTACK_SLOTS_UNCLAIMED"] == "1"

    /// Claims a slot of `key`'s server and user in `store` for a session starting: the slot's
    /// key, what the store keeps in it, and the claim, which lets the slot go when released or
    /// dropped (nil: unclaimed).
    static func claim(_ key: SessionKey, in store: any SessionStore) throws -> (key: SessionKey, kept: StoredSession?, claim: SlotClaim?) {
        let unclaimedFirst = { () throws -> (key: SessionKey, kept: StoredSession?, claim: SlotClaim?) in
            (key.inSlot(1), try store.load(key.inSlot(1)), nil)
        }
        guard let name = store.slotScope, !unclaimed else { return try unclaimedFirst() }
        let scope = Scope(store: name, server: key.server, userId: key.userId)
        return try lock.withLock {
            let taken = held[scope, default: []]
            var first: (key: SessionKey, kept: StoredSession?)?
            var chosen: (key: SessionKey, kept: StoredSession?)?
            for slot in SessionKey.slots where !taken.contains(slot) {
                let candidate = key.inSlot(slot)
                let kept = try store.load(candidate)
                if first == nil { first = (candidate, kept) }
                if let kept, !kept.queue.isEmpty {
                    chosen = (candidate, kept)
                    break
                }
                if kept == nil { break }
            }
            guard let slot = chosen ?? first else { return try unclaimedFirst() }
            held[scope, default: []].insert(slot.key.slot)
            return (slot.key, slot.kept, SlotClaim(release: { release(slot.key.slot, of: scope) }))
        }
    }

    private static func release(_ slot: Int, of scope: Scope) {
        lock.withLock {
            held[scope]?.remove(slot)
            if held[scope]?.isEmpty == true { held[scope] = nil }
        }
    }

    /// The slots held now for `key`'s server and user in `store` (for tests).
    static func held(_ key: SessionKey, in store: any SessionStore) -> Set<Int> {
        guard let name = store.slotScope else { return [] }
        return lock.withLock { held[Scope(store: name, server: key.server, userId: key.userId)] ?? [] }
    }
}

/// A running session's hold on its slot: let go once, by `release()` or when dropped.
final class SlotClaim: @unchecked Sendable {
    private let lock = NSLock()
    private var action: (@Sendable () -> Void)?

    init(release: @escaping @Sendable () -> Void) { action = release }

    func release() {
        let action = lock.withLock { () -> (@Sendable () -> Void)? in
            defer { self.action = nil }
            return self.action
        }
        action?()
    }

    deinit { release() }
}
