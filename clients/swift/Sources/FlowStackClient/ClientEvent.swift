// ClientEvent: what the client machine reports and keeps — a queued tap, a correction, a restart, an event, a refused tap.

import FlowEngine
import JSON

/// An action the client showed ahead of the server (or is waiting on) and has not yet seen confirmed.
///
/// `version` is the version the action was applied on (the `If-Match` it is posted with);
/// `key` its idempotency key, the same on every retry and in a batch after the app restarts.
public struct QueuedAction: Sendable, Equatable {
    public var key: String
    public var version: Int
    public var action: FlowAction
    /// The state the client showed for it; nil when it had no way to predict it (it waits, or it
    /// was restored after a restart and not yet replayed on a bundle).
    public var expected: NavigationState?
    /// When the tap happened on the client (RFC 3339), sent with a batch as `at`.
    public var at: String?

    public init(key: String, version: Int, action: FlowAction, expected: NavigationState? = nil, at: String? = nil) {
        self.key = key
        self.version = version
        self.action = action
        self.expected = expected
        self.at = at
    }

    /// `{key, version, action, at?}`: a batch item as `POST …/actions/batch` takes it, and as the
    /// store keeps a queued tap.
    func writeBatchItem(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey("key")
        writer.writeString(key)
        writer.writeKey("version")
        writer.writeInteger(version)
        writer.writeKey("action")
        writer.writeValue(action.json)
        if let at {
            writer.writeKey("at")
            writer.writeString(at)
        }
        writer.endObject()
    }

    /// The tap as the store keeps it: without the state it showed (replayed on the bundle when read).
    var kept: QueuedAction { QueuedAction(key: key, version: version, action: action, at: at) }
}

/// The server disagreed with what the client showed: the client now shows `to`.
///
/// `from` is what was on screen, `to` what is right; `taps` lists the taps the server did not
/// take (refused, or dropped because they were made on a state that turned out wrong), with
/// their idempotency keys, and `problem` the server's reason when it gave one.
public struct Correction: Sendable, Equatable {
    public var from: NavigationState
    public var to: NavigationState
    /// The taps not taken, oldest first.
    public var taps: [QueuedAction]
    public var problem: JSONValue?
    public var reason: Reason

    /// The actions of the taps not taken.
    public var refused: [FlowAction] { taps.map(\.action) }

    public enum Reason: String, Sendable, Equatable {
        /// The answer to a posted action differs from the state shown (the user's state changed elsewhere).
        case differentAnswer
        /// Another device acted first (412): the client read the server's state and adopted it.
        case versionMismatch
        /// The server refused an action (409, 422 or 400): the client rolled back to the server's state.
        case refused
    }
}

/// A session the server no longer knows (deleted, expired, or its token refused), replaced by a
/// new one for the same user: what it answered, the new session's state, and the taps queued on
/// the old one, which are not sent (they were made on a session that is gone).
public struct Restart: Sendable, Equatable {
    /// Why, in words: "session s_… is gone (404); 2 queued tap(s) were dropped; started a new one".
    public var reason: String
    /// The new session's first state: what the app shows now.
    public var state: NavigationState
    /// The taps made on the old session and never stored by the server.
    public var dropped: [QueuedAction]
    /// The status and problem the server answered for the old session.
    public var status: Int
    public var problem: JSONValue?
}

/// What the client reports as the session moves.
public enum ClientEvent: Sendable, Equatable {
    /// The server confirmed a state the client showed (or, for a tap that waited, answered it).
    case confirmed(NavigationState)
    /// The server's state differs from what was shown, or it refused taps; the client now shows `to`.
    case corrected(Correction)
    /// Another device made a version; the client now shows it.
    case remote(NavigationState)
    /// The server cannot be reached (or keeps failing): taps are applied locally and queued.
    case offline
    /// The server is reachable again; queued taps are being sent.
    case online
    /// The session had expired or was deleted (at start, or while in use); a new one was started,
    /// its state is what the app shows now, and the taps queued on the old one were dropped.
    case restarted(Restart)
}

/// A tap the client could not show: no bundle, no prediction for it, and the server said no.
public struct ActionRefused: Error, Sendable, Equatable, CustomStringConvertible {
    public var action: FlowAction
    public var status: Int
    public var problem: JSONValue?
    public var description: String {
        "\(action.type) refused (\(status)): \(problem?["detail"]?.stringValue ?? problem?["title"]?.stringValue ?? "no detail")"
    }
}
