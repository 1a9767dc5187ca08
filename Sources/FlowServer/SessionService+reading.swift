// Reading sessions: every database read made before the slot's lock is taken, none under it.
import JSON
import FeatureFlags
import FlowEngine
import FlowStore
import Foundation
import Logging

extension SessionService {
    // MARK: Reading

    /// Runs `body` on the committed state of session `id`, under the session's lock, after
    /// checking the bearer token; the state `body` leaves is kept.
    func withSession<T: Sendable>(
        _ id: String, token: String?, _ body: (inout LiveSession) throws(SessionError) -> T
    ) throws(SessionError) -> T {
        try withSession(id, access: .bearer(token), body)
    }

    func withSession<T: Sendable>(
        _ id: String, access: SessionAccess, _ body: (inout LiveSession) throws(SessionError) -> T
    ) throws(SessionError) -> T {
        try withSession(id, access: access, user: false) { (session: inout LiveSession, _) throws(SessionError) -> T in
            try body(&session)
        }
    }

    /// What a read under the slot's lock needs before it can answer.
    private enum ReadStep<T: Sendable>: Sendable {
        case done(T)
        /// The session as stored (not cached, or another node moved it).
        case load
        /// The user's state, not held.
        case user(String)
    }

    /// Runs `body` on the committed state of session `id` (and, with `user`, the user's state),
    /// under the session's lock, after checking the token; the state `body` leaves is kept.
    ///
    /// Every database read is made outside the lock, before it is taken: a session that is not
    /// cached is read and its token checked without touching the cache (`pinnedSlot`), so
    /// requests for unknown ids or with wrong tokens never evict live sessions; on a shared
    /// database the head version is read first and a cached session another node moved is read
    /// again, so a read never answers older than what any node acknowledged before it was sent.
    func withSession<T: Sendable>(
        _ id: String, access: SessionAccess, user needsUser: Bool,
        _ body: (inout LiveSession, [String: JSONValue]) throws(SessionError) -> T
    ) throws(SessionError) -> T {
        let slot = try pinnedSlot(id, access: access)
        defer { cache.unpin(slot) }
        var head: Int?? = .none
        var floor: Int?
        if let leases {
            // Owned: a cached state at least as new as when the lease was granted is the
            // committed one (no other node commits it while the lease holds). Otherwise the
            // lease is asked for, which reads the head too.
            if let owned = leases.owned(id) {
                leases.counters.ownedReads.add(1, ordering: .relaxed)
                floor = owned
            } else {
                head = .some(try leaseHead(id, leases))
            }
        } else if shared {
            counters.headChecks.add(1, ordering: .relaxed)
            head = .some(try storage { try store.headVersion(sessionId: id) })
        }
        var loaded: LiveSession?
        var user: [String: JSONValue]?
        for _ in 0..<4 {
            let step = try slot.state.withLock { (contents: inout SlotContents) throws(SessionError) -> ReadStep<T> in
                try readLocked(id, access: access, slot: slot, head: head, floor: floor, loaded: &loaded, needsUser: needsUser,
                               user: user, &contents, body)
            }
            switch step {
            case .done(let result):
                return result
            case .load:
                counters.sessionLoads.add(1, ordering: .relaxed)
                guard let read = try load(id) else { throw Self.notFound(id) }
                // What was read is at least the head checked: not to be checked against it again.
                if shared { head = .some(read.version) }
                loaded = read
            case .user(let userId):
                user = try storage { try users.state(of: userId, store: store) }
            }
        }
        throw .contention(id, reading: true)
    }

    /// Asks for session `id`'s lease (taken or renewed when no other node holds it) and returns
    /// the head version read with it, nil when the session is gone.
    func leaseHead(_ id: String, _ leases: SessionLeases) throws(SessionError) -> Int? {
        switch try storage({ try leases.acquire(id) }) {
        case .granted(_, let head), .held(_, _, let head): return head
        case .missing: return nil
        }
    }

    /// A read's step under the slot's lock: installs what was read, or says what to read.
    private func readLocked<T: Sendable>(
        _ id: String, access: SessionAccess, slot: SessionSlot, head: Int??, floor: Int?, loaded: inout LiveSession?, needsUser: Bool,
        user: [String: JSONValue]?, _ contents: inout SlotContents, _ body: (inout LiveSession, [String: JSONValue]) throws(SessionError) -> T
    ) throws(SessionError) -> ReadStep<T> {
        try access.checkPresented()
        let idle = contents.turn.phase == .idle
        if let fresh = loaded, idle, (contents.session?.version ?? -1) <= fresh.version {
            // Read outside the lock; kept when no turn of this session is under way.
            contents.session = fresh
            loaded = nil
        }
        if loaded == nil {
            guard let cached = contents.session?.version else { return .load }
            if let floor, cached < floor {
                // Cached before this node took the lease; another node committed meanwhile.
                counters.staleReloads.add(1, ordering: .relaxed)
                return .load
            }
            if case .some(let stored) = head, stored != cached {
                guard stored != nil else {
                    // Deleted through another node.
                    if idle {
                        contents.session = nil
                        cache.remove(id, slot: slot)
                    }
                    throw Self.notFound(id)
                }
                counters.staleReloads.add(1, ordering: .relaxed)
                return .load
            }
            counters.cacheHits.add(1, ordering: .relaxed)
        }
        // Moved out of the slot and back rather than copied: a copy retains every field.
        guard loaded == nil else {
            guard var session = loaded else { throw Self.notFound(id) }
            return try readSession(&session, access: access, id: id, needsUser: needsUser, user: user, body)
        }
        guard var session = contents.session.take() else { throw Self.notFound(id) }
        if access.opens(&session), let expired = expiry.refusal(id, lastActiveAt: session.lastActiveAt) {  // expiry: evicted
            if idle { cache.remove(id, slot: slot) } else { contents.session = consume session }
            throw expired
        }
        let step: ReadStep<T>
        do throws(SessionError) {
            step = try readSession(&session, access: access, id: id, needsUser: needsUser, user: user, body)
        } catch {
            contents.session = consume session
            throw error
        }
        contents.session = consume session
        return step
    }

    private func readSession<T: Sendable>(
        _ session: inout LiveSession, access: SessionAccess, id: String, needsUser: Bool, user: [String: JSONValue]?,
        _ body: (inout LiveSession, [String: JSONValue]) throws(SessionError) -> T
    ) throws(SessionError) -> ReadStep<T> {
        guard access.opens(&session) else { throw access.refusal(id) }
        try expiry.check(id, lastActiveAt: session.lastActiveAt)
        var state: [String: JSONValue] = [:]
        if needsUser {
            guard let known = user ?? users.cached(session.userId)?.state else { return .user(session.userId) }
            state = known
        }
        return .done(try body(&session, state))
    }

    /// The slot of session `id`, pinned (give it back with `cache.unpin`), after checking that
    /// the session exists and `token` opens it when it is not cached.
    ///
    /// A session that is not cached has its token checked first, from its credentials (no tree
    /// read or rebuilt), without touching the cache, so requests for unknown ids or with wrong
    /// tokens never evict live sessions; it is then read under its slot's lock, where no commit
    /// can race the read.
    private func pinnedSlot(_ id: String, access: SessionAccess) throws(SessionError) -> SessionSlot {
        try access.checkPresented()
        guard Self.isPlausibleId(id) else { throw Self.notFound(id) }
        if let slot = cache.pinIfCached(id) { return slot }
        guard let credentials = try storage({ try store.sessionCredentials(id: id) }) else { throw Self.notFound(id) }
        guard access.opens(credentials.tokenHash) else { throw access.refusal(id) }
        try expiry.check(id, lastActiveAt: SessionExpiry.date(credentials.lastActiveAt))  // expiry: before it takes a cache slot
        return cache.pin(id)
    }

    /// The pinned slot of session `id` (see `pinnedSlot`) for work answered later: answering
    /// it (`TurnRequest.finish`) unpins the slot.
    func pinnedForLater(_ id: String, token: String?) throws(SessionError) -> SessionSlot {
        try pinnedSlot(id, access: .bearer(token))
    }

    /// The committed state document of session `id` and its version, for the server's own use
    /// (no token check); nil when there is no such session or it cannot be read now.
    func currentState(_ id: String) -> (version: Int, document: [UInt8])? {
        try? withSession(id, access: .server) { session in (session.version, session.cachedStateDocument()) }
    }

    /// A page of session `id`'s action log, after the token check: up to `limit` actions after
    /// version `after`, read outside the session's lock, each with the handler and transition
    /// rebuilt from the nearest kept tree (see `LogRebuild`).
    func actionLog(_ id: String, token: String?, after: Int, limit: Int) throws(SessionError) -> [ActionRecord] {
        let (catalog, context) = try withSession(id, token: token) { ($0.catalog, $0.context) }
        guard let slice = try storage({ try store.actionLog(sessionId: id, after: after, limit: limit) }) else { return [] }
        guard let rebuilt = LogRebuild(catalog: catalog, context: context).rebuild(from: slice.startTree, entries: slice.entries) else {
            logger.error("stored log does not rebuild", metadata: ["session": "\(id)"])
            throw .unreadable(id)
        }
        return rebuilt.lazy.map(\.action).filter { $0.version > after }.prefix(limit).map { $0 }
    }

    /// The committed state document of session `id` and its version, after the token check.
    /// The document is encoded once per version and kept with the session, so most reads only
    /// check the token and copy bytes.
    /// With it, the gzip form that version's answers share (`DocumentForm`).
    func stateDocument(_ id: String, token: String?) throws(SessionError) -> (version: Int, document: [UInt8], form: DocumentForm?) {
        try withSession(id, token: token) { session in (session.version, session.cachedStateDocument(), session.documentForm) }
    }

    /// The session as committed, the actions its state accepts now, judged with the user's
    /// current state (as the next action would be), and the predicted state of each that
    /// needs no params.
    func availableActions(_ id: String, token: String?) throws(SessionError) -> (LiveSession, [AvailableAction], [Prediction]) {
        try withSession(id, access: .bearer(token), user: true) { (session: inout LiveSession, user) throws(SessionError) in
            let state = session.engineState(user: user)
            return (session, FlowEngine.availableActions(in: state.tree, catalog: state.catalog, context: state.context),
                    state.predictions())
        }
    }
}
