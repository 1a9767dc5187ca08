// A controller: the routes of one resource, registered together, with the services they call.
import HTTPServer

/// The routes of one resource (sessions, releases, flags…) and what they need to answer.
///
/// A controller holds its services, not the store: a route reads its typed request, calls a
/// service, and returns a typed answer.
/// ```swift
/// var router = Router()
/// ReleaseController(releases: service, admin: admin, limits: limits).register(on: &router)
/// ```
protocol Controller: Sendable {
    /// Adds the resource's routes to `router`.
    func register(on router: inout Router)
}
