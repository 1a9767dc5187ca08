// Users, versioned flow definitions, flags, experiments and the experiment report in PostgreSQL.
import FlowStore
import Foundation

extension PostgresStore {
    // MARK: Users

    public func user(id: String) throws -> UserRecord? {
        let rows = try read([PGStatement(
            "SELECT id, state::text, created_at, updated_at, revision FROM users WHERE id = $1::text", [.text(id)])])[0]
        return try Self.userRecord(rows)
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
        return try Self.userRecord(rows)
    }

    private static func userRecord(_ rows: PGRows) throws -> UserRecord? {
        guard rows.count == 1 else { return nil }
        return UserRecord(id: try rows.text(0, 0), state: try rows.text(0, 1),
                          createdAt: try rows.text(0, 2), updatedAt: try rows.text(0, 3),
                          revision: try rows.int(0, 4))
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
                guard let version = try rows[0].integer(0, 0) else { throw PGError.server(sqlState: "", message: "no version returned") }
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
        return try Self.flowVersionRecords(rows).first
    }

    public func allFlowVersions() throws -> [FlowVersionRecord] {
        try Self.flowVersionRecords(try read([PGStatement(
            "SELECT name, version, definition, created_at FROM flow_versions ORDER BY name, version")])[0])
    }

    public func liveFlowVersions() throws -> [String: Int] {
        let rows = try read([PGStatement("SELECT name, version FROM live_flows")])[0]
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
        let rows = try read([PGStatement("SELECT name, version FROM flow_activations ORDER BY name, version")])[0]
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
        let rows = try read([PGStatement(
            "SELECT key, definition, revision, updated_at FROM \(kind.rawValue) ORDER BY key")])[0]
        return try (0..<rows.count).map { row in
            KeyedDefinitionRecord(key: try rows.text(row, 0), definition: try rows.text(row, 1),
                                  revision: try rows.int(row, 2), updatedAt: try rows.text(row, 3))
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
        try Self.clientKeyRecords(try read([PGStatement("SELECT \(Self.clientKeyColumns) FROM client_keys ORDER BY created_at, id")])[0])
    }

    public func liveClientKey(hash: [UInt8]) throws -> ClientKeyRecord? {
        try Self.clientKeyRecords(try read([PGStatement(
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
        return try Self.clientKeyRecords(rows[1]).first
    }

    static func clientKeyRecords(_ rows: PGRows) throws -> [ClientKeyRecord] {
        try (0..<rows.count).compactMap { row in
            guard let id = try rows.string(row, 0), let name = try rows.string(row, 1), let hash = try rows.bytes(row, 2),
                  let created = try rows.string(row, 3) else { return nil }
            return ClientKeyRecord(id: id, name: name, keyHash: hash, createdAt: created, revokedAt: try rows.string(row, 4))
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
        return try (0..<rows.count).map { row in
            AuditRecord(id: try rows.int(row, 0), at: try rows.text(row, 1), action: try rows.text(row, 2),
                        subject: try rows.text(row, 3), oldVersion: try rows.integer(row, 4), newVersion: try rows.integer(row, 5),
                        credential: try rows.text(row, 6), detail: try rows.string(row, 7))
        }
    }
}

extension PostgresStore {
    static let adminKeyColumns = "id, name, role, key_hash, created_at, created_by, revoked_at"

    public func insertAdminKey(_ key: AdminKeyRecord, audit: AuditStamp?) throws -> Bool {
        // A live key of the same name is a unique violation of admin_keys_live_name: nothing is
        // made, and so nothing is audited.
        let rows = try writeAudited(PGStatement("""
            WITH made AS (
                INSERT INTO admin_keys (id, name, role, key_hash, created_at, created_by)
                VALUES ($1::text, $2::text, $3::text, $4::bytea, $5::text, $6::text)
                ON CONFLICT DO NOTHING
                RETURNING id
            ), audit AS (
                INSERT INTO audit_log (id, at, action, subject, old_version, new_version, credential)
                SELECT (SELECT COALESCE(MAX(id), 0) FROM audit_log) + 1, $5::text, 'adminKey.create', made.id, NULL, NULL, $7::text
                FROM made WHERE $7::text IS NOT NULL
            )
            SELECT 1 FROM made
            """, [.text(key.id), .text(key.name), .text(key.role), .bytes(key.keyHash), .text(key.createdAt), .text(key.createdBy),
                  .optional(audit?.credential)]), audit: audit)
        return rows[0].count == 1
    }

    public func adminKeys() throws -> [AdminKeyRecord] {
        try Self.adminKeyRecords(try read([PGStatement("SELECT \(Self.adminKeyColumns) FROM admin_keys ORDER BY created_at, id")])[0])
    }

    public func liveAdminKey(hash: [UInt8]) throws -> AdminKeyRecord? {
        try Self.adminKeyRecords(try read([PGStatement(
            "SELECT \(Self.adminKeyColumns) FROM admin_keys WHERE key_hash = $1::bytea AND revoked_at IS NULL", [.bytes(hash)])])[0]).first
    }

    public func revokeAdminKey(id: String, at: String, audit: AuditStamp?) throws -> AdminKeyRecord? {
        let rows = try writeAudited([
            PGStatement("""
                WITH revoked AS (
                    UPDATE admin_keys SET revoked_at = $2::text WHERE id = $1::text AND revoked_at IS NULL RETURNING id
                )
                INSERT INTO audit_log (id, at, action, subject, old_version, new_version, credential)
                SELECT (SELECT COALESCE(MAX(id), 0) FROM audit_log) + 1, $2::text, 'adminKey.revoke', revoked.id, NULL, NULL, $3::text
                FROM revoked WHERE $3::text IS NOT NULL
                """, [.text(id), .text(at), .optional(audit?.credential)]),
            PGStatement("SELECT \(Self.adminKeyColumns) FROM admin_keys WHERE id = $1::text", [.text(id)]),
        ], audit: audit)
        return try Self.adminKeyRecords(rows[1]).first
    }

    public func adminTokenHash() throws -> [UInt8]? {
        let rows = try read([PGStatement("SELECT token_hash FROM admin_token WHERE id = 1")])[0]
        return rows.count == 0 ? nil : try rows.bytes(0, 0)
    }

    public func keepAdminTokenHash(_ hash: [UInt8], at: String, replace: Bool, audit: AuditStamp?) throws -> [UInt8] {
        if replace {
            _ = try writeAudited(PGStatement("""
                WITH kept AS (
                    INSERT INTO admin_token (id, token_hash, created_at) VALUES (1, $1::bytea, $2::text)
                    ON CONFLICT (id) DO UPDATE SET token_hash = EXCLUDED.token_hash, created_at = EXCLUDED.created_at
                    RETURNING id
                )
                INSERT INTO audit_log (id, at, action, subject, old_version, new_version, credential)
                SELECT (SELECT COALESCE(MAX(id), 0) FROM audit_log) + 1, $2::text, 'adminToken.reset', 'admin', NULL, NULL, $3::text
                FROM kept WHERE $3::text IS NOT NULL
                """, [.bytes(hash), .text(at), .optional(audit?.credential)]), audit: audit)
            return hash
        }
        // Nodes starting together on a new database: the first insert wins, the others read it.
        let rows = try write([
            PGStatement("INSERT INTO admin_token (id, token_hash, created_at) VALUES (1, $1::bytea, $2::text) ON CONFLICT (id) DO NOTHING",
                        [.bytes(hash), .text(at)]),
            PGStatement("SELECT token_hash FROM admin_token WHERE id = 1"),
        ])
        return rows[1].count == 0 ? hash : (try rows[1].bytes(0, 0) ?? hash)
    }

    static func adminKeyRecords(_ rows: PGRows) throws -> [AdminKeyRecord] {
        try (0..<rows.count).compactMap { row in
            guard let id = try rows.string(row, 0), let name = try rows.string(row, 1), let role = try rows.string(row, 2),
                  let hash = try rows.bytes(row, 3), let created = try rows.string(row, 4), let by = try rows.string(row, 5) else { return nil }
            return AdminKeyRecord(id: id, name: name, role: role, keyHash: hash, createdAt: created, createdBy: by,
                                  revokedAt: try rows.string(row, 6))
        }
    }
}
