// What the action log keeps: the actions, and the session's tree only now and then. Any other
// version's tree is rebuilt with the engine from the nearest kept one.

/// How the action log keeps trees.
///
/// A log entry holds the action, its version, key, times and the user's state where it cannot
/// be derived; the tree it left is kept only on every `interval`-th version (a snapshot, with
/// that action's `handledBy` and `transition`), and the session's newest tree in its head row
/// (`session_heads`), which each commit rewrites. The engine is deterministic: an action's
/// outcome depends only on the tree before it, the session's flow versions and context (fixed
/// at creation and stored in its row) and the user's state it was judged with. That last input
/// is the one a rebuild cannot recover from the log alone (another session of the user, or an
/// admin, may change it), so an entry stores it (`ActionRecord.userState`) whenever it is not
/// the state the entries before imply: the first entry after a snapshot or the session's
/// start, the first after a node (re)loaded the session, and any whose user's state changed
/// elsewhere. Entries written before this (each with its tree) are snapshots too.
///
/// ```swift
/// LogSnapshots.keepsTree(64)   // true: version 64's entry carries the tree
/// ```
public enum LogSnapshots {
    /// Every this many versions an entry carries the tree: a rebuild applies at most
    /// `interval - 1` actions (a few µs each), and a snapshot (its tree, handler and transition,
    /// about 450 bytes on the sample app's home) adds its size / `interval` to each action:
    /// 7 bytes at 64 (`bench/logbytes.py`: 142 bytes per action in all, 150 at 32).
    public static let interval = 64

    /// A store given a ``SessionHeadRebuilder`` (SQLite's) rewrites the session's head row only
    /// every this many versions (a divisor of `interval`, so every snapshot is also a head), and
    /// a read of the session rebuilds the at most `headInterval - 1` actions after it. The head
    /// row is a page of its own in the WAL at every commit otherwise: 12-19 % of the durable
    /// action rate (BENCHMARKS.md, "Issue 35, sixth session").
    public static let headInterval = 16

    /// Whether the entry of `version` carries the tree it left.
    public static func keepsTree(_ version: Int) -> Bool { version % interval == 0 }

    /// Whether a store that rebuilds heads rewrites the head row at `version`.
    public static func keepsHead(_ version: Int) -> Bool { version % headInterval == 0 }

    /// Whether the entry of `version` must carry the user's state it was judged with whatever
    /// the session knew: the entry before it is a snapshot or a head, after which a rebuild
    /// starts without knowing the user's state (version 1 follows the session's start).
    public static func startsStretch(_ version: Int) -> Bool { (version - 1) % headInterval == 0 }
}

/// What a session's head holds beyond its version: the tree its newest action left, and that
/// action's handler and transition.
public struct SessionHead: Sendable, Equatable {
    public var tree: [UInt8]
    public var transition: String?
    public var handledBy: String?

    public init(tree: [UInt8], transition: String?, handledBy: String?) {
        self.tree = tree
        self.transition = transition
        self.handledBy = handledBy
    }
}

/// Rebuilds a session's head with the engine when its store keeps the head only every
/// ``LogSnapshots/headInterval`` versions: the server gives the store one
/// (``SessionRecordStore/rebuildHeads(with:)``), since the store knows no engine. A store without
/// one rewrites the head at every commit.
///
/// ```swift
/// store.rebuildHeads(with: rebuilder)
/// rebuilder.head(of: record, after: entries)   // record: its tree at the version before entries[0]
/// ```
public protocol SessionHeadRebuilder: Sendable {
    /// The head after `entries` (the log entries that follow `record`'s version, oldest first,
    /// the first one carrying the user's state it was judged with), or nil when they do not
    /// rebuild (flow versions unknown here, a damaged entry).
    func head(of record: SessionRecord, after entries: [ActionRecord]) -> SessionHead?
}

/// A stretch of a session's log with the tree it starts from: what a reader rebuilds the
/// entries' trees, transitions and handlers from.
public struct ActionLogSlice: Sendable {
    /// The version `startTree` is of: a snapshot's, or the session row's.
    public var startVersion: Int
    public var startTree: [UInt8]
    /// Entries after `startVersion`, oldest first, each with its tree when it carries one.
    public var entries: [(action: ActionRecord, tree: [UInt8]?)]

    public init(startVersion: Int, startTree: [UInt8], entries: [(action: ActionRecord, tree: [UInt8]?)]) {
        self.startVersion = startVersion
        self.startTree = startTree
        self.entries = entries
    }
}
