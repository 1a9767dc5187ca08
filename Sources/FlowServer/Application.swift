// The FlowStack application: its routes, and what wraps every request (ids, metrics, logs).
import FlowStore
import HTTPServer
import Logging

/// The request handler of a FlowStack server, independent of any socket.
///
/// ```swift
/// let app = Application(store: store, adminToken: "secret")
/// let response = app.handle(Request(method: "GET", path: "/healthz"))
/// ```
/// `HTTPServer(configuration:handler: app.handle)` serves it on libmicrohttpd.
public final class Application: Sendable {
    public let store: FlowStore
    public let metrics = ServerMetrics()
    let adminToken: String
    let logger: Logger
    private let router: Router

    public init(store: FlowStore, adminToken: String, logger: Logger = Logger(label: "flowstack")) {
        self.store = store
        self.adminToken = adminToken
        self.logger = logger
        var router = Router()
        Self.addOperationRoutes(to: &router, store: store, metrics: metrics)
        self.router = router
    }

    /// The routes served, for documentation and tests.
    public var routes: [(method: String, pattern: String)] { router.patterns }

    /// Answers one request: routes it, then records its metrics and logs it.
    public func handle(_ request: Request) -> Response {
        let start = ContinuousClock.now
        var response = router.handle(request)
        if request.method == "HEAD" { response.body = [] }
        let elapsed = ContinuousClock.now - start
        let nanoseconds = elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000
        let route = router.pattern(forPath: request.path) ?? "unmatched"
        metrics.record(route: route, method: request.method, status: response.status, nanoseconds: nanoseconds)
        if response.status >= 500 {
            logger.error("request failed", metadata: ["request-id": "\(request.requestId)", "method": "\(request.method)",
                                                      "route": "\(route)", "status": "\(response.status)"])
        } else if logger.logLevel <= .debug {
            logger.debug("\(request.method) \(request.path) \(response.status)",
                         metadata: ["request-id": "\(request.requestId)", "microseconds": "\(nanoseconds / 1000)"])
        }
        return response
    }
}
