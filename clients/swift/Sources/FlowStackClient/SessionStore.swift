// SessionStore: where an app keeps its session's token and queued taps across being killed.
import FlowEngine
import Foundation
import JSON

/// What a client keeps between launches: the session, its token, the taps not yet confirmed, and,
/// so an app killed while offline can start again while still offline, the last confirmed state
/// document and the session's bundle at that version.
public struct StoredSession: Sendable, Equatable {
    /// The server the session lives on (normalized, see ``SessionKey``), so a store is not used
    /// against another one.
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
    /// Which of the user's sessions on this server it is (see ``SessionKey/slot``): 1 unless
    /// another `FlowSession` of the same store and user was running when this one started.
    public var slot: Int

    public init(server: String, sessionId: String, token: String, userId: String, queue: [QueuedAction] = [],
                confirmed: JSONValue? = nil, bundle: [UInt8]? = nil, bundleTag: String? = nil, slot: Int = 1) {
        self.server = SessionKey.normalize(server)
        self.slot = slot
        self.sessionId = sessionId
        self.token = token
        self.userId = userId
        self.queue = queue
        self.confirmed = confirmed
        self.bundle = bundle
        self.bundleTag = bundleTag
    }

    /// The stored form: `{server, sessionId, token, userId, slot?, queue: [{key, version, action,
    /// at?}], confirmed?, bundle?, bundleTag?}`; `slot` is written when it is not 1, and the last
    /// three are optional, so a store written before they were kept still loads (and resumes
    /// online only).
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
        if slot != 1 {
            writer.writeKey("slot")
            writer.writeInteger(slot)
        }
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
        guard let value = try? JSONParser.parse(bytes) else { return nil }
        self.init(json: value)
    }

    init?(json value: JSONValue) {
        guard let server = value["server"]?.stringValue,
              let sessionId = value["sessionId"]?.stringValue, let token = value["token"]?.stringValue,
              let userId = value["userId"]?.stringValue, let items = value["queue"]?.arrayValue else { return nil }
        let slot = value["slot"].map { $0.integerValue ?? 0 } ?? 1
        guard SessionKey.slots.contains(slot) else { return nil }
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
                  confirmed: confirmed, bundle: bundle, bundleTag: value["bundleTag"]?.stringValue, slot: slot)
    }
}

extension FlowAction {
    /// The action as posted: `{type, from?, row?, params?, interactive?}`.
    public var json: JSONValue {
        var members: [JSONObject.Member] = [JSONObject.Member(key: "type", value: .string(type))]
        if let from { members.append(JSONObject.Member(key: "from", value: .string(from))) }
        if let row { members.append(JSONObject.Member(key: "row", value: .string(row))) }
        if !params.isEmpty { members.append(JSONObject.Member(key: "params", value: .object(params))) }
        if interactive { members.append(JSONObject.Member(key: "interactive", value: true)) }
        return .object(JSONObject(uniqueMembers: members))
    }
}

/// Which session a store keeps: one per server and user (and slot, see ``slot``). Equivalent
/// spellings of a server are one key (scheme and host in any case, the default port written or
/// not, trailing slashes), so `HTTP://Flows.example.com:443/` after `https://flows.example.com`
/// resumes the same session; different hosts (`localhost` and `127.0.0.1`) are different keys,
/// and neither's queue is touched by the other.
public struct SessionKey: Sendable, Hashable, CustomStringConvertible {
    /// The server, normalized: `scheme://host[:port][/path]`, lowercased scheme and host, no
    /// default port, no trailing slash, no query.
    public var server: String
    public var userId: String
    /// Which of the user's sessions on the server: 1, unless several `FlowSession`s of the same
    /// store and user run at once in a process (two windows of an iPad app), when each started
    /// one takes a slot no running one holds (`FlowSession.start`), so that none writes over
    /// another's queued taps. In ``slots``.
    public var slot: Int

    /// The slots a store keeps for one server and user: a `FlowSession` started while all of
    /// them are taken uses slot 1 unclaimed, as sessions did before there were slots.
    public static let slots = 1...64

    public init(server: URL, userId: String, slot: Int = 1) {
        self.init(server: server.absoluteString, userId: userId, slot: slot)
    }

    /// From a server as text (as older stores kept it): normalized the same way.
    public init(server: String, userId: String, slot: Int = 1) {
        self.server = Self.normalize(server)
        self.userId = userId
        self.slot = slot
    }

    public var description: String { slot == 1 ? "\(userId) on \(server)" : "\(userId) on \(server) (slot \(slot))" }

    /// The same server and user in slot `slot`.
    func inSlot(_ slot: Int) -> SessionKey {
        var key = self
        key.slot = slot
        return key
    }

    static func normalize(_ text: String) -> String {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              let host = components.host?.lowercased(), !host.isEmpty else {
            var trimmed = text
            while trimmed.hasSuffix("/") { trimmed.removeLast() }
            return trimmed
        }
        var result = scheme + "://" + (host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host)
        if let port = components.port, !(scheme == "http" && port == 80) && !(scheme == "https" && port == 443) {
            result += ":\(port)"
        }
        var path = components.percentEncodedPath
        while path.hasSuffix("/") { path.removeLast() }
        return result + path
    }
}

extension StoredSession {
    /// The key this session is kept under.
    public var key: SessionKey { SessionKey(server: server, userId: userId, slot: slot) }
}

/// Where the client keeps its ``StoredSession``s, one per ``SessionKey`` (server and user). The
/// app chooses: ``FileSessionStore`` (Linux, or an app's container), ``KeychainSessionStore`` on
/// Apple platforms, ``MemorySessionStore`` for sessions that need not survive the process.
///
/// ```swift
/// let store = FileSessionStore(path: NSHomeDirectory() + "/Library/flowstack-sessions.json")
/// let session = try await FlowSession.start(.init(server: url, userId: "ada", store: store))
/// ```
public protocol SessionStore: Sendable {
    /// The session kept for `key`, if any.
    func load(_ key: SessionKey) throws -> StoredSession?
    /// Keeps `session` under its key, leaving every other key's session as it is.
    func save(_ session: StoredSession) throws
    /// Forgets the session kept for `key`.
    func remove(_ key: SessionKey) throws
    /// Where this store keeps its sessions, as far as the `FlowSession`s of one process are
    /// concerned: two started at once for one server and user on stores with the same scope take
    /// different slots (``SessionKey/slot``). Nil: no slots are claimed, every session uses slot
    /// 1, and two running at once write over each other. The default is the store object itself
    /// for a class (a store made anew is another scope, as after a relaunch), nil for a value.
    var slotScope: String? { get }
}

extension SessionStore {
    public var slotScope: String? {
        type(of: self) is AnyClass ? "object \(ObjectIdentifier(self as AnyObject))" : nil
    }
}

/// The stored form of several sessions: `{"sessions": [StoredSession…]}`. A file holding one
/// session (as stores wrote before sessions were kept per server and user) reads as a list of one.
enum StoredSessions {
    /// Whether `queue` starts with `kept`, the queue as it was last kept. A tap is known by its
    /// key, which is new for every tap, and a queue changes by taps added at its end, answered ones
    /// taken off its start, a tail dropped or a new start: so `kept`'s first and last taps at their
    /// places in `queue` say so, and keeping a tap costs the same with thousands queued.
    static func continues(_ kept: [QueuedAction], in queue: [QueuedAction]) -> Bool {
        kept.count <= queue.count
            && (kept.isEmpty || (queue[0].key == kept[0].key && queue[kept.count - 1].key == kept[kept.count - 1].key))
    }

    static func decode(_ bytes: [UInt8]) -> [StoredSession] {
        guard let value = try? JSONParser.parse(bytes) else { return [] }
        guard let items = value["sessions"]?.arrayValue else { return StoredSession(json: value).map { [$0] } ?? [] }
        return items.compactMap(StoredSession.init(json:))
    }

    static func encode(_ sessions: [StoredSession]) -> [UInt8] {
        var writer = JSONWriter(capacity: 1024)
        writer.beginObject()
        writer.writeKey("sessions")
        writer.beginArray()
        for session in sessions { writer.writeRawValue(session.encoded()) }
        writer.endArray()
        writer.endObject()
        return writer.takeBytes()
    }

    /// `sessions` with `session` in place of the one of its key (appended when new).
    static func replacing(_ session: StoredSession, in sessions: [StoredSession]) -> [StoredSession] {
        var result = sessions.filter { $0.key != session.key }
        result.append(session)
        return result
    }
}

/// A store in one file holding every server's and user's session, and a journal beside it
/// (`<path>.journal`) of the taps queued since the file was last written.
///
/// A tap is on this store's path (`send` keeps it before it returns, so a kill right after keeps
/// it): when a save only adds taps to a session's queue, they are appended to the journal as one
/// line (microseconds); any other change (an answer moved the confirmed state, the queue went, a
/// new session) writes the whole file atomically (a new file renamed over the old one, about
/// 0.4 ms) and empties the journal. Lines carry a sequence number and the file the last one it
/// includes, so a kill between the two writes replays nothing twice; a line cut by a kill is
/// ignored, and a store that finds one writes the file anew before appending (so does one whose
/// append failed, a full disk leaving part of a line: the next save writes the whole file, and
/// a line is never appended after a part one). Nothing is synced
/// to disk: a tap survives the app's death, not the device's power loss.
///
/// The files are read once; each save works from what the store holds in memory, so use one store
/// per file in a process. A file written by an older client (one session) still reads. The tokens
/// are in it in clear: put the file where only the app can read it.
public final class FileSessionStore: SessionStore, @unchecked Sendable {
    public let path: String
    private let lock = NSLock()
    /// The sessions, once read.
    private var sessions: [StoredSession]?
    /// The last journal line written or read.
    private var sequence = 0
    private var journal: FileHandle?
    private var journalBytes = 0
    /// Set when the journal may end in part of a line (a write to it failed, or the file could
    /// not be written anew after reading it): nothing is appended after that part, which would
    /// hide every later line from the next launch; the next save writes the file anew instead.
    private var journalCut = false
    /// Beyond this, the next save writes the file anew.
    private static let journalLimit = 4 << 20

    public init(path: String) { self.path = path }

    private var journalPath: String { path + ".journal" }

    public func load(_ key: SessionKey) throws -> StoredSession? {
        try lock.withLock { try read().last(where: { $0.key == key }) }
    }

    public func save(_ session: StoredSession) throws {
        try lock.withLock {
            let sessions = try read()
            if let index = sessions.lastIndex(where: { $0.key == session.key }), journalBytes < Self.journalLimit, !journalCut,
               let added = Self.added(to: sessions[index], in: session) {
                try append(added, for: session)
                self.sessions?[index] = session
                return
            }
            try write(StoredSessions.replacing(session, in: sessions))
        }
    }

    public func remove(_ key: SessionKey) throws {
        try lock.withLock {
            let sessions = try read()
            guard sessions.contains(where: { $0.key == key }) else { return }
            try write(sessions.filter { $0.key != key })
        }
    }

    /// Every session in the file (none when there is no file; a file that does not read as
    /// sessions reads as none, and is replaced at the next save).
    public func all() throws -> [StoredSession] { try lock.withLock { try read() } }

    /// The taps `new` adds at the end of `old`'s queue, when that is all that changed (see
    /// ``StoredSessions/continues(_:in:)``).
    private static func added(to old: StoredSession, in new: StoredSession) -> ArraySlice<QueuedAction>? {
        guard new.queue.count > old.queue.count, new.sessionId == old.sessionId, new.token == old.token,
              StoredSessions.continues(old.queue, in: new.queue), new.bundleTag == old.bundleTag,
              new.bundle == old.bundle, new.confirmed == old.confirmed else { return nil }
        return new.queue[old.queue.count...]
    }

    /// `{"seq", "server", "userId", "slot"?, "push": [taps]}` and a newline, at the journal's end.
    private func append(_ taps: ArraySlice<QueuedAction>, for session: StoredSession) throws {
        if journal == nil {
            if !FileManager.default.fileExists(atPath: journalPath) { FileManager.default.createFile(atPath: journalPath, contents: nil) }
            guard let handle = FileHandle(forWritingAtPath: journalPath) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: journalPath])
            }
            journal = handle
        }
        sequence += 1
        var writer = JSONWriter(capacity: 256 * taps.count)
        writer.beginObject()
        writer.writeKey("seq")
        writer.writeInteger(sequence)
        writer.writeKey("server")
        writer.writeString(session.server)
        writer.writeKey("userId")
        writer.writeString(session.userId)
        if session.slot != 1 {
            writer.writeKey("slot")
            writer.writeInteger(session.slot)
        }
        writer.writeKey("push")
        writer.beginArray()
        for tap in taps { tap.kept.writeBatchItem(into: &writer) }
        writer.endArray()
        writer.endObject()
        var line = writer.takeBytes()
        line.append(UInt8(ascii: "\n"))
        do {
            try journal?.seekToEnd()
            try journal?.write(contentsOf: Data(line))
        } catch {
            // Part of the line may be written (a full disk): a line after it would not read.
            journalCut = true
            throw error
        }
        journalBytes += line.count
    }

    private func read() throws -> [StoredSession] {
        if let sessions { return sessions }
        var read: [StoredSession] = []
        var included = 0
        if FileManager.default.fileExists(atPath: path) {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            read = StoredSessions.decode(bytes)
            included = (try? JSONParser.parse(bytes))?["seq"]?.integerValue ?? 0
        }
        sequence = included
        var replayed = false
        if let data = FileManager.default.contents(atPath: journalPath), !data.isEmpty {
            replayed = true
            for line in data.split(separator: UInt8(ascii: "\n")) {
                // A line a kill cut short does not read: it and anything after it are left out.
                guard let entry = try? JSONParser.parse(Array(line)), let seq = entry["seq"]?.integerValue,
                      let server = entry["server"]?.stringValue, let userId = entry["userId"]?.stringValue,
                      let items = entry["push"]?.arrayValue else { break }
                sequence = max(sequence, seq)
                let key = SessionKey(server: server, userId: userId, slot: entry["slot"]?.integerValue ?? 1)
                guard seq > included, let index = read.lastIndex(where: { $0.key == key }) else { continue }
                for item in items {
                    guard let key = item["key"]?.stringValue, let version = item["version"]?.integerValue, let raw = item["action"],
                          let action = try? FlowAction(json: raw) else { continue }
                    read[index].queue.append(QueuedAction(key: key, version: version, action: action, at: item["at"]?.stringValue))
                }
            }
        }
        sessions = read
        // What the journal added goes into the file, and the journal starts empty: nothing is
        // ever appended after a line a kill may have cut. Until that write succeeds (a full disk
        // at launch), what was read is still the store's, and each save writes the file anew
        // rather than append: a launch reads its session, and the app has a state to draw.
        if replayed {
            journalCut = true
            try? write(read)
        }
        return read
    }

    private func write(_ sessions: [StoredSession]) throws {
        let url = URL(fileURLWithPath: path)
        if !FileManager.default.fileExists(atPath: path) {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        }
        var writer = JSONWriter(capacity: 4096)
        writer.beginObject()
        writer.writeKey("seq")
        writer.writeInteger(sequence)
        writer.writeKey("sessions")
        writer.beginArray()
        for session in sessions { writer.writeRawValue(session.encoded()) }
        writer.endArray()
        writer.endObject()
        try Data(writer.takeBytes()).write(to: url, options: .atomic)
        self.sessions = sessions
        if journalBytes > 0 || FileManager.default.fileExists(atPath: journalPath) {
            if let journal {
                try journal.truncate(atOffset: 0)
            } else if let data = FileManager.default.contents(atPath: journalPath), !data.isEmpty {
                try Data().write(to: URL(fileURLWithPath: journalPath))
            }
            journalBytes = 0
        }
        journalCut = false
    }
}

/// A store that lives as long as the process: for tests, previews and sessions that need not
/// survive a restart.
public final class MemorySessionStore: SessionStore, @unchecked Sendable {
    private let lock = NSLock()
    private var sessions: [SessionKey: StoredSession] = [:]

    public init(_ sessions: StoredSession...) {
        for session in sessions { self.sessions[session.key] = session }
    }

    public func load(_ key: SessionKey) throws -> StoredSession? { lock.withLock { sessions[key] } }
    public func save(_ session: StoredSession) throws { lock.withLock { sessions[session.key] = session } }
    public func remove(_ key: SessionKey) throws { lock.withLock { sessions[key] = nil } }
    /// Every session kept.
    public var all: [StoredSession] { lock.withLock { Array(sessions.values) } }
}
