// FlowSession+Configuration: what the app gives a session (server, credentials, user, build) and the failure to start one.

import Foundation
import JSON

extension FlowSession {
    /// What the app builds: the server, the credentials, who the user is and what the build draws.
    public struct Configuration: Sendable {
        public var server: URL
        /// The app's client key (`fsk_…`), sent as `X-API-Key` when a session is created.
        public var clientKey: String?
        public var userId: String
        /// HMAC-SHA256 of the user id, from the app's backend, when the server verifies user ids.
        public var userHash: String?
        public var attributes: JSONObject
        public var traits: [String: String]
        /// What this build can draw; nil when the app does not say (taken to draw everything).
        public var client: ClientInfo?
        /// Where the session is kept between launches, under the server and the user (``SessionKey``).
        public var store: any SessionStore
        public var retry: RetryPolicy
        /// Seconds before a request counts as unanswered.
        public var timeout: TimeInterval
        /// A delay added before every request, to try the client on a slow network.
        public var simulatedLatency: Duration
        /// Whether to run the session's engine locally (false: server predictions only).
        public var usesBundle: Bool
        /// Whether to show the server's predictions when there is no local engine (false: a tap
        /// without the engine waits for its answer).
        public var usesPredictions: Bool
        /// How requests reach the server; nil for URLSession's (``URLSessionTransport``). Tests and
        /// simulations give their own.
        public var transport: (any FlowTransport)?

        public init(server: URL, clientKey: String? = nil, userId: String, userHash: String? = nil, attributes: JSONObject = [:],
                    traits: [String: String] = [:], client: ClientInfo? = nil, store: any SessionStore = MemorySessionStore(),
                    retry: RetryPolicy = RetryPolicy(), timeout: TimeInterval = 10, simulatedLatency: Duration = .zero,
                    usesBundle: Bool = true, usesPredictions: Bool = true, transport: (any FlowTransport)? = nil) {
            self.server = server
            self.clientKey = clientKey
            self.userId = userId
            self.userHash = userHash
            self.attributes = attributes
            self.traits = traits
            self.client = client
            self.store = store
            self.retry = retry
            self.timeout = timeout
            self.simulatedLatency = simulatedLatency
            self.usesBundle = usesBundle
            self.usesPredictions = usesPredictions
            self.transport = transport
        }

        /// The key the session is kept under.
        var key: SessionKey { SessionKey(server: server, userId: userId) }
    }

    /// `client: {platform, appVersion, features}` at session creation.
    public struct ClientInfo: Sendable, Equatable {
        public var platform: String
        public var appVersion: String
        /// Every screen feature this build registers.
        public var features: [String]
        public init(platform: String, appVersion: String, features: [String]) {
            self.platform = platform
            self.appVersion = appVersion
            self.features = features
        }
    }

    /// The server refused to create or resume a session (a problem document: a 422
    /// `unsupported-client`, a 403…), or answered something that is not a session: the status,
    /// the problem, and what the body began with when it was not a problem.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var status: Int
        public var problem: JSONValue?
        /// The first bytes of a body that names no problem (up to 200).
        public var body: String?
        public var description: String {
            if let detail = problem?["detail"]?.stringValue ?? problem?["title"]?.stringValue {
                return "FlowStack answered \(status): \(detail)"
            }
            if let body, !body.isEmpty { return "FlowStack answered \(status), not a session nor a problem: \(body)" }
            return "FlowStack answered \(status) with no body"
        }

        init(_ answer: FlowAnswer) {
            status = answer.status
            problem = answer.json.flatMap { $0.objectValue != nil ? $0 : nil }
            let named = problem?["detail"]?.stringValue ?? problem?["title"]?.stringValue
            body = named == nil ? String(decoding: answer.body.prefix(200), as: UTF8.self) : nil
        }
    }
}
