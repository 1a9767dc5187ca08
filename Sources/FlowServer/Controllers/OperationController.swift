// The operations routes: /healthz, /metrics and /openapi.yaml; and the public, embedded content:
// the playground at `/`, the JavaScript client's modules under /sdk/, and the definition formats' JSON
// Schemas under /v1/schemas.
import FlowStore
import HTTPServer

/// `GET /healthz`, `/metrics` and `/openapi.yaml`; `GET /` and `/playground/{file}`; `GET
/// /sdk/{file}`, `/sdk/engine/{file}` and `/sdk/client/{file}`; `GET /v1/schemas` and `/v1/schemas/{name}`. The health check asks the store itself: it is what
/// the check is about.
struct OperationController: Controller {
    let store: any StoreLifecycle & SessionRecordStore
    let metrics: ServerMetrics
    let limits: BodyLimits

    func register(on router: inout Router) {
        router.route("GET", "/healthz", limits: limits, health)
        router.route("GET", "/metrics", limits: limits, exposition)
        // Kept and revalidated (CachePolicy: no-cache): it changes only with the binary.
        router.route("GET", "/openapi.yaml", limits: limits) { (request: Request) in
            Revalidated(answer: StaticFileAnswer(bytes: Application.openAPIDocument, contentType: "application/yaml",
                                                 etag: Application.openAPITag),
                        notModified: IfNoneMatch.lists(Application.openAPITag, in: request.headers["If-None-Match"]))
        }
        // The playground's files change only with the binary; a reload after an upgrade must not
        // show old ones (CachePolicy: no-cache), and the ETag makes the revalidation a 304.
        router.route("GET", "/", limits: limits) { (request: Request) throws(ResponseError) in
            try Self.playgroundFile("index.html", request)
        }
        router.route("GET", "/playground/{file}", limits: limits) { (request: Request) throws(ResponseError) in
            try Self.playgroundFile(request.parameter("file"), request)
        }
        // The JavaScript client's modules, one route per folder of the package so that their
        // relative imports resolve; kept and revalidated like the playground's files.
        router.route("GET", "/sdk/{file}", limits: limits) { (request: Request) throws(ResponseError) in
            try Self.sdkFile(request.parameter("file"), request)
        }
        router.route("GET", "/sdk/engine/{file}", limits: limits) { (request: Request) throws(ResponseError) in
            try Self.sdkFile("engine/" + request.parameter("file"), request)
        }
        router.route("GET", "/sdk/client/{file}", limits: limits) { (request: Request) throws(ResponseError) in
            try Self.sdkFile("client/" + request.parameter("file"), request)
        }
        // The schemas describe formats, not data: public (no token), kept and revalidated with
        // their `ETag` (CachePolicy: no-cache), since they change only with the binary.
        router.route("GET", "/v1/schemas", limits: limits) { (request: Request) in
            Revalidated(answer: StaticFileAnswer(bytes: Application.schemaList, contentType: "application/json", etag: Application.schemaListTag),
                        notModified: IfNoneMatch.lists(Application.schemaListTag, in: request.headers["If-None-Match"]))
        }
        router.route("GET", "/v1/schemas/{name}", limits: limits) { (request: Request) throws(ResponseError) in
            let name = request.parameter("name")
            guard let file = Application.schemaFiles[name] else {
                let known = Application.schemaFiles.keys.sorted().joined(separator: ", ")
                throw ResponseError(.problem(404, "There is no schema \(name); the schemas are \(known).", type: ProblemType.notFound))
            }
            return Revalidated(answer: StaticFileAnswer(bytes: file.bytes, contentType: "application/schema+json", etag: file.etag),
                               notModified: IfNoneMatch.lists(file.etag, in: request.headers["If-None-Match"]))
        }
    }

    func health(_ request: Request) throws(ResponseError) -> HealthAnswer {
        // Checked first: a node refusing its database also fails the query below.
        if let problem = store.healthProblem() {
            throw ResponseError(.problem(503, problem, title: "Service Unavailable"))
        }
        guard let schema = store.healthCheck() else {
            // The query itself can be what found the refusal: a new connection that reached the
            // former primary makes the failover guard look at every host, and the query fails.
            if let problem = store.healthProblem() {
                throw ResponseError(.problem(503, problem, title: "Service Unavailable"))
            }
            throw ResponseError(.problem(503, "The database does not answer.", title: "Service Unavailable", type: ProblemType.databaseUnavailable))
        }
        return HealthAnswer(schemaVersion: schema)
    }

    func exposition(_ request: Request) -> StaticFileAnswer {
        StaticFileAnswer(bytes: metrics.exposition(), contentType: "text/plain; version=0.0.4; charset=utf-8", etag: nil)
    }

    /// A module of the package by its path under /sdk/ (`engine/engine.js`); a name with a
    /// slash of its own (`..%2F`) is no key of the table, so it is a 404 like any unknown one.
    private static func sdkFile(_ path: String, _ request: Request) throws(ResponseError) -> Revalidated<StaticFileAnswer> {
        guard let file = Application.sdkFiles[path] else {
            throw ResponseError(.problem(404, "The JavaScript client has no such module.", type: ProblemType.notFound))
        }
        return embedded(file.bytes, contentType: Application.sdkContentType, etag: file.etag, request)
    }

    private static func playgroundFile(_ name: String, _ request: Request) throws(ResponseError) -> Revalidated<StaticFileAnswer> {
        guard let file = Application.playgroundFiles[name] else {
            throw ResponseError(.problem(404, "The playground has no such file.", type: ProblemType.notFound))
        }
        return embedded(file.bytes, contentType: file.contentType, etag: file.etag, request)
    }

    /// A file built into the server, sent as its type says (never sniffed), or 304 when the
    /// request names its ETag.
    private static func embedded(_ bytes: [UInt8], contentType: String, etag: String, _ request: Request) -> Revalidated<StaticFileAnswer> {
        Revalidated(answer: StaticFileAnswer(bytes: bytes, contentType: contentType, etag: etag,
                                             headers: [("X-Content-Type-Options", "nosniff")]),
                    notModified: IfNoneMatch.lists(etag, in: request.headers["If-None-Match"]))
    }
}
