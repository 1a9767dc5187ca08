// What apps need at the edge: predicted next states, dry runs, and a session's bundle.
import FlowEngine
import FlowStore
import HTTPServer
import JSON

extension SessionService {
    /// Refuses an action whose `If-Match` does not name the session's version (412, with the
    /// current version in `currentVersion` and `ETag`).
    static func check(_ ifMatch: IfMatch?, _ session: LiveSession) throws(ResponseError) {
        guard let ifMatch, !ifMatch.matches(session.version) else { return }
        var response = Response.problem(
            412, "If-Match asks for version \(ifMatch.description) but session \(session.id) is at version \(session.version); reload the state.",
            type: ProblemType.versionMismatch, extensions: [("currentVersion", String(session.version))])
        response.headers["ETag"] = etag(session.version)
        throw ResponseError(response)
    }

    /// The committed state document of session `id` with the predictions of its version (see
    /// ``SessionState/predictions(limits:)``), after the token check. Predictions are made once
    /// per version and user state and kept with the session.
    func predictedStateDocument(_ id: String, token: String?) throws(ResponseError) -> (version: Int, document: [UInt8]) {
        try withSession(id, access: .bearer(token), user: true) { (session: inout LiveSession, user) throws(ResponseError) in
            let predictions = session.cachedPredictions(user: user)
            return (session.version, LiveSession.withPredictions(session.cachedStateDocument(), predictions))
        }
    }

    /// The state `action` would produce on session `id` now, committing nothing: the same
    /// checks (`If-Match`, the engine's refusals, as problems) and the same document a post
    /// would answer; with `predict`, the predictions of that state too.
    func dryRun(_ action: FlowAction, on id: String, token: String?, ifMatch: IfMatch?, predict: Bool) throws(ResponseError) -> Response {
        let body = try withSession(id, access: .bearer(token), user: true) { (session: inout LiveSession, user) throws(ResponseError) -> [UInt8] in
            try Self.check(ifMatch, session)
            let next: SessionState
            do throws(FlowError) {
                next = try session.engineState(user: user).applying(action).next
            } catch {
                throw ResponseError(Self.problem(for: error))
            }
            let document = next.document()
            return predict ? LiveSession.withPredictions(document, LiveSession.predictionsJSON(next)) : document
        }
        var response = Response.json(body)
        response.headers["Cache-Control"] = "no-store"
        return response
    }

    /// The session's bundle (see ``SessionBundle``) and its entity tag: the version and a hash
    /// of the bundle, since the user's state can change under the same version.
    func bundle(_ id: String, token: String?) throws(ResponseError) -> (etag: String, body: [UInt8]) {
        try withSession(id, access: .bearer(token), user: true) { (session: inout LiveSession, user) throws(ResponseError) in
            let versions = DefinitionRegistry.decode(String(decoding: session.flowVersionsJSON, as: UTF8.self)) ?? [:]
            var definitions: [(name: String, json: [UInt8])] = []
            for (name, version) in versions {
                guard let stored = registry.flow(name, version: version) else {
                    throw ResponseError(.problem(503, "Flow \(name) version \(version) is not loaded on this node yet; try again.",
                                                 title: "Service Unavailable", type: ProblemType.definitionsLoading))
                }
                definitions.append((name, Array(stored.text.utf8)))
            }
            var writer = JSONWriter(capacity: 8192)
            SessionBundle.write(session.engineState(user: user), flowVersions: versions, definitions: definitions, into: &writer)
            let body = writer.takeBytes()
            return ("\"\(session.version)-\(AccessPolicy.hex(BearerToken.digest(body).prefix(6)))\"", body)
        }
    }
}

/// Whether a request asks for predictions: `?predict=true` (a query parameter rather than a
/// `Prefer` header, so a link or a curl line can ask, and no cache mixes the two answers).
struct PredictionRequest {
    let predict: Bool

    init(_ request: Request) throws(ResponseError) {
        predict = try Self.flag(request, "predict") ?? false
    }

    /// A boolean query parameter: `true` or `false`, nil when absent, else a 400 naming it.
    static func flag(_ request: Request, _ name: String) throws(ResponseError) -> Bool? {
        guard let text = request.queryValue(name) else { return nil }
        switch text {
        case "true": return true
        case "false": return false
        default:
            throw ResponseError(.problem(400, "Query parameter \(name) must be true or false; found \(text).",
                                         type: ProblemType.malformed, errors: [.init(pointer: name, detail: "must be true or false")]))
        }
    }
}
