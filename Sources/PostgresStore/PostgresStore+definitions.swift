// Users, versioned flow definitions, flags, experiments and the experiment report in PostgreSQL.
import FlowStore

extension PostgresStore {
    // MARK: Users

    public func user(id: String) throws -> UserRecord? {
        let rows = try read([PGStatement(
            "SELECT id, state::text, created_at, updated_at, revision FROM users WHERE id = $1::text", [.text(id)])])[0]
        return Self.userRecord(rows)
    }

    public func removeUserState(id: String, key: String) throws -> UserRecord? {
        let rows = try write([PGStatement("""
            UPDATE users SET state = state - $2::text, updated_at = $3::text, revision = revision + 1 WHERE id = $1::text
            RETURNING id, state::text, created_at, updated_at, revision
            """, [.text(id), .text(key), .text(Timestamp.string())])])[0]
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
    public func addFlowVersion(name: String, definition: String, activate: Bool) throws -> Int {
        for attempt in 1...5 {
            do {
                let rows = try write([PGStatement("""
                    WITH next AS (
                        INSERT INTO flow_versions (name, version, definition, created_at)
                        SELECT $1::text, COALESCE(MAX(version), 0) + 1, $2::text, $3::text
                        FROM flow_versions WHERE name = $1::text
                        RETURNING version
                    ), live AS (
                        INSERT INTO live_flows (name, version, activated_at)
                        SELECT $1::text, version, $3::text FROM next WHERE $4::boolean
                        ON CONFLICT (name) DO UPDATE SET version = excluded.version, activated_at = excluded.activated_at
                    )
                    SELECT version FROM next
                    """, [.text(name), .text(definition), .text(Timestamp.string()), .boolean(activate)])])
                guard let version = rows[0].integer(0, 0) else { throw PGError.server(sqlState: "", message: "no version returned") }
                return version
            } catch PGError.server(let state, _) where state == "23505" && attempt < 5 {
                continue
            }
        }
        throw PGError.server(sqlState: "23505", message: "flow \(name) kept changing; try again")
    }

    public func activateFlow(name: String, version: Int) throws -> Bool {
        try write([PGStatement("""
            INSERT INTO live_flows (name, version, activated_at)
            SELECT name, version, $3::text FROM flow_versions WHERE name = $1::text AND version = $2::bigint
            ON CONFLICT (name) DO UPDATE SET version = excluded.version, activated_at = excluded.activated_at
            RETURNING 1
            """, [.text(name), .integer(version), .text(Timestamp.string())])])[0].count == 1
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
            )
            INSERT INTO live_flows (name, version, activated_at) SELECT $1::text, version, $3::text FROM seeded
            ON CONFLICT (name) DO NOTHING
            """, [.text(name), .text(definition), .text(Timestamp.string())])])
    }

    private static func flowVersionRecords(_ rows: PGRows) -> [FlowVersionRecord] {
        (0..<rows.count).map { row in
            FlowVersionRecord(name: rows.string(row, 0) ?? "", version: rows.integer(row, 1) ?? 0,
                              definition: rows.string(row, 2) ?? "", createdAt: rows.string(row, 3) ?? "")
        }
    }

    // MARK: Flags and experiments

    public func putDefinition(_ kind: KeyedDefinitionKind, key: String, definition: String) throws -> Int {
        let rows = try write([PGStatement("""
            INSERT INTO \(kind.rawValue) AS d (key, definition, revision, updated_at) VALUES ($1::text, $2::text, 1, $3::text)
            ON CONFLICT (key) DO UPDATE SET definition = excluded.definition, revision = d.revision + 1,
                updated_at = excluded.updated_at
            RETURNING revision
            """, [.text(key), .text(definition), .text(Timestamp.string())])])
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
                   (SELECT count(*) || ':' || coalesce(sum(revision), 0) FROM experiments)
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
        return report
    }
}

extension PostgresStore {
    static let clientKeyColumns = "id, name, key_hash, created_at, revoked_at"

    public func insertClientKey(_ key: ClientKeyRecord) throws {
        _ = try write([PGStatement(
            "INSERT INTO client_keys (id, name, key_hash, created_at) VALUES ($1::text, $2::text, $3::bytea, $4::text)",
            [.text(key.id), .text(key.name), .bytes(key.keyHash), .text(key.createdAt)])])
    }

    public func clientKeys() throws -> [ClientKeyRecord] {
        Self.clientKeyRecords(try read([PGStatement("SELECT \(Self.clientKeyColumns) FROM client_keys ORDER BY created_at, id")])[0])
    }

    public func liveClientKey(hash: [UInt8]) throws -> ClientKeyRecord? {
        Self.clientKeyRecords(try read([PGStatement(
            "SELECT \(Self.clientKeyColumns) FROM client_keys WHERE key_hash = $1::bytea AND revoked_at IS NULL", [.bytes(hash)])])[0]).first
    }

    public func revokeClientKey(id: String, at: String) throws -> ClientKeyRecord? {
        let rows = try write([
            PGStatement("UPDATE client_keys SET revoked_at = $2::text WHERE id = $1::text AND revoked_at IS NULL", [.text(id), .text(at)]),
            PGStatement("SELECT \(Self.clientKeyColumns) FROM client_keys WHERE id = $1::text", [.text(id)]),
        ])
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
