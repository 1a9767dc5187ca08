// GET /v1/sessions/{id}/bundle: what a client needs to run the session's engine itself.
import HTTPServer

extension Application {
    static func addBundleRoute(to router: inout Router, sessions: SessionService) {
        router.route("GET", "/v1/sessions/{id}/bundle") { request throws(ResponseError) in
            let id = request.pathParameters["id"] ?? ""
            let (etag, body) = try sessionCall { () throws(SessionError) in try sessions.bundle(id, token: BearerToken.presented(in: request)) }
            // A client keeps the bundle and revalidates it (If-None-Match) before relying on it
            // (CachePolicy: private, no-cache).
            var response = Response.json(body)
            response.headers["ETag"] = etag
            if let tags = request.headers["If-None-Match"], Self.noneMatch(tags, etag) {
                return .notModified(response)
            }
            return response
        }
    }
}
