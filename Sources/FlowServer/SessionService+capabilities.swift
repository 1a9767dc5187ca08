// Session creation for the builds in the field: the versions a client can render, and the 422
// for a client that can render none.
import FlowEngine
import HTTPServer
import JSON

extension ProblemType {
    static let unsupportedClient = prefix + "unsupported-client"
}

extension SessionService {
    /// The flow versions a session of `client` runs (the live ones when it lists no features)
    /// and the flows where it falls back; 422 `unsupported-client` when some flow it would show
    /// has no activated version the client renders.
    func clientVersions(_ client: ClientCapabilities?, live: [String: Int]) throws(ResponseError) -> (versions: [String: Int], fallbacks: [String: Int]) {
        guard let client, client.features != nil else { return (live, [:]) }
        switch registry.fit(client, live: live) {
        case .fits(let versions, let fallbacks):
            return (versions, fallbacks)
        case .unsupported(let missing, let flows):
            throw ResponseError(Self.unsupportedClient(client, missing: missing, flows: flows))
        }
    }

    /// `422 {code: "unsupported-client", missing: [features], flows: [names], …}`.
    static func unsupportedClient(_ client: ClientCapabilities, missing: [String], flows: [String]) -> Response {
        let build = [client.platform, client.appVersion].compactMap { $0 }.joined(separator: " ")
        let shown = missing.prefix(10).joined(separator: ", ") + (missing.count > 10 ? ", …" : "")
        return .problem(
            422,
            "This client\(build.isEmpty ? "" : " (\(build))") cannot render any activated version of \(flows.joined(separator: ", ")): "
                + "the live versions show \(shown), which its features do not list.",
            title: "Unsupported Client", type: ProblemType.unsupportedClient,
            extensions: [
                ("code", JSONValue.string("unsupported-client").jsonText),
                ("missing", JSONValue.array(missing.map { .string($0) }).jsonText),
                ("flows", JSONValue.array(flows.map { .string($0) }).jsonText),
            ])
    }
}
