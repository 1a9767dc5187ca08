// The admin routes of a user's data: erasure (DELETE /v1/users/{userId}) and export.
import FlowStore
import HTTPServer
import Logging

/// `DELETE /v1/users/{userId}` and `GET /v1/users/{userId}/export`.
struct UserDataController: Controller {
    /// Erasure and export read or destroy everything about a person: `admin` only. The roles
    /// below manage flows and releases and have no need of one person's whole history (`read`
    /// still reads a user's state, `GET /v1/users/{userId}`).
    static let role = AdminRole.admin

    let userData: UserDataService
    let admin: AdminAuthorization
    let limits: BodyLimits
    let logger: Logger

    func register(on router: inout Router) {
        router.adminRoute("DELETE", "/v1/users/{userId}", admin, role: Self.role, limits: limits, erase)
        router.adminRoute("GET", "/v1/users/{userId}/export", admin, role: Self.role, limits: limits, export)
    }

    func erase(_ request: UserRequest) throws(ResponseError) -> UserErasureAnswer {
        let (erased, subject): (UserErasure, String)
        do throws(UserDataError) {
            (erased, subject) = try userData.erase(request.userId, by: admin.audit)
        } catch {
            throw problem(error)
        }
        return UserErasureAnswer(userId: request.userId, subject: subject, erased: erased)
    }

    func export(_ request: UserRequest) throws(ResponseError) -> UserExportAnswer {
        let export: UserExport
        do throws(UserDataError) {
            export = try userData.export(request.userId)
        } catch {
            throw problem(error)
        }
        return UserExportAnswer(userId: request.userId, export: export, limits: userData.limits, state: userData.stateDocument(of:))
    }

    func problem(_ error: UserDataError) -> ResponseError {
        switch error {
        case .invalidUserId:
            return ResponseError(.problem(
                400, "A user id is 1 to \(SessionInput.maxUserIdLength) characters with no control characters: this one names no user.",
                type: ProblemType.malformed, errors: [.init(pointer: "userId", detail: "must be 1 to \(SessionInput.maxUserIdLength) characters with no control characters")]))
        case .notFound(let userId):
            return ResponseError(.problem(404, "Nothing is stored about user \(userId).", type: ProblemType.notFound))
        case .storage(let error):
            return SessionService.storageFailure(error, logger: logger)
        }
    }
}
