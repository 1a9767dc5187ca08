// The rows of a PostgreSQL result as libpq's text, every read checked: a bad row is an error,
// never a crash.

/// The rows of one result, every value as libpq's text (nil for NULL).
///
/// Every read is checked: a row or column past what the result holds (a query that answered
/// fewer columns than its reader expects), a NULL where a value is required (`text`, `int`,
/// `data`, `boolean`), or a value that is not of the expected form throws `PGError.decoding`,
/// which the request answers as a 5xx problem: never a crash.
struct PGRows {
    var values: [[String?]] = []
    /// Columns of the result (`PQnfields`), even when it has no rows.
    var columns = 0

    var count: Int { values.count }

    /// The text at `row`, `column`; nil for NULL.
    func string(_ row: Int, _ column: Int) throws(PGError) -> String? {
        guard values.indices.contains(row) else {
            throw .decoding(PGDecodingError(row: row, column: column, problem: "the result has \(values.count) rows"))
        }
        guard values[row].indices.contains(column) else {
            throw .decoding(PGDecodingError(row: row, column: column, problem: "the result has \(values[row].count) columns"))
        }
        return values[row][column]
    }

    /// The text at `row`, `column`, which must not be NULL.
    func text(_ row: Int, _ column: Int) throws(PGError) -> String {
        guard let text = try string(row, column) else { throw .decoding(PGDecodingError(row: row, column: column, problem: "NULL where a value is required")) }
        return text
    }

    /// The integer at `row`, `column`; nil for NULL.
    func integer(_ row: Int, _ column: Int) throws(PGError) -> Int? {
        guard let text = try string(row, column) else { return nil }
        guard let value = Int(text) else {
            throw .decoding(PGDecodingError(row: row, column: column, problem: "\(text.prefix(40)) is not an integer"))
        }
        return value
    }

    /// The integer at `row`, `column`, which must not be NULL.
    func int(_ row: Int, _ column: Int) throws(PGError) -> Int {
        guard let value = try integer(row, column) else { throw .decoding(PGDecodingError(row: row, column: column, problem: "NULL where an integer is required")) }
        return value
    }

    /// The boolean at `row`, `column` (`t` or `f`), which must not be NULL.
    func boolean(_ row: Int, _ column: Int) throws(PGError) -> Bool {
        switch try string(row, column) {
        case "t": return true
        case "f": return false
        case nil: throw .decoding(PGDecodingError(row: row, column: column, problem: "NULL where a boolean is required"))
        case let text?: throw .decoding(PGDecodingError(row: row, column: column, problem: "\(text.prefix(40)) is not a boolean"))
        }
    }

    /// A `bytea` value from its hex text form (`\x…`); nil for NULL.
    func bytes(_ row: Int, _ column: Int) throws(PGError) -> [UInt8]? {
        guard let text = try string(row, column) else { return nil }
        guard let bytes = Self.decodeHex(text) else {
            throw .decoding(PGDecodingError(row: row, column: column, problem: "not a bytea in hex form"))
        }
        return bytes
    }

    /// A `bytea` value, which must not be NULL.
    func data(_ row: Int, _ column: Int) throws(PGError) -> [UInt8] {
        guard let bytes = try bytes(row, column) else { throw .decoding(PGDecodingError(row: row, column: column, problem: "NULL where bytes are required")) }
        return bytes
    }

    static func decodeHex(_ text: String) -> [UInt8]? {
        var utf8 = text.utf8.makeIterator()
        guard utf8.next() == UInt8(ascii: "\\"), utf8.next() == UInt8(ascii: "x") else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity((text.utf8.count - 2) / 2)
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: c - 48
            case 97...102: c - 87
            case 65...70: c - 55
            default: nil
            }
        }
        while let high = utf8.next() {
            guard let low = utf8.next(), let h = nibble(high), let l = nibble(low) else { return nil }
            bytes.append(h << 4 | l)
        }
        return bytes
    }
}

/// A stored row that does not read as its reader expects (see `PGRows`).
struct PGDecodingError: Error, CustomStringConvertible {
    let row: Int
    let column: Int
    let problem: String

    var description: String { "row \(row), column \(column) of a PostgreSQL result does not read: \(problem)" }
}
