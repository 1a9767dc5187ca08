// An experiment's lifecycle over HTTP: PATCH (stop, restart, conclude without resending the definition), transitions, activation warnings.
import FeatureFlags
import FlowStore
import HTTPServer
import JSON
import Logging

extension Application {
    /// The media types `PATCH /v1/experiments/{key}` reads: an RFC 7396 merge patch, or plain
    /// JSON read the same way. Named in `Accept-Patch` (RFC 5789 §3.1) and on a 415.
    static let experimentPatchTypes = ["application/merge-patch+json", "application/json"]

    /// How many times a PATCH re-reads the stored experiment when another change came between
    /// its read and its compare-and-set write, before answering 409.
    static let experimentPatchAttempts = 3

    /// `PATCH /v1/experiments/{key}`: the stored definition with the body merged in (RFC 7396),
    /// validated as a PUT is, moved along the lifecycle (409 `invalid-transition` otherwise) and
    /// stored as the next revision; a conclusion makes the winner's pins live in the same
    /// transaction. `If-Match: "<revision>"` makes it conditional (412 when the revision moved).
    ///
    /// ```http
    /// PATCH /v1/experiments/onboarding-length
    /// Content-Type: application/merge-patch+json
    ///
    /// {"status": "concluded", "winner": "short"}
    /// ```
    static func patchExperiment(_ request: Request, store: any FlowStore, registry: DefinitionRegistry,
                                admin: AdminAuthorization, limits: BodyLimits, logger: Logger) throws(ResponseError) -> Response {
        let key = try definitionKey(request)
        try checkPatchMediaType(request)
        var ifMatch: IfMatch?
        if let header = request.headers["If-Match"] {
            guard let parsed = IfMatch(header) else {
                throw ResponseError(.problem(400, "If-Match must be * or the experiment's revision as an entity tag, such as \"3\"; found \(header).",
                                             type: ProblemType.malformed))
            }
            ifMatch = parsed
        }
        let body = try request.jsonBody(limits).get()
        guard var patch = body.objectValue else {
            throw ResponseError(.problem(
                400, "A patch of an experiment is a JSON object of the members to change, such as {\"status\": \"stopped\"}; found \(body.typeName).",
                type: ProblemType.malformed))
        }
        for member in serverMembers { patch[member] = nil }

        for _ in 1...experimentPatchAttempts {
            // The stored experiment, not this node's copy: another node may have changed it, and
            // the compare-and-set below is on the revision read here.
            let records = try Self.store(logger) { try store.allDefinitions(.experiment) }
            guard let stored = records.first(where: { $0.key == key }) else {
                throw ResponseError(.problem(404, "There is no experiment \(key); create it with PUT /v1/experiments/\(key).",
                                             type: ProblemType.notFound))
            }
            if let ifMatch, !ifMatch.matches(stored.revision) {
                var response = Response.problem(
                    412, "Experiment \(key) is at revision \(stored.revision), not \(ifMatch); read it again before changing it.",
                    type: ProblemType.versionMismatch, extensions: [("currentRevision", String(stored.revision))])
                response.headers["ETag"] = "\"\(stored.revision)\""
                throw ResponseError(response)
            }
            let storedJSON = (try? JSONParser.parse(stored.definition, limits: .storedData)) ?? .object(JSONObject())
            // A stored definition that no longer reads (an older server's) is treated as running.
            let before = (try? ExperimentDefinition(json: storedJSON))?.status ?? .running
            let merged = storedJSON.mergePatched(with: .object(patch))
            if merged == storedJSON, let unchanged = try? ExperimentDefinition(json: storedJSON) {
                // Nothing changes (a repeated stop, a retried conclusion): no new revision, no
                // audit entry, and no transition to check (concluded → concluded is no move).
                return experimentAnswer(key: key, definition: unchanged, text: stored.definition,
                                        revision: stored.revision, updatedAt: stored.updatedAt)
            }
            // The move is checked before the rest: `{"status": "running"}` on a concluded
            // experiment is an illegal move (409), not a winner left on a running one (422).
            let statusValue = merged.objectValue?["status"]
            if let after = statusValue.map({ $0.stringValue.flatMap(ExperimentDefinition.Status.init(rawValue:)) }) ?? .running {
                try checkTransition(key: key, from: before, to: after)
            }
            let definition: ExperimentDefinition
            do throws(InvalidDefinition) {
                definition = try ExperimentDefinition(json: merged)
            } catch {
                throw invalidFlagDefinition("experiment \(key) once patched", error.problems)
            }
            try checkTransition(key: key, from: before, to: definition.status)
            if merged == storedJSON {
                // Nothing changes (a repeated stop): no new revision, no audit entry.
                return experimentAnswer(key: key, definition: definition, text: stored.definition,
                                        revision: stored.revision, updatedAt: stored.updatedAt)
            }
            try checkPins(definition, key: key, registry: registry)
            var writer = JSONWriter(capacity: stored.definition.utf8.count + 64)
            writer.writeValue(merged)
            let text = String(decoding: writer.takeBytes(), as: UTF8.self)
            let activating = before != .concluded ? definition.winningVariant?.pinnedFlows ?? [:] : [:]
            var stamp = admin.audit
            stamp.action = lifecycleAction(from: before, to: definition.status) ?? AuditAction.put(.experiment)
            let written = try Self.store(logger) {
                try store.changeExperiment(key: key, definition: text, revision: stored.revision, activating: activating, audit: stamp)
            }
            guard let revision = written else {
                if ifMatch != nil {
                    throw ResponseError(.problem(
                        412, "Experiment \(key) changed while this patch was applied; read it again before changing it.",
                        type: ProblemType.versionMismatch))
                }
                continue
            }
            let now = Timestamp.string()
            registry.setExperiment(key, .init(definition: definition, text: text, revision: revision, updatedAt: now))
            for (flow, version) in activating { registry.setLive(name: flow, version: version) }
            return experimentAnswer(key: key, definition: definition, text: text, revision: revision, updatedAt: now)
        }
        throw ResponseError(.problem(409, "Experiment \(key) kept changing while this patch was applied; try again.",
                                     type: ProblemType.concurrentChange))
    }

    /// The stored experiment as `GET` shows it, with its `ETag` and the upload's `warnings`.
    static func experimentAnswer(key: String, definition: ExperimentDefinition, text: String, revision: Int,
                                 updatedAt: String) -> Response {
        let warnings = growthBookWarnings { () throws(GrowthBookPayload.Untranslatable) in
            _ = try GrowthBookPayload.feature(experiment: definition, key: key)
        }
        var response = Response.json(keyedDocument(key: key, text: text, revision: revision, updatedAt: updatedAt, warnings: warnings))
        response.headers["ETag"] = "\"\(revision)\""
        return response
    }

    /// 415 unless the body is labelled as a merge patch or as JSON (or not labelled at all):
    /// a JSON Patch (RFC 6902) array, or a form, would be read as something it is not.
    static func checkPatchMediaType(_ request: Request) throws(ResponseError) {
        guard let header = request.headers["Content-Type"] else { return }
        let type = header.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard !experimentPatchTypes.contains(type) else { return }
        var response = Response.problem(
            415, "PATCH takes a JSON merge patch (Content-Type: application/merge-patch+json, or application/json); found \(header).",
            type: ProblemType.unsupportedMediaType)
        response.headers["Accept-Patch"] = experimentPatchTypes.joined(separator: ", ")
        throw ResponseError(response)
    }

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
