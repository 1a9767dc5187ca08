// The rollout routes: a release's rollout as it stands, and raising it by hand.
import FlowStore
import HTTPServer
import JSON
import Logging

/// `GET` and `POST /v1/releases/{id}/rollout`.
struct RolloutController: Controller {
    let rollouts: RolloutService
    let admin: AdminAuthorization
    let limits: BodyLimits
    let logger: Logger

    func register(on router: inout Router) {
        router.adminRoute("GET", "/v1/releases/{id}/rollout", admin, limits: limits, read)
        // Raising a rollout makes the release live for more users: publish, as activation.
        router.adminRoute("POST", "/v1/releases/{id}/rollout", admin, role: .publish, limits: limits, raise)
    }

    func read(_ request: ReleaseRequest) throws(ResponseError) -> RolloutAnswer {
        RolloutAnswer(document: try document(request.id))
    }

    func raise(_ request: RolloutRaiseRequest) throws(ResponseError) -> RolloutAnswer {
        let raised: RolloutRecord?
        do {
            raised = try rollouts.raise(releaseId: request.id, to: request.percentage, by: admin.audit)
        } catch let refusal as RolloutService.Refusal {
            throw Application.rolloutConflict(refusal, releaseId: request.id)
        } catch let refusal as ResponseError {
            throw refusal  // the release's activation at 100 % refused (stale, its state)
        } catch let conflict as ReleaseConflict {
            throw ResponseError(.problem(409, conflict.detail, type: ProblemType.prefix + conflict.code))
        } catch {
            throw SessionService.storageFailure(error, logger: logger)
        }
        guard raised != nil else { throw Self.noRollout(request.id) }
        return RolloutAnswer(document: try document(request.id))
    }

    private func document(_ id: Int) throws(ResponseError) -> JSONValue {
        guard let document = try Application.store(logger, { try rollouts.document(releaseId: id) }) else {
            throw Self.noRollout(id)
        }
        return document
    }

    private static func noRollout(_ id: Int) -> ResponseError {
        ResponseError(.problem(404, "Release \(id) has no rollout.", type: ProblemType.notFound))
    }
}

/// `POST /v1/releases/{id}/rollout`: the optional body `{"percentage": n}` (1 to 100); without
/// one, the plan's next step.
struct RolloutRaiseRequest: RouteRequest {
    let id: Int
    let percentage: Int?

    init(_ request: Request, limits: BodyLimits) throws(ResponseError) {
        id = try request.releaseId()
        guard let body = try request.optionalJSONBody(limits) else {
            percentage = nil
            return
        }
        guard let object = body.objectValue, object.keys.allSatisfy({ $0 == "percentage" }) else {
            throw RolloutPlan.invalid([.init(pointer: "", detail: "must be {\"percentage\": n}, or empty for the next step")])
        }
        guard let value = object["percentage"] else {
            percentage = nil
            return
        }
        guard let number = value.integerValue, (1...100).contains(number) else {
            throw RolloutPlan.invalid([.init(pointer: "/percentage", detail: "must be an integer from 1 to 100")])
        }
        percentage = number
    }
}
