// Admin routes for flow definitions: upload a new version, read live and past versions, activate.
import FlowEngine
import FlowStore
import HTTPServer
import JSON
import Logging

extension Application {
    static func addFlowRoutes(to router: inout Router, store: any FlowStore, registry: DefinitionRegistry,
                              admin: AdminAuthorization, limits: BodyLimits, logger: Logger) {
        router.adminRoute("GET", "/v1/flows", admin) { request throws(ResponseError) in
            var writer = JSONWriter()
            writer.beginObject()
            writer.writeKey("flows")
            writer.beginArray()
            for flow in registry.summary {
                writer.beginObject()
                writer.writeKey("name")
                writer.writeString(flow.name)
                writer.writeKey("liveVersion")
                writer.writeOptionalInteger(flow.live)
                writer.writeKey("latestVersion")
                writer.writeInteger(flow.latest)
                writer.endObject()
            }
            writer.endArray()
            writer.endObject()
            return .json(writer.takeBytes())
        }

        router.adminRoute("GET", "/v1/flows/{name}", admin) { request throws(ResponseError) in
            let name = request.pathParameters["name"] ?? ""
            guard let version = registry.liveVersions[name], let stored = registry.flow(name, version: version) else {
                throw ResponseError(.problem(404, "There is no live flow \(name).", type: ProblemType.notFound))
            }
            return .json(Self.flowDocument(stored, version: version, live: true))
        }

        router.adminRoute("GET", "/v1/flows/{name}/versions/{version}", admin) { request throws(ResponseError) in
            let name = request.pathParameters["name"] ?? ""
            let version = try Self.versionParameter(request)
            guard let stored = registry.flow(name, version: version) else {
                throw ResponseError(.problem(404, "Flow \(name) has no version \(version).", type: ProblemType.notFound))
            }
            return .json(Self.flowDocument(stored, version: version, live: registry.liveVersions[name] == version))
        }

        router.adminRoute("PUT", "/v1/flows/{name}", admin) { request throws(ResponseError) in
            let name = request.pathParameters["name"] ?? ""
            let activate = try Self.booleanQuery(request, "activate", default: false)
            // Storing a version is editing; making it live is publishing.
            if activate { try admin.require(.publish, for: "PUT /v1/flows/\(name)?activate=true") }
            let json = try request.jsonBody(limits).get()
            let definition: FlowDefinition
            do throws(DefinitionProblems) {
                definition = try FlowDefinition(json: json, expectedName: name)
            } catch {
                throw Self.invalidDefinition("flow \(name)", error.problems)
            }
            let problems = registry.liveCatalog(replacingWith: definition).problems(for: name, flags: FlagValues.live(registry))
            guard problems.errors.isEmpty else { throw Self.invalidDefinition("flow \(name)", problems.errors) }
            let text = String(decoding: request.body, as: UTF8.self)
            let version: Int
            do {
                version = try store.addFlowVersion(name: name, definition: text, activate: activate, audit: admin.audit)
            } catch {
                throw SessionService.storageFailure(error, logger: logger)
            }
            registry.add(name: name, version: version, definition: definition, text: text,
                         createdAt: Timestamp.string(), live: activate)
            let impact = activate ? Self.activationImpact(flow: name, registry: registry, store: store, logger: logger) : nil
            var response = Response.json(Self.versionDocument(name: name, version: version, live: registry.liveVersions[name] == version,
                                                              impact: activate ? .some(impact) : nil,
                                                              warnings: Self.definitionWarnings(problems.warnings)
                                                                  + (activate ? Self.experimentPinWarnings(flows: [name], registry: registry) : [])),
                                         status: 201)
            response.headers["Location"] = "/v1/flows/\(name)/versions/\(version)"
            return response
        }

        router.adminRoute("POST", "/v1/flows/{name}/versions/{version}/activate", admin, role: .publish) { request throws(ResponseError) in
            let name = request.pathParameters["name"] ?? ""
            let version = try Self.versionParameter(request)
            guard let stored = registry.flow(name, version: version) else {
                throw ResponseError(.problem(404, "Flow \(name) has no version \(version).", type: ProblemType.notFound))
            }
            let problems = registry.liveCatalog(replacingWith: stored.definition).problems(for: name, flags: FlagValues.live(registry))
            guard problems.errors.isEmpty else { throw Self.invalidDefinition("flow \(name) version \(version)", problems.errors) }
            do {
                _ = try store.activateFlow(name: name, version: version, audit: admin.audit)
            } catch {
                throw SessionService.storageFailure(error, logger: logger)
            }
            registry.setLive(name: name, version: version)
            let impact = Self.activationImpact(flow: name, registry: registry, store: store, logger: logger)
            return .json(Self.versionDocument(name: name, version: version, live: true, impact: .some(impact),
                                              warnings: Self.definitionWarnings(problems.warnings)
                                                  + Self.experimentPinWarnings(flows: [name], registry: registry)))
        }
    }

    /// The stored definition as uploaded, with its `version` (and whether it is live) added, so
    /// it can be edited and PUT back as it is.
    static func flowDocument(_ stored: DefinitionRegistry.StoredFlow, version: Int, live: Bool) -> [UInt8] {
        var object = (try? JSONParser.parse(stored.text, limits: .storedData))?.objectValue ?? JSONObject()
        object["version"] = .integer(version)
        object["live"] = .bool(live)
        var writer = JSONWriter(capacity: stored.text.utf8.count + 64)
        writer.writeObject(object)
        return writer.takeBytes()
    }

    /// `{name, version, live}`, and `impact` (an object, or null when it could not be computed)
    /// `warnings`: the definition's own (`{pointer, detail}`, such as a condition on a flag that
    /// does not exist, see ``definitionWarnings(_:)``), then, when the version was just made live,
    /// running experiments that pin another version of the flow (see
    /// ``experimentPinWarnings(flows:registry:)``).
    static func versionDocument(name: String, version: Int, live: Bool, impact: [UInt8]?? = nil,
                                warnings: [JSONValue]? = nil) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.writeKey("name")
        writer.writeString(name)
        writer.writeKey("version")
        writer.writeInteger(version)
        writer.writeKey("live")
        writer.writeBool(live)
        if let impact {
            writer.writeKey("impact")
            if let impact { writer.writeRawValue(impact) } else { writer.writeNull() }
        }
        if let warnings {
            writer.writeKey("warnings")
            writer.writeValue(.array(warnings))
        }
        writer.endObject()
        return writer.takeBytes()
    }

    /// What may be a mistake in a definition but does not refuse it (a condition on a flag that
    /// does not exist yet), as `{pointer, detail}`, shown beside the stored version.
    static func definitionWarnings(_ warnings: [DefinitionProblem]) -> [JSONValue] {
        warnings.map { ["pointer": .string($0.path), "detail": .string($0.message)] }
    }

    /// A 422 listing every problem of a definition with its JSON Pointer.
    static func invalidDefinition(_ what: String, _ problems: [DefinitionProblem]) -> ResponseError {
        ResponseError(.problem(
            422, "The definition of \(what) has \(problems.count) problem\(problems.count == 1 ? "" : "s"); see errors.",
            type: ProblemType.invalidDefinition,
            errors: problems.map { .init(pointer: $0.path, detail: $0.message) }))
    }

    static func versionParameter(_ request: Request) throws(ResponseError) -> Int {
        let text = request.pathParameters["version"] ?? ""
        guard let version = Int(text), version >= 1 else {
            throw ResponseError(.problem(400, "A flow version is a whole number from 1; found \(text).", type: ProblemType.malformed))
        }
        return version
    }

    static func booleanQuery(_ request: Request, _ name: String, default fallback: Bool) throws(ResponseError) -> Bool {
        guard let text = request.queryValue(name) else { return fallback }
        switch text {
        case "true", "1", "": return true
        case "false", "0": return false
        default:
            throw ResponseError(.problem(400, "Query parameter \(name) must be true or false; found \(text).",
                                         type: ProblemType.malformed, errors: [.init(pointer: name, detail: "must be true or false")]))
        }
    }
}
