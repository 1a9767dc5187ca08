// Strings and bytes bound by the commit's direct statements are stored as GRDB stores them:
// text and blobs, byte for byte, the empty string as '' and no bytes as an empty blob (not
// NULL), nil as NULL.
import Foundation
import GRDB
@testable import SQLiteStore
import StoreTestSupport
import Testing

@Suite("Direct statements (SQLite)")
struct DirectStatementTests {
    @Test func stringsAreStoredAsTextByteForByte() throws {
        // Short strings (stored inside the String), long ones, non-ASCII.
        let values: [String?] = ["", "a", "s_In7JN-cAYgZev5-QzNYvpQ", String(repeating: "long text, ", count: 40),
                                 "Grüße, 東京 🚀", nil]
        let rows = try Self.stored(values.count, column: "TEXT", columns: "typeof(value), value, length(CAST(value AS BLOB))") {
            try $0.bind(values[$1], at: 2)
        }
        for (value, row) in zip(values, rows) {
            #expect(row[0] == (value == nil ? "null" : "text"), "\(String(describing: value))")
            #expect(row[1] as String? == value)
            #expect(row[2] as Int? == value.map { $0.utf8.count })
        }
    }

    /// Texts bound from an arena are stored as those bound alone: one the arena has no room
    /// for (the long one, past its 48 bytes) is copied by SQLite instead. The arena is reset
    /// before each row, as the writer resets it before each commit.
    @Test func textsKeptInAnArenaAreStoredByteForByte() throws {
        let values: [String?] = ["", "a", "s_In7JN-cAYgZev5-QzNYvpQ", String(repeating: "long text, ", count: 40),
                                 "Grüße, 東京 🚀", nil, "0123456789abcdef0123456789abcdef"]
        let texts = BindArena(capacity: 48)
        let rows = try Self.stored(values.count, column: "TEXT", columns: "typeof(value), value, length(CAST(value AS BLOB))") {
            texts.reset()
            try $0.bind(values[$1], at: 2, keptIn: texts)
        }
        for (value, row) in zip(values, rows) {
            #expect(row[0] == (value == nil ? "null" : "text"), "\(String(describing: value))")
            #expect(row[1] as String? == value)
            #expect(row[2] as Int? == value.map { $0.utf8.count })
        }
    }

    /// So are bytes bound from an arena as blobs: none as an empty blob, nil as NULL.
    @Test func bytesKeptInAnArenaAreStoredByteForByte() throws {
        let values: [[UInt8]?] = [[], [0], [0xFF, 0, 0x7F], Array(repeating: 0xAB, count: 5_000), Array(repeating: 9, count: 32), nil]
        let texts = BindArena(capacity: 48)
        let rows = try Self.stored(values.count, column: "BLOB", columns: "typeof(value), value") {
            texts.reset()
            try $0.bind(values[$1], at: 2, keptIn: texts)
        }
        for (value, row) in zip(values, rows) {
            #expect(row[0] == (value == nil ? "null" : "blob"), "\(String(describing: value))")
            #expect((row[1] as Data?).map { [UInt8]($0) } == value)
        }
    }

    /// Several values of one row from one arena, without a reset between them: each keeps its
    /// own bytes, one that does not fit is copied by SQLite, one fills the arena to its last
    /// byte, and an empty one after it still binds as "".
    @Test func severalValuesOfARowShareAnArena() throws {
        let database = try TestDatabase(kind: .sqlite)
        let store = try database.migratedSQLiteStore()
        defer { withExtendedLifetime(database) { try? store.close() } }
        let values = ["abcd", "0123456789", "efgh", ""]
        let row = try store.pool.write { db in
            try db.execute(sql: "CREATE TEMP TABLE bound (a TEXT, b TEXT, c TEXT, d TEXT)")
            let insert = DirectStatement(try db.makeStatement(sql: "INSERT INTO bound VALUES (?, ?, ?, ?)"), in: db)
            let arena = BindArena(capacity: 8)
            defer { insert.clearBindings() }
            for (index, value) in values.enumerated() { try insert.bind(value, at: CInt(index + 1), keptIn: arena) }
            try insert.run()
            return try Row.fetchOne(db, sql: "SELECT a, b, c, d, typeof(d) FROM bound")
        }
        #expect(row?[0] == "abcd" && row?[1] == "0123456789" && row?[2] == "efgh")
        #expect(row?[3] == "" && row?[4] == "text")
    }

    /// An arena hands out each text after the one before, until it is full or reset.
    @Test func anArenaKeepsTextsUntilFull() throws {
        let texts = BindArena(capacity: 10)
        func keep(_ text: String) -> (start: UnsafePointer<CChar>, count: CInt)? {
            var text = text
            return text.withUTF8 { texts.keep($0) }
        }
        let first = try #require(keep("abcd")), second = try #require(keep("efgh"))
        #expect(first.count == 4 && second.count == 4)
        #expect(second.start == first.start + 4)
        #expect(String(decoding: UnsafeRawBufferPointer(start: first.start, count: 8), as: UTF8.self) == "abcdefgh")
        #expect(keep("ijk") == nil)  // 3 more than the 2 left
        #expect(keep("")?.count == 0)
        texts.reset()
        #expect(keep("ijk")?.start == first.start)
    }

    @Test func bytesAreStoredAsBlobsByteForByte() throws {
        let values: [[UInt8]?] = [[], [0], [0xFF, 0, 0x7F], Array(repeating: 0xAB, count: 5_000), Array("{\"a\":1}".utf8), nil]
        let rows = try Self.stored(values.count, column: "BLOB", columns: "typeof(value), value") { try $0.bind(values[$1], at: 2) }
        for (value, row) in zip(values, rows) {
            #expect(row[0] == (value == nil ? "null" : "blob"), "\(String(describing: value))")
            #expect((row[1] as Data?).map { [UInt8]($0) } == value)
        }
    }

    /// Inserts `count` rows into a temporary table whose `value` column has type `column`, each
    /// through one direct statement that `bind` binds value `n` into (parameter 2), and reads
    /// `columns` of each row back in order, on a migrated SQLite store's writer.
    /// `insert()` answers the rowid the insert gave, as GRDB's `lastInsertedRowID` does, also
    /// when SQLite picks rowids out of order; a refused insert throws its constraint.
    @Test func insertsAnswerTheirRowids() throws {
        let database = try TestDatabase(kind: .sqlite)
        let store = try database.migratedSQLiteStore()
        defer { withExtendedLifetime(database) { try? store.close() } }
        try store.pool.write { db in
            try db.execute(sql: "CREATE TEMP TABLE rows (id INTEGER PRIMARY KEY, value TEXT UNIQUE)")
            let insert = DirectStatement(try db.makeStatement(sql: "INSERT INTO rows (id, value) VALUES (?, ?)"), in: db)
            for (id, value) in [(Int64?.none, "a"), (41, "b"), (nil, "c"), (7, "d"), (nil, "e")] {
                try insert.bind(id, at: 1)
                try insert.bind(value, at: 2)
                let rowid = try insert.insert()
                #expect(rowid == db.lastInsertedRowID)
                #expect(try Int64.fetchOne(db, sql: "SELECT id FROM rows WHERE value = ?", arguments: [value]) == rowid)
                if let id { #expect(rowid == id) }
            }
            try insert.bind(Int64?.none, at: 1)
            try insert.bind("a", at: 2)
            #expect { try insert.insert() } throws: { ($0 as? DatabaseError)?.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE }
        }
    }

    static func stored(_ count: Int, column: String, columns: String,
                       bind: (DirectStatement, Int) throws -> Void) throws -> [Row] {
        let database = try TestDatabase(kind: .sqlite)
        let store = try database.migratedSQLiteStore()
        defer { withExtendedLifetime(database) { try? store.close() } }
        return try store.pool.write { db in
            try db.execute(sql: "CREATE TEMP TABLE bound (n INTEGER, value \(column))")
            let insert = DirectStatement(try db.makeStatement(sql: "INSERT INTO bound (n, value) VALUES (?, ?)"), in: db)
            for n in 0..<count {
                try insert.bind(n, at: 1)
                try bind(insert, n)
                try insert.run()
            }
            return try Row.fetchAll(db, sql: "SELECT \(columns) FROM bound ORDER BY n")
        }
    }
}
