// An experiment's lifecycle: the moves allowed (draft → running ⇄ stopped → concluded), their
// audit actions, and what an activation leaves pinned by running experiments.
import FeatureFlags
import FlowStore
import HTTPServer
import JSON
import Logging

extension Application {
    /// 409 `invalid-transition` unless an experiment at `from` (nil: not stored yet) may move
    /// to `to`. A new experiment starts as a draft, running or stopped, never concluded: a
    /// conclusion needs a run to conclude.
    static func checkTransition(key: String, from: ExperimentDefinition.Status?, to: ExperimentDefinition.Status) throws(ResponseError) {
        let allowed = from.map { $0.canMove(to: to) } ?? (to != .concluded)
        guard !allowed else { return }
        let detail: String
        switch from {
        case nil:
            detail = "A new experiment cannot start concluded; create it as \"draft\" or \"running\", and conclude it once it has run."
        case .concluded?:
            detail = "Experiment \(key) is concluded, which is final; make a new experiment to test again."
        case let from?:
            let next = ExperimentDefinition.Status.allCases.filter { from.canMove(to: $0) && $0 != from }.map(\.rawValue)
            detail = "Experiment \(key) is \(from.rawValue) and cannot become \(to.rawValue); from \(from.rawValue) it can become \(next.joined(separator: " or "))."
        }
        let allowedNext = from.map { from in
            ExperimentDefinition.Status.allCases.filter { from.canMove(to: $0) && $0 != from }.map { JSONValue.string($0.rawValue) }
        } ?? []
        throw ResponseError(.problem(
            409, detail, type: ProblemType.invalidTransition,
            errors: [.init(pointer: "/status", detail: "\(from?.rawValue ?? "(new)") → \(to.rawValue) is not a move of the lifecycle draft → running ⇄ stopped → concluded")],
            extensions: [("currentStatus", from.map { JSONValue.string($0.rawValue).jsonText } ?? "null"),
                         ("allowed", JSONValue.array(allowedNext).jsonText)]))
    }

    /// 409 `invalid-transition` for a PUT that concludes: a conclusion makes flow versions live,
    /// which is publishing (`PATCH`, the route marked for the publish role), not editing a
    /// definition (PUT).
    static func refuseConclusionByPut(key: String, from: ExperimentDefinition.Status?,
                                      to: ExperimentDefinition.Status) throws(ResponseError) {
        guard to == .concluded, let from, from != .concluded else { return }
        throw ResponseError(.problem(
            409, "A PUT does not conclude experiment \(key): concluding makes the winner's flow versions live; "
                + "PATCH /v1/experiments/\(key) {\"status\": \"concluded\", \"winner\": …} does.",
            type: ProblemType.invalidTransition,
            errors: [.init(pointer: "/status", detail: "conclude with PATCH")],
            extensions: [("currentStatus", JSONValue.string(from.rawValue).jsonText)]))
    }

    /// The audit action of a move along the lifecycle, nil when the status stays.
    static func lifecycleAction(from: ExperimentDefinition.Status?, to: ExperimentDefinition.Status) -> String? {
        guard let from, from != to else { return nil }
        switch to {
        case .running: return AuditAction.experimentStart
        case .stopped: return AuditAction.experimentStop
        case .concluded: return AuditAction.experimentConclude
        case .draft: return nil
        }
    }

    /// What making `flows` live leaves as it was: each running experiment that pins one of them
    /// keeps putting its variants' new sessions on the pinned version, whatever is live. As
    /// `{experiment, flow, live, pins: {variant: version}, detail}`, by experiment key.
    ///
    /// Rolling a flow back by activating an older version while an experiment pins the newer
    /// one to a variant does not end the experiment: the variant's new users still get the
    /// newer version. The activation's answer says so.
    static func experimentPinWarnings(flows: [String], registry: DefinitionRegistry) -> [JSONValue] {
        let live = registry.liveVersions
        var warnings: [JSONValue] = []
        for (key, experiment) in registry.allExperiments where experiment.definition.assignsSessions {
            for flow in flows.sorted() {
                let pinning = experiment.definition.variants.compactMap { variant in
                    variant.pinnedFlows[flow].map { (variant: variant.key, version: $0) }
                }
                guard !pinning.isEmpty else { continue }
                let liveVersion = live[flow]
                let pins = JSONObject(pinning.map { JSONObject.Member(key: $0.variant, value: .integer($0.version)) })
                let described = pinning.map { "variant \($0.variant) on version \($0.version)" }.joined(separator: ", ")
                let detail = "experiment \(key) is running and keeps putting new sessions of \(described) of flow \(flow), "
                    + "whatever version is live (\(liveVersion.map(String.init) ?? "none")); stop it "
                    + "(PATCH /v1/experiments/\(key) {\"status\": \"stopped\"}) or conclude it to put every new session on the live version"
                warnings.append([
                    "experiment": .string(key), "flow": .string(flow),
                    "live": liveVersion.map { JSONValue.integer($0) } ?? .null,
                    "pins": .object(pins), "detail": .string(detail),
                ])
            }
        }
        return warnings
    }
}
