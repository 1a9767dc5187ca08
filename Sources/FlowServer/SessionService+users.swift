// The admin user routes' work: reading a user's state, resetting their onboarding.
import FlowStore

extension SessionService {
    /// The user `userId` as stored, nil when no session was ever made for them.
    func user(_ userId: String) throws(SessionError) -> UserRecord? {
        try storage { try store.user(id: userId) }
    }

    /// Removes `onboarded` from user `userId`'s state (and forgets the state held for them, so
    /// their sessions read it again); nil when there is no such user.
    func resetOnboarding(_ userId: String, audit: AuditStamp) throws(SessionError) -> UserRecord? {
        let removed = try storage { try store.removeUserState(id: userId, key: "onboarded", audit: audit) }
        users.forget(userId)
        return removed
    }
}
