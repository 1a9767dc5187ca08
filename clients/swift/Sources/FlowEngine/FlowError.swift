// FlowError: why an action was not applied, or why a tree could not be built.

import JSON

/// Why an action was not applied (the tree is then unchanged), or why a tree could not be
/// built. Each case names what was wrong and what was expected; the API maps them to statuses
/// as noted on each case.
public enum FlowError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `from` is not the screen on top (409): the client acted on a screen that is gone or
    /// covered, such as the second tap of a double tap.
    case staleSource(from: String, top: String)
    /// `row` is not in the list of the screen the action came from (409): the row was removed
    /// (or never there) and the client tapped what it still showed.
    case staleRow(row: String, screen: String)
    /// No flow on the chain handles the action (422); `chain` lists the flows walked, from the
    /// source screen's flow up to the root.
    case unhandled(action: String, chain: [String])
    /// A flow owns the action but refused it (422): no rule matched, an effect could not
    /// apply, or the action asked for an interaction its rule does not allow.
    case refused(flow: String, action: String, reason: String)
    /// A flow owns the action, but its effects would make a screen's list larger than the engine
    /// keeps (422): a row's values nested too deep, a row or the whole list too many bytes
    /// (``ScreenList/maxValuesDepth``, ``ScreenList/maxRowBytes``, ``ScreenList/maxListBytes``).
    case listTooLarge(flow: String, action: String, reason: String)
    /// An interaction is pending, so other actions wait (409).
    case interactionPending(action: String, pending: String)
    /// An interaction action arrived with no interaction pending (409).
    case noInteraction(action: String)
    /// The action's fields or params are malformed or missing (400); `path` points into the
    /// action, such as `/params/index`.
    case invalidParams(path: String, message: String)
    /// The definitions cannot build what they name (422): an unknown flow, a flow containing
    /// itself, a flow with no entries left after its conditions.
    case brokenDefinition(flow: String, message: String)
    /// The tree breaks its own invariants; only a tree not produced by the engine can.
    case corruptTree(message: String)
    /// No pattern of the root flow's `links` matches the URI (422).
    case unknownLink(uri: String)
    /// A link matched, but one of its actions was refused while following it (422): `step` is
    /// the index of that action in the link's `actions` (as in `/links/<i>/actions/<step>`),
    /// `action` its type, and `underlying` why it failed. Nothing changed.
    indirect case linkRefused(pattern: String, step: Int, action: String, underlying: FlowError)

    /// A stable machine-readable code, such as `stale-source`.
    public var code: String {
        switch self {
        case .staleSource: return "stale-source"
        case .staleRow: return "stale-row"
        case .unhandled: return "unhandled"
        case .refused: return "refused"
        case .listTooLarge: return "list-too-large"
        case .interactionPending: return "interaction-pending"
        case .noInteraction: return "no-interaction"
        case .invalidParams: return "invalid-params"
        case .brokenDefinition: return "broken-definition"
        case .corruptTree: return "corrupt-tree"
        case .unknownLink: return "unknown-link"
        case .linkRefused: return "link-refused"
        }
    }

    /// A sentence for people: what was wrong and what to do.
    public var message: String {
        switch self {
        case .staleSource(let from, let top):
            return "the action comes from screen \(from), but the screen on top is \(top); reload the state and act on what is shown"
        case .staleRow(let row, let screen):
            return "the action taps row \(JSONValue.string(row).abbreviatedJSON(limit: 60)), but the list of screen \(screen) has no such row; reload the state and act on what is shown"
        case .unhandled(let action, let chain):
            return "no flow handles \(action): it passed through \(chain.joined(separator: " → ")) and none of them names it"
        case .refused(let flow, let action, let reason):
            return "\(flow) refused \(action): \(reason)"
        case .listTooLarge(let flow, let action, let reason):
            return "\(flow) refused \(action), as its list would grow too large: \(reason)"
        case .interactionPending(let action, let pending):
            return "an interactive \(pending) is in progress; send interaction.end or interaction.cancel before \(action)"
        case .noInteraction(let action):
            return "\(action) needs an interaction in progress; open one by posting an action with \"interactive\": true"
        case .invalidParams(let path, let message):
            return path.isEmpty ? message : "\(path): \(message)"
        case .brokenDefinition(let flow, let message):
            return "flow \(flow) cannot be built: \(message)"
        case .corruptTree(let message):
            return "the flow tree is corrupt: \(message)"
        case .unknownLink(let uri):
            return "no link matches \(JSONValue.string(uri).abbreviatedJSON(limit: 80)); the root flow's links name the URIs a session can open"
        case .linkRefused(let pattern, let step, let action, let underlying):
            return "link \(pattern) cannot be followed: its step \(step) (\(action)) failed: \(underlying.message)"
        }
    }

    public var description: String { message }
}
