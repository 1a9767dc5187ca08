// GET /api/features/{clientKey}: the flags and experiments as a GrowthBook SDK payload, for SDKs
// that evaluate them offline.
import HTTPServer

/// GrowthBook's SDK endpoint: an unmodified GrowthBook SDK given `apiHost` = this server and
/// `clientKey` = a FlowStack client key loads it and evaluates flags and experiments itself
/// (see ``GrowthBookPayload`` for what it holds and what is left out).
///
/// - The key is in the path, as GrowthBook's API has it. An unknown or revoked key is 401
///   (a problem document; GrowthBook's own API answers 400 `{status, error}`, and SDKs treat
///   both as "no features"). It counts as a failed token check for `--session-rate`.
/// - `ETag` is a strong tag: the first 128 bits of the body's SHA-256. The body is made from
///   the definitions alone (their content, and their latest time of update as `dateUpdated`),
///   so the tag changes when any flag or experiment does, and only then; `If-None-Match`
///   with it answers 304 (the Python SDK sends it; browsers do for the JS SDK).
/// - `Access-Control-Allow-Origin: *`, as GrowthBook's API sends, so the JS SDK can load it
///   in a browser from another origin.
struct GrowthBookController: Controller {
    let registry: DefinitionRegistry
    let keys: ClientKeys
    let feed = GrowthBookFeed()
    let limits: BodyLimits

    func register(on router: inout Router) {
        router.route("GET", "/api/features/{clientKey}", limits: limits, payload)
    }

    func payload(_ request: GrowthBookRequest) throws(ResponseError) -> Revalidated<GrowthBookAnswer> {
        guard try keys.lookup(request.clientKey) != nil else {
            var refused = SessionService.unauthorized(
                "The client key in the path is unknown or revoked; make one with POST /v1/client-keys.").response
            refused.headers["Access-Control-Allow-Origin"] = "*"
            throw ResponseError(refused)
        }
        // Stored, but asked again each time (CachePolicy: no-cache): the ETag makes that a 304
        // while nothing changed.
        let served = feed.current(registry)
        return Revalidated(answer: GrowthBookAnswer(served: served), notModified: IfNoneMatch.lists(served.etag, in: request.ifNoneMatch))
    }
}

/// `{clientKey}` in the path, and `If-None-Match`.
struct GrowthBookRequest: RouteRequest {
    let clientKey: String
    let ifNoneMatch: String?

    init(_ request: Request, limits: BodyLimits) {
        clientKey = request.parameter("clientKey")
        ifNoneMatch = request.headers["If-None-Match"]
    }
}

/// The payload with its `ETag`, and `Access-Control-Allow-Origin: *`.
struct GrowthBookAnswer: ResponseEncodable {
    let served: GrowthBookFeed.Served

    func response() -> Response {
        var response = Response.json(served.body)
        response.headers["ETag"] = served.etag
        response.headers["Access-Control-Allow-Origin"] = "*"
        return response
    }
}
