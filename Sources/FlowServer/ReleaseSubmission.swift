// A release as submitted (`POST /v1/releases`): its flows, flags, experiments and tests, each
// checked on its own and against the live rest before anything is stored.
import FeatureFlags
import FlowEngine
import FlowScenarios
import FlowStore
import HTTPServer
import JSON

/// What a release submission holds once every part is checked.
struct ReleaseSubmission {
    var description: String
    var flows: [String: (definition: FlowDefinition, text: String)]
    var flags: [String: (definition: FlagDefinition, text: String)]
    var experiments: [String: (definition: ExperimentDefinition, text: String)]
    var suites: [FlowScenarioSuite]
}

extension ReleaseSubmission {
    /// Reads a submission: 400 for a body of the wrong shape (each member's problem in `errors`),
    /// 422 `invalid-definition` for definitions that do not validate, alone or with the live
    /// rest, 422 `invalid-scenarios` for tests that do not read.
    static func read(_ json: JSONValue, registry: DefinitionRegistry) throws(ResponseError) -> ReleaseSubmission {
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
                let definition = try FlowDefinition(json: member.value, expectedName: member.key, uploading: true)
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
            if let problem = keyProblem(member.key, reserved: FlagUpload.reservedKeys) {
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
        for member in DefinitionUpload.serverMembers { object[member] = nil }
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
    func checkExperiments(versions: [String: Int], registry: DefinitionRegistry) throws(ResponseError) {
        var problems: [ProblemDetails.FieldError] = []
        func definition(_ name: String, _ version: Int) -> FlowDefinition? {
            if versions[name] == version, let flow = flows[name] { return flow.definition }
            return registry.flow(name, version: version)?.definition
        }
        var base = registry.liveVersions
        for (name, version) in versions { base[name] = version }
        for (key, experiment) in experiments.sorted(by: { $0.key < $1.key }) {
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
}

extension ReleaseService {
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
}
