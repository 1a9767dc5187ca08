// What apps need at the edge: predicted next states, dry runs, and a session's bundle.
import FlowEngine
import FlowStore
import JSON

extension SessionService {
    /// Refuses an action whose `If-Match` does not name the session's version (412, with the
    /// current version in `currentVersion` and `ETag`).
    static func check(_ ifMatch: IfMatch?, _ session: LiveSession) throws(SessionError) {
        guard let ifMatch, !ifMatch.matches(session.version) else { return }
        throw .versionMismatch(session: session.id, version: session.version, asked: ifMatch.description)
    }

    /// The committed state document of session `id` with the predictions of its version (see
    /// ``SessionState/predictions(limits:)``), after the token check. Predictions are made once
    /// per version and user state and kept with the session.
    func predictedStateDocument(_ id: String, token: String?) throws(SessionError) -> (version: Int, document: [UInt8]) {
        try withSession(id, access: .bearer(token), user: true) { (session: inout LiveSession, user) throws(SessionError) in
            let predictions = session.cachedPredictions(user: user)
            return (session.version, SessionState.withPredictions(session.cachedStateDocument(), predictions))
        }
    }

    /// The state `action` would produce on session `id` now, committing nothing: the same
    /// checks (`If-Match`, the engine's refusals, as problems) and the same document a post
    /// would answer; with `predict`, the predictions of that state too. The route answers it
    /// with `Cache-Control: no-store`.
    func dryRun(_ action: FlowAction, on id: String, token: String?, ifMatch: IfMatch?, predict: Bool) throws(SessionError) -> [UInt8] {
        try withSession(id, access: .bearer(token), user: true) { (session: inout LiveSession, user) throws(SessionError) -> [UInt8] in
            try Self.check(ifMatch, session)
            let next: SessionState
            do throws(FlowError) {
                next = try session.engineState(user: user).applying(action).next
            } catch {
                throw .refused(error)
            }
            let document = next.document()
            return predict ? SessionState.withPredictions(document, next.predictionsJSON()) : document
        }
    }

    /// The session's bundle (see ``SessionBundle``) and its entity tag: the version and a hash
    /// of the bundle, since the user's state can change under the same version.
    func bundle(_ id: String, token: String?) throws(SessionError) -> (etag: String, body: [UInt8]) {
        try withSession(id, access: .bearer(token), user: true) { (session: inout LiveSession, user) throws(SessionError) in
            let versions = DefinitionRegistry.decode(String(decoding: session.flowVersionsJSON, as: UTF8.self)) ?? [:]
            var definitions: [(name: String, json: [UInt8])] = []
            for (name, version) in versions {
                guard let stored = registry.flow(name, version: version) else {
                    throw .definitionsLoading(flow: name, version: version)
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
