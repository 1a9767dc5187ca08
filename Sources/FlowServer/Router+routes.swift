// Routes whose handlers end early by throwing a ResponseError, and admin routes.
import HTTPServer

extension Router {
    /// Adds a route whose handler may throw a `ResponseError`: the error's response is the answer.
    ///
    /// ```swift
    /// router.route("GET", "/things/{id}") { request throws(ResponseError) in
    ///     guard let id = request.pathParameters["id"] else { throw ResponseError(.problem(404, "…")) }
    ///     return .text(id)
    /// }
    /// ```
    mutating func route(_ method: String, _ pattern: String,
                        _ handler: @escaping @Sendable (Request) throws(ResponseError) -> Response) {
        add(method, pattern) { request in
            do throws(ResponseError) {
                return try handler(request)
            } catch {
                return error.response
            }
        }
    }

    /// Adds a route that first checks the admin token (401 without it).
    mutating func adminRoute(_ method: String, _ pattern: String, _ admin: AdminAuthorization,
                             _ handler: @escaping @Sendable (Request) throws(ResponseError) -> Response) {
        route(method, pattern) { request throws(ResponseError) in
            try admin.authorize(request)
            return try handler(request)
        }
    }
}
