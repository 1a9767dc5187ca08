// Admin routes for flags and experiments: upload, read, evaluate, and the experiment report.
import FeatureFlags
import FlowEngine
import FlowStore
import HTTPServer
import JSON
import Logging

extension Application {
    /// Members the server adds when it shows a stored flag or experiment; dropped from an upload,
    /// so what was read can be sent back as it is.
    static let serverMembers = ["key", "revision", "updatedAt", "warnings"]

    static func addFlagRoutes(to router: inout Router, store: any FlowStore, registry: DefinitionRegistry,
                              admin: AdminAuthorization, limits: BodyLimits, logger: Logger) {
        router.adminRoute("GET", "/v1/flags", admin) { request throws(ResponseError) in
            return .json(Self.listDocument("flags", registry.allFlags.map { ($0.key, $0.value.text, $0.value.revision, $0.value.updatedAt) }))
        }
        router.adminRoute("GET", "/v1/flags/{key}", admin) { request throws(ResponseError) in
            let key = request.pathParameters["key"] ?? ""
            guard let flag = registry.flag(key) else {
                throw ResponseError(.problem(404, "There is no flag \(key).", type: ProblemType.notFound))
            }
            return .json(Self.keyedDocument(key: key, text: flag.text, revision: flag.revision, updatedAt: flag.updatedAt))
        }
        router.adminRoute("PUT", "/v1/flags/{key}", admin, role: .publish) { request throws(ResponseError) in
            let key = try Self.definitionKey(request, reserved: reservedFlagKeys, collection: "/v1/flags")
            let (json, text) = try Self.uploadedDefinition(request, limits)
            let definition: FlagDefinition
            do throws(InvalidDefinition) {
                definition = try FlagDefinition(json: json)
            } catch {
                throw Self.invalidFlagDefinition("flag \(key)", error.problems)
            }
            let existed = registry.flag(key) != nil
            let revision = try Self.store(logger) { try store.putDefinition(.flag, key: key, definition: text, audit: admin.audit) }
            let now = Timestamp.string()
            registry.setFlag(key, .init(definition: definition, text: text, revision: revision, updatedAt: now))
            let warnings = Self.growthBookWarnings { () throws(GrowthBookPayload.Untranslatable) in
                _ = try GrowthBookPayload.feature(flag: definition, key: key)
            }
            return .json(Self.keyedDocument(key: key, text: text, revision: revision, updatedAt: now, warnings: warnings),
                         status: existed ? 200 : 201)
        }
        router.adminRoute("POST", "/v1/flags/evaluate", admin, role: .read) { request throws(ResponseError) in
            let context = try Self.evaluationContext(try request.jsonBody(limits).get())
            let evaluations = FlagSet.evaluateAll(flags: registry.allFlags.map { ($0.key, $0.value.definition) }, context: context)
            var writer = JSONWriter()
            evaluations.write(to: &writer)
            return .json(writer.takeBytes())
        }

        router.adminRoute("GET", "/v1/experiments", admin) { request throws(ResponseError) in
            return .json(Self.listDocument("experiments", registry.allExperiments.map { ($0.key, $0.value.text, $0.value.revision, $0.value.updatedAt) }))
        }
        router.adminRoute("GET", "/v1/experiments/{key}", admin) { request throws(ResponseError) in
            let key = request.pathParameters["key"] ?? ""
            guard let experiment = registry.experiment(key) else {
                throw ResponseError(.problem(404, "There is no experiment \(key).", type: ProblemType.notFound))
            }
            var response = Response.json(Self.keyedDocument(key: key, text: experiment.text, revision: experiment.revision,
                                                            updatedAt: experiment.updatedAt))
            response.headers["ETag"] = "\"\(experiment.revision)\""
            return response
        }
        router.adminRoute("PUT", "/v1/experiments/{key}", admin, role: .publish) { request throws(ResponseError) in
            let key = try Self.definitionKey(request)
            let (json, text) = try Self.uploadedDefinition(request, limits)
            let definition: ExperimentDefinition
            do throws(InvalidDefinition) {
                definition = try ExperimentDefinition(json: json)
            } catch {
                throw Self.invalidFlagDefinition("experiment \(key)", error.problems)
            }
            try Self.checkPins(definition, key: key, registry: registry)
            let previous = registry.experiment(key)
            try Self.checkTransition(key: key, from: previous?.definition.status, to: definition.status)
            let existed = previous != nil
            let revision: Int
            if let previous, let action = Self.lifecycleAction(from: previous.definition.status, to: definition.status) {
                // A move along the lifecycle is audited by its name, compare-and-set on the revision
                // the move was checked against; a conclusion makes the winner's pins live with it.
                var stamp = admin.audit
                stamp.action = action
                let activating = definition.winningVariant?.pinnedFlows ?? [:]
                let written = try Self.store(logger) {
                    try store.changeExperiment(key: key, definition: text, revision: previous.revision, activating: activating, audit: stamp)
                }
                guard let written else {
                    throw ResponseError(.problem(409, "Experiment \(key) changed meanwhile (on another node?); read it again and retry.",
                                                 type: ProblemType.concurrentChange))
                }
                revision = written
                for (flow, version) in activating { registry.setLive(name: flow, version: version) }
            } else {
                revision = try Self.store(logger) { try store.putDefinition(.experiment, key: key, definition: text, audit: admin.audit) }
            }
            let now = Timestamp.string()
            registry.setExperiment(key, .init(definition: definition, text: text, revision: revision, updatedAt: now))
            let warnings = Self.growthBookWarnings { () throws(GrowthBookPayload.Untranslatable) in
                _ = try GrowthBookPayload.feature(experiment: definition, key: key)
            }
            return .json(Self.keyedDocument(key: key, text: text, revision: revision, updatedAt: now, warnings: warnings),
                         status: existed ? 200 : 201)
        }
        // role: publish
        router.adminRoute("PATCH", "/v1/experiments/{key}", admin, role: .publish) { request throws(ResponseError) in
            try Self.patchExperiment(request, store: store, registry: registry, admin: admin, limits: limits, logger: logger)
        }
        router.adminRoute("GET", "/v1/experiments/{key}/report", admin) { request throws(ResponseError) in
            let key = request.pathParameters["key"] ?? ""
            guard let experiment = registry.experiment(key) else {
                throw ResponseError(.problem(404, "There is no experiment \(key).", type: ProblemType.notFound))
            }
            let counts = try Self.store(logger) { try store.experimentReport(key) }
            return try Self.experimentReport(request, key: key, experiment: experiment.definition, counts: counts)
        }
    }

    /// Every pinned flow version must exist, and with the live flows it must form a valid catalog.
    static func checkPins(_ definition: ExperimentDefinition, key: String, registry: DefinitionRegistry) throws(ResponseError) {
        var problems: [ProblemDetails.FieldError] = []
        for reference in definition.pinReferences where registry.flow(reference.pin.flow, version: reference.pin.version) == nil {
            problems.append(.init(pointer: reference.path.description,
                                  detail: "flow \(reference.pin.flow) has no version \(reference.pin.version)"))
        }
        if problems.isEmpty {
            for (index, variant) in definition.variants.enumerated() where !variant.pinnedFlows.isEmpty {
                var versions = registry.liveVersions
                for (flow, version) in variant.pinnedFlows { versions[flow] = version }
                let catalogProblems = registry.catalog(for: versions)?.validate() ?? []
                for problem in catalogProblems {
                    problems.append(.init(pointer: JSONPointer(["variants", String(index), "flows"]).description,
                                          detail: "with the live flows, these versions do not fit: \(problem.path): \(problem.message)"))
                }
            }
        }
        guard problems.isEmpty else {
            throw ResponseError(.problem(422, "Experiment \(key) pins flow versions that cannot run; see errors.",
                                         type: ProblemType.invalidDefinition, errors: problems))
        }
    }

    /// Flag keys that are routes of their own under `/v1/flags` (`POST /v1/flags/evaluate`): a
    /// flag of that name could be stored and read, but never evaluated on its own, so it is
    /// refused. A test walks the router for every name a collection route shadows.
    static let reservedFlagKeys = ["evaluate"]

    /// The key in the URL of a flag or experiment: 1 to 100 of letters, digits, `.`, `_`, `-`,
    /// and none of the `reserved` names (422).
    static func definitionKey(_ request: Request, reserved: [String] = [], collection: String = "") throws(ResponseError) -> String {
        let key = request.pathParameters["key"] ?? ""
        let allowed = key.utf8.allSatisfy { byte in
            (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        guard (1...100).contains(key.utf8.count), allowed else {
            throw ResponseError(.problem(400, "A key is 1 to 100 letters, digits, '.', '_' or '-'; found \(key).",
                                         type: ProblemType.malformed))
        }
        if reserved.contains(key) {
            let names = reserved.map { JSONValue.string($0) }
            throw ResponseError(.problem(
                422, "\(key) is a route under \(collection), so it cannot name a definition there; reserved names: \(reserved.joined(separator: ", ")).",
                type: ProblemType.reservedName, extensions: [("reserved", JSONValue.array(names).jsonText)]))
        }
        return key
    }

    /// The uploaded object without the members the server adds, and the text to store.
    static func uploadedDefinition(_ request: Request, _ limits: BodyLimits) throws(ResponseError) -> (JSONValue, String) {
        let json = try request.jsonBody(limits).get()
        guard var object = json.objectValue else {
            throw ResponseError(.problem(422, "A definition is a JSON object; found \(json.typeName).", type: ProblemType.invalidDefinition))
        }
        for member in serverMembers { object[member] = nil }
        var writer = JSONWriter(capacity: request.body.count)
        writer.writeObject(object)
        return (.object(object), String(decoding: writer.takeBytes(), as: UTF8.self))
    }

    /// `{targetingKey?, attributes?}` of `POST /v1/flags/evaluate`.
    static func evaluationContext(_ json: JSONValue) throws(ResponseError) -> EvaluationContext {
        guard let object = json.objectValue else {
            throw ResponseError(.problem(400, "The body must be an object {targetingKey?, attributes?}.", type: ProblemType.malformed))
        }
        var errors: [ProblemDetails.FieldError] = []
        for key in object.keys where !["targetingKey", "attributes"].contains(key) {
            errors.append(.init(pointer: JSONPointer([key]).description, detail: "unknown field; expected targetingKey, attributes"))
        }
        // JSONValue is ExpressibleByNilLiteral: spell the Optional out, or `nil` reads as JSON null.
        let attributes = object["attributes"].flatMap { $0.isNull ? JSONValue?.none : $0 }
        let (context, problems) = evaluationContext(targetingKey: object["targetingKey"], at: JSONPointer(["targetingKey"]),
                                                    attributes: attributes?.objectValue?.members ?? [])
        errors += problems
        if let attributes, attributes.objectValue == nil {
            errors.append(.init(pointer: "/attributes", detail: "must be an object; found \(attributes.typeName)"))
        }
        guard errors.isEmpty else {
            throw ResponseError(.problem(400, "The evaluation context has invalid fields.", type: ProblemType.malformed, errors: errors))
        }
        return context
    }

    /// A targeting key and attributes read into a context, the one way every evaluation route
    /// reads them (`POST /v1/flags/evaluate`, OFREP), so equal contexts get equal values: the key
    /// is a string, or null or absent for none; attributes are kept as sent, a repeated name
    /// keeping its last value. Problems are located at `pointer`.
    static func evaluationContext(targetingKey raw: JSONValue?, at pointer: JSONPointer,
                                  attributes: [JSONObject.Member]) -> (EvaluationContext, [ProblemDetails.FieldError]) {
        var errors: [ProblemDetails.FieldError] = []
        var targetingKey: String?
        if let raw, !raw.isNull {
            if let text = raw.stringValue { targetingKey = text } else {
                errors.append(.init(pointer: pointer.description, detail: "must be a string; found \(raw.typeName)"))
            }
        }
        var values: [String: JSONValue] = [:]
        for member in attributes { values[member.key] = member.value }
        return (EvaluationContext(targetingKey: targetingKey, attributes: values), errors)
    }

    static func invalidFlagDefinition(_ what: String, _ problems: [FlagProblem]) -> ResponseError {
        ResponseError(.problem(
            422, "The definition of \(what) has \(problems.count) problem\(problems.count == 1 ? "" : "s"); see errors.",
            type: ProblemType.invalidDefinition,
            errors: problems.map { .init(pointer: $0.path.description, detail: $0.message) }))
    }

    /// What an upload accepted as valid still cannot do, as `{pointer, detail}` (the shape of a
    /// problem's `errors`): for now, be served to GrowthBook SDKs. Empty when all is well.
    static func growthBookWarnings(_ translate: () throws(GrowthBookPayload.Untranslatable) -> Void) -> [ProblemDetails.FieldError] {
        do throws(GrowthBookPayload.Untranslatable) {
            try translate()
            return []
        } catch {
            return [.init(pointer: error.path.description,
                          detail: "left out of the GrowthBook payload (GET /api/features/{clientKey}): \(error.reason)")]
        }
    }

    /// The stored definition with its key, revision and time of update; an upload's answer also
    /// has `warnings`.
    static func keyedDocument(key: String, text: String, revision: Int, updatedAt: String,
                              warnings: [ProblemDetails.FieldError]? = nil) -> [UInt8] {
        var object = (try? JSONParser.parse(text, limits: .storedData))?.objectValue ?? JSONObject()
        var members: [JSONObject.Member] = [.init(key: "key", value: .string(key))]
        members += object.members
        object = JSONObject(members)
        object["revision"] = .integer(revision)
        object["updatedAt"] = .string(updatedAt)
        if let warnings {
            object["warnings"] = .array(warnings.map { ["pointer": .string($0.pointer), "detail": .string($0.detail)] })
        }
        var writer = JSONWriter(capacity: text.utf8.count + 96)
        writer.writeObject(object)
        return writer.takeBytes()
    }

    static func listDocument(_ name: String, _ items: [(key: String, text: String, revision: Int, updatedAt: String)]) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.writeKey(name)
        writer.beginArray()
        for item in items {
            writer.writeRawValue(keyedDocument(key: item.key, text: item.text, revision: item.revision, updatedAt: item.updatedAt))
        }
        writer.endArray()
        writer.endObject()
        return writer.takeBytes()
    }

    static func store<T>(_ logger: Logger, _ call: () throws -> T) throws(ResponseError) -> T {
        do {
            return try call()
        } catch {
            throw SessionService.storageFailure(error, logger: logger)
        }
    }
}
