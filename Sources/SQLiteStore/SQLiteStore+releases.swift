// Releases in SQLite: each change of a release is one write transaction (one writer at a time),
// so an activation or a rollback is all applied or not at all.
import FlowStore
import GRDB

extension SQLiteStore {
    static let releaseColumns = ReleaseRecord.storedColumns

    public func createRelease(_ release: ReleaseRecord, texts: [String: String], audit: AuditStamp) throws -> ReleaseRecord {
        try writing { db in
            let now = release.createdAt
            for (name, version) in release.versions.sorted(by: { $0.key < $1.key }) {
                let latest = try Int.fetchOne(db, sql: "SELECT MAX(version) FROM flow_versions WHERE name = ?", arguments: [name])
                guard (latest ?? 0) + 1 == version else {
                    throw ReleaseConflict("release-stale", "Flow \(name) got version \((latest ?? 0) + 1) meanwhile; submit the release again.")
                }
                try db.execute(sql: "INSERT INTO flow_versions (name, version, definition, created_at) VALUES (?, ?, ?, ?)",
                               arguments: [name, version, texts[name] ?? "{}", now])
            }
            try db.execute(sql: """
                INSERT INTO releases (description, state, document, versions, flags, experiments, base, tests, created_by, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [release.description, release.state.rawValue, release.document, ReleaseRules.encode(release.versions),
                                 ReleaseRules.encode(release.flags), ReleaseRules.encode(release.experiments),
                                 ReleaseRules.encode(release.base), release.tests, release.createdBy, now])
            let id = Int(db.lastInsertedRowID)
            for (name, version) in release.versions.sorted(by: { $0.key < $1.key }) {
                try Self.appendAudit(db, at: now, action: AuditAction.flowPut, subject: name, old: version > 1 ? version - 1 : nil,
                                     new: version, AuditStamp(credential: audit.credential, detail: "release \(id)"))
            }
            try Self.appendAudit(db, at: now, action: AuditAction.releaseCreate, subject: String(id), old: nil, new: nil, audit)
            var stored = release
            stored.id = id
            return stored
        }
    }

    public func release(id: Int) throws -> ReleaseRecord? {
        try reading { db in try Self.release(db, id: id) }
    }

    public func releases() throws -> [ReleaseRecord] {
        try reading { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.releaseColumns) FROM releases ORDER BY id DESC").map(Self.releaseRecord)
        }
    }

    public func recordReleaseTests(id: Int, tests: String, passed: Bool, base: [String: Int]) throws -> ReleaseRecord? {
        try writing { db in
            guard let release = try Self.release(db, id: id) else { return nil }
            guard [.draft, .failed, .ready].contains(release.state) else {
                throw ReleaseConflict("release-state", "Release \(id) is \(release.state.rawValue); its tests run only before it goes live.")
            }
            try db.execute(sql: "UPDATE releases SET tests = ?, state = ?, base = ? WHERE id = ?",
                           arguments: [tests, (passed ? ReleaseState.ready : .failed).rawValue, ReleaseRules.encode(base), id])
            return try Self.release(db, id: id)
        }
    }

    public func approveRelease(id: Int, audit: AuditStamp) throws -> ReleaseRecord? {
        try writing { db in
            guard let release = try Self.release(db, id: id) else { return nil }
            guard [.draft, .failed, .ready].contains(release.state) else {
                throw ReleaseConflict("release-state", "Release \(id) is \(release.state.rawValue); only a release not yet live is approved.")
            }
            guard release.createdBy != audit.credential else {
                throw ReleaseConflict("self-approval", "Release \(id) was made by \(audit.credential); another identity must approve it.")
            }
            try db.execute(sql: "UPDATE releases SET approved_by = ? WHERE id = ?", arguments: [audit.credential, id])
            try Self.appendAudit(db, at: Timestamp.string(), action: AuditAction.releaseApprove, subject: String(id), old: nil, new: nil, audit)
            return try Self.release(db, id: id)
        }
    }

    public func activateRelease(id: Int, rules: ReleaseActivationRules, audit: AuditStamp) throws -> ReleaseRecord? {
        try writing { db in
            guard let release = try Self.release(db, id: id) else { return nil }
            var live: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT name, version FROM live_flows") { live[try row.decode(atIndex: 0)] = try row.decode(atIndex: 1) }
            try ReleaseRules.checkActivation(release, live: live, rules: rules)
            let now = Timestamp.string()
            let stamp = AuditStamp(credential: audit.credential, detail: "release \(id)")
            var previous = ReleasePrevious()
            for (name, version) in release.versions.sorted(by: { $0.key < $1.key }) {
                previous.flows[name] = .some(live[name])
                try Self.setLive(db, name: name, version: version, at: now)
                try Self.appendAudit(db, at: now, action: AuditAction.flowActivate, subject: name, old: live[name], new: version, stamp)
            }
            for (kind, texts) in [(KeyedDefinitionKind.flag, release.flags), (.experiment, release.experiments)] {
                for (key, text) in texts.sorted(by: { $0.key < $1.key }) {
                    let before = try Row.fetchOne(db, sql: "SELECT definition, revision FROM \(kind.rawValue) WHERE key = ?", arguments: [key])
                    let oldText: String? = before?[0]
                    if kind == .flag { previous.flags[key] = .some(oldText) } else { previous.experiments[key] = .some(oldText) }
                    try Self.putKeyed(db, kind, key: key, text: text, at: now, old: before?[1], stamp)
                }
            }
            try db.execute(sql: "UPDATE releases SET state = ?, previous = ?, activated_by = ?, activated_at = ? WHERE id = ?",
                           arguments: [ReleaseState.live.rawValue, ReleaseRules.encode(previous), audit.credential, now, id])
            try Self.appendAudit(db, at: now, action: AuditAction.releaseActivate, subject: String(id), old: nil, new: nil, audit)
            return try Self.release(db, id: id)
        }
    }

    public func beginReleaseRollout(id: Int, rules: ReleaseActivationRules, audit: AuditStamp) throws -> ReleaseRecord? {
        try writing { db in
            guard let release = try Self.release(db, id: id) else { return nil }
            guard release.state != .rollingOut else {
                throw ReleaseConflict("release-state", "Release \(id) is rolling out already.")
            }
            var live: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT name, version FROM live_flows") { live[try row.decode(atIndex: 0)] = try row.decode(atIndex: 1) }
            try ReleaseRules.checkActivation(release, live: live, rules: rules)
            let now = Timestamp.string()
            try db.execute(sql: "UPDATE releases SET state = ?, activated_by = ?, activated_at = ? WHERE id = ?",
                           arguments: [ReleaseState.rollingOut.rawValue, audit.credential, now, id])
            try Self.appendAudit(db, at: now, action: AuditAction.releaseRollout, subject: String(id), old: nil, new: nil, audit)
            return try Self.release(db, id: id)
        }
    }

    public func rollbackRelease(id: Int, reason: String?, stopped: [String: String], audit: AuditStamp) throws -> ReleaseRecord? {
        try writing { db in
            guard let release = try Self.release(db, id: id) else { return nil }
            if release.state == .rollingOut {
                // Nothing of it was made live for everybody: only its state changes.
                let now = Timestamp.string()
                try db.execute(sql: "UPDATE releases SET state = ?, rolled_back_at = ?, reason = ? WHERE id = ?",
                               arguments: [ReleaseState.rolledBack.rawValue, now, reason, id])
                try Self.appendAudit(db, at: now, action: AuditAction.releaseRollback, subject: String(id), old: nil, new: nil,
                                     AuditStamp(credential: audit.credential, detail: audit.detail ?? reason))
                return try Self.release(db, id: id)
            }
            var live: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT name, version FROM live_flows") { live[try row.decode(atIndex: 0)] = try row.decode(atIndex: 1) }
            var current: [KeyedDefinitionKind: [String: String]] = [:]
            for kind in [KeyedDefinitionKind.flag, .experiment] {
                for row in try Row.fetchAll(db, sql: "SELECT key, definition FROM \(kind.rawValue)") { current[kind, default: [:]][try row.decode(atIndex: 0)] = try row.decode(atIndex: 1) }
            }
            try ReleaseRules.checkRollback(release, live: live, flags: current[.flag] ?? [:], experiments: current[.experiment] ?? [:])
            let previous = release.previous ?? ReleasePrevious()
            let now = Timestamp.string()
            let stamp = AuditStamp(credential: audit.credential, detail: "rollback of release \(id)")
            for name in release.versions.keys.sorted() {
                if let before = previous.flows[name] ?? nil {
                    try Self.setLive(db, name: name, version: before, at: now)
                    try Self.appendAudit(db, at: now, action: AuditAction.flowActivate, subject: name, old: live[name], new: before, stamp)
                } else {
                    try db.execute(sql: "DELETE FROM live_flows WHERE name = ?", arguments: [name])
                    try Self.appendAudit(db, at: now, action: AuditAction.flowActivate, subject: name, old: live[name], new: nil, stamp)
                }
            }
            for (kind, texts, before) in [(KeyedDefinitionKind.flag, release.flags, previous.flags),
                                          (.experiment, release.experiments, previous.experiments)] {
                for key in texts.keys.sorted() {
                    let revision = try Int.fetchOne(db, sql: "SELECT revision FROM \(kind.rawValue) WHERE key = ?", arguments: [key])
                    if let text = before[key] ?? nil {
                        try Self.putKeyed(db, kind, key: key, text: text, at: now, old: revision, stamp)
                    } else if kind == .experiment {
                        try Self.putKeyed(db, kind, key: key, text: stopped[key] ?? texts[key] ?? "{}", at: now, old: revision, stamp)
                    } else {
                        try db.execute(sql: "DELETE FROM flags WHERE key = ?", arguments: [key])
                        try Self.appendAudit(db, at: now, action: "flag.delete", subject: key, old: revision, new: nil, stamp)
                    }
                }
            }
            try db.execute(sql: "UPDATE releases SET state = ?, rolled_back_at = ?, reason = ? WHERE id = ?",
                           arguments: [ReleaseState.rolledBack.rawValue, now, reason, id])
            try Self.appendAudit(db, at: now, action: AuditAction.releaseRollback, subject: String(id), old: nil, new: nil,
                                 AuditStamp(credential: audit.credential, detail: audit.detail ?? reason))
            return try Self.release(db, id: id)
        }
    }

    /// Puts a flag's or experiment's text as its next revision, audited, in the caller's transaction.
    private static func putKeyed(_ db: Database, _ kind: KeyedDefinitionKind, key: String, text: String, at now: String,
                                 old: Int?, _ stamp: AuditStamp) throws {
        try db.execute(sql: """
            INSERT INTO \(kind.rawValue) (key, definition, revision, updated_at) VALUES (?, ?, ?, ?)
            ON CONFLICT (key) DO UPDATE SET definition = excluded.definition, revision = excluded.revision,
                updated_at = excluded.updated_at
            """, arguments: [key, text, (old ?? 0) + 1, now])
        try appendAudit(db, at: now, action: AuditAction.put(kind), subject: key, old: old, new: (old ?? 0) + 1, stamp)
    }

    private static func release(_ db: Database, id: Int) throws -> ReleaseRecord? {
        try Row.fetchOne(db, sql: "SELECT \(releaseColumns) FROM releases WHERE id = ?", arguments: [id]).map(releaseRecord)
    }

    private static func releaseRecord(_ row: Row) throws -> ReleaseRecord {
        try ReleaseRecord(id: row.decode(atIndex: 0)) { column in row[column] }
    }
}
