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

    /// Adds an admin route: it first checks the admin token or admin key (401 without one) and
    /// its role (403 `insufficient-role` below `role`; by default `read` for GET, `edit` for the
    /// rest), then runs `handler` with that credential as `admin.credential` (the audit log's).
    mutating func adminRoute(_ method: String, _ pattern: String, _ admin: AdminAuthorization, role: AdminRole? = nil,
                             _ handler: @escaping @Sendable (Request) throws(ResponseError) -> Response) {
        let role = role ?? AdminRole.defaultRole(for: method)
        admin.routes.add(method, pattern, role)
        route(method, pattern) { request throws(ResponseError) in
            let identity = try admin.authorize(request, role: role)
            let result = AdminIdentity.$current.withValue(identity) { () -> Result<Response, ResponseError> in
                do throws(ResponseError) {
                    return .success(try handler(request))
                } catch {
                    return .failure(error)
                }
            }
            return try result.get()
        }
    }
}
