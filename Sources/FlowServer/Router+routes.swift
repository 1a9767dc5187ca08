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
            try Self.run(handler, request, as: try admin.authorize(request, role: role))
        }
    }

    /// Adds a route that an admin credential and a session's own token both open (`DELETE
    /// /v1/sessions/{id}`: support ends a session, its holder deletes it). A request whose
    /// bearer token is the admin token or a live admin key is an admin request: it needs
    /// `role` (403 `insufficient-role` below it; the route is listed among the admin routes
    /// with it), and `adminHandler` runs as an admin route's handler does. Any other request,
    /// with a token or without one, goes to `handler`, which checks the session's token itself.
    mutating func adminOrSessionRoute(_ method: String, _ pattern: String, _ admin: AdminAuthorization, role: AdminRole,
                                      admin adminHandler: @escaping @Sendable (Request) throws(ResponseError) -> Response,
                                      session handler: @escaping @Sendable (Request) throws(ResponseError) -> Response) {
        admin.routes.add(method, pattern, role)
        route(method, pattern) { request throws(ResponseError) in
            guard let token = BearerToken.presented(in: request), let identity = try admin.identity(of: token) else {
                return try handler(request)
            }
            guard identity.role >= role else {
                throw AdminAuthorization.insufficientRole(identity, needed: role, for: "\(request.method) \(request.path)")
            }
            return try Self.run(adminHandler, request, as: identity)
        }
    }

    /// Runs an admin route's `handler` with `identity` as the request's credential (`admin.credential`).
    private static func run(_ handler: @Sendable (Request) throws(ResponseError) -> Response, _ request: Request,
                            as identity: AdminIdentity) throws(ResponseError) -> Response {
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
