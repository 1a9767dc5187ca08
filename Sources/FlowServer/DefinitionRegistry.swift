// The server's in-memory view of stored definitions: every flow version, the live ones, flags
// and experiments, and the catalogs sessions run on.
import FeatureFlags
import FlowEngine
import FlowStore
import JSON
import Locking
import Synchronization

/// Flow versions are immutable, so a (name, version) pair always means the same definition and
/// a catalog built for a set of versions can be shared by every session that runs them.
final class DefinitionRegistry: Sendable {
    struct FlowKey: Hashable, Sendable {
        let name: String
        let version: Int
    }

    /// A class, so that the registry's copies (a reload takes over every version it holds) each
    /// cost one retain, not one for every reference a definition holds.
    final class StoredFlow: Sendable {
        let definition: FlowDefinition
        let text: String
        let createdAt: String

        init(definition: FlowDefinition, text: String, createdAt: String) {
            self.definition = definition
            self.text = text
            self.createdAt = createdAt
        }
    }

    /// A flag or an experiment as uploaded, parsed.
    struct Keyed<Definition: Sendable>: Sendable {
        let definition: Definition
        let text: String
        let revision: Int
        let updatedAt: String
    }

    struct Snapshot: Sendable {
        var flags: [String: Keyed<FlagDefinition>] = [:]
        var experiments: [String: Keyed<ExperimentDefinition>] = [:]
        var flows: [FlowKey: StoredFlow] = [:]
        var latest: [String: Int] = [:]
        var live: [String: Int] = [:]
        /// Every version each flow has ever had live: where a client that cannot render the live
        /// version falls back to.
        var activated: [String: Set<Int>] = [:]
        /// Where the store's flow versions stood when they were last read, on a store that marks
        /// them (PostgreSQL): the next reload reads only the versions stored since.
        var flowMark: FlowVersionMark?
        /// Catalogs by their version map, the least recently used dropped when full (a session
        /// keeps its own; a later one rebuilds it). Keyed by the map itself: its canonical text
        /// (`app:1,home:2,…`, sorted and joined) cost every session's creation some 15,000
        /// instructions (callgrind), where hashing the map costs a few hundred.
        var catalogs = LRUTable<[String: Int], FlowCatalog>(capacity: DefinitionRegistry.catalogCapacity)
    }

    /// Version sets whose catalog is kept: the live one, experiment pins, clients' fallbacks and
    /// releases make a handful each; a flood of dry runs or replays of old versions stops here.
    static let catalogCapacity = 1_024

    private let state = Mutex(Snapshot())

    private init(_ snapshot: Snapshot) {
        state.withLock { $0 = snapshot }
    }

    /// Flow versions a registry held, with their latest version by name, that a reload keeps.
    struct Kept {
        let flows: [FlowKey: StoredFlow]
        let latest: [String: Int]
    }

    /// Loads every stored flow version and the live ones. A stored version that no longer
    /// parses is skipped and described in `skipped` (no new session can use it). `kept`: versions
    /// already parsed that `records` add to; a record found in `held` with the same text and time
    /// keeps that parsed definition; `edited` names the versions found in `held` with another
    /// text (edited in place by hand). `flowMark`: where the store's flow versions stood, read
    /// before `records` were or with them (its next reload reads only what was stored since).
    static func load(flows records: [FlowVersionRecord], live: [String: Int], activations: [String: [Int]] = [:],
                     flags: [KeyedDefinitionRecord] = [],
                     experiments: [KeyedDefinitionRecord] = [],
                     keeping kept: Kept? = nil,
                     reusing held: [FlowKey: StoredFlow] = [:],
                     flowMark: FlowVersionMark? = nil,
                     catalogCapacity: Int = DefinitionRegistry.catalogCapacity)
        -> (registry: DefinitionRegistry, skipped: [String], edited: Set<FlowKey>) {
        var snapshot = Snapshot()
        snapshot.flowMark = flowMark
        snapshot.catalogs = LRUTable(capacity: catalogCapacity)
        var skipped: [String] = []
        var edited: Set<FlowKey> = []
        if let kept {
            snapshot.flows = kept.flows  // shared until a record is added: then copied, not hashed again
            snapshot.latest = kept.latest
        } else {
            snapshot.flows.reserveCapacity(records.count)
        }
        for record in flags {
            do throws(InvalidDefinition) {
                let definition = try FlagDefinition(json: try Self.parseStored(record.definition))
                snapshot.flags[record.key] = Keyed(definition: definition, text: record.definition,
                                                   revision: record.revision, updatedAt: record.updatedAt)
            } catch {
                skipped.append("flag \(record.key): \(error)")
            }
        }
        for record in experiments {
            do throws(InvalidDefinition) {
                let definition = try ExperimentDefinition(json: try Self.parseStored(record.definition))
                snapshot.experiments[record.key] = Keyed(definition: definition, text: record.definition,
                                                         revision: record.revision, updatedAt: record.updatedAt)
            } catch {
                skipped.append("experiment \(record.key): \(error)")
            }
        }
        for record in records {
            let key = FlowKey(name: record.name, version: record.version)
            if let stored = held[key], stored.text == record.definition, stored.createdAt == record.createdAt {
                snapshot.flows[key] = stored
                snapshot.latest[record.name] = max(snapshot.latest[record.name] ?? 0, record.version)
                continue
            }
            if let stored = held[key], stored.text != record.definition { edited.insert(key) }
            do throws(DefinitionProblems) {
                let definition = try FlowDefinition.parse(Array(record.definition.utf8), limits: .storedData)
                snapshot.flows[key] = StoredFlow(definition: definition, text: record.definition, createdAt: record.createdAt)
                snapshot.latest[record.name] = max(snapshot.latest[record.name] ?? 0, record.version)
            } catch {
                skipped.append("\(record.name) version \(record.version): \(error)")
                if kept != nil, snapshot.flows.removeValue(forKey: key) != nil, snapshot.latest[record.name] == record.version {
                    // A held version edited in place into one that no longer parses goes, as a
                    // node reading everything would skip it.
                    let versions = snapshot.flows.keys.filter { $0.name == record.name }.map(\.version)
                    snapshot.latest[record.name] = versions.max()
                }
            }
        }
        snapshot.live = live.filter { snapshot.flows[FlowKey(name: $0.key, version: $0.value)] != nil }
        for (name, versions) in activations { snapshot.activated[name] = Set(versions) }
        for (name, version) in snapshot.live { snapshot.activated[name, default: []].insert(version) }
        return (DefinitionRegistry(snapshot), skipped, edited)
    }

    /// A node's definitions as it starts, from everything `store` holds; with the definitions'
    /// fingerprint read before them when `fingerprint` (a node on a shared database: a change
    /// committed while they are read moves it, and the first read of it after, a poll or a
    /// request, reads them again). Where the stored flow versions stand (the first reload reads
    /// what was stored since, on PostgreSQL), what is live, the flags and the experiments come
    /// from one snapshot; the versions are read after it, so every version live in it is read.
    static func loadStored(from store: any DefinitionStore, fingerprint: Bool)
        throws -> (registry: DefinitionRegistry, skipped: [String], fingerprint: String?) {
        let seen = fingerprint ? try store.definitionsFingerprint() : nil
        let read = try store.definitionsRead(since: nil)
        let loaded = load(flows: try store.allFlowVersions(), live: read.live, activations: read.activations,
                          flags: read.flags, experiments: read.experiments, flowMark: read.changes?.mark)
        return (loaded.registry, loaded.skipped, seen)
    }

    /// Flow versions a reload reads one by one, each in a round trip of its own, when it finds
    /// no more than this many it does not hold; more are read all at once, with the texts of
    /// those it holds.
    static let versionsReadOneByOne = 32

    /// Reads the definitions in `store` again and takes them over in one step (`replace(with:)`).
    /// Flow versions are immutable once stored, so a version held here is neither read nor
    /// parsed again. On a store that marks its flow versions (PostgreSQL), a reload reads the
    /// versions stored or edited since the last one, and keeps every version it holds, unless
    /// versions were removed since. Otherwise, or then, it reads the names, versions and times of
    /// all, and the texts of those it does not hold, stored at the same time. When every version
    /// held is still stored, they are kept as they are held, and the new ones added to them.
    /// Returns the stored definitions skipped, as `load` does.
    func reload(from store: any DefinitionStore) throws -> [String] {
        let (held, heldLatest, heldMark) = state.withLock { ($0.flows, $0.latest, $0.flowMark) }
        var records: [FlowVersionRecord] = []
        var kept: Kept? = nil
        let mark: FlowVersionMark?
        // One snapshot for all but the texts of versions not held: read apart, a version stored
        // and made live by another node between two reads would be live without being held.
        let read = try store.definitionsRead(since: heldMark)
        let changes = read.changes
        if let heldMark, let changes, changes.mark.removals == heldMark.removals, changes.mark.epoch == heldMark.epoch {
            (records, kept, mark) = (changes.changed, Kept(flows: held, latest: heldLatest), changes.mark)
        } else {
            // Read before the stamps: a version stored in between is read again next time, and
            // found held. A version edited since the held mark has its old stamp: not trusted.
            mark = changes?.mark
            var trusted = held
            if let heldMark {
                if let changes, changes.mark.epoch == heldMark.epoch {
                    for record in changes.changed { trusted[FlowKey(name: record.name, version: record.version)] = nil }
                } else {
                    trusted = [:]  // the revision's row was made again, or is gone: its numbers say nothing
                }
            }
            (records, kept) = try Self.unheldFlowVersions(in: store, held: trusted, heldLatest: heldLatest)
        }
        let loaded = Self.load(flows: records, live: read.live, activations: read.activations, flags: read.flags,
                               experiments: read.experiments, keeping: kept, reusing: held, flowMark: mark)
        replace(with: loaded.registry, dropping: loaded.edited)  // catalogs built with an edited version go
        return loaded.skipped
    }

    /// The stored flow versions a registry that holds `held` reads to be in step, found by their
    /// stamps: with the held ones to keep as they are when every one of them is still stored,
    /// else every stored version (the held ones with their held texts).
    private static func unheldFlowVersions(in store: any DefinitionStore, held: [FlowKey: StoredFlow],
                                           heldLatest: [String: Int]) throws -> (records: [FlowVersionRecord], kept: Kept?) {
        let stamps = try store.flowVersionStamps()
        var unknown: [FlowVersionStamp] = []
        for stamp in stamps where held[FlowKey(name: stamp.name, version: stamp.version)]?.createdAt != stamp.createdAt {
            unknown.append(stamp)
        }
        let everyHeldIsStored = stamps.count - unknown.count == held.count
        var records: [FlowVersionRecord] = []
        if unknown.count > Self.versionsReadOneByOne {
            return (try store.allFlowVersions(), nil)
        } else if everyHeldIsStored {
            for stamp in unknown {
                if let record = try store.flowVersion(name: stamp.name, version: stamp.version) { records.append(record) }
            }
            return (records, Kept(flows: held, latest: heldLatest))
        }
        records.reserveCapacity(stamps.count)
        for stamp in stamps {
            if let stored = held[FlowKey(name: stamp.name, version: stamp.version)], stored.createdAt == stamp.createdAt {
                records.append(FlowVersionRecord(name: stamp.name, version: stamp.version, definition: stored.text, createdAt: stamp.createdAt))
            } else if let record = try store.flowVersion(name: stamp.name, version: stamp.version) {
                records.append(record)  // nil: removed since the stamps were read
            }
        }
        return (records, nil)
    }

    /// Takes over everything `other` holds (definitions just read from the database). Catalogs
    /// already built are kept, with their order of use: flow versions are not changed once
    /// stored, so a catalog stays right; but those built with a version in `edited` (its text
    /// changed in place by hand) go.
    func replace(with other: DefinitionRegistry, dropping edited: Set<FlowKey> = []) {
        let fresh = other.state.withLock { $0 }
        state.withLock { snapshot in
            var next = fresh
            next.catalogs = snapshot.catalogs
            if !edited.isEmpty {
                for (versions, _) in snapshot.catalogs.entriesOldestFirst
                where versions.contains(where: { edited.contains(FlowKey(name: $0.key, version: $0.value)) }) {
                    _ = next.catalogs.removeValue(forKey: versions)
                }
            }
            for (versions, catalog) in fresh.catalogs.entriesOldestFirst where !next.catalogs.contains(versions) {
                next.catalogs.updateValue(catalog, forKey: versions)
            }
            snapshot = next
        }
    }

    /// Catalogs kept, the most kept, and how many were evicted to make room (for `/metrics`).
    var catalogFigures: CacheFigures { state.withLock { $0.catalogs.figures } }

    /// The version sets whose catalog is kept, the most recently used first (for tests).
    var catalogsByRecency: [String] { state.withLock { $0.catalogs.keysByRecency.map(Self.signature) } }

    /// The live version of each flow.
    var liveVersions: [String: Int] { state.withLock { $0.live } }

    /// The stored flows and every version each flow has had live, read together (see
    /// `DefinitionRegistry+capabilities.swift`).
    var history: (flows: [FlowKey: StoredFlow], activated: [String: Set<Int>]) {
        state.withLock { ($0.flows, $0.activated) }
    }

    /// What a new session is evaluated against: flags and experiments in key order, and the
    /// live flow versions, read together.
    var sessionInputs: (flags: [(key: String, value: FlagDefinition)], experiments: [(key: String, value: ExperimentDefinition)],
                        live: [String: Int]) {
        state.withLock { snapshot in
            (snapshot.flags.sorted { $0.key < $1.key }.map { ($0.key, $0.value.definition) },
             snapshot.experiments.sorted { $0.key < $1.key }.map { ($0.key, $0.value.definition) },
             snapshot.live)
        }
    }

    func flag(_ key: String) -> Keyed<FlagDefinition>? { state.withLock { $0.flags[key] } }
    func experiment(_ key: String) -> Keyed<ExperimentDefinition>? { state.withLock { $0.experiments[key] } }
    var allFlags: [(key: String, value: Keyed<FlagDefinition>)] {
        state.withLock { $0.flags.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } }
    }
    var allExperiments: [(key: String, value: Keyed<ExperimentDefinition>)] {
        state.withLock { $0.experiments.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } }
    }

    func setFlag(_ key: String, _ flag: Keyed<FlagDefinition>) { state.withLock { $0.flags[key] = flag } }
    func setExperiment(_ key: String, _ experiment: Keyed<ExperimentDefinition>) {
        state.withLock { $0.experiments[key] = experiment }
    }

    /// Parses stored JSON text (a stored definition that no longer parses is skipped at load).
    static func parseStored(_ text: String) throws(InvalidDefinition) -> JSONValue {
        do throws(JSONParseError) {
            return try JSONParser.parse(text, limits: .storedData)
        } catch {
            throw InvalidDefinition(problems: [FlagProblem(path: JSONPointer(), message: "invalid JSON: \(error)")])
        }
    }

    /// Each flow's live and latest version, by name.
    var summary: [(name: String, live: Int?, latest: Int)] {
        state.withLock { snapshot in
            snapshot.latest.keys.sorted().map { ($0, snapshot.live[$0], snapshot.latest[$0] ?? 0) }
        }
    }

    /// A stored version of a flow.
    func flow(_ name: String, version: Int) -> StoredFlow? {
        state.withLock { $0.flows[FlowKey(name: name, version: version)] }
    }

    /// The catalog of exactly these flow versions, built once and shared; nil when one of them
    /// is not stored.
    func catalog(for versions: [String: Int]) -> FlowCatalog? {
        state.withLock { snapshot -> FlowCatalog? in
            if let catalog = snapshot.catalogs.value(forKey: versions) { return catalog }
            var catalog = FlowCatalog()
            for (name, version) in versions {
                guard let stored = snapshot.flows[FlowKey(name: name, version: version)] else { return nil }
                catalog.insert(stored.definition)
            }
            snapshot.catalogs.updateValue(catalog, forKey: versions)  // the least recently used goes when full
            return catalog
        }
    }

    /// The live catalog with `definition` in place of its flow's live version, to check a new
    /// version before it is stored or made live.
    func liveCatalog(replacingWith definition: FlowDefinition) -> FlowCatalog {
        state.withLock { snapshot in
            var catalog = FlowCatalog()
            for (name, version) in snapshot.live {
                if let stored = snapshot.flows[FlowKey(name: name, version: version)] { catalog.insert(stored.definition) }
            }
            catalog.insert(definition)
            return catalog
        }
    }

    /// Records a version just stored; `live` when it was made live with it.
    func add(name: String, version: Int, definition: FlowDefinition, text: String, createdAt: String, live: Bool) {
        state.withLock { snapshot in
            snapshot.flows[FlowKey(name: name, version: version)] = StoredFlow(definition: definition, text: text, createdAt: createdAt)
            snapshot.latest[name] = max(snapshot.latest[name] ?? 0, version)
            if live {
                snapshot.live[name] = version
                snapshot.activated[name, default: []].insert(version)
            }
        }
    }

    /// Records that `version` of `name` is now live.
    func setLive(name: String, version: Int) {
        state.withLock { snapshot in
            snapshot.live[name] = version
            snapshot.activated[name, default: []].insert(version)
        }
    }

    /// `app:1,home:2,…`, the same for the same versions whatever their order.
    static func signature(_ versions: [String: Int]) -> String {
        versions.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")
    }

    /// `{"app":1,…}` in name order.
    static func encode(_ versions: [String: Int]) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        for (name, version) in versions.sorted(by: { $0.key < $1.key }) {
            writer.writeKey(name)
            writer.writeInteger(version)
        }
        writer.endObject()
        return writer.takeBytes()  // kept with the cached session: an array of exactly its bytes
    }

    /// Reads `{"app":1,…}`; nil when it is not such an object.
    static func decode(_ text: String) -> [String: Int]? {
        guard let object = (try? JSONParser.parse(text, limits: .storedData))?.objectValue else { return nil }
        var versions: [String: Int] = [:]
        for member in object {
            guard let version = member.value.integerValue else { return nil }
            versions[member.key] = version
        }
        return versions
    }
}
