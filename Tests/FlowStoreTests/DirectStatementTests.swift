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
        let database = try TestDatabase(kind: .sqlite)
        let store = try database.migratedSQLiteStore()
        defer { withExtendedLifetime(database) { try? store.close() } }
        // Short strings (stored inside the String), long ones, non-ASCII.
        let values: [String?] = ["", "a", "s_In7JN-cAYgZev5-QzNYvpQ", String(repeating: "long text, ", count: 40),
                                 "Grüße, 東京 🚀", nil]
        let stored = try store.pool.write { db -> [(type: String, text: String?, length: Int?)] in
            try db.execute(sql: "CREATE TEMP TABLE bound (n INTEGER, value TEXT)")
            let insert = DirectStatement(try db.makeStatement(sql: "INSERT INTO bound (n, value) VALUES (?, ?)"), in: db)
            for (n, value) in values.enumerated() {
                try insert.bind(n, at: 1)
                try insert.bind(value, at: 2)
                try insert.run()
            }
            return try Row.fetchAll(db, sql: "SELECT typeof(value), value, length(CAST(value AS BLOB)) FROM bound ORDER BY n").map {
                ($0[0], $0[1], $0[2])
            }
        }
        for (value, row) in zip(values, stored) {
            #expect(row.type == (value == nil ? "null" : "text"), "\(String(describing: value))")
            #expect(row.text == value)
            #expect(row.length == value.map { $0.utf8.count })
        }
    }

    @Test func bytesAreStoredAsBlobsByteForByte() throws {
        let database = try TestDatabase(kind: .sqlite)
        let store = try database.migratedSQLiteStore()
        defer { withExtendedLifetime(database) { try? store.close() } }
        let values: [[UInt8]?] = [[], [0], [0xFF, 0, 0x7F], Array(repeating: 0xAB, count: 5_000), Array("{\"a\":1}".utf8), nil]
        let stored = try store.pool.write { db -> [(type: String, bytes: [UInt8]?)] in
            try db.execute(sql: "CREATE TEMP TABLE bound (n INTEGER, value BLOB)")
            let insert = DirectStatement(try db.makeStatement(sql: "INSERT INTO bound (n, value) VALUES (?, ?)"), in: db)
            for (n, value) in values.enumerated() {
                try insert.bind(n, at: 1)
                try insert.bind(value, at: 2)
                try insert.run()
            }
            return try Row.fetchAll(db, sql: "SELECT typeof(value), value FROM bound ORDER BY n").map {
                ($0[0], ($0[1] as Data?).map { [UInt8]($0) })
            }
        }
        for (value, row) in zip(values, stored) {
            #expect(row.type == (value == nil ? "null" : "blob"), "\(String(describing: value))")
            #expect(row.bytes == value)
        }
    }
}
