// What the server needs from storage: the roles of a store, composed into the one that
// SQLiteStore and PostgresStore implement.
import Foundation

/// How much a committed transaction survives. Each store says what the two levels mean on it.
public enum Durability: String, Sendable, CaseIterable {
    /// SQLite: WAL with `synchronous=NORMAL`, a commit survives a crash of the process, not a
    /// power loss. PostgreSQL: `synchronous_commit = on`, a commit is flushed to the server's WAL
    /// (and to a synchronous standby's, where the operator runs one) before it is acknowledged.
    case normal
    /// SQLite: `synchronous=FULL`, every commit is fsynced and survives a power loss.
    /// PostgreSQL: `synchronous_commit = remote_apply`, a synchronous standby has also applied it.
    case full
}

/// The database of a FlowStack server: every role a store plays, in one.
///
/// A store is read and written through its roles, one protocol each (Temporal splits its
/// persistence the same way): ``SessionRecordStore`` (sessions, their action log and
/// idempotent answers), ``StreamTicketStore``, ``UserDataStore`` (user state, erasure and
/// export), ``DefinitionStore`` (flow versions, flags, experiments), ``KeyStore`` (client and
/// admin keys), ``ReleaseStore``, ``RolloutStore``, ``AuditStore``, ``RetentionStore``, and
/// ``StoreLifecycle`` (schema, health, closing). A service asks for the roles it uses
/// (`any SessionRecordStore & AuditStore`), so its type says what it may touch; only what opens,
/// migrates and wires a store together needs the whole of it, and asks for `any FlowStore`.
///
/// `SQLiteStore` (one file, the embedded default) and `PostgresStore` (one database shared by
/// several nodes) play every role. The database, not the process, guards the invariants: a log
/// entry's key is `(session_id, version)`, a version is written only on top of version − 1, an
/// `Idempotency-Key` is stored once per session. Each role has one conformance suite in
/// `Tests/FlowStoreTests`, run on both databases.
///
/// ```swift
/// let store: any FlowStore = try SQLiteStore(path: "./flowstack.sqlite")
/// try store.migrate()            // applies the bundled migrations of its dialect not yet applied
/// let sessions: any SessionRecordStore = store   // what a session service is given
/// ```
public protocol FlowStore: StoreLifecycle, SessionRecordStore, StreamTicketStore, UserDataStore, DefinitionStore,
    KeyStore, ReleaseStore, RolloutStore, AuditStore, RetentionStore {}

/// The SQL dialect of a store, which names its folder of migrations (`migrations/sqlite/`).
public enum SQLDialect: String, Sendable, CaseIterable {
    case sqlite
    case postgresql
}

/// The time format of every stored time: ISO 8601 UTC with milliseconds.
public enum Timestamp {
    /// Now, or `date`, as stored.
    public static func string(_ date: Date = Date()) -> String {
        written(date) ?? style.format(date)
    }

    /// Made once: every action is stamped, and making the style cost a third of formatting.
    static let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// `date` as `style` writes it ("2026-11-30T09:41:07.123Z"), for the years 1970 to 9999;
    /// nil outside them. Every action is stamped on the HTTP thread, and the style, going
    /// through a calendar's components, cost 0.8% of the server's CPU per action under load.
    /// Milliseconds are truncated, as the style truncates them (checked against it on random
    /// and boundary times in `TimestampTests`).
    static func written(_ date: Date) -> String? {
        guard let milliseconds = milliseconds(date) else { return nil }
        return string(days: milliseconds / 86_400_000, millisecondOfDay: milliseconds % 86_400_000)
    }

    /// `date` in milliseconds since 1970, truncated as the stored form writes it, for the years
    /// 1970 to 9999; nil outside them. A session's id carries its creation time so (`SessionIdentifier`).
    public static func milliseconds(_ date: Date) -> Int? {
        let time = date.timeIntervalSince1970
        guard time >= 0, time < 253_402_300_800 else { return nil }
        let whole = time.rounded(.down)
        return Int(whole) * 1000 + Int(((time - whole) * 1000).rounded(.down))
    }

    /// The stored form of the time `millisecondOfDay` (0 to 86,399,999) into the day `days`
    /// counted from 1970-01-01; nil outside the years 0001 to 9999, which four digits write.
    public static func string(days: Int, millisecondOfDay: Int) -> String? {
        let (year, month, day) = civil(days: days)
        guard (1...9999).contains(year), (0..<86_400_000).contains(millisecondOfDay) else { return nil }
        let seconds = millisecondOfDay / 1000
        return String(unsafeUninitializedCapacity: 24) { bytes in
            func put(_ value: Int, at start: Int, digits: Int) {
                var value = value
                for index in stride(from: start + digits - 1, through: start, by: -1) {
                    bytes[index] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
            }
            put(year, at: 0, digits: 4)
            bytes[4] = UInt8(ascii: "-")
            put(month, at: 5, digits: 2)
            bytes[7] = UInt8(ascii: "-")
            put(day, at: 8, digits: 2)
            bytes[10] = UInt8(ascii: "T")
            put(seconds / 3600, at: 11, digits: 2)
            bytes[13] = UInt8(ascii: ":")
            put(seconds % 3600 / 60, at: 14, digits: 2)
            bytes[16] = UInt8(ascii: ":")
            put(seconds % 60, at: 17, digits: 2)
            bytes[19] = UInt8(ascii: ".")
            put(millisecondOfDay % 1000, at: 20, digits: 3)
            bytes[23] = UInt8(ascii: "Z")
            return 24
        }
    }

    /// The proleptic Gregorian date of a day counted from 1970-01-01 (day 0, earlier days
    /// negative): Howard Hinnant's `civil_from_days`, in 400-year eras of 146,097 days.
    public static func civil(days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468  // from 0000-03-01, so a leap day ends its year
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
