// What the rollout and release routes share about rollouts: the 409 of a rollout that cannot
// move, starting one from an activation, and a release shown with its rollout.
import FlowStore
import HTTPServer
import JSON
import Logging

extension Application {
    /// The 409 of a rollout that cannot move that way now.
    static func rolloutConflict(_ refusal: RolloutService.Refusal, releaseId: Int) -> ResponseError {
        let detail: String
        switch refusal {
        case .anotherInProgress(let other):
            detail = "Release \(other) is rolling out; one rollout runs at a time: finish or roll back release \(other) first."
        case .exists:
            detail = "Release \(releaseId) was rolled out already."
        case .notRollingOut(let state):
            detail = "The rollout of release \(releaseId) is not in progress (\(state))."
        case .notAbove(let current):
            detail = "The rollout of release \(releaseId) stands at \(current) %: a rollout is only raised (lowering it would move users back)."
        }
        return ResponseError(.problem(409, detail, type: ProblemType.rolloutConflict))
    }

    /// For the releases' activate route: when `body` has a `rollout` member, starts rolling out
    /// release `releaseId` (its versions `flows`) instead of activating it fully, and returns the
    /// rollout document; nil when the body asks for no rollout. 400 `invalid-rollout` for a bad
    /// plan, 409 `rollout-conflict` when another release is rolling out or this one was.
    func startRollout(releaseId: Int, flows: [String: Int], body: JSONValue?) throws(ResponseError) -> JSONValue? {
        try Self.startRollout(rollouts, logger: logger, releaseId: releaseId, flows: flows, body: body)
    }

    static func startRollout(_ rollouts: RolloutService, logger: Logger, releaseId: Int, flows: [String: Int],
                             body: JSONValue?) throws(ResponseError) -> JSONValue? {
        guard let plan = body?.objectValue?["rollout"], plan != .null else { return nil }
        let parsed = try RolloutPlan(json: plan)
        do {
            _ = try rollouts.begin(releaseId: releaseId, flows: flows, plan: parsed)
            return try rollouts.document(releaseId: releaseId)
        } catch let refusal as RolloutService.Refusal {
            throw Self.rolloutConflict(refusal, releaseId: releaseId)
        } catch let error as ResponseError {
            throw error
        } catch {
            throw SessionService.storageFailure(error, logger: logger)
        }
    }
}

extension RolloutService {
    /// The release with its rollout document as `rollout` (a release never rolled out as it is).
    func withRollout(_ release: ReleaseRecord) -> ReleaseRecord {
        guard let document = try? document(releaseId: release.id) else { return release }
        var shown = release
        shown.rollout = document.jsonText
        return shown
    }
}
