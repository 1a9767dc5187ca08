// Releases as the store keeps them: a set of flow versions, flag and experiment definitions,
// made, tested and activated together, and rolled back together.
import Foundation

/// The states of a release. `draft`: made, never tested; `failed`/`ready`: its last test run
/// failed/passed; `live`: activated; `rolling-out`: live for part of new sessions (rollouts);
/// `rolled-back`: what was live before it is live again.
public enum ReleaseState: String, Sendable, CaseIterable {
    case draft
    case failed
    case ready
    case live
    case rollingOut = "rolling-out"
    case rolledBack = "rolled-back"
}

/// What was live before a release was activated, so that rollback restores it: per flow its
/// live version (nil: none), per flag and experiment the definition text (nil: none).
public struct ReleasePrevious: Sendable, Equatable, Codable {
    public var flows: [String: Int?]
    public var flags: [String: String?]
    public var experiments: [String: String?]

    public init(flows: [String: Int?] = [:], flags: [String: String?] = [:], experiments: [String: String?] = [:]) {
        self.flows = flows
        self.flags = flags
        self.experiments = experiments
    }
}

/// A stored release.
public struct ReleaseRecord: Sendable, Equatable {
    public var id: Int
    public var description: String
    public var state: ReleaseState
    /// The submitted document as sent.
    public var document: String
    /// The flow versions it makes live, by name.
    public var versions: [String: Int]
    /// Flag and experiment definitions it puts, as texts, by key.
    public var flags: [String: String]
    public var experiments: [String: String]
    /// The live version of every flow when its tests last ran (or when it was made): activation
    /// refuses when what is live moved since, for then its tests no longer describe what goes live.
    public var base: [String: Int]
    public var previous: ReleasePrevious?
    /// The last test run's result (JSON text), nil before any.
    public var tests: String?
    public var createdBy: String
    public var createdAt: String
    public var approvedBy: String?
    public var activatedBy: String?
    public var activatedAt: String?
    public var rolledBackAt: String?
    public var reason: String?
    /// The rollouts branch's JSON, nil otherwise.
    public var rollout: String?

    public init(id: Int = 0, description: String, state: ReleaseState, document: String, versions: [String: Int],
                flags: [String: String], experiments: [String: String], base: [String: Int], previous: ReleasePrevious? = nil,
                tests: String? = nil, createdBy: String, createdAt: String, approvedBy: String? = nil, activatedBy: String? = nil,
                activatedAt: String? = nil, rolledBackAt: String? = nil, reason: String? = nil, rollout: String? = nil) {
        self.id = id
        self.description = description
        self.state = state
        self.document = document
        self.versions = versions
        self.flags = flags
        self.experiments = experiments
        self.base = base
        self.previous = previous
        self.tests = tests
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.approvedBy = approvedBy
        self.activatedBy = activatedBy
        self.activatedAt = activatedAt
        self.rolledBackAt = rolledBackAt
        self.reason = reason
        self.rollout = rollout
    }
}

extension ReleaseRecord {
    /// The columns of a stored release, in the order ``init(id:storedText:)`` reads them: both
    /// stores select these, so the decoding below is written once.
    public static let storedColumns = """
        id, description, state, document, versions, flags, experiments, base, previous, tests, created_by, created_at,
        approved_by, activated_by, activated_at, rolled_back_at, reason, rollout
        """

    /// A release from its row: `id`, then `text(n)` the text of column `n` of ``storedColumns``
    /// (nil for NULL). JSON columns that do not decode read as empty, as a release written by
    /// an older FlowStack may lack them.
    ///
    /// ```swift
    /// let release = try ReleaseRecord(id: row.decode(atIndex: 0)) { row[$0] }    // SQLite
    /// ```
    public init<Failure: Error>(id: Int, storedText text: (Int) throws(Failure) -> String?) throws(Failure) {
        self.init(
            id: id, description: try text(1) ?? "", state: ReleaseState(rawValue: try text(2) ?? "") ?? .draft,
            document: try text(3) ?? "",
            versions: ReleaseRules.decode([String: Int].self, try text(4)) ?? [:],
            flags: ReleaseRules.decode([String: String].self, try text(5)) ?? [:],
            experiments: ReleaseRules.decode([String: String].self, try text(6)) ?? [:],
            base: ReleaseRules.decode([String: Int].self, try text(7)) ?? [:],
            previous: ReleaseRules.decode(ReleasePrevious.self, try text(8)), tests: try text(9), createdBy: try text(10) ?? "",
            createdAt: try text(11) ?? "", approvedBy: try text(12), activatedBy: try text(13), activatedAt: try text(14),
            rolledBackAt: try text(15), reason: try text(16), rollout: try text(17))
    }
}

/// A release change the store refused because of the release's state or what is live now; the
/// server answers 409 with `code`.
public struct ReleaseConflict: Error, Sendable, Equatable, CustomStringConvertible {
    /// `release-state`, `tests-failed`, `release-untested`, `review-required`, `release-stale`,
    /// `release-superseded`, `self-approval` (403).
    public var code: String
    public var detail: String

    public init(_ code: String, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "\(code): \(detail)" }
}

/// What activation requires of a release besides its state.
public struct ReleaseActivationRules: Sendable, Equatable {
    /// A release never tested (`draft`) may go live.
    public var allowUntested: Bool
    /// An approval by another identity is needed.
    public var requireApproval: Bool

    public init(allowUntested: Bool = false, requireApproval: Bool = false) {
        self.allowUntested = allowUntested
        self.requireApproval = requireApproval
    }
}

/// The checks every store makes, in its transaction, on the release and what is live.
public enum ReleaseRules {
    /// Whether `release` may be activated now, given the live flow versions; throws the conflict.
    public static func checkActivation(_ release: ReleaseRecord, live: [String: Int], rules: ReleaseActivationRules) throws {
        switch release.state {
        case .ready: break
        case .rollingOut:
            // Its tests and review were checked when its rollout began; a rollout reaching
            // 100 % activates it fully.
            break
        case .draft:
            guard rules.allowUntested else {
                throw ReleaseConflict("release-untested", "Release \(release.id) has no test run; run POST /v1/releases/\(release.id)/test, or activate with ?untested=true.")
            }
        case .failed:
            throw ReleaseConflict("tests-failed", "Release \(release.id) failed its tests; fix them and make a new release, or re-run them.")
        case .live, .rolledBack:
            throw ReleaseConflict("release-state", "Release \(release.id) is \(release.state.rawValue); only a draft or ready release can be activated.")
        }
        if rules.requireApproval, release.approvedBy == nil, release.state != .rollingOut {
            throw ReleaseConflict("review-required", "This server requires a review: release \(release.id) must be approved by another identity first.")
        }
        if live != release.base {
            let moved = Set(live.keys).union(release.base.keys).filter { live[$0] != release.base[$0] }.sorted()
            throw ReleaseConflict("release-stale", "The live versions of \(moved.joined(separator: ", ")) changed since release \(release.id) was tested; re-run its tests (POST /v1/releases/\(release.id)/test).")
        }
    }

    /// Whether `release` may be rolled back now, given the live flow versions and definitions.
    public static func checkRollback(_ release: ReleaseRecord, live: [String: Int], flags: [String: String],
                                     experiments: [String: String]) throws {
        guard release.state == .live || release.state == .rollingOut else {
            throw ReleaseConflict("release-state", "Release \(release.id) is \(release.state.rawValue); only a live release can be rolled back.")
        }
        // A release rolling out made nothing live for everybody: nothing else can have moved it.
        guard release.state == .live else { return }
        var changed: [String] = []
        for (name, version) in release.versions where live[name] != version { changed.append("flow \(name)") }
        for (key, text) in release.flags where flags[key] != text { changed.append("flag \(key)") }
        for (key, text) in release.experiments where experiments[key] != text { changed.append("experiment \(key)") }
        guard changed.isEmpty else {
            throw ReleaseConflict("release-superseded", "Since release \(release.id) went live, \(changed.sorted().joined(separator: ", ")) changed again; rolling it back would undo those changes too.")
        }
    }

    /// JSON text of a map, sorted by key (stored columns).
    public static func encode<Value: Encodable>(_ value: Value) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    public static func decode<Value: Decodable>(_ type: Value.Type, _ text: String?) -> Value? {
        guard let text else { return nil }
        return try? JSONDecoder().decode(type, from: Data(text.utf8))
    }
}
