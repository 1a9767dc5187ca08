// The admin routes of a user's state: read it, and reset their onboarding.
import FlowStore
import HTTPServer

/// `GET /v1/users/{userId}` and `DELETE /v1/users/{userId}/onboarding` (erasure and export are
/// `UserDataController`'s).
struct UserController: Controller {
    let sessions: SessionService
    let admin: AdminAuthorization
    let limits: BodyLimits

    func register(on router: inout Router) {
        router.adminRoute("GET", "/v1/users/{userId}", admin, limits: limits, user)
        router.adminRoute("DELETE", "/v1/users/{userId}/onboarding", admin, limits: limits, resetOnboarding)
    }

    func user(_ request: UserRequest) throws(ResponseError) -> UserAnswer {
        // A user id no session could have been made for (a control character, a NUL that
        // PostgreSQL would refuse) names nobody.
        guard request.isValid, let user = try sessionCall({ () throws(SessionError) in try sessions.user(request.userId) }) else {
            throw ResponseError(.problem(404, "There is no user \(request.userId): no session was ever made for them.",
                                         type: ProblemType.notFound))
        }
        return UserAnswer(user: user)
    }

    func resetOnboarding(_ request: UserRequest) throws(ResponseError) -> NoContent {
        guard request.isValid else {
            throw ResponseError(.problem(404, "There is no user \(request.userId).", type: ProblemType.notFound))
        }
        let removed = try sessionCall { () throws(SessionError) in
            try sessions.resetOnboarding(request.userId, audit: AuditStamp(credential: admin.credential, action: "user.onboarding.reset"))
        }
        guard removed != nil else {
            throw ResponseError(.problem(404, "There is no user \(request.userId).", type: ProblemType.notFound))
        }
        return NoContent()
    }
}

/// A route on one user: `{userId}`, and whether a session could ever have been made for it.
struct UserRequest: RouteRequest {
    let userId: String
    let isValid: Bool

    init(_ request: Request, limits: BodyLimits) {
        userId = request.parameter("userId")
        isValid = SessionInput.isValidUserId(userId)
    }
}
