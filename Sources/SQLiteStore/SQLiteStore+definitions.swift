// Versioned flow definitions, flags and experiments, stored as the JSON their authors wrote.
import Foundation
import FlowStore
import GRDB

extension SQLiteStore {
    // MARK: Flow versions

    /// Stores `definition` as the next version of flow `name` (1 for a new flow); when
    /// `activate`, it becomes the live version in the same transaction. Returns the version.
    public func addFlowVersion(name: String, definition: String, activate: Bool, audit: AuditStamp?) throws -> FlowVersionStamp {
        try writing { db in
            let latest = try Int.fetchOne(db, sql: "SELECT MAX(version) FROM flow_versions WHERE name = ?", arguments: [name])
            let next = (latest ?? 0) + 1
            let now = Timestamp.string()
            try db.execute(sql: "INSERT INTO flow_versions (name, version, definition, created_at) VALUES (?, ?, ?, ?)",
                           arguments: [name, next, definition, now])
            if let audit {
                try Self.appendAudit(db, at: now, action: AuditAction.flowPut, subject: name, old: latest, new: next, audit)
            }
            if activate {
                let live = try Self.liveVersion(db, name: name)
                try Self.setLive(db, name: name, version: next, at: now)
                if let audit {
                    try Self.appendAudit(db, at: now, action: AuditAction.flowActivate, subject: name, old: live, new: next, audit)
                }
            }
            return FlowVersionStamp(name: name, version: next, createdAt: now)
        }
    }

    /// Makes version `version` of flow `name` live; false when that version does not exist.
    public func activateFlow(name: String, version: Int, audit: AuditStamp?) throws -> Bool {
        try writing { db in
            guard try Int.fetchOne(db, sql: "SELECT 1 FROM flow_versions WHERE name = ? AND version = ?",
                                   arguments: [name, version]) != nil else { return false }
            let live = try Self.liveVersion(db, name: name)
            let now = Timestamp.string()
            try Self.setLive(db, name: name, version: version, at: now)
            if let audit {
                try Self.appendAudit(db, at: now, action: AuditAction.flowActivate, subject: name, old: live, new: version, audit)
            }
            return true
        }
    }

    static func liveVersion(_ db: Database, name: String) throws -> Int? {
        try Int.fetchOne(db, sql: "SELECT version FROM live_flows WHERE name = ?", arguments: [name])
    }

    /// Makes a version live and records the activation in the history, in the caller's transaction.
    static func setLive(_ db: Database, name: String, version: Int, at time: String) throws {
        try db.execute(sql: """
            INSERT INTO live_flows (name, version, activated_at) VALUES (?, ?, ?)
            ON CONFLICT (name) DO UPDATE SET version = excluded.version, activated_at = excluded.activated_at
            """, arguments: [name, version, time])
        try db.execute(sql: """
            INSERT INTO flow_activations (name, version, first_activated_at, last_activated_at) VALUES (?, ?, ?, ?)
            ON CONFLICT (name, version) DO UPDATE SET last_activated_at = excluded.last_activated_at
            """, arguments: [name, version, time, time])
    }

    /// Every version each flow has ever had live, ascending.
    public func flowActivations() throws -> [String: [Int]] {
        try reading { db in
            var activations: [String: [Int]] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT name, version FROM flow_activations ORDER BY name, version") {
                activations[try row.decode(atIndex: 0), default: []].append(try row.decode(atIndex: 1))
            }
            return activations
        }
    }

    /// One version of a flow, or nil.
    public func flowVersion(name: String, version: Int) throws -> FlowVersionRecord? {
        try reading { db in
            try Row.fetchOne(db, sql: "SELECT name, version, definition, created_at FROM flow_versions WHERE name = ? AND version = ?",
                             arguments: [name, version]).map(Self.flowVersionRecord)
        }
    }

    /// Every stored flow version (definitions are small and few; the server keeps them all).
    public func allFlowVersions() throws -> [FlowVersionRecord] {
        try reading { db in
            try Row.fetchAll(db, sql: "SELECT name, version, definition, created_at FROM flow_versions ORDER BY name, version")
                .map(Self.flowVersionRecord)
        }
    }

    /// Every stored flow version's name, version and time, without the texts.
    public func flowVersionStamps() throws -> [FlowVersionStamp] {
        try reading { db in
            try Row.fetchAll(db, sql: "SELECT name, version, created_at FROM flow_versions ORDER BY name, version").map { row in
                try FlowVersionStamp(name: row.decode(atIndex: 0), version: row.decode(atIndex: 1), createdAt: row.decode(atIndex: 2))
            }
        }
    }

    /// None: this process is the only writer of the file, and follows its own changes; a
    /// release's reload reads the stamps, a local read.
    public func flowVersionChanges(since mark: FlowVersionMark?) throws -> FlowVersionChanges? { nil }

    /// The live version of each flow, by name.
    public func liveFlowVersions() throws -> [String: Int] {
        try reading { db in
            var live: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT name, version FROM live_flows") { live[try row.decode(atIndex: 0)] = try row.decode(atIndex: 1) }
            return live
        }
    }

    private static func flowVersionRecord(_ row: Row) throws -> FlowVersionRecord {
        try FlowVersionRecord(name: row.decode(atIndex: 0), version: row.decode(atIndex: 1), definition: row.decode(atIndex: 2), createdAt: row.decode(atIndex: 3))
    }

    // MARK: Flags and experiments

    /// Stores the definition of `key`, replacing any earlier one; returns the new revision.
    public func putDefinition(_ kind: KeyedDefinitionKind, key: String, definition: String, audit: AuditStamp?) throws -> Int {
        try writing { db in
            let previous = try Int.fetchOne(db, sql: "SELECT revision FROM \(kind.rawValue) WHERE key = ?", arguments: [key])
            let revision = (previous ?? 0) + 1
            let now = Timestamp.string()
            try db.execute(sql: """
                INSERT INTO \(kind.rawValue) (key, definition, revision, updated_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (key) DO UPDATE SET definition = excluded.definition, revision = excluded.revision,
                    updated_at = excluded.updated_at
                """, arguments: [key, definition, revision, now])
            if let audit {
                try Self.appendAudit(db, at: now, action: AuditAction.put(kind), subject: key, old: previous, new: revision, audit)
            }
            return revision
        }
    }

    /// A lifecycle change of experiment `key`: compare-and-set on its revision, and the flows of
    /// `activating` made live, all in one transaction.
    public func changeExperiment(key: String, definition: String, revision: Int, activating: [String: Int],
                                 audit: AuditStamp?) throws -> Int? {
        try writing { db in
            guard let stored = try Int.fetchOne(db, sql: "SELECT revision FROM experiments WHERE key = ?", arguments: [key]),
                  stored == revision else { return nil }
            let now = Timestamp.string()
            try db.execute(sql: "UPDATE experiments SET definition = ?, revision = ?, updated_at = ? WHERE key = ?",
                           arguments: [definition, revision + 1, now, key])
            if let audit {
                try Self.appendAudit(db, at: now, action: audit.action ?? AuditAction.put(.experiment), subject: key,
                                     old: revision, new: revision + 1, audit)
            }
            for (name, version) in activating.sorted(by: { $0.key < $1.key }) {
                guard try Int.fetchOne(db, sql: "SELECT 1 FROM flow_versions WHERE name = ? AND version = ?",
                                       arguments: [name, version]) != nil else { continue }
                let live = try Self.liveVersion(db, name: name)
                guard live != version else { continue }
                try Self.setLive(db, name: name, version: version, at: now)
                if let audit {
                    try Self.appendAudit(db, at: now, action: AuditAction.flowActivate, subject: name, old: live, new: version, audit)
                }
            }
            return revision + 1
        }
    }

    /// Stores the definition of `key` only when there is none yet (to seed shipped defaults).
    public func seedDefinition(_ kind: KeyedDefinitionKind, key: String, definition: String) throws {
        try writing { db in
            try db.execute(sql: """
                INSERT INTO \(kind.rawValue) (key, definition, revision, updated_at) VALUES (?, ?, 1, ?)
                ON CONFLICT (key) DO NOTHING
                """, arguments: [key, definition, Timestamp.string()])
        }
    }

    /// Every definition of a kind, by key order.
    public func allDefinitions(_ kind: KeyedDefinitionKind) throws -> [KeyedDefinitionRecord] {
        try reading { db in
            try Row.fetchAll(db, sql: "SELECT key, definition, revision, updated_at FROM \(kind.rawValue) ORDER BY key")
                .map { KeyedDefinitionRecord(key: try $0.decode(atIndex: 0), definition: try $0.decode(atIndex: 1), revision: try $0.decode(atIndex: 2), updatedAt: try $0.decode(atIndex: 3)) }
        }
    }

    /// Seeds flow `name` as version 1, live, when the store has no version of it yet.
    public func seedFlow(name: String, definition: String) throws {
        try writing { db in
            guard try Int.fetchOne(db, sql: "SELECT 1 FROM flow_versions WHERE name = ? LIMIT 1", arguments: [name]) == nil else { return }
            let now = Timestamp.string()
            try db.execute(sql: "INSERT INTO flow_versions (name, version, definition, created_at) VALUES (?, 1, ?, ?)",
                           arguments: [name, definition, now])
            try Self.setLive(db, name: name, version: 1, at: now)
        }
    }

    public func definitionsFingerprint() throws -> String {
        try reading { db in
            try String.fetchOne(db, sql: """
                SELECT (SELECT count(*) || ':' || coalesce(max(created_at), '') FROM flow_versions) || '|' ||
                       (SELECT coalesce(group_concat(name || ':' || version, ','), '') FROM (SELECT name, version FROM live_flows ORDER BY name)) || '|' ||
                       (SELECT count(*) || ':' || coalesce(sum(revision), 0) FROM flags) || '|' ||
                       (SELECT count(*) || ':' || coalesce(sum(revision), 0) FROM experiments) || '|' ||
                       (SELECT count(*) FROM flow_activations) || '|' ||
                       (SELECT count(*) || ':' || coalesce(max(coalesce(rolled_back_at, activated_at, '')), '') FROM releases)
                """) ?? ""
        }
    }

    // MARK: Experiment report

    /// Per variant of `experiment`: sessions exposed, distinct users who completed onboarding in
    /// those sessions, and per feature the sessions that showed it on top.
    public func experimentReport(_ experiment: String) throws -> [String: ExperimentVariantCounts] {
        try reading { db in
            var report: [String: ExperimentVariantCounts] = [:]
            for row in try Row.fetchAll(db, sql: """
                SELECT variant, COUNT(*), COUNT(DISTINCT CASE WHEN onboarded = 1 THEN user_id END)
                FROM exposures WHERE experiment = ? GROUP BY variant
                """, arguments: [experiment]) {
                report[try row.decode(atIndex: 0)] = ExperimentVariantCounts(sessions: try row.decode(atIndex: 1), onboarded: try row.decode(atIndex: 2))
            }
            for row in try Row.fetchAll(db, sql: """
                SELECT variant, COUNT(*) FROM experiment_exclusions WHERE experiment = ? GROUP BY variant
                """, arguments: [experiment]) {
                let variant: String = try row.decode(atIndex: 0)
                report[variant, default: ExperimentVariantCounts()].excluded = try row.decode(atIndex: 1)
            }
            for row in try Row.fetchAll(db, sql: """
                SELECT e.variant, f.feature, COUNT(*)
                FROM exposures e JOIN session_features f ON f.session_id = e.session_id
                WHERE e.experiment = ? GROUP BY e.variant, f.feature
                """, arguments: [experiment]) {
                let variant: String = try row.decode(atIndex: 0)
                report[variant, default: ExperimentVariantCounts()].funnel[try row.decode(atIndex: 1)] = try row.decode(atIndex: 2)
            }
            return report
        }
    }
}

extension SQLiteStore {
    // MARK: Audit log

    /// Appends one entry inside the caller's write transaction: it commits with the change or
    /// not at all. One writer at a time, so ids grow in commit order.
    static func appendAudit(_ db: Database, at time: String, action: String, subject: String, old: Int?, new: Int?,
                            _ stamp: AuditStamp) throws {
        try db.execute(sql: """
            INSERT INTO audit_log (at, action, subject, old_version, new_version, credential, detail) VALUES (?, ?, ?, ?, ?, ?, ?)
            """, arguments: [time, action, subject, old, new, stamp.credential, stamp.detail])
    }

    public func auditLog(after: Int, limit: Int) throws -> [AuditRecord] {
        try reading { db in
            try Row.fetchAll(db, sql: """
                SELECT id, at, action, subject, old_version, new_version, credential, detail FROM audit_log
                WHERE id > ? ORDER BY id LIMIT ?
                """, arguments: [after, limit]).map {
                AuditRecord(id: try $0.decode(atIndex: 0), at: try $0.decode(atIndex: 1), action: try $0.decode(atIndex: 2), subject: try $0.decode(atIndex: 3), oldVersion: try $0.decode(atIndex: 4), newVersion: try $0.decode(atIndex: 5), credential: try $0.decode(atIndex: 6),
                            detail: try $0.decode(atIndex: 7))
            }
        }
    }
}
