// RolloutPlan: how a release goes live for a share of new sessions, and what guards it.
import ExperimentStats
import HTTPServer
import JSON

/// The `rollout` member of `POST /v1/releases/{id}/activate`:
///
/// ```json
/// {"percentage": 10, "steps": [25, 50, 100], "interval": "10m",
///  "guardrails": {"metric": "onboarded", "alpha": 0.05, "minSessions": 100, "tuning": 5000}}
/// ```
///
/// `percentage` (1…99) of new sessions run the release from the start; `steps` are the
/// percentages it is raised to, in order, each above the one before, by
/// `POST /v1/releases/{id}/rollout` or, with `interval` (`30s`, `10m`, `2h`), on that schedule;
/// at 100 the release is fully activated. Every member but `percentage` is optional.
struct RolloutPlan: Sendable, Equatable {
    var percentage: Int
    var steps: [Int] = []
    /// Seconds between scheduled steps; nil: raised by hand only.
    var interval: Int?
    var guardrails = Guardrails()

    /// What the rollout is checked against, continuously.
    struct Guardrails: Sendable, Equatable {
        /// `onboarded` (the default; `onboarding.completed` says the same: the user completed
        /// onboarding in the session) or a feature: a session converted when it showed that
        /// screen on top.
        var metric = RolloutPlan.onboarded
        var alpha = 0.05
        /// Sessions each side needs before the guardrails are judged at all.
        var minSessions = 100
        /// gbstats' `sequential_tuning_parameter`: total sessions where the test is sharpest.
        var tuning = 5000.0
    }

    static let onboarded = "onboarded"

    /// Reads a plan; a 400 `invalid-rollout` with a JSON Pointer under `pointer` for each problem.
    init(json: JSONValue, pointer: String = "/rollout") throws(ResponseError) {
        var errors: [ProblemDetails.FieldError] = []
        func problem(_ path: String, _ detail: String) { errors.append(.init(pointer: pointer + path, detail: detail)) }
        guard let object = json.objectValue else {
            throw Self.invalid([.init(pointer: pointer, detail: "must be an object with percentage, steps, interval, guardrails")])
        }
        for member in object where !["percentage", "steps", "interval", "guardrails"].contains(member.key) {
            problem("/" + member.key, "unknown member; expected percentage, steps, interval or guardrails")
        }
        percentage = 0
        // At 100 there is nothing to roll out: that is a plain activation (no rollout body).
        if let value = object["percentage"]?.integerValue, (1...99).contains(value) {
            percentage = value
        } else {
            problem("/percentage", "must be an integer from 1 to 99 (for every session at once, activate without a rollout)")
        }
        if let value = object["steps"], value != .null {
            if let array = value.arrayValue, array.count <= 100 {
                var previous = percentage
                for (index, step) in array.enumerated() {
                    guard let step = step.integerValue, step > previous, step <= 100 else {
                        problem("/steps/\(index)", "must be an integer above \(previous) and at most 100 (steps only raise the share)")
                        break
                    }
                    steps.append(step)
                    previous = step
                }
            } else {
                problem("/steps", "must be an array of at most 100 percentages")
            }
        }
        if let value = object["interval"], value != .null {
            if let text = value.stringValue, let seconds = Self.seconds(text) {
                interval = seconds
                if steps.isEmpty { problem("/interval", "a schedule needs steps to raise the share to") }
            } else {
                problem("/interval", "must be a duration such as \"30s\", \"10m\" or \"2h\" (1 second to 30 days)")
            }
        }
        if let value = object["guardrails"] {
            if let guards = value.objectValue {
                for member in guards where !["metric", "alpha", "minSessions", "tuning"].contains(member.key) {
                    problem("/guardrails/" + member.key, "unknown member; expected metric, alpha, minSessions or tuning")
                }
                if let metric = guards["metric"] {
                    if let text = metric.stringValue, !text.isEmpty, text.unicodeScalars.count <= 200 {
                        guardrails.metric = text == "onboarding.completed" ? Self.onboarded : text
                    } else {
                        problem("/guardrails/metric", "must be \"onboarded\" or the feature of a screen")
                    }
                }
                if let alpha = guards["alpha"] {
                    if let value = alpha.doubleValue, value > 0, value <= 0.5 { guardrails.alpha = value } else {
                        problem("/guardrails/alpha", "must be a number above 0 and at most 0.5")
                    }
                }
                if let minimum = guards["minSessions"] {
                    if let value = minimum.integerValue, (1...1_000_000).contains(value) { guardrails.minSessions = value } else {
                        problem("/guardrails/minSessions", "must be an integer from 1 to 1000000")
                    }
                }
                if let tuning = guards["tuning"] {
                    if let value = tuning.doubleValue, value >= 1, value <= 1e9 { guardrails.tuning = value } else {
                        problem("/guardrails/tuning", "must be a number from 1 to 1e9")
                    }
                }
            } else {
                problem("/guardrails", "must be an object with metric, alpha, minSessions, tuning")
            }
        }
        guard errors.isEmpty else { throw Self.invalid(errors) }
    }

    init(percentage: Int, steps: [Int] = [], interval: Int? = nil, guardrails: Guardrails = Guardrails()) {
        self.percentage = percentage
        self.steps = steps
        self.interval = interval
        self.guardrails = guardrails
    }

    static func invalid(_ errors: [ProblemDetails.FieldError]) -> ResponseError {
        ResponseError(.problem(400, "The rollout is not valid: " + errors.map { "\($0.pointer): \($0.detail)" }.joined(separator: "; ") + ".",
                               type: ProblemType.invalidRollout, errors: errors))
    }

    /// `30s`, `10m`, `2h`, `1d` in seconds; nil for anything else or outside 1 s … 30 days.
    static func seconds(_ text: String) -> Int? {
        guard let unit = text.last, let count = Int(text.dropLast()), count > 0 else { return nil }
        let scale: Int
        switch unit {
        case "s": scale = 1
        case "m": scale = 60
        case "h": scale = 3600
        case "d": scale = 86400
        default: return nil
        }
        let (seconds, overflow) = count.multipliedReportingOverflow(by: scale)
        return !overflow && seconds <= 30 * 86400 ? seconds : nil
    }

    /// The plan as stored and shown.
    var json: JSONValue {
        var object: JSONObject = ["percentage": .integer(percentage), "steps": .array(steps.map { .integer($0) })]
        object["interval"] = interval.map { .string("\($0)s") } ?? .null
        object["guardrails"] = .object(["metric": .string(guardrails.metric), "alpha": .number(guardrails.alpha),
                                        "minSessions": .integer(guardrails.minSessions), "tuning": .number(guardrails.tuning)])
        return .object(object)
    }

    /// The plan back from its stored JSON; nil when it does not read.
    static func stored(_ text: String) -> RolloutPlan? {
        guard let json = try? JSONParser.parse(text, limits: .storedData) else { return nil }
        do throws(ResponseError) {
            return try RolloutPlan(json: json)
        } catch {
            return nil
        }
    }
}
