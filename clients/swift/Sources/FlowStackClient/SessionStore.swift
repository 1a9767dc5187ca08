// SessionStore: where an app keeps its session's token and queued taps across being killed.
import FlowEngine
import Foundation
import JSON

/// What a client keeps between launches: the session, its token, the taps not yet confirmed, and,
/// so an app killed while offline can start again while still offline, the last confirmed state
/// document and the session's bundle at that version.
public struct StoredSession: Sendable, Equatable {
    /// The server the session lives on, so a store is not used against another one.
    public var server: String
    public var sessionId: String
    public var token: String
    public var userId: String
    /// Taps shown and not yet confirmed, oldest first, with their idempotency keys.
    public var queue: [QueuedAction]
    /// The last state document the server confirmed (nil in a store written before it was kept).
    public var confirmed: JSONValue?
    /// The session's bundle as JSON, at the confirmed version when the local engine followed it
    /// there (nil without one: a predictions-only client, or a store written before it was kept).
    public var bundle: [UInt8]?
    /// The bundle's `ETag`, when `bundle` is the one the server sent (not one moved on locally).
    public var bundleTag: String?

    public init(server: String, sessionId: String, token: String, userId: String, queue: [QueuedAction] = [],
                confirmed: JSONValue? = nil, bundle: [UInt8]? = nil, bundleTag: String? = nil) {
        self.server = server
        self.sessionId = sessionId
        self.token = token
        self.userId = userId
        self.queue = queue
        self.confirmed = confirmed
        self.bundle = bundle
        self.bundleTag = bundleTag
    }

    /// The stored form: `{server, sessionId, token, userId, queue: [{key, version, action, at?}],
    /// confirmed?, bundle?, bundleTag?}`; the last three are optional, so a store written before
    /// they were kept still loads (and resumes online only).
    public func encoded() -> [UInt8] {
        var writer = JSONWriter(capacity: 512)
        writer.beginObject()
        writer.writeKey("server")
        writer.writeString(server)
        writer.writeKey("sessionId")
        writer.writeString(sessionId)
        writer.writeKey("token")
        writer.writeString(token)
        writer.writeKey("userId")
        writer.writeString(userId)
        writer.writeKey("queue")
        writer.beginArray()
        for item in queue {
            item.writeBatchItem(into: &writer)
        }
        writer.endArray()
        if let confirmed {
            writer.writeKey("confirmed")
            writer.writeValue(confirmed)
        }
        if let bundle {
            // Kept as the bytes it is (validated when read and when loaded), so a save copies it.
            writer.writeKey("bundle")
            writer.writeRawValue(bundle)
        }
        if let bundleTag {
            writer.writeKey("bundleTag")
            writer.writeString(bundleTag)
        }
        writer.endObject()
        return writer.takeBytes()
    }

    /// Reads the stored form; nil when it is not one (a store written by something else, or
    /// corrupt: the client then starts a new session).
    public init?(encoded bytes: [UInt8]) {
        guard let value = try? JSONParser.parse(bytes), let server = value["server"]?.stringValue,
              let sessionId = value["sessionId"]?.stringValue, let token = value["token"]?.stringValue,
              let userId = value["userId"]?.stringValue, let items = value["queue"]?.arrayValue else { return nil }
        var queue: [QueuedAction] = []
        for item in items {
            guard let key = item["key"]?.stringValue, let version = item["version"]?.integerValue,
                  let raw = item["action"], let action = try? FlowAction(json: raw) else { return nil }
            queue.append(QueuedAction(key: key, version: version, action: action, at: item["at"]?.stringValue))
        }
        var bundle: [UInt8]?
        if let raw = value["bundle"], raw.objectValue != nil {
            var writer = JSONWriter(capacity: 4096)
            writer.writeValue(raw)
            bundle = writer.takeBytes()
        }
        let confirmed = value["confirmed"].flatMap { $0.objectValue != nil ? $0 : nil }
        self.init(server: server, sessionId: sessionId, token: token, userId: userId, queue: queue,
                  confirmed: confirmed, bundle: bundle, bundleTag: value["bundleTag"]?.stringValue)
    }
}

extension FlowAction {
    /// The action as posted: `{type, from?, params?, interactive?}`.
    public var json: JSONValue {
        var members: [JSONObject.Member] = [JSONObject.Member(key: "type", value: .string(type))]
        if let from { members.append(JSONObject.Member(key: "from", value: .string(from))) }
        if !params.isEmpty { members.append(JSONObject.Member(key: "params", value: .object(params))) }
        if interactive { members.append(JSONObject.Member(key: "interactive", value: true)) }
        return .object(JSONObject(uniqueMembers: members))
    }
}

/// Where the client keeps its ``StoredSession``. The app chooses: ``FileSessionStore`` (Linux,
/// or an app's container), ``KeychainSessionStore`` on Apple platforms, ``MemorySessionStore``
/// for a session that need not survive the process.
///
/// ```swift
/// let store = FileSessionStore(path: NSHomeDirectory() + "/Library/flowstack-session.json")
/// let session = try await FlowSession.start(.init(server: url, userId: "ada", store: store))
/// ```
public protocol SessionStore: Sendable {
    func load() throws -> StoredSession?
    func save(_ session: StoredSession) throws
    func clear() throws
}

/// A store in one file, written atomically (a new file renamed over the old one). The token is in
/// it in clear: put the file where only the app can read it.
public struct FileSessionStore: SessionStore {
    public let path: String

    public init(path: String) { self.path = path }

    public func load() throws -> StoredSession? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return StoredSession(encoded: Array(data))
    }

    public func save(_ session: StoredSession) throws {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(session.encoded()).write(to: url, options: .atomic)
    }

    public func clear() throws {
        if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
    }
}

/// A store that lives as long as the process: for tests, previews and sessions that need not
/// survive a restart.
public final class MemorySessionStore: SessionStore, @unchecked Sendable {
    private let lock = NSLock()
    private var session: StoredSession?

    public init(_ session: StoredSession? = nil) { self.session = session }

    public func load() throws -> StoredSession? { lock.withLock { session } }
    public func save(_ session: StoredSession) throws { lock.withLock { self.session = session } }
    public func clear() throws { lock.withLock { session = nil } }
}
