// Rebuilding what the action log does not keep: each entry's tree, handler and transition,
// from the nearest tree kept before it, with the engine (see LogSnapshots in FlowStore).
import FlowEngine
import FlowStore
import JSON

/// Rebuilds a stretch of a session's log with the engine: the history, the replay and the
/// export read trees, handlers and transitions that only snapshots keep.
///
/// The engine is deterministic: an action's outcome depends on the tree before it, the
/// session's flow versions (`catalog`), its context as stored at creation, and the user's
/// state it was judged with, which an entry stores wherever the entries before it do not imply
/// it (`ActionRecord.userState`). So the rebuilt tree of every version equals the one the
/// server committed, which `LogRebuildTests` checks over random walks on both stores.
///
/// ```swift
/// let rebuild = LogRebuild(catalog: session.catalog, context: session.context)
/// let entries = rebuild.rebuild(from: slice.startTree, entries: slice.entries)   // nil: cannot
/// ```
struct LogRebuild {
    /// The flow definitions of the versions the session runs.
    let catalog: FlowCatalog
    /// The session's context as stored; `user` is replaced by each entry's.
    let context: FlowContext

    /// Which rebuilt entries get their transition written.
    enum Transitions {
        case none
        /// The newest entry's only: a head.
        case last
        case all
    }

    /// An entry rebuilt: its record (with its handler and transition, when they were asked
    /// for), the action as the engine read it, and the tree it left.
    struct Entry {
        var record: ActionRecord
        let action: FlowAction
        let tree: FlowTree
    }

    /// `entries` (which follow `start`'s version, oldest first), each with its handler,
    /// transition and the tree it left; nil when one cannot be rebuilt: a tree that does not
    /// decode, an action the engine refuses now, or an entry after a kept tree that does not
    /// say which user's state it was judged with (a log this build did not write, damaged).
    func rebuild(from start: [UInt8], entries: [(action: ActionRecord, tree: [UInt8]?)],
                 transitions: Transitions = .all) -> [(action: ActionRecord, tree: FlowTree)]? {
        guard let tree = try? FlowTree(storage: start) else { return nil }
        return steps(from: tree, entries: entries, transitions: transitions)?.map { ($0.record, $0.tree) }
    }

    /// As ``rebuild(from:entries:)``, with each entry's action as the engine read it; its
    /// transition is written as `transitions` asks (a replay compares trees and never reads
    /// one; a head needs the newest entry's only).
    func steps(from start: FlowTree, entries: [(action: ActionRecord, tree: [UInt8]?)], transitions: Transitions) -> [Entry]? {
        var tree = start
        let hasLists = catalog.hasLists
        var context = self.context
        // The user's state the log implies for the next entry; unknown after a kept tree.
        var user: [String: JSONValue]?
        var rebuilt: [Entry] = []
        rebuilt.reserveCapacity(entries.count)
        for (index, (stored, kept)) in entries.enumerated() {
            var record = stored
            let params = (try? JSONParser.parse(record.params, limits: .storedData))?.objectValue ?? JSONObject()
            let action = FlowAction(
                logged: record.type, from: record.source, params: params, interactive: record.interactive, hasLists: hasLists)
            if let kept {
                // A snapshot: its tree, handler and transition are stored with it.
                guard let decoded = try? FlowTree(storage: kept) else { return nil }
                tree = decoded
                user = nil
                rebuilt.append(Entry(record: record, action: action, tree: tree))
                continue
            }
            if let text = record.userState {
                guard let state = Self.userState(text) else { return nil }
                user = state
            }
            guard let judged = user else { return nil }
            context.user = judged
            guard let outcome = try? FlowEngine.apply(action, to: tree, catalog: catalog, context: context) else { return nil }
            tree = outcome.tree
            record.handledBy = outcome.handledBy
            if transitions == .all || (transitions == .last && index == entries.count - 1) {
                record.transition = outcome.transition.map { String(decoding: SessionState.encode($0), as: UTF8.self) }
            }
            // What the log implies for the next action: the state as stored after this one.
            UserChange.apply(outcome.userChanges, to: &context.user)
            user = context.user
            rebuilt.append(Entry(record: record, action: action, tree: tree))
        }
        return rebuilt
    }

    /// A user's state as an entry stores it: a JSON object, keys sorted.
    static func userStateText(_ state: [String: JSONValue]) -> String {
        var writer = JSONWriter()
        writer.beginObject()
        for key in state.keys.sorted() {
            writer.writeKey(key)
            writer.writeValue(state[key] ?? .null)
        }
        writer.endObject()
        return String(decoding: writer.takeBytes(), as: UTF8.self)
    }

    static func userState(_ text: String) -> [String: JSONValue]? {
        guard let object = (try? JSONParser.parse(text, limits: .storedData))?.objectValue else { return nil }
        var state: [String: JSONValue] = [:]
        for member in object.members { state[member.key] = member.value }
        return state
    }
}

/// The store's ``SessionHeadRebuilder`` (see `LogSnapshots.headInterval`): a session's head
/// rebuilt from the tree before it with the flow versions it runs, as this node's registry
/// knows them, and its stored context.
struct HeadRebuilder: SessionHeadRebuilder {
    let registry: DefinitionRegistry

    func head(of record: SessionRecord, after entries: [ActionRecord]) -> SessionHead? {
        guard let versions = DefinitionRegistry.decode(record.flowVersions), let catalog = registry.catalog(for: versions) else {
            return nil
        }
        let rebuild = LogRebuild(catalog: catalog, context: SessionCodecs.decodeContext(record.context, userId: record.userId))
        guard let last = rebuild.rebuild(from: record.tree, entries: entries.map { ($0, nil) }, transitions: .last)?.last else { return nil }
        return SessionHead(tree: last.tree.storageBytes(), transition: last.action.transition, handledBy: last.action.handledBy)
    }
}
