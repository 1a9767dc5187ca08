// Releases in PostgreSQL: each change of a release is one transaction on one connection that
// first locks the audit log (as every audited change does) and the tables it reads and writes,
// so an activation or a rollback is all applied or not at all, and two nodes never interleave.
import FlowStore

/// Statements of one open transaction, one round trip each (release changes are rare).
struct PGTransaction {
    let connection: PGConnection
    let deadline: ContinuousClock.Instant

    func query(_ sql: String, _ parameters: [PGValue] = []) throws(PGError) -> PGRows {
        try connection.run([PGStatement(sql, parameters)], deadline: deadline).rows()[0]
    }

    /// Appends an audit entry with the next id (the audit log is locked).
    func audit(at time: String, action: String, subject: String, old: Int?, new: Int?, credential: String, detail: String?) throws(PGError) {
        _ = try query("""
            INSERT INTO audit_log (id, at, action, subject, old_version, new_version, credential, detail)
            SELECT COALESCE(MAX(id), 0) + 1, $1::text, $2::text, $3::text, $4::bigint, $5::bigint, $6::text, $7::text FROM audit_log
            """, [.text(time), .text(action), .text(subject), old.map { .integer($0) } ?? .null, new.map { .integer($0) } ?? .null,
                  .text(credential), .optional(detail)])
    }

    func live() throws(PGError) -> [String: Int] {
        let rows = try query("SELECT name, version FROM live_flows")
        var live: [String: Int] = [:]
        for row in 0..<rows.count {
            if let name = try rows.string(row, 0), let version = try rows.integer(row, 1) { live[name] = version }
        }
        return live
    }

    func setLive(_ name: String, _ version: Int, at time: String) throws(PGError) {
        _ = try query("""
            INSERT INTO live_flows (name, version, activated_at) VALUES ($1::text, $2::bigint, $3::text)
            ON CONFLICT (name) DO UPDATE SET version = excluded.version, activated_at = excluded.activated_at
            """, [.text(name), .integer(version), .text(time)])
        _ = try query("""
            INSERT INTO flow_activations (name, version, first_activated_at, last_activated_at) VALUES ($1::text, $2::bigint, $3::text, $3::text)
            ON CONFLICT (name, version) DO UPDATE SET last_activated_at = excluded.last_activated_at
            """, [.text(name), .integer(version), .text(time)])
    }

    /// Puts a flag's or experiment's text as its next revision, audited.
    func putKeyed(_ kind: KeyedDefinitionKind, key: String, text: String, at time: String, old: Int?, _ stamp: AuditStamp) throws(PGError) {
        _ = try query("""
            INSERT INTO \(kind.rawValue) (key, definition, revision, updated_at) VALUES ($1::text, $2::text, $3::bigint, $4::text)
            ON CONFLICT (key) DO UPDATE SET definition = excluded.definition, revision = excluded.revision, updated_at = excluded.updated_at
            """, [.text(key), .text(text), .integer((old ?? 0) + 1), .text(time)])
        try audit(at: time, action: AuditAction.put(kind), subject: key, old: old, new: (old ?? 0) + 1,
                  credential: stamp.credential, detail: stamp.detail)
    }

    func release(_ id: Int) throws(PGError) -> ReleaseRecord? {
        try PostgresStore.releaseRecords(try query("SELECT \(PostgresStore.releaseColumns) FROM releases WHERE id = $1::bigint", [.integer(id)])).first
    }
}

extension PostgresStore {
    static let releaseColumns = ReleaseRecord.storedColumns

    /// Runs `body` in one transaction holding the audit log's lock and exclusive locks on the
    /// tables a release reads and writes (readers are not blocked). An error `body` throws rolls
    /// it back and is thrown as it is.
    func releaseTransaction<T>(_ body: (PGTransaction) throws -> T) throws -> T {
        let deadline = ContinuousClock.now + Self.requestTimeout
        var failure: (any Error)?
        let result: T?
        do {
            result = try pool.withConnection(deadline: deadline) { connection throws(PGError) -> T? in
                _ = try connection.runTransaction([
                    PGStatement("BEGIN"), PGStatement("LOCK TABLE audit_log IN EXCLUSIVE MODE"),
                    PGStatement("LOCK TABLE releases, flow_versions, live_flows, flow_activations, flags, experiments IN EXCLUSIVE MODE"),
                ], deadline: deadline).rows()
                do {
                    let value = try body(PGTransaction(connection: connection, deadline: deadline))
                    _ = try connection.run([PGStatement("COMMIT")], deadline: deadline).rows()
                    return value
                } catch let error as PGError {
                    _ = try? connection.run([PGStatement("ROLLBACK")], deadline: deadline)
                    throw error
                } catch {
                    failure = error
                    _ = try connection.run([PGStatement("ROLLBACK")], deadline: deadline).rows()
                    return nil
                }
            }
        } catch {
            throw Self.storeError(error, location: location)
        }
        if let failure { throw failure }
        guard let result else { throw PGError.server(sqlState: "", message: "the release transaction returned nothing") }
        return result
    }

    public func createRelease(_ release: ReleaseRecord, texts: [String: String], audit: AuditStamp) throws -> ReleaseRecord {
        try releaseTransaction { tx in
            let now = release.createdAt
            for (name, version) in release.versions.sorted(by: { $0.key < $1.key }) {
                let latest = try tx.query("SELECT MAX(version) FROM flow_versions WHERE name = $1::text", [.text(name)]).integer(0, 0)
                guard (latest ?? 0) + 1 == version else {
                    throw ReleaseConflict("release-stale", "Flow \(name) got version \((latest ?? 0) + 1) meanwhile; submit the release again.")
                }
                _ = try tx.query("INSERT INTO flow_versions (name, version, definition, created_at) VALUES ($1::text, $2::bigint, $3::text, $4::text)",
                                 [.text(name), .integer(version), .text(texts[name] ?? "{}"), .text(now)])
            }
            let rows = try tx.query("""
                INSERT INTO releases (description, state, document, versions, flags, experiments, base, tests, created_by, created_at)
                VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text, $8::text, $9::text, $10::text) RETURNING id
                """, [.text(release.description), .text(release.state.rawValue), .text(release.document),
                      .text(ReleaseRules.encode(release.versions)), .text(ReleaseRules.encode(release.flags)),
                      .text(ReleaseRules.encode(release.experiments)), .text(ReleaseRules.encode(release.base)),
                      .optional(release.tests), .text(release.createdBy), .text(now)])
            let id = try rows.int(0, 0)
            for (name, version) in release.versions.sorted(by: { $0.key < $1.key }) {
                try tx.audit(at: now, action: AuditAction.flowPut, subject: name, old: version > 1 ? version - 1 : nil, new: version,
                             credential: audit.credential, detail: "release \(id)")
            }
            try tx.audit(at: now, action: AuditAction.releaseCreate, subject: String(id), old: nil, new: nil,
                         credential: audit.credential, detail: audit.detail)
            var stored = release
            stored.id = id
            return stored
        }
    }

    public func release(id: Int) throws -> ReleaseRecord? {
        try Self.releaseRecords(try read([PGStatement("SELECT \(Self.releaseColumns) FROM releases WHERE id = $1::bigint", [.integer(id)])])[0]).first
    }

    public func releases() throws -> [ReleaseRecord] {
        try Self.releaseRecords(try read([PGStatement("SELECT \(Self.releaseColumns) FROM releases ORDER BY id DESC")])[0])
    }

    public func recordReleaseTests(id: Int, tests: String, passed: Bool, base: [String: Int]) throws -> ReleaseRecord? {
        try releaseTransaction { tx in
            guard let release = try tx.release(id) else { return nil }
            guard [.draft, .failed, .ready].contains(release.state) else {
                throw ReleaseConflict("release-state", "Release \(id) is \(release.state.rawValue); its tests run only before it goes live.")
            }
            _ = try tx.query("UPDATE releases SET tests = $1::text, state = $2::text, base = $3::text WHERE id = $4::bigint",
                             [.text(tests), .text((passed ? ReleaseState.ready : .failed).rawValue), .text(ReleaseRules.encode(base)), .integer(id)])
            return try tx.release(id)
        }
    }

    public func approveRelease(id: Int, audit: AuditStamp) throws -> ReleaseRecord? {
        try releaseTransaction { tx in
            guard let release = try tx.release(id) else { return nil }
            guard [.draft, .failed, .ready].contains(release.state) else {
                throw ReleaseConflict("release-state", "Release \(id) is \(release.state.rawValue); only a release not yet live is approved.")
            }
            guard release.createdBy != audit.credential else {
                throw ReleaseConflict("self-approval", "Release \(id) was made by \(audit.credential); another identity must approve it.")
            }
            _ = try tx.query("UPDATE releases SET approved_by = $1::text WHERE id = $2::bigint", [.text(audit.credential), .integer(id)])
            try tx.audit(at: Timestamp.string(), action: AuditAction.releaseApprove, subject: String(id), old: nil, new: nil,
                         credential: audit.credential, detail: audit.detail)
            return try tx.release(id)
        }
    }

    public func activateRelease(id: Int, rules: ReleaseActivationRules, audit: AuditStamp) throws -> ReleaseRecord? {
        try releaseTransaction { tx in
            guard let release = try tx.release(id) else { return nil }
            let live = try tx.live()
            try ReleaseRules.checkActivation(release, live: live, rules: rules)
            let now = Timestamp.string()
            let stamp = AuditStamp(credential: audit.credential, detail: "release \(id)")
            var previous = ReleasePrevious()
            for (name, version) in release.versions.sorted(by: { $0.key < $1.key }) {
                previous.flows[name] = .some(live[name])
                try tx.setLive(name, version, at: now)
                try tx.audit(at: now, action: AuditAction.flowActivate, subject: name, old: live[name], new: version,
                             credential: stamp.credential, detail: stamp.detail)
            }
            for (kind, texts) in [(KeyedDefinitionKind.flag, release.flags), (.experiment, release.experiments)] {
                for (key, text) in texts.sorted(by: { $0.key < $1.key }) {
                    let before = try tx.query("SELECT definition, revision FROM \(kind.rawValue) WHERE key = $1::text", [.text(key)])
                    let oldText = try before.count == 1 ? before.string(0, 0) : nil
                    if kind == .flag { previous.flags[key] = .some(oldText) } else { previous.experiments[key] = .some(oldText) }
                    try tx.putKeyed(kind, key: key, text: text, at: now, old: before.count == 1 ? before.integer(0, 1) : nil, stamp)
                }
            }
            _ = try tx.query("UPDATE releases SET state = $1::text, previous = $2::text, activated_by = $3::text, activated_at = $4::text WHERE id = $5::bigint",
                             [.text(ReleaseState.live.rawValue), .text(ReleaseRules.encode(previous)), .text(audit.credential), .text(now), .integer(id)])
            try tx.audit(at: now, action: AuditAction.releaseActivate, subject: String(id), old: nil, new: nil,
                         credential: audit.credential, detail: audit.detail)
            return try tx.release(id)
        }
    }

    public func beginReleaseRollout(id: Int, rules: ReleaseActivationRules, audit: AuditStamp) throws -> ReleaseRecord? {
        try releaseTransaction { tx in
            guard let release = try tx.release(id) else { return nil }
            guard release.state != .rollingOut else {
                throw ReleaseConflict("release-state", "Release \(id) is rolling out already.")
            }
            try ReleaseRules.checkActivation(release, live: try tx.live(), rules: rules)
            let now = Timestamp.string()
            _ = try tx.query("UPDATE releases SET state = $1::text, activated_by = $2::text, activated_at = $3::text WHERE id = $4::bigint",
                             [.text(ReleaseState.rollingOut.rawValue), .text(audit.credential), .text(now), .integer(id)])
            try tx.audit(at: now, action: AuditAction.releaseRollout, subject: String(id), old: nil, new: nil,
                         credential: audit.credential, detail: audit.detail)
            return try tx.release(id)
        }
    }

    public func rollbackRelease(id: Int, reason: String?, stopped: [String: String], audit: AuditStamp) throws -> ReleaseRecord? {
        try releaseTransaction { tx in
            guard let release = try tx.release(id) else { return nil }
            if release.state == .rollingOut {
                // Nothing of it was made live for everybody: only its state changes.
                let now = Timestamp.string()
                _ = try tx.query("UPDATE releases SET state = $1::text, rolled_back_at = $2::text, reason = $3::text WHERE id = $4::bigint",
                                 [.text(ReleaseState.rolledBack.rawValue), .text(now), .optional(reason), .integer(id)])
                try tx.audit(at: now, action: AuditAction.releaseRollback, subject: String(id), old: nil, new: nil,
                             credential: audit.credential, detail: audit.detail ?? reason)
                return try tx.release(id)
            }
            let live = try tx.live()
            var current: [KeyedDefinitionKind: [String: String]] = [:]
            for kind in [KeyedDefinitionKind.flag, .experiment] {
                let rows = try tx.query("SELECT key, definition FROM \(kind.rawValue)")
                for row in 0..<rows.count {
                    if let key = try rows.string(row, 0), let text = try rows.string(row, 1) { current[kind, default: [:]][key] = text }
                }
            }
            try ReleaseRules.checkRollback(release, live: live, flags: current[.flag] ?? [:], experiments: current[.experiment] ?? [:])
            let previous = release.previous ?? ReleasePrevious()
            let now = Timestamp.string()
            let stamp = AuditStamp(credential: audit.credential, detail: "rollback of release \(id)")
            for name in release.versions.keys.sorted() {
                if let before = previous.flows[name] ?? nil {
                    try tx.setLive(name, before, at: now)
                    try tx.audit(at: now, action: AuditAction.flowActivate, subject: name, old: live[name], new: before,
                                 credential: stamp.credential, detail: stamp.detail)
                } else {
                    _ = try tx.query("DELETE FROM live_flows WHERE name = $1::text", [.text(name)])
                    try tx.audit(at: now, action: AuditAction.flowActivate, subject: name, old: live[name], new: nil,
                                 credential: stamp.credential, detail: stamp.detail)
                }
            }
            for (kind, texts, before) in [(KeyedDefinitionKind.flag, release.flags, previous.flags),
                                          (.experiment, release.experiments, previous.experiments)] {
                for key in texts.keys.sorted() {
                    let revision = try tx.query("SELECT revision FROM \(kind.rawValue) WHERE key = $1::text", [.text(key)]).integer(0, 0)
                    if let text = before[key] ?? nil {
                        try tx.putKeyed(kind, key: key, text: text, at: now, old: revision, stamp)
                    } else if kind == .experiment {
                        try tx.putKeyed(kind, key: key, text: stopped[key] ?? texts[key] ?? "{}", at: now, old: revision, stamp)
                    } else {
                        _ = try tx.query("DELETE FROM flags WHERE key = $1::text", [.text(key)])
                        try tx.audit(at: now, action: "flag.delete", subject: key, old: revision, new: nil,
                                     credential: stamp.credential, detail: stamp.detail)
                    }
                }
            }
            _ = try tx.query("UPDATE releases SET state = $1::text, rolled_back_at = $2::text, reason = $3::text WHERE id = $4::bigint",
                             [.text(ReleaseState.rolledBack.rawValue), .text(now), .optional(reason), .integer(id)])
            try tx.audit(at: now, action: AuditAction.releaseRollback, subject: String(id), old: nil, new: nil,
                         credential: audit.credential, detail: audit.detail ?? reason)
            return try tx.release(id)
        }
    }

    static func releaseRecords(_ rows: PGRows) throws(PGError) -> [ReleaseRecord] {
        try (0..<rows.count).map { row throws(PGError) in
            try ReleaseRecord(id: rows.int(row, 0)) { column throws(PGError) in try rows.string(row, column) }
        }
    }
}
