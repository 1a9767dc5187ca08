// The definitions role of a store: flow versions, flags and experiments, and what a node
// polls to know when to reload them; with the experiment report read from sessions' records.

/// Definitions as stored: flow versions (numbered, one live per flow), flags and experiments
/// (keyed, with a revision), each change audited in its own transaction when a stamp is given.
///
/// ```swift
/// let version = try store.addFlowVersion(name: "onboarding", definition: text, activate: false)
/// try store.activateFlow(name: "onboarding", version: version)     // false: no such version
/// try store.putDefinition(.flags, key: "eu-face-scan", definition: flag)
/// try store.definitionsFingerprint()     // changes with each of the three calls above
/// ```
public protocol DefinitionStore: AnyObject, Sendable {
    /// Stores `definition` as the next version of flow `name` (1 for a new flow); when
    /// `activate`, it becomes the live version in the same transaction. Returns the version with
    /// the time it was stored at (what `flowVersionStamps` says of it).
    /// With `audit`, appends `flow.put` (latest version before → the new one) and, when
    /// activated, `flow.activate` (live version before → the new one) in the same transaction.
    func addFlowVersion(name: String, definition: String, activate: Bool, audit: AuditStamp?) throws -> FlowVersionStamp
    /// Makes version `version` of flow `name` live; false when that version does not exist.
    /// With `audit`, appends `flow.activate` (live version before → `version`) in the same transaction.
    func activateFlow(name: String, version: Int, audit: AuditStamp?) throws -> Bool
    /// One version of a flow, or nil.
    func flowVersion(name: String, version: Int) throws -> FlowVersionRecord?
    /// Every stored flow version, by name and version.
    func allFlowVersions() throws -> [FlowVersionRecord]
    /// Every stored flow version's name, version and time, by name and version, without the
    /// texts: what a node compares with the versions it holds, to read only the new ones.
    func flowVersionStamps() throws -> [FlowVersionStamp]
    /// The flow versions stored or edited since `mark`, with the mark now; with no mark, the
    /// mark alone. Nil when the store keeps no marks: SQLite, which one process writes, and a
    /// PostgreSQL whose revision's row was removed by hand; then read the stamps. When the
    /// mark's removals moved, versions were removed since: the changes alone do not say which.
    func flowVersionChanges(since mark: FlowVersionMark?) throws -> FlowVersionChanges?
    /// The live version of each flow, by name.
    func liveFlowVersions() throws -> [String: Int]
    /// Every version each flow has ever had live (made live by a PUT, the activate route or
    /// seeding), in ascending order, by name.
    func flowActivations() throws -> [String: [Int]]
    /// Seeds flow `name` as version 1, live, when the store has no version of it yet.
    func seedFlow(name: String, definition: String) throws
    /// Stores the definition of `key`, replacing any earlier one; returns the new revision.
    /// With `audit`, appends `flag.put` or `experiment.put` (revision before → the new one) in
    /// the same transaction.
    func putDefinition(_ kind: KeyedDefinitionKind, key: String, definition: String, audit: AuditStamp?) throws -> Int
    /// Stores `definition` as the next revision of experiment `key`, only when its stored
    /// revision is `revision` (a compare-and-set: nil, and nothing written, when another change
    /// came first or the experiment is gone), and makes each flow of `activating` live at its
    /// version in the same transaction (a conclusion: the winner's pins become live; versions
    /// already live, or that do not exist, are left alone). With `audit`, appends the stamp's
    /// action (`experiment.stop`, …; `experiment.put` without one) with the revision before →
    /// after, then `flow.activate` for each flow made live. Returns the new revision.
    func changeExperiment(key: String, definition: String, revision: Int, activating: [String: Int], audit: AuditStamp?) throws -> Int?
    /// Stores the definition of `key` only when there is none yet (to seed shipped defaults).
    func seedDefinition(_ kind: KeyedDefinitionKind, key: String, definition: String) throws
    /// Every definition of a kind, by key order.
    func allDefinitions(_ kind: KeyedDefinitionKind) throws -> [KeyedDefinitionRecord]
    /// What a node reads to take other nodes' changes over, from one snapshot where the store
    /// can (PostgreSQL, in one round trip): the flow versions stored or edited since `mark` (as
    /// `flowVersionChanges`), the live versions, the activations' history, the flags and the
    /// experiments. Read apart, a version stored and made live by another node between two of
    /// the reads would be live without being read.
    func definitionsRead(since mark: FlowVersionMark?) throws -> DefinitionsRead
    /// A text that changes whenever a flow version is added or made live, or a flag or an
    /// experiment is stored: a node polls it to know when to reload its definitions.
    func definitionsFingerprint() throws -> String
    /// Per variant of `experiment`: sessions exposed, distinct users who completed onboarding in
    /// those sessions, per feature the sessions that showed it on top, and sessions excluded
    /// (bucketed into it, not enrolled: their client cannot render the experiment).
    func experimentReport(_ experiment: String) throws -> [String: ExperimentVariantCounts]
}

extension DefinitionStore {
    /// Stores a flow version without an audit entry (seeding, tools, tests).
    public func addFlowVersion(name: String, definition: String, activate: Bool) throws -> Int {
        try addFlowVersion(name: name, definition: definition, activate: activate, audit: nil).version
    }

    /// Makes a version live without an audit entry.
    public func activateFlow(name: String, version: Int) throws -> Bool {
        try activateFlow(name: name, version: version, audit: nil)
    }

    /// Stores a flag or experiment without an audit entry.
    public func putDefinition(_ kind: KeyedDefinitionKind, key: String, definition: String) throws -> Int {
        try putDefinition(kind, key: key, definition: definition, audit: nil)
    }

    /// Each part read on its own: a store that one process writes changes nothing between them.
    public func definitionsRead(since mark: FlowVersionMark?) throws -> DefinitionsRead {
        DefinitionsRead(changes: try flowVersionChanges(since: mark), live: try liveFlowVersions(), activations: try flowActivations(),
                        flags: try allDefinitions(.flag), experiments: try allDefinitions(.experiment))
    }
}

/// What an experiment's report counts for one variant.
public struct ExperimentVariantCounts: Sendable, Equatable {
    public var sessions: Int
    public var onboarded: Int
    public var funnel: [String: Int]
    /// Sessions bucketed into the variant but not enrolled: their client cannot render the
    /// experiment. Not in `sessions`.
    public var excluded: Int

    public init(sessions: Int = 0, onboarded: Int = 0, funnel: [String: Int] = [:], excluded: Int = 0) {
        self.sessions = sessions
        self.onboarded = onboarded
        self.funnel = funnel
        self.excluded = excluded
    }
}
