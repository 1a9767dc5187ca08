// GET /api/features/{clientKey}: the flags and experiments as a GrowthBook SDK payload, for SDKs that evaluate them offline.
import Crypto
import FeatureFlags
import HTTPServer
import JSON
import Synchronization

extension Application {
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
    static func addGrowthBookRoutes(to router: inout Router, registry: DefinitionRegistry, keys: ClientKeys) {
        let feed = GrowthBookFeed()
        router.route("GET", "/api/features/{clientKey}") { request throws(ResponseError) in
            let key = request.pathParameters["clientKey"] ?? ""
            guard try keys.lookup(key) != nil else {
                var refused = SessionService.unauthorized(
                    "The client key in the path is unknown or revoked; make one with POST /v1/client-keys.").response
                refused.headers["Access-Control-Allow-Origin"] = "*"
                throw ResponseError(refused)
            }
            let served = feed.current(registry)
            // Stored, but asked again each time (CachePolicy: no-cache): the ETag makes that a 304
            // while nothing changed.
            var response = Response.json(served.body)
            response.headers["ETag"] = served.etag
            response.headers["Access-Control-Allow-Origin"] = "*"
            if let header = request.headers["If-None-Match"], Self.noneMatch(header, served.etag) {
                return .notModified(response)
            }
            return response
        }
    }

    /// Whether an `If-None-Match` header names `etag` (weakly, as RFC 9110 §13.1.2 compares), or is `*`.
    static func noneMatch(_ header: String, _ etag: String) -> Bool {
        guard let match = IfMatch(header) else { return false }
        return match.any || match.tags.contains { tag in
            (tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag) == etag
        }
    }
}

/// The payload last served and its tag, kept until a flag or experiment changes: SDKs poll this
/// route, and most polls find nothing new.
final class GrowthBookFeed: Sendable {
    struct Served: Sendable {
        /// Each definition's key, revision and time of update: what the payload was made from.
        let fingerprint: [String]
        let body: [UInt8]
        let etag: String
    }

    private let last = Mutex<Served?>(nil)

    /// The payload for the registry's definitions now, made again only when they changed.
    func current(_ registry: DefinitionRegistry) -> Served {
        let flags = registry.allFlags
        let experiments = registry.allExperiments
        let fingerprint = flags.map { "flag \($0.key) \($0.value.revision) \($0.value.updatedAt)" }
            + experiments.map { "experiment \($0.key) \($0.value.revision) \($0.value.updatedAt)" }
        if let served = last.withLock({ $0 }), served.fingerprint == fingerprint { return served }
        // Stored times are ISO 8601 UTC with milliseconds, so the latest sorts last.
        let dateUpdated = (flags.map(\.value.updatedAt) + experiments.map(\.value.updatedAt)).max() ?? "1970-01-01T00:00:00.000Z"
        let payload = GrowthBookPayload(
            flags: flags.map { ($0.key, $0.value.definition) }, experiments: experiments.map { ($0.key, $0.value.definition) },
            dateUpdated: dateUpdated)
        let body = Array(payload.jsonValue.jsonText.utf8)
        let digest = SHA256.hash(data: body).prefix(16).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
        let served = Served(fingerprint: fingerprint, body: body, etag: "\"\(digest)\"")
        last.withLock { $0 = served }
        return served
    }
}
