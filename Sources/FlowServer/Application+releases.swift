// Releases: several flow versions (and flag and experiment definitions) made, validated against
// each other and the live rest, tested, approved, activated in one transaction and rolled back
// in one call.
import FeatureFlags
import FlowEngine
import FlowScenarios
import FlowStore
import HTTPServer
import JSON
import Logging

extension Application {
    /// What a release submission holds once every part is checked.
    struct ReleaseSubmission {
        var description: String
        var flows: [String: (definition: FlowDefinition, text: String)]
        var flags: [String: (definition: FlagDefinition, text: String)]
        var experiments: [String: (definition: ExperimentDefinition, text: String)]
        var suites: [FlowScenarioSuite]
    }

    /// The rollouts branch's part in the release routes; nil: this server does not roll releases
    /// out (an activation's `rollout` member is refused as unknown).
    struct ReleaseRollouts: Sendable {
        /// Starts rolling release `releaseId` (its versions `flows`) out by the activation's body;
        /// its rollout document, or nil when the body asks for none (`Application.startRollout`).
        var start: @Sendable (_ releaseId: Int, _ flows: [String: Int], _ body: JSONValue?) throws(ResponseError) -> JSONValue?
        /// Ends the rollout of a release rolled back by hand (`RolloutService.stop`).
        var stop: @Sendable (_ releaseId: Int, _ reason: String) throws -> Void
        /// The release with its rollout document as `rollout`, for the documents the routes answer.
        var withRollout: @Sendable (ReleaseRecord) -> ReleaseRecord = { $0 }
    }

    /// What `RolloutService.Hooks` does to releases: a rollout reaching 100 % activates its
    /// release fully (tests and review were checked when it began), a guardrail that failed
    /// rolls it back with the verdict as its reason and the figures in the audit log's detail.
    static func releaseHooks(store: any FlowStore, registry: DefinitionRegistry, logger: Logger)
        -> (activate: @Sendable (Int) throws -> Void, rollBack: @Sendable (Int, String, String) throws -> Void) {
        let activate: @Sendable (Int) throws -> Void = { id in
            _ = try store.activateRelease(id: id, rules: ReleaseActivationRules(allowUntested: true), audit: AuditStamp(credential: "rollout:\(id)"))
            try Self.reloadDefinitions(store: store, registry: registry, logger: logger)
        }
        let rollBack: @Sendable (Int, String, String) throws -> Void = { id, reason, detail in
            let stopped = try store.release(id: id).map { Self.stoppedExperiments($0, registry: registry) } ?? [:]
            _ = try store.rollbackRelease(id: id, reason: reason, stopped: stopped, audit: AuditStamp(credential: "rollout:\(id)", detail: detail))
            try Self.reloadDefinitions(store: store, registry: registry, logger: logger)
        }
        return (activate, rollBack)
    }

    static func addReleaseRoutes(to router: inout Router, store: any FlowStore, registry: DefinitionRegistry, admin: AdminAuthorization,
                                 requireReview: Bool, rollouts: ReleaseRollouts? = nil, limits: BodyLimits, logger: Logger) {
        router.adminRoute("GET", "/v1/releases", admin) { request throws(ResponseError) in
            let releases = try Self.store(logger) { try store.releases() }
            var writer = JSONWriter()
            writer.beginObject()
            writer.writeKey("releases")
            writer.beginArray()
            for release in releases { writer.writeRawValue(Self.releaseDocument(rollouts?.withRollout(release) ?? release)) }
            writer.endArray()
            writer.endObject()
            return .json(writer.takeBytes())
        }

        router.adminRoute("GET", "/v1/releases/{id}", admin) { request throws(ResponseError) in
            let release = try Self.storedRelease(request, store: store, logger: logger)
            return .json(Self.releaseDocument(rollouts?.withRollout(release) ?? release))
        }

        router.adminRoute("POST", "/v1/releases", admin) { request throws(ResponseError) in
            let json = try request.jsonBody(limits).get()
            let submission = try Self.releaseSubmission(json, registry: registry)
            // Each flow gets its next version; the store refuses when another was stored meanwhile.
            let latest = Dictionary(registry.summary.map { ($0.name, $0.latest) }, uniquingKeysWith: { $1 })
            var versions: [String: Int] = [:]
            for name in submission.flows.keys { versions[name] = (latest[name] ?? 0) + 1 }
            try Self.checkReleaseExperiments(submission, versions: versions, registry: registry)
            let record = ReleaseRecord(
                description: submission.description, state: .draft, document: String(decoding: request.body, as: UTF8.self),
                versions: versions, flags: submission.flags.mapValues(\.text), experiments: submission.experiments.mapValues(\.text),
                base: registry.liveVersions, createdBy: admin.audit.credential, createdAt: Timestamp.string())
            var release = try Self.releaseCall(logger) {
                try store.createRelease(record, texts: submission.flows.mapValues(\.text), audit: admin.audit)
            }
            for (name, flow) in submission.flows {
                registry.add(name: name, version: versions[name] ?? 0, definition: flow.definition, text: flow.text,
                             createdAt: release.createdAt, live: false)
            }
            if let tested = try Self.testRelease(release, suites: submission.suites, store: store, registry: registry, logger: logger) {
                release = tested
            }
            var response = Response.json(Self.releaseDocument(rollouts?.withRollout(release) ?? release), status: 201)
            response.headers["Location"] = "/v1/releases/\(release.id)"
            return response
        }

        router.adminRoute("POST", "/v1/releases/{id}/test", admin) { request throws(ResponseError) in
            let release = try Self.storedRelease(request, store: store, logger: logger)
            var suites: [FlowScenarioSuite]
            if request.body.isEmpty {
                suites = Self.storedSuites(release)
            } else {
                let json = try request.jsonBody(limits).get()
                guard let object = json.objectValue, object.keys.allSatisfy({ $0 == "tests" }) else {
                    throw ResponseError(.problem(400, "The body is optional: {\"tests\": [suite, …]}.", type: ProblemType.malformed))
                }
                suites = object["tests"].map { _ in [] } ?? Self.storedSuites(release)
                if let tests = object["tests"] { suites = try Self.releaseSuites(tests) }
            }
            guard !suites.isEmpty else {
                throw ResponseError(.problem(422, "Release \(release.id) has no flow tests to run; send {\"tests\": [suite, …]}.",
                                             type: ProblemType.invalidScenarios))
            }
            let tested = try Self.testRelease(release, suites: suites, store: store, registry: registry, logger: logger) ?? release
            return .json(Self.releaseDocument(rollouts?.withRollout(tested) ?? tested))
        }

        router.adminRoute("POST", "/v1/releases/{id}/approve", admin, role: .publish) { request throws(ResponseError) in
            let id = try Self.releaseId(request)
            guard let release = try Self.releaseCall(logger, { try store.approveRelease(id: id, audit: admin.audit) }) else {
                throw ResponseError(.problem(404, "There is no release \(id).", type: ProblemType.notFound))
            }
            return .json(Self.releaseDocument(rollouts?.withRollout(release) ?? release))
        }

        router.adminRoute("POST", "/v1/releases/{id}/activate", admin, role: .publish) { request throws(ResponseError) in
            let id = try Self.releaseId(request)
            let untested = try Self.booleanQuery(request, "untested", default: false)
            // The optional body is the rollouts': {"rollout": {…}} rolls the release out to a
            // share of new sessions instead of making it live for everybody.
            var body: JSONValue?
            if !request.body.isEmpty {
                let json = try request.jsonBody(limits).get()
                let allowed = rollouts == nil ? [] : ["rollout"]
                guard let object = json.objectValue, object.keys.allSatisfy(allowed.contains) else {
                    throw ResponseError(.problem(400, rollouts == nil ? "The body of an activation is optional and empty: {}."
                                                     : "The body of an activation is optional: {\"rollout\": {…}}.", type: ProblemType.malformed))
                }
                body = json
            }
            let rules = ReleaseActivationRules(allowUntested: untested, requireApproval: requireReview)
            if let rollouts, let plan = body?.objectValue?["rollout"], plan != .null {
                // Refused before the rollout starts when activation would be (tests, review,
                // stale); the store checks again when it marks the release rolling out.
                let current = try Self.storedRelease(request, store: store, logger: logger)
                try Self.releaseCall(logger) { try ReleaseRules.checkActivation(current, live: registry.liveVersions, rules: rules) }
                guard let document = try rollouts.start(id, current.versions, body) else {
                    throw ResponseError(.problem(400, "rollout: expected a rollout plan.", type: ProblemType.malformed))
                }
                // The rollout row and the release's state are two writes: when the release cannot
                // be marked rolling out (another node made it stale meanwhile, the database
                // failed), the rollout just started is ended, so no session goes to a release
                // that is not rolling out.
                let marking: ReleaseRecord?
                do throws(ResponseError) {
                    marking = try Self.releaseCall(logger, { try store.beginReleaseRollout(id: id, rules: rules, audit: admin.audit) })
                } catch {
                    _ = try? rollouts.stop(id, "the release could not be marked rolling out")
                    throw error
                }
                guard var marked = marking else {
                    _ = try? rollouts.stop(id, "the release is gone")
                    throw ResponseError(.problem(404, "There is no release \(id).", type: ProblemType.notFound))
                }
                var writer = JSONWriter()
                writer.writeValue(document)
                marked.rollout = String(decoding: writer.takeBytes(), as: UTF8.self)
                return .json(Self.releaseDocument(marked))
            }
            // A release rolling out goes to everybody through its rollout (POST …/rollout to 100),
            // which ends the rollout with it; activating it here would leave the rollout running.
            if rollouts != nil, try Self.storedRelease(request, store: store, logger: logger).state == .rollingOut {
                throw ResponseError(.problem(409, "Release \(id) is rolling out; raise it to everybody with POST /v1/releases/\(id)/rollout "
                                                 + "{\"percentage\": 100}, or roll it back.", type: ProblemType.releaseState))
            }
            guard let release = try Self.releaseCall(logger, { try store.activateRelease(id: id, rules: rules, audit: admin.audit) }) else {
                throw ResponseError(.problem(404, "There is no release \(id).", type: ProblemType.notFound))
            }
            try Self.reloadDefinitions(store: store, registry: registry, logger: logger)
            return .json(Self.releaseDocument(rollouts?.withRollout(release) ?? release))
        }

        router.adminRoute("POST", "/v1/releases/{id}/rollback", admin, role: .publish) { request throws(ResponseError) in
            let id = try Self.releaseId(request)
            var reason: String?
            if !request.body.isEmpty {
                let json = try request.jsonBody(limits).get()
                guard let object = json.objectValue, object.keys.allSatisfy({ $0 == "reason" }) else {
                    throw ResponseError(.problem(400, "The body of a rollback is optional: {\"reason\": \"…\"}.", type: ProblemType.malformed))
                }
                if let value = object["reason"] {
                    guard let text = value.stringValue, text.utf8.count <= 1000 else {
                        throw ResponseError(.problem(400, "reason must be a string of at most 1000 bytes.", type: ProblemType.malformed,
                                                     errors: [.init(pointer: "/reason", detail: "must be a string of at most 1000 bytes")]))
                    }
                    reason = text
                }
            }
            let current = try Self.storedRelease(request, store: store, logger: logger)
            let stopped = Self.stoppedExperiments(current, registry: registry)
            // The rollout first: once it is ended no new session goes to the release, and when
            // the release's rollback then fails, calling rollback again finishes it (a release
            // still rolling out may be rolled back; its rollout is already ended).
            if current.state == .rollingOut, let rollouts {
                do {
                    try rollouts.stop(id, reason ?? "")
                } catch {
                    throw SessionService.storageFailure(error, logger: logger)
                }
            }
            guard let release = try Self.releaseCall(logger, {
                try store.rollbackRelease(id: id, reason: reason, stopped: stopped, audit: admin.audit)
            }) else {
                throw ResponseError(.problem(404, "There is no release \(id).", type: ProblemType.notFound))
            }
            try Self.reloadDefinitions(store: store, registry: registry, logger: logger)
            return .json(Self.releaseDocument(rollouts?.withRollout(release) ?? release))
        }
    }

    /// The experiments `release` started (none was stored before it), each as its text with
    /// `"status": "stopped"`: a rollback stops them rather than removing them, so their reports stay.
    static func stoppedExperiments(_ release: ReleaseRecord, registry: DefinitionRegistry) -> [String: String] {
        var stopped: [String: String] = [:]
        for (key, text) in release.experiments where (release.previous?.experiments[key] ?? nil) == nil {
            stopped[key] = Self.stoppedExperiment(registry.experiment(key)?.text ?? text)
        }
        return stopped
    }

    /// The experiment's text with `"status": "stopped"`.
    static func stoppedExperiment(_ text: String) -> String {
        var object = (try? JSONParser.parse(text, limits: .storedData))?.objectValue ?? JSONObject()
        object["status"] = .string("stopped")
        var writer = JSONWriter(capacity: text.utf8.count + 24)
        writer.writeObject(object)
        return String(decoding: writer.takeBytes(), as: UTF8.self)
    }

    /// Reads every definition again and swaps the registry's content in one step, so a session
    /// created during an activation sees all the old versions or all the new ones.
    static func reloadDefinitions(store: any FlowStore, registry: DefinitionRegistry, logger: Logger) throws(ResponseError) {
        let loaded = try Self.store(logger) {
            DefinitionRegistry.load(flows: try store.allFlowVersions(), live: try store.liveFlowVersions(),
                                    activations: try store.flowActivations(), flags: try store.allDefinitions(.flag),
                                    experiments: try store.allDefinitions(.experiment))
        }
        for problem in loaded.skipped { logger.error("stored definition skipped", metadata: ["problem": "\(problem)"]) }
        registry.replace(with: loaded.registry)
    }

    static func releaseId(_ request: Request) throws(ResponseError) -> Int {
        let text = request.pathParameters["id"] ?? ""
        guard let id = Int(text), id >= 1 else {
            throw ResponseError(.problem(400, "A release id is a whole number from 1; found \(text).", type: ProblemType.malformed))
        }
        return id
    }

    static func storedRelease(_ request: Request, store: any FlowStore, logger: Logger) throws(ResponseError) -> ReleaseRecord {
        let id = try releaseId(request)
        guard let release = try Self.store(logger, { try store.release(id: id) }) else {
            throw ResponseError(.problem(404, "There is no release \(id).", type: ProblemType.notFound))
        }
        return release
    }

    /// A store call on a release: a `ReleaseConflict` is its 409 (403 for a self-approval).
    static func releaseCall<T>(_ logger: Logger, _ call: () throws -> T) throws(ResponseError) -> T {
        do {
            return try call()
        } catch let conflict as ReleaseConflict {
            let status = conflict.code == "self-approval" ? 403 : 409
            throw ResponseError(.problem(status, conflict.detail, type: ProblemType.prefix + conflict.code))
        } catch {
            throw SessionService.storageFailure(error, logger: logger)
        }
    }

    // MARK: Reading a submission

    static func releaseSubmission(_ json: JSONValue, registry: DefinitionRegistry) throws(ResponseError) -> ReleaseSubmission {
        guard let object = json.objectValue else {
            throw ResponseError(.problem(400, "A release is an object {description?, flows, flags?, experiments?, tests?}.",
                                         type: ProblemType.malformed))
        }
        var malformed: [ProblemDetails.FieldError] = []
        for key in object.keys where !["description", "flows", "flags", "experiments", "tests"].contains(key) {
            malformed.append(.init(pointer: JSONPointer([key]).description, detail: "unknown member; expected description, flows, flags, experiments, tests"))
        }
        let description = object["description"]?.stringValue ?? ""
        if let value = object["description"], value.stringValue == nil {
            malformed.append(.init(pointer: "/description", detail: "must be a string"))
        }
        let flowsObject = object["flows"]?.objectValue
        if flowsObject == nil || flowsObject?.isEmpty == true {
            malformed.append(.init(pointer: "/flows", detail: "required: an object of at least one flow definition by name"))
        }
        for member in ["flags", "experiments"] where object[member] != nil && object[member]?.objectValue == nil {
            malformed.append(.init(pointer: "/\(member)", detail: "must be an object of definitions by key"))
        }
        if let tests = object["tests"], tests.arrayValue == nil {
            malformed.append(.init(pointer: "/tests", detail: "must be an array of flow test suites"))
        }
        guard malformed.isEmpty, let flowsObject else {
            throw ResponseError(.problem(400, "The release is malformed; see errors.", type: ProblemType.malformed, errors: malformed))
        }

        var problems: [ProblemDetails.FieldError] = []
        var flows: [String: (definition: FlowDefinition, text: String)] = [:]
        for member in flowsObject {
            let pointer = JSONPointer(["flows", member.key]).description
            do throws(DefinitionProblems) {
                let definition = try FlowDefinition(json: member.value, expectedName: member.key)
                var writer = JSONWriter()
                writer.writeValue(member.value)
                flows[member.key] = (definition, String(decoding: writer.takeBytes(), as: UTF8.self))
            } catch {
                problems += error.problems.map { .init(pointer: pointer + $0.path, detail: $0.message) }
            }
        }
        if problems.isEmpty {
            // The release's flows with the live rest: each is checked against the others, so a
            // new `app` may present a `checkout` that is new in the same release.
            var catalog = FlowCatalog()
            for (name, version) in registry.liveVersions where flows[name] == nil {
                if let stored = registry.flow(name, version: version) { catalog.insert(stored.definition) }
            }
            for flow in flows.values { catalog.insert(flow.definition) }
            problems += catalog.validate().map { .init(pointer: "/flows" + $0.path, detail: $0.message) }
        }
        var flags: [String: (definition: FlagDefinition, text: String)] = [:]
        for member in object["flags"]?.objectValue ?? JSONObject() {
            let pointer = JSONPointer(["flags", member.key])
            if let problem = keyProblem(member.key, reserved: reservedFlagKeys) {
                problems.append(.init(pointer: pointer.description, detail: problem))
                continue
            }
            do throws(InvalidDefinition) {
                let (value, text) = uploadedText(member.value)
                flags[member.key] = (try FlagDefinition(json: value), text)
            } catch {
                problems += error.problems.map { .init(pointer: pointer.description + $0.path.description, detail: $0.message) }
            }
        }
        var experiments: [String: (definition: ExperimentDefinition, text: String)] = [:]
        for member in object["experiments"]?.objectValue ?? JSONObject() {
            let pointer = JSONPointer(["experiments", member.key])
            if let problem = keyProblem(member.key, reserved: []) {
                problems.append(.init(pointer: pointer.description, detail: problem))
                continue
            }
            do throws(InvalidDefinition) {
                let (value, text) = uploadedText(member.value)
                let definition = try ExperimentDefinition(json: value)
                // A release starts or changes experiments; concluding one makes its winner live,
                // which is PATCH /v1/experiments/{key}'s, and a concluded one is final.
                let stored = registry.experiment(member.key)?.definition.status
                if definition.status == .concluded || stored == .concluded {
                    problems.append(.init(pointer: pointer.description + (stored == .concluded ? "" : "/status"),
                                          detail: stored == .concluded
                                              ? "experiment \(member.key) is concluded, which is final; a release cannot change it"
                                              : "a release cannot conclude an experiment; conclude it with PATCH /v1/experiments/\(member.key)"))
                    continue
                }
                experiments[member.key] = (definition, text)
            } catch {
                problems += error.problems.map { .init(pointer: pointer.description + $0.path.description, detail: $0.message) }
            }
        }
        guard problems.isEmpty else {
            throw ResponseError(.problem(422, "The release has \(problems.count) problem\(problems.count == 1 ? "" : "s"); see errors.",
                                         type: ProblemType.invalidDefinition, errors: problems))
        }
        let suites = try object["tests"].map { value throws(ResponseError) in try releaseSuites(value) } ?? []
        return ReleaseSubmission(description: description, flows: flows, flags: flags, experiments: experiments, suites: suites)
    }

    /// Why `key` cannot name a flag or experiment, or nil.
    static func keyProblem(_ key: String, reserved: [String]) -> String? {
        let allowed = key.utf8.allSatisfy { byte in
            (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        guard (1...100).contains(key.utf8.count), allowed else { return "a key is 1 to 100 letters, digits, '.', '_' or '-'" }
        if reserved.contains(key) { return "\(key) is a route under /v1/flags, so it cannot name a flag" }
        return nil
    }

    /// A definition without the members the server adds, and the text to store (as a PUT does).
    static func uploadedText(_ value: JSONValue) -> (JSONValue, String) {
        guard var object = value.objectValue else {
            var writer = JSONWriter()
            writer.writeValue(value)
            return (value, String(decoding: writer.takeBytes(), as: UTF8.self))
        }
        for member in serverMembers { object[member] = nil }
        var writer = JSONWriter()
        writer.writeObject(object)
        return (.object(object), String(decoding: writer.takeBytes(), as: UTF8.self))
    }

    /// The suites of a `tests` array (422 `invalid-scenarios` with `/tests/<i>/…` pointers).
    static func releaseSuites(_ value: JSONValue) throws(ResponseError) -> [FlowScenarioSuite] {
        guard let array = value.arrayValue else {
            throw ResponseError(.problem(400, "tests must be an array of flow test suites.", type: ProblemType.malformed,
                                         errors: [.init(pointer: "/tests", detail: "must be an array")]))
        }
        var suites: [FlowScenarioSuite] = []
        var problems: [ProblemDetails.FieldError] = []
        for (index, element) in array.enumerated() {
            do throws(ScenarioProblems) {
                suites.append(try FlowScenarioSuite(json: element))
            } catch {
                let pointer = JSONPointer(["tests", String(index)]).description
                problems += error.problems.map { .init(pointer: pointer + $0.path, detail: $0.message) }
            }
        }
        guard problems.isEmpty else {
            throw ResponseError(.problem(422, "The release's flow tests have \(problems.count) problem\(problems.count == 1 ? "" : "s"); see errors.",
                                         type: ProblemType.invalidScenarios, errors: problems))
        }
        return suites
    }

    /// The suites stored with a release (its submitted `tests`).
    static func storedSuites(_ release: ReleaseRecord) -> [FlowScenarioSuite] {
        guard let tests = (try? JSONParser.parse(release.document, limits: .storedData))?.objectValue?["tests"],
              let suites = try? releaseSuites(tests) else { return [] }
        return suites
    }

    /// Pins of the release's experiments may name stored versions or the release's own new ones;
    /// each pinned variant, with the release's flows and the live rest, must form a valid catalog.
    static func checkReleaseExperiments(_ submission: ReleaseSubmission, versions: [String: Int],
                                        registry: DefinitionRegistry) throws(ResponseError) {
        var problems: [ProblemDetails.FieldError] = []
        func definition(_ name: String, _ version: Int) -> FlowDefinition? {
            if versions[name] == version, let flow = submission.flows[name] { return flow.definition }
            return registry.flow(name, version: version)?.definition
        }
        var base = registry.liveVersions
        for (name, version) in versions { base[name] = version }
        for (key, experiment) in submission.experiments.sorted(by: { $0.key < $1.key }) {
            let prefix = JSONPointer(["experiments", key]).description
            var missing = false
            for reference in experiment.definition.pinReferences where definition(reference.pin.flow, reference.pin.version) == nil {
                missing = true
                problems.append(.init(pointer: prefix + reference.path.description,
                                      detail: "flow \(reference.pin.flow) has no version \(reference.pin.version), stored or in this release"))
            }
            guard !missing else { continue }
            for (index, variant) in experiment.definition.variants.enumerated() where !variant.pinnedFlows.isEmpty {
                var pinned = base
                for (flow, version) in variant.pinnedFlows { pinned[flow] = version }
                var catalog = FlowCatalog()
                for (name, version) in pinned {
                    if let flow = definition(name, version) { catalog.insert(flow) }
                }
                for problem in catalog.validate() {
                    problems.append(.init(pointer: prefix + JSONPointer(["variants", String(index), "flows"]).description,
                                          detail: "with the release's flows, these versions do not fit: \(problem.path): \(problem.message)"))
                }
            }
        }
        guard problems.isEmpty else {
            throw ResponseError(.problem(422, "The release's experiments pin flow versions that cannot run; see errors.",
                                         type: ProblemType.invalidDefinition, errors: problems))
        }
    }

    // MARK: Testing

    /// Runs `suites` on the release's versions over the live rest, with the live flags and the
    /// release's own, and records the result (`ready` when all pass, else `failed`). Nil when
    /// there is nothing to run (the release stays as it is).
    static func testRelease(_ release: ReleaseRecord, suites: [FlowScenarioSuite], store: any FlowStore, registry: DefinitionRegistry,
                            logger: Logger) throws(ResponseError) -> ReleaseRecord? {
        guard suites.contains(where: { !$0.scenarios.isEmpty }) else { return nil }
        let live = registry.liveVersions
        var versions = live
        for (name, version) in release.versions { versions[name] = version }
        guard let catalog = registry.catalog(for: versions) else {
            throw ResponseError(.problem(503, "A flow version of release \(release.id) is not loaded on this node yet; try again.",
                                         type: ProblemType.definitionsLoading))
        }
        var flags = Dictionary(registry.allFlags.map { ($0.key, $0.value.definition) }, uniquingKeysWith: { $1 })
        for (key, text) in release.flags {
            if let json = try? JSONParser.parse(text, limits: .storedData), let flag = try? FlagDefinition(json: json) { flags[key] = flag }
        }
        let flagValues = ScenarioFlags.values(flags.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        let testedVersions = versions
        var results: [ScenarioResult] = []
        for suite in suites {
            results += suite.run(flags: flagValues) { client in
                guard let client, client.features != nil else { return .catalog(catalog) }
                switch registry.fit(client, live: testedVersions) {
                case .fits(let fitting, _):
                    return registry.catalog(for: fitting).map { .catalog($0) } ?? .fitting(catalog, client: client)
                case .unsupported(let missing, _):
                    return .unsupportedClient(missing: missing)
                }
            }
        }
        var writer = JSONWriter(capacity: 256 + results.count * 128)
        writer.beginObject()
        writer.writeKey("passed")
        writer.writeInteger(results.filter(\.passed).count)
        writer.writeKey("failed")
        writer.writeInteger(results.filter { !$0.passed }.count)
        writer.writeKey("flowVersions")
        writer.writeRawValue(DefinitionRegistry.encode(versions))
        writer.writeKey("scenarios")
        writer.beginArray()
        for result in results { result.write(into: &writer) }
        writer.endArray()
        writer.endObject()
        let text = String(decoding: writer.takeBytes(), as: UTF8.self)
        let passed = results.allSatisfy(\.passed)
        return try releaseCall(logger) {
            try store.recordReleaseTests(id: release.id, tests: text, passed: passed, base: live)
        }
    }

    // MARK: The release document

    /// `{id, state, description, flows, previous, flags, experiments, tests, createdBy, createdAt,
    /// approvedBy, activatedBy, activatedAt, rolledBackAt, reason, rollout}`.
    static func releaseDocument(_ release: ReleaseRecord) -> [UInt8] {
        var writer = JSONWriter(capacity: 512 + (release.tests?.utf8.count ?? 0))
        writer.beginObject()
        writer.writeKey("id")
        writer.writeInteger(release.id)
        writer.writeKey("state")
        writer.writeString(release.state.rawValue)
        writer.writeKey("description")
        writer.writeString(release.description)
        writer.writeKey("flows")
        writer.writeRawValue(DefinitionRegistry.encode(release.versions))
        writer.writeKey("previous")
        writer.beginObject()
        for name in release.versions.keys.sorted() {
            writer.writeKey(name)
            writer.writeOptionalInteger(release.previous?.flows[name] ?? nil)
        }
        writer.endObject()
        writer.writeKey("flags")
        writer.writeValue(.array(release.flags.keys.sorted().map { .string($0) }))
        writer.writeKey("experiments")
        writer.writeValue(.array(release.experiments.keys.sorted().map { .string($0) }))
        writer.writeKey("tests")
        if let tests = release.tests { writer.writeRawValue(Array(tests.utf8)) } else { writer.writeNull() }
        writer.writeKey("createdBy")
        writer.writeString(release.createdBy)
        writer.writeKey("createdAt")
        writer.writeString(release.createdAt)
        writer.writeKey("approvedBy")
        writer.writeOptionalString(release.approvedBy)
        writer.writeKey("activatedBy")
        writer.writeOptionalString(release.activatedBy)
        writer.writeKey("activatedAt")
        writer.writeOptionalString(release.activatedAt)
        writer.writeKey("rolledBackAt")
        writer.writeOptionalString(release.rolledBackAt)
        writer.writeKey("reason")
        writer.writeOptionalString(release.reason)
        writer.writeKey("rollout")
        if let rollout = release.rollout { writer.writeRawValue(Array(rollout.utf8)) } else { writer.writeNull() }
        writer.endObject()
        return writer.takeBytes()
    }
}
