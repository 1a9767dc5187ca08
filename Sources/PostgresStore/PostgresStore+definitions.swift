// Users, versioned flow definitions, flags, experiments and the experiment report in PostgreSQL.
import FlowStore

extension PostgresStore {
    // MARK: Users

    public func user(id: String) throws -> UserRecord? {
        let rows = try read([PGStatement(
            "SELECT id, state::text, created_at, updated_at, revision FROM users WHERE id = $1::text", [.text(id)])])[0]
        return Self.userRecord(rows)
    }

    public func removeUserState(id: String, key: String, audit: AuditStamp?) throws -> UserRecord? {
        let rows = try writeAudited(PGStatement("""
            WITH previous AS (SELECT revision FROM users WHERE id = $1::text),
            changed AS (
                UPDATE users SET state = state - $2::text, updated_at = $3::text, revision = revision + 1 WHERE id = $1::text
                RETURNING id, state::text AS state, created_at, updated_at, revision
            ), audit AS (
                INSERT INTO audit_log (id, at, action, subject, old_version, new_version, credential)
                SELECT (SELECT COALESCE(MAX(id), 0) FROM audit_log) + 1, $3::text, $5::text, $1::text,
                       (SELECT revision FROM previous), changed.revision, $4::text
                FROM changed WHERE $4::text IS NOT NULL
            )
            SELECT id, state, created_at, updated_at, revision FROM changed
            """, [.text(id), .text(key), .text(Timestamp.string()), .optional(audit?.credential),
                  .text(audit.map { AuditAction.userStateReset(key, $0) } ?? "")]), audit: audit)[0]
        return Self.userRecord(rows)
    }

    private static func userRecord(_ rows: PGRows) -> UserRecord? {
        guard rows.count == 1 else { return nil }
        return UserRecord(id: rows.string(0, 0) ?? "", state: rows.string(0, 1) ?? "{}",
                          createdAt: rows.string(0, 2) ?? "", updatedAt: rows.string(0, 3) ?? "",
                          revision: rows.integer(0, 4) ?? 0)
    }

    // MARK: Flow versions

    /// The next version is computed by the insert itself; two nodes adding a version of the
    /// same flow at once collide on the key `(name, version)`, and the loser tries again.
    public func addFlowVersion(name: String, definition: String, activate: Bool, audit: AuditStamp?) throws -> Int {
        for attempt in 1...5 {
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
                    """, [.text(name), .text(definition), .text(Timestamp.string()), .boolean(activate), .optional(audit?.credential)]),
                    audit: audit)
                guard let version = rows[0].integer(0, 0) else { throw PGError.server(sqlState: "", message: "no version returned") }
                return version
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
        return Self.flowVersionRecords(rows).first
    }

    public func allFlowVersions() throws -> [FlowVersionRecord] {
        Self.flowVersionRecords(try read([PGStatement(
            "SELECT name, version, definition, created_at FROM flow_versions ORDER BY name, version")])[0])
    }

    public func liveFlowVersions() throws -> [String: Int] {
        let rows = try read([PGStatement("SELECT name, version FROM live_flows")])[0]
        var live: [String: Int] = [:]
        for row in 0..<rows.count {
            if let name = rows.string(row, 0), let version = rows.integer(row, 1) { live[name] = version }
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
        let rows = try read([PGStatement("SELECT name, version FROM flow_activations ORDER BY name, version")])[0]
        var activations: [String: [Int]] = [:]
        for row in 0..<rows.count {
            if let name = rows.string(row, 0), let version = rows.integer(row, 1) { activations[name, default: []].append(version) }
        }
        return activations
    }

    private static func flowVersionRecords(_ rows: PGRows) -> [FlowVersionRecord] {
        (0..<rows.count).map { row in
            FlowVersionRecord(name: rows.string(row, 0) ?? "", version: rows.integer(row, 1) ?? 0,
                              definition: rows.string(row, 2) ?? "", createdAt: rows.string(row, 3) ?? "")
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
        return rows[0].integer(0, 0) ?? 1
    }

    public func seedDefinition(_ kind: KeyedDefinitionKind, key: String, definition: String) throws {
        try write([PGStatement("""
            INSERT INTO \(kind.rawValue) (key, definition, revision, updated_at) VALUES ($1::text, $2::text, 1, $3::text)
            ON CONFLICT (key) DO NOTHING
            """, [.text(key), .text(definition), .text(Timestamp.string())])])
    }

    public func allDefinitions(_ kind: KeyedDefinitionKind) throws -> [KeyedDefinitionRecord] {
        let rows = try read([PGStatement(
            "SELECT key, definition, revision, updated_at FROM \(kind.rawValue) ORDER BY key")])[0]
        return (0..<rows.count).map { row in
            KeyedDefinitionRecord(key: rows.string(row, 0) ?? "", definition: rows.string(row, 1) ?? "",
                                  revision: rows.integer(row, 2) ?? 0, updatedAt: rows.string(row, 3) ?? "")
        }
    }

    public func definitionsFingerprint() throws -> String {
        try read([PGStatement("""
            SELECT (SELECT count(*) || ':' || coalesce(max(created_at), '') FROM flow_versions) || '|' ||
                   (SELECT coalesce(string_agg(name || ':' || version, ',' ORDER BY name), '') FROM live_flows) || '|' ||
                   (SELECT count(*) || ':' || coalesce(sum(revision), 0) FROM flags) || '|' ||
                   (SELECT count(*) || ':' || coalesce(sum(revision), 0) FROM experiments) || '|' ||
                   (SELECT count(*) FROM flow_activations) || '|' ||
                   (SELECT count(*) || ':' || coalesce(max(coalesce(rolled_back_at, activated_at, '')), '') FROM releases)
            """)])[0].string(0, 0) ?? ""
    }

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
            guard let variant = totals.string(row, 0) else { continue }
            report[variant] = ExperimentVariantCounts(sessions: totals.integer(row, 1) ?? 0, onboarded: totals.integer(row, 2) ?? 0)
        }
        let funnel = results[1]
        for row in 0..<funnel.count {
            guard let variant = funnel.string(row, 0), let feature = funnel.string(row, 1) else { continue }
            report[variant, default: ExperimentVariantCounts()].funnel[feature] = funnel.integer(row, 2) ?? 0
        }
        let excluded = results[2]
        for row in 0..<excluded.count {
            guard let variant = excluded.string(row, 0) else { continue }
            report[variant, default: ExperimentVariantCounts()].excluded = excluded.integer(row, 1) ?? 0
        }
        return report
    }
}

extension PostgresStore {
    static let clientKeyColumns = "id, name, key_hash, created_at, revoked_at"

    public func insertClientKey(_ key: ClientKeyRecord, audit: AuditStamp?) throws {
        _ = try writeAudited(PGStatement("""
            WITH made AS (
                INSERT INTO client_keys (id, name, key_hash, created_at) VALUES ($1::text, $2::text, $3::bytea, $4::text)
                RETURNING id
            ), audit AS (
                INSERT INTO audit_log (id, at, action, subject, old_version, new_version, credential)
                SELECT (SELECT COALESCE(MAX(id), 0) FROM audit_log) + 1, $4::text, 'clientKey.create', made.id, NULL, NULL, $5::text
                FROM made WHERE $5::text IS NOT NULL
            )
            SELECT 1 FROM made
            """, [.text(key.id), .text(key.name), .bytes(key.keyHash), .text(key.createdAt), .optional(audit?.credential)]), audit: audit)
    }

    public func clientKeys() throws -> [ClientKeyRecord] {
        Self.clientKeyRecords(try read([PGStatement("SELECT \(Self.clientKeyColumns) FROM client_keys ORDER BY created_at, id")])[0])
    }

    public func liveClientKey(hash: [UInt8]) throws -> ClientKeyRecord? {
        Self.clientKeyRecords(try read([PGStatement(
            "SELECT \(Self.clientKeyColumns) FROM client_keys WHERE key_hash = $1::bytea AND revoked_at IS NULL", [.bytes(hash)])])[0]).first
    }

    public func revokeClientKey(id: String, at: String, audit: AuditStamp?) throws -> ClientKeyRecord? {
        let rows = try writeAudited([
            PGStatement("""
                WITH revoked AS (
                    UPDATE client_keys SET revoked_at = $2::text WHERE id = $1::text AND revoked_at IS NULL RETURNING id
                )
                INSERT INTO audit_log (id, at, action, subject, old_version, new_version, credential)
                SELECT (SELECT COALESCE(MAX(id), 0) FROM audit_log) + 1, $2::text, 'clientKey.revoke', revoked.id, NULL, NULL, $3::text
                FROM revoked WHERE $3::text IS NOT NULL
                """, [.text(id), .text(at), .optional(audit?.credential)]),
            PGStatement("SELECT \(Self.clientKeyColumns) FROM client_keys WHERE id = $1::text", [.text(id)]),
        ], audit: audit)
        return Self.clientKeyRecords(rows[1]).first
    }

    static func clientKeyRecords(_ rows: PGRows) -> [ClientKeyRecord] {
        (0..<rows.count).compactMap { row in
            guard let id = rows.string(row, 0), let name = rows.string(row, 1), let hash = rows.bytes(row, 2),
                  let created = rows.string(row, 3) else { return nil }
            return ClientKeyRecord(id: id, name: name, keyHash: hash, createdAt: created, revokedAt: rows.string(row, 4))
        }
    }
}

extension PostgresStore {
    // MARK: Audit log

    /// Runs `statements` as one write; when audited, inside `BEGIN … COMMIT` after taking the
    /// audit log's lock, so entries get ids (max + 1) in commit order across nodes. Returns the
    /// rows of `statements` alone.
    func writeAudited(_ statements: [PGStatement], audit: AuditStamp?) throws -> [PGRows] {
        guard audit != nil else { return try write(statements) }
        let rows = try write([PGStatement("BEGIN"), PGStatement("LOCK TABLE audit_log IN EXCLUSIVE MODE")] + statements + [PGStatement("COMMIT")])
        return Array(rows[2..<(2 + statements.count)])
    }

    func writeAudited(_ statement: PGStatement, audit: AuditStamp?) throws -> [PGRows] {
        try writeAudited([statement], audit: audit)
    }

    public func auditLog(after: Int, limit: Int) throws -> [AuditRecord] {
        let rows = try read([PGStatement("""
            SELECT id, at, action, subject, old_version, new_version, credential, detail FROM audit_log
            WHERE id > $1::bigint ORDER BY id LIMIT $2::bigint
            """, [.integer(after), .integer(limit)])])[0]
        return (0..<rows.count).map { row in
            AuditRecord(id: rows.integer(row, 0) ?? 0, at: rows.string(row, 1) ?? "", action: rows.string(row, 2) ?? "",
                        subject: rows.string(row, 3) ?? "", oldVersion: rows.integer(row, 4), newVersion: rows.integer(row, 5),
                        credential: rows.string(row, 6) ?? "", detail: rows.string(row, 7))
        }
    }
}
