// The statements of every commit and every keyed action's lookup, stepped through SQLite's C interface.
import GRDB
import GRDBSQLite

/// A cached statement bound and stepped directly, for the statements every action's commit
/// runs on the writer thread (the batch's BEGIN and COMMIT, the version check, the log entry's
/// insert, the head row every 16th version, a savepoint, a batch tap's check of the entry below
/// it, an idempotency key's answer) and the lookup of a keyed action's stored answer before it
/// is judged. Through GRDB each cost some 8,000 to 12,000 instructions more than SQLite's own
/// work: arguments boxed into `StatementArguments`, a `Row` copied out and freed, the
/// observation broker asked before and after (callgrind, a commit of one action). Values are
/// bound as GRDB binds them (the same `StatementBinding` conformances; strings as text and
/// bytes as a blob, each with its length), so what is stored does not change.
///
/// The statement is always reset before `step` returns or throws, so it is never left running
/// inside the transaction; a failure throws the `DatabaseError` GRDB would have thrown.
struct DirectStatement {
    private let statement: Statement
    private let db: Database

    init(_ statement: Statement, in db: Database) {
        self.statement = statement
        self.db = db
    }

    /// Binds the `index`th parameter (from 1), or NULL for nil.
    func bind(_ value: (some StatementBinding)?, at index: CInt) throws {
        let code = if let value { value.bind(to: statement.sqliteStatement, at: index) } else {
            sqlite3_bind_null(statement.sqliteStatement, index)
        }
        guard code == SQLITE_OK else { throw failure(code) }
    }

    /// Binds the `index`th parameter to the string's text, or NULL for nil. GRDB binds a string
    /// as a C string: Swift copies it into a new array to add the terminating zero, and SQLite
    /// measures it again. Here SQLite copies the UTF-8 bytes it is given, with their length
    /// (five strings an action's log entry, about 1,000 instructions each through GRDB).
    func bind(_ value: String?, at index: CInt) throws {
        guard var value else {
            try bind(Int?.none, at: index)
            return
        }
        let code = value.withUTF8 { utf8 -> CInt in
            guard utf8.count <= Int(CInt.max) else { return SQLITE_TOOBIG }
            // Never a NULL pointer, which SQLite would bind as NULL instead of "".
            let start = UnsafeRawPointer(utf8.baseAddress ?? Self.emptyText).assumingMemoryBound(to: CChar.self)
            return sqlite3_bind_text(statement.sqliteStatement, index, start, CInt(utf8.count), Self.transient)
        }
        guard code == SQLITE_OK else { throw failure(code) }
    }

    /// Binds the `index`th parameter to the string's text, or NULL for nil, as `bind(_:at:)`
    /// does, but with the text copied into `arena` and bound there without SQLite's own copy
    /// (`SQLITE_STATIC`): SQLite allocated, copied and later freed every bound string, some 400
    /// of the 700 instructions a bind cost (callgrind, the writer's commits). A text `arena` has
    /// no room for is bound as `bind(_:at:)` binds it.
    ///
    /// The statement reads the text until it is bound again or its bindings are cleared, so
    /// the caller binds every parameter again before each step, resets `arena` only between
    /// steps, and clears the bindings (`clearBindings`) before `arena` goes.
    func bind(_ value: String?, at index: CInt, keptIn arena: BindArena) throws {
        guard var value else {
            try bind(Int?.none, at: index)
            return
        }
        let kept = value.withUTF8 { arena.keep($0) }
        guard let kept else {
            try bind(value, at: index)
            return
        }
        let code = sqlite3_bind_text(statement.sqliteStatement, index, kept.start, kept.count, nil)  // nil: SQLITE_STATIC
        guard code == SQLITE_OK else { throw failure(code) }
    }

    /// Binds the `index`th parameter to the bytes as a blob, or NULL for nil, as `bind(_:at:)`
    /// does, but with the bytes copied into `arena` (see `bind(_:at:keptIn:)` for strings).
    func bind(_ value: [UInt8]?, at index: CInt, keptIn arena: BindArena) throws {
        guard let value, !value.isEmpty else {
            try bind(value, at: index)  // NULL, or an empty blob
            return
        }
        let kept = value.withUnsafeBufferPointer { arena.keep($0) }
        guard let kept else {
            try bind(value, at: index)
            return
        }
        let code = sqlite3_bind_blob(statement.sqliteStatement, index, kept.start, kept.count, nil)  // nil: SQLITE_STATIC
        guard code == SQLITE_OK else { throw failure(code) }
    }

    /// Sets every parameter back to NULL, so that the statement no longer points into an arena
    /// (`bind(_:at:keptIn:)`) that is about to go.
    func clearBindings() {
        sqlite3_clear_bindings(statement.sqliteStatement)
    }

    /// Binds the `index`th parameter to the bytes as a blob (an empty blob for none), or NULL
    /// for nil. Through `Data`, as GRDB binds bytes, each array was copied into a new buffer
    /// first (about 2,000 instructions a blob); SQLite still copies them (the commit's own
    /// statements bind theirs from an arena, `bind(_:at:keptIn:)`).
    func bind(_ value: [UInt8]?, at index: CInt) throws {
        guard let value else {
            try bind(Int?.none, at: index)
            return
        }
        let code = value.withUnsafeBytes { bytes -> CInt in
            guard bytes.count <= Int(CInt.max) else { return SQLITE_TOOBIG }
            // A NULL pointer would bind NULL: an empty array is a blob of no bytes.
            guard let start = bytes.baseAddress, bytes.count > 0 else {
                return sqlite3_bind_zeroblob(statement.sqliteStatement, index, 0)
            }
            return sqlite3_bind_blob(statement.sqliteStatement, index, start, CInt(bytes.count), Self.transient)
        }
        guard code == SQLITE_OK else { throw failure(code) }
    }

    /// SQLite's `SQLITE_TRANSIENT`: it copies the value before the bind returns.
    private static var transient: sqlite3_destructor_type {
        unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
    }
    private static var emptyText: UnsafePointer<UInt8> { ("" as StaticString).utf8Start }

    /// Runs the statement to its first row and reads it with `row`; nil when it has none.
    func firstRow<T>(_ row: (SQLiteStatement) throws -> T) throws -> T? {
        defer { sqlite3_reset(statement.sqliteStatement) }
        switch sqlite3_step(statement.sqliteStatement) {
        case SQLITE_ROW: return try row(statement.sqliteStatement)
        case SQLITE_DONE: return nil
        case let code: throw failure(code)
        }
    }

    /// Runs the statement to its end.
    func run() throws {
        defer { sqlite3_reset(statement.sqliteStatement) }
        while true {
            switch sqlite3_step(statement.sqliteStatement) {
            case SQLITE_DONE: return
            case SQLITE_ROW: continue
            case let code: throw failure(code)
            }
        }
    }

    /// Runs an `INSERT` and returns the rowid it gave, read from the connection directly: GRDB's
    /// `lastInsertedRowID` first checks that it is called on the connection's queue, 500
    /// instructions a call (callgrind, two calls a keyed action on the writer).
    func insert() throws -> Int64 {
        try run()
        guard let connection = db.sqliteConnection else { throw failure(SQLITE_MISUSE) }
        return sqlite3_last_insert_rowid(connection)
    }

    private func failure(_ code: CInt) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code),
                      message: db.sqliteConnection.map { String(cString: sqlite3_errmsg($0)) },
                      sql: statement.sql)
    }
}

extension DirectStatement {
    /// Column `index` (from 0) of a row as an integer, nil when NULL.
    static func optionalInt(_ row: SQLiteStatement, _ index: CInt) -> Int? {
        sqlite3_column_type(row, index) == SQLITE_NULL ? nil : Int(sqlite3_column_int64(row, index))
    }

    /// Column `index` of a row when it holds an integer (as GRDB decodes an `Int`: not from
    /// NULL, text or a blob), else nil.
    static func integer(_ row: SQLiteStatement, _ index: CInt) -> Int? {
        sqlite3_column_type(row, index) == SQLITE_INTEGER ? Int(sqlite3_column_int64(row, index)) : nil
    }

    /// Column `index` of a row as bytes, nil when NULL (an empty blob is no bytes).
    static func optionalBytes(_ row: SQLiteStatement, _ index: CInt) -> [UInt8]? {
        sqlite3_column_type(row, index) == SQLITE_NULL ? nil : bytes(row, index)
    }

    /// Column `index` of a row as bytes: a blob's, or a text's UTF-8; none for NULL.
    static func bytes(_ row: SQLiteStatement, _ index: CInt) -> [UInt8] {
        // The pointer first, then the count, as SQLite asks (the pointer may convert the value).
        guard let start = sqlite3_column_blob(row, index) else { return [] }
        let count = Int(sqlite3_column_bytes(row, index))
        return [UInt8](UnsafeRawBufferPointer(start: start, count: count))
    }
}

/// Bytes that bound texts and blobs are copied into for a statement to read in place (see
/// `DirectStatement.bind(_:at:keptIn:)`): one allocation, made once, for the values of many
/// commits, where SQLite made one for each. Used on one thread at a time. Debug builds
/// overwrite what a reset or the end frees, so that a statement stepped without being bound
/// again stores garbage the tests see, rather than the right bytes by luck.
final class BindArena {
    private let bytes: UnsafeMutablePointer<CChar>
    private let capacity: Int
    private var used = 0

    /// An arena of `capacity` bytes, at most `CInt.max` (what SQLite binds).
    init(capacity: Int) {
        precondition((0...Int(CInt.max)).contains(capacity), "a bind arena holds at most CInt.max bytes")
        self.capacity = capacity
        bytes = .allocate(capacity: capacity)
    }

    deinit {
        reset()
        bytes.deallocate()
    }

    /// A copy of `value` in the arena, after the copies kept since the last reset, or nil when
    /// it has no room left for it. Never a NULL pointer, which SQLite would bind as NULL
    /// instead of "".
    func keep(_ value: UnsafeBufferPointer<UInt8>) -> (start: UnsafePointer<CChar>, count: CInt)? {
        guard value.count <= capacity - used else { return nil }
        let start = bytes + used
        if let source = value.baseAddress {
            UnsafeMutableRawPointer(start).copyMemory(from: source, byteCount: value.count)
        }
        used += value.count
        return (UnsafePointer(start), CInt(value.count))
    }

    /// Makes all of the arena free again: what was kept in it may be overwritten from now on.
    func reset() {
        #if DEBUG
        bytes.update(repeating: CChar(bitPattern: 0xA5), count: used)
        #endif
        used = 0
    }
}

/// A column of a stored row that holds a NULL or a value of another type than its field's:
/// `SQLiteStore` reports it as an undecodable row, naming the column, never the value.
struct UndecodableColumn: Error {
    let name: String
}

extension DirectStatement {
    /// Column `index` of a row as text, as GRDB decodes a `String`: from text, or a blob's
    /// bytes as UTF-8; not from NULL or a number.
    static func text(_ row: SQLiteStatement, _ index: CInt, column: String) throws -> String {
        let type = sqlite3_column_type(row, index)
        guard type == SQLITE_TEXT || type == SQLITE_BLOB else { throw UndecodableColumn(name: column) }
        return String(decoding: bytes(row, index), as: UTF8.self)
    }

    /// Column `index` of a row as a Bool, as GRDB decodes one: from an integer or a real,
    /// true when not zero.
    static func bool(_ row: SQLiteStatement, _ index: CInt, column: String) throws -> Bool {
        switch sqlite3_column_type(row, index) {
        case SQLITE_INTEGER: return sqlite3_column_int64(row, index) != 0
        case SQLITE_FLOAT: return sqlite3_column_double(row, index) != 0
        default: throw UndecodableColumn(name: column)
        }
    }

    /// Column `index` of a row as text, nil when NULL.
    static func optionalText(_ row: SQLiteStatement, _ index: CInt, column: String) throws -> String? {
        sqlite3_column_type(row, index) == SQLITE_NULL ? nil : try text(row, index, column: column)
    }

    /// Column `index` of a row as an integer (not from NULL, text or a blob).
    static func requiredInt(_ row: SQLiteStatement, _ index: CInt, column: String) throws -> Int {
        guard let value = integer(row, index) else { throw UndecodableColumn(name: column) }
        return value
    }
}
