// Versioned flow definitions, flags, experiments and the experiment report in PostgreSQL.
import FlowStore
import Foundation

extension PostgresStore {
    // MARK: Flow versions

    /// The next version is computed by the insert itself; two nodes adding a version of the
    /// same flow at once collide on the key `(name, version)`, and the loser tries again.
    public func addFlowVersion(name: String, definition: String, activate: Bool, audit: AuditStamp?) throws -> FlowVersionStamp {
        for attempt in 1...5 {
            let now = Timestamp.string()
            do {
                // The CTEs share one snapshot: `latest` and `was` see the flow before the insert.
                let rows = try writeAudited(PGStatement("""
                    WITH latest AS (SELECT MAX(version) AS version FROM flow_versions WHERE name = $1::text),
                    was AS (SELECT version FROM live_flows WHERE name = $1::text),
                    next AS (
                        INSERT INTO flow_versions (name, version, definition, created_at)
                        SELECT $1::text, COALESCE(MAX(version), 0) + 1, $2::text, $3::text
                        FROM flow_versions WHERE name = $1::text
                        RETURNING version
                    ), live AS (
                        INSERT INTO live_flows (name, version, activated_at)
                        SELECT $1::text, version, $3::text FROM next WHERE $4::boolean
                        ON CONFLICT (name) DO UPDATE SET version = excluded.version, activated_at = excluded.activated_at
                    ), history AS (
                        INSERT INTO flow_activations (name, version, first_activated_at, last_activated_at)
                        SELECT $1::text, version, $3::text, $3::text FROM next WHERE $4::boolean
                        ON CONFLICT (name, version) DO UPDATE SET last_activated_at = excluded.last_activated_at
                    ), audit AS (
                        INSERT INTO audit_log (id, at, action, subject, old_version, new_version, credential)
                        SELECT (SELECT COALESCE(MAX(id), 0) FROM audit_log) + entry.n, $3::text, entry.action, $1::text,
                               entry.old_version, next.version, $5::text
                        FROM next, (VALUES (1, 'flow.put', (SELECT version FROM latest)),
                                           (2, 'flow.activate', (SELECT version FROM was))) AS entry (n, action, old_version)
                        WHERE $5::text IS NOT NULL AND (entry.n = 1 OR $4::boolean)
                    )
                    SELECT version FROM next
                    """, [.text(name), .text(definition), .text(now), .boolean(activate), .optional(audit?.credential)]),
                    audit: audit)
                guard let version = try rows[0].integer(0, 0) else { throw PGError.server(sqlState: "", message: "no version returned") }
                return FlowVersionStamp(name: name, version: version, createdAt: now)
            } catch PGError.server(let state, _) where state == "23505" && attempt < 5 {
                continue
            }
        }
        throw PGError.server(sqlState: "23505", message: "flow \(name) kept changing; try again")
    }

    public func activateFlow(name: String, version: Int, audit: AuditStamp?) throws -> Bool {
        try writeAudited(PGStatement("""
            WITH was AS (SELECT version FROM live_flows WHERE name = $1::text),
            made AS (
                INSERT INTO live_flows (name, version, activated_at)
                SELECT name, version, $3::text FROM flow_versions WHERE name = $1::text AND version = $2::bigint
                ON CONFLICT (name) DO UPDATE SET version = excluded.version, activated_at = excluded.activated_at
                RETURNING version
            ), history AS (
                INSERT INTO flow_activations (name, version, first_activated_at, last_activated_at)
                SELECT $1::text, version, $3::text, $3::text FROM made
                ON CONFLICT (name, version) DO UPDATE SET last_activated_at = excluded.last_activated_at
            ), audit AS (
                INSERT INTO audit_log (id, at, action, subject, old_version, new_version, credential)
                SELECT (SELECT COALESCE(MAX(id), 0) FROM audit_log) + 1, $3::text, 'flow.activate', $1::text,
                       (SELECT version FROM was), made.version, $4::text
                FROM made WHERE $4::text IS NOT NULL
            )
            SELECT 1 FROM made
            """, [.text(name), .integer(version), .text(Timestamp.string()), .optional(audit?.credential)]), audit: audit)[0].count == 1
    }

    public func flowVersion(name: String, version: Int) throws -> FlowVersionRecord? {
        let rows = try read([PGStatement("""
            SELECT name, version, definition, created_at FROM flow_versions WHERE name = $1::text AND version = $2::bigint
            """, [.text(name), .integer(version)])])[0]
        return try Self.flowVersionRecords(rows).first
    }

    public func allFlowVersions() throws -> [FlowVersionRecord] {
        try Self.flowVersionRecords(try read([PGStatement(
            "SELECT name, version, definition, created_at FROM flow_versions ORDER BY name, version")])[0])
    }

    public func flowVersionStamps() throws -> [FlowVersionStamp] {
        let rows = try read([PGStatement("SELECT name, version, created_at FROM flow_versions ORDER BY name, version")])[0]
        return try (0..<rows.count).map { row in
            FlowVersionStamp(name: try rows.text(row, 0), version: try rows.int(row, 1), createdAt: try rows.text(row, 2))
        }
    }

    /// One statement, so one snapshot: the mark and the versions stored or edited after it, each
    /// found by the index on `stored_revision` (migration 18). The revisions are given under the
    /// revision row's lock in commit order, so none is committed later below the mark read.
    /// The mark's number is written into the statement, planned at each read: prepared, its
    /// generic plan (made while the table was small, at a node's start) scanned every stored
    /// version at every reload once the table had grown.
    public func flowVersionChanges(since mark: FlowVersionMark?) throws -> FlowVersionChanges? {
        try Self.flowVersionChanges(try read([Self.flowVersionChangesStatement(since: mark)])[0])
    }

    /// What a reload reads, in one `REPEATABLE READ` transaction: one snapshot, one round trip.
    /// `BEGIN` and the isolation level are two statements: `runTransaction` rolls back a failed
    /// transaction that begins with a plain `BEGIN`.
    public func definitionsRead(since mark: FlowVersionMark?) throws -> DefinitionsRead {
        let rows = try read([
            PGStatement("BEGIN"), PGStatement("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"),
            Self.flowVersionChangesStatement(since: mark), Self.liveFlowVersionsStatement, Self.flowActivationsStatement,
            Self.definitionsStatement(.flag), Self.definitionsStatement(.experiment), PGStatement("COMMIT"),
        ])
        return DefinitionsRead(changes: try Self.flowVersionChanges(rows[2]), live: try Self.liveFlowVersions(rows[3]),
                               activations: try Self.flowActivations(rows[4]), flags: try Self.definitions(rows[5]),
                               experiments: try Self.definitions(rows[6]))
    }

    private static func flowVersionChangesStatement(since mark: FlowVersionMark?) -> PGStatement {
        PGStatement("""
            SELECT r.revision, r.flow_versions_removed, r.epoch, f.name, f.version, f.definition, f.created_at
            FROM definitions_revision r LEFT JOIN flow_versions f ON f.stored_revision > \(mark?.revision ?? Int.max)
            WHERE r.only_row ORDER BY f.name, f.version
            """)
    }

    private static func flowVersionChanges(_ rows: PGRows) throws -> FlowVersionChanges? {
        guard rows.count > 0, let revision = try rows.integer(0, 0), let removals = try rows.integer(0, 1),
              let epoch = try rows.string(0, 2) else { return nil }
        var changed: [FlowVersionRecord] = []
        for row in 0..<rows.count {
            guard let name = try rows.string(row, 3) else { continue }  // the mark's row alone: nothing since
            changed.append(FlowVersionRecord(name: name, version: try rows.int(row, 4), definition: try rows.text(row, 5),
                                             createdAt: try rows.text(row, 6)))
        }
        return FlowVersionChanges(mark: FlowVersionMark(revision: revision, removals: removals, epoch: epoch), changed: changed)
    }

    public func liveFlowVersions() throws -> [String: Int] {
        try Self.liveFlowVersions(try read([Self.liveFlowVersionsStatement])[0])
    }

    private static let liveFlowVersionsStatement = PGStatement("SELECT name, version FROM live_flows")

    private static func liveFlowVersions(_ rows: PGRows) throws -> [String: Int] {
        var live: [String: Int] = [:]
        for row in 0..<rows.count {
            if let name = try rows.string(row, 0), let version = try rows.integer(row, 1) { live[name] = version }
        }
        return live
    }

    /// Version 1, live, unless the flow has a version already; nodes seeding at once insert it once.
    public func seedFlow(name: String, definition: String) throws {
        try write([PGStatement("""
            WITH seeded AS (
                INSERT INTO flow_versions (name, version, definition, created_at)
                SELECT $1::text, 1, $2::text, $3::text
                WHERE NOT EXISTS (SELECT 1 FROM flow_versions WHERE name = $1::text)
                ON CONFLICT (name, version) DO NOTHING
                RETURNING version
            ), history AS (
                INSERT INTO flow_activations (name, version, first_activated_at, last_activated_at)
                SELECT $1::text, version, $3::text, $3::text FROM seeded
                ON CONFLICT (name, version) DO NOTHING
            )
            INSERT INTO live_flows (name, version, activated_at) SELECT $1::text, version, $3::text FROM seeded
            ON CONFLICT (name) DO NOTHING
            """, [.text(name), .text(definition), .text(Timestamp.string())])])
    }

    public func flowActivations() throws -> [String: [Int]] {
        try Self.flowActivations(try read([Self.flowActivationsStatement])[0])
    }

    private static let flowActivationsStatement = PGStatement("SELECT name, version FROM flow_activations ORDER BY name, version")

    private static func flowActivations(_ rows: PGRows) throws -> [String: [Int]] {
        var activations: [String: [Int]] = [:]
        for row in 0..<rows.count {
            if let name = try rows.string(row, 0), let version = try rows.integer(row, 1) { activations[name, default: []].append(version) }
        }
        return activations
    }

    private static func flowVersionRecords(_ rows: PGRows) throws -> [FlowVersionRecord] {
        try (0..<rows.count).map { row in
            FlowVersionRecord(name: try rows.text(row, 0), version: try rows.int(row, 1),
                              definition: try rows.text(row, 2), createdAt: try rows.text(row, 3))
        }
    }

    // MARK: Flags and experiments

    public func putDefinition(_ kind: KeyedDefinitionKind, key: String, definition: String, audit: AuditStamp?) throws -> Int {
        let rows = try writeAudited(PGStatement("""
            WITH previous AS (SELECT revision FROM \(kind.rawValue) WHERE key = $1::text),
            put AS (
                INSERT INTO \(kind.rawValue) AS d (key, definition, revision, updated_at) VALUES ($1::text, $2::text, 1, $3::text)
                ON CONFLICT (key) DO UPDATE SET definition = excluded.definition, revision = d.revision + 1,
                    updated_at = excluded.updated_at
                RETURNING revision
            ), audit AS (
                INSERT INTO audit_log (id, at, action, subject, old_version, new_version, credential)
                SELECT (SELECT COALESCE(MAX(id), 0) FROM audit_log) + 1, $3::text, $5::text, $1::text,
                       (SELECT revision FROM previous), put.revision, $4::text
                FROM put WHERE $4::text IS NOT NULL
            )
            SELECT revision FROM put
            """, [.text(key), .text(definition), .text(Timestamp.string()), .optional(audit?.credential), .text(AuditAction.put(kind))]),
            audit: audit)
        return try rows[0].integer(0, 0) ?? 1
    }

    /// One statement, so the compare-and-set and the activations commit together or not at all:
    /// the flows are activated only from the row the update returned. The pins travel as one
    /// JSON object (`{"onboarding": 2}`), every value bound.
    public func changeExperiment(key: String, definition: String, revision: Int, activating: [String: Int],
                                 audit: AuditStamp?) throws -> Int? {
        let pins = String(decoding: (try? JSONSerialization.data(withJSONObject: activating)) ?? Data("{}".utf8), as: UTF8.self)
        let rows = try writeAudited(PGStatement("""
            WITH put AS (
                UPDATE experiments SET definition = $2::text, revision = revision + 1, updated_at = $3::text
                WHERE key = $1::text AND revision = $4::bigint
                RETURNING revision
            ), pins AS (
                SELECT p.key AS name, p.value::bigint AS version FROM jsonb_each_text($6::jsonb) AS p
            ), target AS (
                SELECT v.name, v.version, l.version AS was
                FROM pins JOIN flow_versions v ON v.name = pins.name AND v.version = pins.version
                LEFT JOIN live_flows l ON l.name = v.name
                WHERE EXISTS (SELECT 1 FROM put) AND l.version IS DISTINCT FROM v.version
            ), made AS (
                INSERT INTO live_flows (name, version, activated_at)
                SELECT name, version, $3::text FROM target
                ON CONFLICT (name) DO UPDATE SET version = excluded.version, activated_at = excluded.activated_at
                RETURNING name
            ), history AS (
                INSERT INTO flow_activations (name, version, first_activated_at, last_activated_at)
                SELECT name, version, $3::text, $3::text FROM target
                ON CONFLICT (name, version) DO UPDATE SET last_activated_at = excluded.last_activated_at
            ), audit AS (
                INSERT INTO audit_log (id, at, action, subject, old_version, new_version, credential)
                SELECT (SELECT COALESCE(MAX(id), 0) FROM audit_log) + entry.n, $3::text, entry.action, entry.subject,
                       entry.old_version, entry.new_version, $5::text
                FROM (
                    SELECT 1 AS n, $7::text AS action, $1::text AS subject, $4::bigint AS old_version, put.revision AS new_version FROM put
                    UNION ALL
                    SELECT 1 + row_number() OVER (ORDER BY target.name), 'flow.activate', target.name, target.was, target.version
                    FROM target
                ) AS entry
                WHERE $5::text IS NOT NULL
            )
            SELECT revision FROM put
            """, [.text(key), .text(definition), .text(Timestamp.string()), .integer(revision), .optional(audit?.credential),
                  .text(pins), .text(audit?.action ?? AuditAction.put(.experiment))]),
            audit: audit)[0]
        return try rows.count == 1 ? rows.integer(0, 0) : nil
    }

    public func seedDefinition(_ kind: KeyedDefinitionKind, key: String, definition: String) throws {
        try write([PGStatement("""
            INSERT INTO \(kind.rawValue) (key, definition, revision, updated_at) VALUES ($1::text, $2::text, 1, $3::text)
            ON CONFLICT (key) DO NOTHING
            """, [.text(key), .text(definition), .text(Timestamp.string())])])
    }

    public func allDefinitions(_ kind: KeyedDefinitionKind) throws -> [KeyedDefinitionRecord] {
        try Self.definitions(try read([Self.definitionsStatement(kind)])[0])
    }

    private static func definitionsStatement(_ kind: KeyedDefinitionKind) -> PGStatement {
        PGStatement("SELECT key, definition, revision, updated_at FROM \(kind.rawValue) ORDER BY key")
    }

    private static func definitions(_ rows: PGRows) throws -> [KeyedDefinitionRecord] {
        try (0..<rows.count).map { row in
            KeyedDefinitionRecord(key: try rows.text(row, 0), definition: try rows.text(row, 1),
                                  revision: try rows.int(row, 2), updatedAt: try rows.text(row, 3))
        }
    }

    /// The definitions' revision, which every write to them raises (migration 17's triggers):
    /// one row read, however many versions and releases are stored.
    public func definitionsFingerprint() throws -> String {
        try read([Self.definitionsFingerprintStatement])[0].string(0, 0) ?? ""
    }

    /// The fingerprint's query. Should the revision's row be gone (an operator's mistake), it is
    /// counted over the tables themselves, as before migration 17, so that changes are still
    /// seen. Prepared once per connection: PostgreSQL planned the counted form in about a
    /// millisecond at every read.
    static let definitionsFingerprintStatement = PGStatement("""
        SELECT COALESCE((SELECT 'r' || revision || '.' || epoch FROM definitions_revision WHERE only_row),
               (SELECT count(*) || ':' || coalesce(max(created_at), '') FROM flow_versions) || '|' ||
               (SELECT coalesce(string_agg(name || ':' || version, ',' ORDER BY name), '') FROM live_flows) || '|' ||
               (SELECT count(*) || ':' || coalesce(sum(revision), 0) FROM flags) || '|' ||
               (SELECT count(*) || ':' || coalesce(sum(revision), 0) FROM experiments) || '|' ||
               (SELECT count(*) FROM flow_activations) || '|' ||
               (SELECT count(*) || ':' || coalesce(max(coalesce(rolled_back_at, activated_at, '')), '') FROM releases))
        """, prepared: true)

    // MARK: Experiment report

    public func experimentReport(_ experiment: String) throws -> [String: ExperimentVariantCounts] {
        let results = try read([
            PGStatement("""
                SELECT variant, COUNT(*), COUNT(DISTINCT CASE WHEN onboarded = 1 THEN user_id END)
                FROM exposures WHERE experiment = $1::text GROUP BY variant
                """, [.text(experiment)]),
            PGStatement("""
                SELECT e.variant, f.feature, COUNT(*)
                FROM exposures e JOIN session_features f ON f.session_id = e.session_id
                WHERE e.experiment = $1::text GROUP BY e.variant, f.feature
                """, [.text(experiment)]),
            PGStatement("SELECT variant, COUNT(*) FROM experiment_exclusions WHERE experiment = $1::text GROUP BY variant",
                        [.text(experiment)]),
        ])
        var report: [String: ExperimentVariantCounts] = [:]
        let totals = results[0]
        for row in 0..<totals.count {
            guard let variant = try totals.string(row, 0) else { continue }
            report[variant] = ExperimentVariantCounts(sessions: try totals.integer(row, 1) ?? 0, onboarded: try totals.integer(row, 2) ?? 0)
        }
        let funnel = results[1]
        for row in 0..<funnel.count {
            guard let variant = try funnel.string(row, 0), let feature = try funnel.string(row, 1) else { continue }
            report[variant, default: ExperimentVariantCounts()].funnel[feature] = try funnel.integer(row, 2) ?? 0
        }
        let excluded = results[2]
        for row in 0..<excluded.count {
            guard let variant = try excluded.string(row, 0) else { continue }
            report[variant, default: ExperimentVariantCounts()].excluded = try excluded.integer(row, 1) ?? 0
        }
        return report
    }
}
