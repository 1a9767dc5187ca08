// Session creation for the builds in the field: the versions a client can render, and the 422
// for a client that can render none.
import FlowEngine

extension ProblemType {
    static let unsupportedClient = prefix + "unsupported-client"
}

extension SessionService {
    /// The flow versions a session of `client` runs (the live ones when it lists no features)
    /// and the flows where it falls back; 422 `unsupported-client` when some flow it would show
    /// has no activated version the client renders.
    func clientVersions(_ client: ClientCapabilities?, live: [String: Int]) throws(SessionError) -> (versions: [String: Int], fallbacks: [String: Int]) {
        guard let client, client.features != nil else { return (live, [:]) }
        switch registry.fit(client, live: live) {
        case .fits(let versions, let fallbacks):
            return (versions, fallbacks)
        case .unsupported(let missing, let flows):
            throw .unsupportedClient(client, missing: missing, flows: flows)
        }
    }
}
