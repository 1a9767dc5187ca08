// A stored row that does not read as expected (a NULL, a value of another type, a missing
// column) is an error from the store, on SQLite and PostgreSQL: never a crash.
import FlowStore
import Foundation
import GRDB
@testable import PostgresStore
import SQLiteStore
import StoreTestSupport
import Testing

@Suite("Stored rows that do not read")
struct StoredRowDecodingTests {
    /// SQLite: a NULL written into a NOT NULL column behind the schema's back, and a text where
    /// an integer is stored, make the read throw (GRDB's subscript would trap on either).
    @Test(arguments: [TestStoreKind.sqlite]) func sqliteBadStoredValuesThrow(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        var store: any FlowStore = try database.migratedStore()
        try store.insert(SessionStoreTests.session("null-user"))
        try store.insert(SessionStoreTests.session("text-version"))
        try store.commit(SessionStoreTests.commit("text-version", version: 1))
        try store.close()

        let queue = try DatabaseQueue(path: database.path)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "UPDATE sessions SET version = 'corrupt' WHERE id = 'text-version'")
            // No NOT NULL on these tables any more: as a hand edit or another tool might leave it.
            try db.execute(sql: "PRAGMA writable_schema = ON")
            try db.execute(sql: "UPDATE sqlite_master SET sql = replace(sql, 'NOT NULL', '') WHERE name IN ('sessions', 'actions')")
            try db.execute(sql: "PRAGMA writable_schema = OFF")
        }
        try queue.close()
        let edited = try DatabaseQueue(path: database.path)
        try edited.write { db in
            try db.execute(sql: "UPDATE sessions SET user_id = NULL WHERE id = 'null-user'")
            try db.execute(sql: "UPDATE actions SET type = NULL WHERE session_id = 'text-version'")
        }
        try edited.close()

        store = try database.open()
        #expect(throws: (any Error).self) { try store.session(id: "null-user") }
        #expect(throws: (any Error).self) { try store.session(id: "text-version") }
        // The error (which goes to the log) names the column, never the row's values.
        do {
            _ = try store.session(id: "text-version")
        } catch {
            let text = String(describing: error)
            #expect(text.contains("column") && text.contains("version"), "\(text)")
            #expect(!text.contains("corrupt") && !text.contains("text-version"), "\(text)")
        }
        #expect(throws: (any Error).self) { try store.actions(sessionId: "text-version", after: 0, limit: 10) }
        #expect(try store.sessionCount() == 2, "the store still answers")
        try store.close()
    }

    /// PostgreSQL: a NULL where a value is required makes the read throw instead of reading as
    /// an empty id.
    @Test(arguments: [TestStoreKind.postgresql]) func postgresNullStoredValueThrows(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let store = try database.migratedStore()
        defer { try? store.close() }
        try store.insert(SessionStoreTests.session("null-user"))
        let deadline = ContinuousClock.now + .seconds(10)
        let connection = try PGConnection.connect(uri: database.location, setup: [], deadline: deadline)
        _ = try connection.run([PGStatement("ALTER TABLE sessions ALTER COLUMN user_id DROP NOT NULL"),
                                PGStatement("UPDATE sessions SET user_id = NULL WHERE id = 'null-user'")], deadline: deadline).rows()
        #expect(throws: (any Error).self) { try store.session(id: "null-user") }
        #expect(try store.sessionCount() == 1, "the store still answers")

        // A result with fewer columns than its reader asks for.
        let rows = try connection.run([PGStatement("SELECT 1")], deadline: deadline).rows()[0]
        #expect(rows.columns == 1)
        #expect(throws: PGError.self) { try rows.text(0, 3) }
    }

    /// One round trip may carry the same statement twice on a connection that has not
    /// prepared it yet (a new session's two exposures): it is prepared once, and both run.
    /// Preparing it for each gave 42P05 (the name exists) and a 503 for the request.
    @Test(arguments: [TestStoreKind.postgresql]) func postgresStatementTwiceInOneRoundTrip(_ kind: TestStoreKind) throws {
        let database = try TestDatabase(kind: kind)
        defer { withExtendedLifetime(database) {} }
        let deadline = ContinuousClock.now + .seconds(10)
        let connection = try PGConnection.connect(uri: database.location, setup: [], deadline: deadline)
        let twice = try connection.run([PGStatement("SELECT $1::integer + 1", [.integer(1)]),
                                        PGStatement("SELECT $1::integer + 1", [.integer(2)])], deadline: deadline).rows()
        #expect(twice.map { try? $0.integer(0, 0) } == [2, 3])
        // A Prepare that fails leaves the statement unprepared: the next round trip prepares it
        // again and reports the same error, not a missing statement.
        for _ in 0..<2 {
            let outcome = try connection.run([PGStatement("SELECT $1::integer FROM no_such_table", [.integer(1)])], deadline: deadline)
            #expect(outcome.first?.rows == nil)
        }
        #expect(try connection.run([PGStatement("SELECT $1::integer + 1", [.integer(5)])], deadline: deadline).rows()[0].integer(0, 0) == 6)
    }

    /// Every read of a result is checked: rows and columns out of range, NULLs where a value is
    /// required, and values of the wrong form throw.
    @Test func pgRowsCheckEveryRead() throws {
        let rows = PGRows(values: [["7", nil, "x", "t", "\\x0aff", "\\xz"]], columns: 6)
        #expect(try rows.int(0, 0) == 7)
        #expect(try rows.integer(0, 1) == nil)
        #expect(try rows.string(0, 1) == nil)
        #expect(try rows.boolean(0, 3))
        #expect(try rows.data(0, 4) == [0x0a, 0xff])
        #expect(throws: PGError.self) { try rows.string(1, 0) }  // no second row
        #expect(throws: PGError.self) { try rows.string(0, 6) }  // no seventh column
        #expect(throws: PGError.self) { try rows.string(0, -1) }
        #expect(throws: PGError.self) { try rows.text(0, 1) }  // NULL
        #expect(throws: PGError.self) { try rows.int(0, 1) }
        #expect(throws: PGError.self) { try rows.boolean(0, 1) }
        #expect(throws: PGError.self) { try rows.data(0, 1) }
        #expect(throws: PGError.self) { try rows.integer(0, 2) }  // "x"
        #expect(throws: PGError.self) { try rows.boolean(0, 2) }
        #expect(throws: PGError.self) { try rows.bytes(0, 5) }  // bad hex
        let error = try #require(throws: PGError.self) { try rows.text(0, 1) }
        #expect(error.description == "row 0, column 1 of a PostgreSQL result does not read: NULL where a value is required")
    }
}
