// The flow routes: list flows, read the live version or any version, store a new version (and
// make it live), make a stored version live, and run flow tests on a version before it is.
import FlowEngine
import FlowScenarios
import HTTPServer
import JSON

/// `/v1/flows`, `/v1/flows/{name}` and `/v1/flows/{name}/versions/{version}/…`.
struct FlowController: Controller {
    let flows: FlowService
    let admin: AdminAuthorization
    let limits: BodyLimits

    func register(on router: inout Router) {
        router.adminRoute("GET", "/v1/flows", admin, limits: limits, list)
        router.adminRoute("GET", "/v1/flows/{name}", admin, limits: limits, live)
        router.adminRoute("GET", "/v1/flows/{name}/versions/{version}", admin, limits: limits, version)
        router.adminRoute("PUT", "/v1/flows/{name}", admin, limits: limits, put)
        router.adminRoute("POST", "/v1/flows/{name}/versions/{version}/activate", admin, role: .publish, limits: limits, activate)
        router.adminRoute("POST", "/v1/flows/{name}/versions/{version}/test", admin, limits: limits, test)
    }

    func list(_ request: Request) -> FlowListAnswer {
        FlowListAnswer(flows: flows.summary)
    }

    func live(_ request: FlowRequest) throws(ResponseError) -> FlowDocumentAnswer {
        let live = try flows.live(request.name)
        return FlowDocumentAnswer(flow: live.flow, version: live.version, live: true)
    }

    func version(_ request: FlowVersionRequest) throws(ResponseError) -> FlowDocumentAnswer {
        let stored = try flows.version(request.name, request.version)
        return FlowDocumentAnswer(flow: stored.flow, version: request.version, live: stored.live)
    }

    func put(_ request: NewFlowVersionRequest) throws(ResponseError) -> FlowVersionAnswer {
        // Storing a version is editing; making it live is publishing.
        if request.activate { try admin.require(.publish, for: "PUT /v1/flows/\(request.name)?activate=true") }
        let change = try flows.store(name: request.name, json: try request.json.get(), text: request.text, activate: request.activate,
                                     audit: admin.audit)
        return FlowVersionAnswer(change: change, created: true)
    }

    func activate(_ request: FlowVersionRequest) throws(ResponseError) -> FlowVersionAnswer {
        FlowVersionAnswer(change: try flows.activate(name: request.name, version: request.version, audit: admin.audit))
    }

    func test(_ request: FlowTestRequest) throws(ResponseError) -> FlowTestAnswer {
        _ = try flows.version(request.flow.name, request.flow.version)
        let suite = try request.suite.get()
        let tested = try flows.test(name: request.flow.name, version: request.flow.version, suite: suite)
        return FlowTestAnswer(name: request.flow.name, version: request.flow.version, versions: tested.versions, results: tested.results)
    }
}

/// A route on one flow: `{name}`.
struct FlowRequest: RouteRequest {
    let name: String

    init(_ request: Request, limits: BodyLimits) {
        name = request.parameter("name")
    }
}

/// A route on one version of a flow: `{name}` and `{version}` (a whole number from 1, else 400).
struct FlowVersionRequest: RouteRequest {
    let name: String
    let version: Int

    init(_ request: Request, limits: BodyLimits) throws(ResponseError) {
        name = request.parameter("name")
        let text = request.parameter("version")
        guard let version = Int(text), version >= 1 else {
            throw ResponseError(.problem(400, "A flow version is a whole number from 1; found \(text).", type: ProblemType.malformed))
        }
        self.version = version
    }
}

/// `PUT /v1/flows/{name}`: `?activate=`, and the definition, as JSON and as the text to store.
/// The body's problem is kept for the route to throw after the role check (403 before 400).
struct NewFlowVersionRequest: RouteRequest {
    let name: String
    let activate: Bool
    let json: Result<JSONValue, ResponseError>
    let text: String

    init(_ request: Request, limits: BodyLimits) throws(ResponseError) {
        name = request.parameter("name")
        activate = try request.booleanQuery("activate", default: false)
        json = request.jsonBody(limits)
        text = String(decoding: request.body, as: UTF8.self)
    }
}

/// `POST /v1/flows/{name}/versions/{version}/test`: the version, and a suite of scenarios (its
/// problem thrown once the version is known to exist: 404 before 400 and 422).
struct FlowTestRequest: RouteRequest {
    let flow: FlowVersionRequest
    let suite: Result<FlowScenarioSuite, ResponseError>

    init(_ request: Request, limits: BodyLimits) throws(ResponseError) {
        flow = try FlowVersionRequest(request, limits: limits)
        suite = Self.suite(request.jsonBody(limits))
    }

    private static func suite(_ body: Result<JSONValue, ResponseError>) -> Result<FlowScenarioSuite, ResponseError> {
        let json: JSONValue
        switch body {
        case .failure(let problem): return .failure(problem)
        case .success(let value): json = value
        }
        do throws(ScenarioProblems) {
            return .success(try FlowScenarioSuite(json: json))
        } catch {
            return .failure(ResponseError(.problem(
                422, "The scenarios have \(error.problems.count) problem\(error.problems.count == 1 ? "" : "s"); see errors.",
                type: ProblemType.invalidScenarios,
                errors: error.problems.map { .init(pointer: $0.path, detail: $0.message) })))
        }
    }
}
