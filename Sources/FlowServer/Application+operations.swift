// Operations routes: /healthz, /metrics and /openapi.yaml.
import FlowStore
import HTTPServer

extension Application {
    /// The API contract served at `/openapi.yaml`, embedded from the repo's file at build time.
    static let openAPIDocument: [UInt8] = Array(
        (EmbeddedResources.files.first { $0.path == "openapi.yaml" }?.text ?? "").utf8)

    static let openAPITag = contentTag(openAPIDocument)

    static func addOperationRoutes(to router: inout Router, store: any FlowStore, metrics: ServerMetrics) {
        router.add("GET", "/healthz") { _ in
            // Checked first: a node refusing its database also fails the query below.
            if let problem = store.healthProblem() {
                return .problem(503, problem, title: "Service Unavailable")
            }
            guard let schema = store.healthCheck() else {
                return .problem(503, "The database does not answer.", title: "Service Unavailable", type: ProblemType.databaseUnavailable)
            }
            return .json(Array(#"{"status":"ok","database":"ok","schemaVersion":\#(schema)}"#.utf8))
        }
        router.add("GET", "/metrics") { _ in
            .bytes(metrics.exposition(), contentType: "text/plain; version=0.0.4; charset=utf-8")
        }
        router.add("GET", "/openapi.yaml") { request in
            // Kept and revalidated (CachePolicy: no-cache): it changes only with the binary.
            var response = Response.bytes(openAPIDocument, contentType: "application/yaml")
            response.headers["ETag"] = openAPITag
            if let tags = request.headers["If-None-Match"], noneMatch(tags, openAPITag) {
                return .notModified(response)
            }
            return response
        }
    }
}
