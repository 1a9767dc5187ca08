// Cache-Control for every route, in one table: what a browser, a proxy or an HTTP cache may keep.
import HTTPServer

/// The `Cache-Control` each route answers with, set on every answer of the route (errors too)
/// by `Application.handle`, so handlers do not set it themselves.
///
/// | routes | Cache-Control | why |
/// | --- | --- | --- |
/// | `/openapi.yaml`, `/`, `/playground/{file}`, `/sdk/{file}`, `/sdk/engine/{file}`, `/sdk/client/{file}`, `/v1/schemas`, `/v1/schemas/{name}` | `no-cache` | public, change only with the binary: kept, revalidated with their `ETag` (304) |
/// | `/api/features/{clientKey}` | `no-cache` | GrowthBook SDKs poll it; the `ETag` makes an unchanged payload a 304 |
/// | `/v1/sessions/{id}/bundle` | `private, no-cache` | the client keeps it and revalidates it (`If-None-Match`) before relying on it |
/// | everything else: session, user and admin routes, graphs, events, OFREP, `/healthz`, `/metrics` | `no-store` | private, or a reading of now |
///
/// An answer given later (an action waiting for its commit) carries its own `no-store` (the
/// state answers of `SessionService`); only the table's default applies to those routes.
enum CachePolicy {
    static let noStore = "no-store"
    static let revalidate = "no-cache"
    static let privateRevalidate = "private, no-cache"

    /// Route patterns whose answers may be kept; every other route's are `no-store`.
    static let kept: [String: String] = [
        "/openapi.yaml": revalidate,
        "/": revalidate,
        "/playground/{file}": revalidate,
        "/sdk/{file}": revalidate,
        "/sdk/engine/{file}": revalidate,
        "/sdk/client/{file}": revalidate,
        "/v1/schemas": revalidate,
        "/v1/schemas/{name}": revalidate,
        "/api/features/{clientKey}": revalidate,
        "/v1/sessions/{id}/bundle": privateRevalidate,
    ]

    /// The `Cache-Control` of an answer of the route `pattern` (nil: no route matched, also `no-store`).
    static func cacheControl(forRoute pattern: String?) -> String {
        pattern.flatMap { kept[$0] } ?? noStore
    }

    /// `response` with the route's `Cache-Control`.
    static func apply(to response: inout Response, route pattern: String?) {
        response.headers["Cache-Control"] = cacheControl(forRoute: pattern)
    }
}
