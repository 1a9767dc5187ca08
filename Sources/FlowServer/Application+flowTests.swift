// The admin route that runs flow tests against a stored flow version before it goes live.
import FlowEngine
import FlowScenarios
import HTTPServer
import JSON

extension Application {
    static func addFlowTestRoutes(to router: inout Router, registry: DefinitionRegistry, admin: AdminAuthorization, limits: BodyLimits) {
        router.adminRoute("POST", "/v1/flows/{name}/versions/{version}/test", admin) { request throws(ResponseError) in
            let name = request.pathParameters["name"] ?? ""
            let version = try Self.versionParameter(request)
            guard let stored = registry.flow(name, version: version) else {
                throw ResponseError(.problem(404, "Flow \(name) has no version \(version).", type: ProblemType.notFound))
            }
            let json = try request.jsonBody(limits).get()
            let suite: FlowScenarioSuite
            do throws(ScenarioProblems) {
                suite = try FlowScenarioSuite(json: json)
            } catch {
                throw ResponseError(.problem(
                    422, "The scenarios have \(error.problems.count) problem\(error.problems.count == 1 ? "" : "s"); see errors.",
                    type: ProblemType.invalidScenarios,
                    errors: error.problems.map { .init(pointer: $0.path, detail: $0.message) }))
            }
            // The version under test with the live versions of the other flows, and the live
            // flags, as a session created once it is live would have them (no experiment pins).
            var versions = registry.liveVersions
            versions[name] = version
            let catalog = registry.liveCatalog(replacingWith: stored.definition)
            let testedVersions = versions
            // A scenario's client runs what a session of that client would once the version is
            // live: the versions it renders, falling back to earlier activated ones, or nothing.
            let results = suite.run(flags: ScenarioFlags.values(registry.allFlags.map { ($0.key, $0.value.definition) })) { client in
                guard let client, client.features != nil else { return .catalog(catalog) }
                switch registry.fit(client, live: testedVersions) {
                case .fits(let fitting, _):
                    return registry.catalog(for: fitting).map { .catalog($0) } ?? .fitting(catalog, client: client)
                case .unsupported(let missing, _):
                    return .unsupportedClient(missing: missing)
                }
            }
            return .json(Self.testReport(name: name, version: version, versions: versions, results: results))
        }
    }

    /// `{flow, version, flowVersions, passed, failed, scenarios: [ScenarioResult]}`.
    static func testReport(name: String, version: Int, versions: [String: Int], results: [ScenarioResult]) -> [UInt8] {
        var writer = JSONWriter(capacity: 256 + results.count * 128)
        writer.beginObject()
        writer.writeKey("flow")
        writer.writeString(name)
        writer.writeKey("version")
        writer.writeInteger(version)
        writer.writeKey("flowVersions")
        writer.writeRawValue(DefinitionRegistry.encode(versions))
        writer.writeKey("passed")
        writer.writeInteger(results.filter(\.passed).count)
        writer.writeKey("failed")
        writer.writeInteger(results.filter { !$0.passed }.count)
        writer.writeKey("scenarios")
        writer.beginArray()
        for result in results { result.write(into: &writer) }
        writer.endArray()
        writer.endObject()
        return writer.takeBytes()
    }
}
