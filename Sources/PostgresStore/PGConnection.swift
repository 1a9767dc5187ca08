// One libpq connection, driven without blocking: every connect and round trip has a deadline.
import CPostgres
import Foundation

/// A statement parameter: text (numbers are sent as their decimal text), raw bytes (`bytea`,
/// sent in binary format), or SQL NULL.
enum PGValue: Sendable {
    case text(String)
    case bytes([UInt8])
    case null

    static func integer(_ value: Int) -> PGValue { .text(String(value)) }
    static func boolean(_ value: Bool) -> PGValue { .text(value ? "t" : "f") }
    static func optional(_ value: String?) -> PGValue { value.map(PGValue.text) ?? .null }
}

/// One statement of a round trip. Statements with parameters are prepared once per connection
/// (parse and plan once, then bind and execute); those without run unnamed (`BEGIN`, `SET …`),
/// unless `prepared` says otherwise: a query without parameters that runs often and takes long
/// to plan (the definitions' fingerprint, six subqueries that PostgreSQL planned in about a
/// millisecond at each session's creation).
struct PGStatement: Sendable {
    let sql: String
    let parameters: [PGValue]
    /// Whether it is prepared once per connection: every statement with parameters is.
    let isPrepared: Bool

    init(_ sql: String, _ parameters: [PGValue] = [], prepared: Bool = false) {
        self.sql = sql
        self.parameters = parameters
        self.isPrepared = prepared || !parameters.isEmpty
    }
}

/// What one statement of a round trip came to.
enum PGOutcome {
    /// It ran; its rows (none for a command), values as text.
    case rows(PGRows)
    /// The server refused it: its SQLSTATE and message. The statements after it in the same
    /// round trip were skipped (`aborted`), and an open transaction is failed.
    case failed(sqlState: String, message: String)
    /// Skipped because an earlier statement of the round trip failed.
    case aborted

    var rows: PGRows? {
        if case .rows(let rows) = self { rows } else { nil }
    }
}

/// Why a connection could not do what was asked.
enum PGError: Error, CustomStringConvertible {
    /// The connection could not be made, broke, or a deadline passed. `sent` tells whether
    /// the statements may have reached the server (then a write's outcome is unknown).
    case connection(String, sent: Bool)
    /// The server refused a statement run on its own.
    case server(sqlState: String, message: String)
    /// A row did not read as its reader expects: a column or row missing, a NULL, a bad value.
    case decoding(PGDecodingError)

    var description: String {
        switch self {
        case let .connection(message, _): message
        case let .server(state, message): "\(message) (SQLSTATE \(state))"
        case let .decoding(error): error.description
        }
    }

    /// Whether the statements certainly did not reach the server (so running them again on
    /// another connection cannot apply them twice).
    var unsent: Bool {
        if case .connection(_, sent: false) = self { true } else { false }
    }
}

/// A libpq connection in non-blocking pipeline mode. Not thread-safe: one thread at a time,
/// as libpq requires; `PGPool` hands it out.
final class PGConnection {
    private let raw: OpaquePointer
    /// A statement name per SQL text, given at its first use on this connection.
    private var names: [String: String] = [:]
    /// The SQL texts whose Prepare the server accepted on this connection.
    private var prepared: Set<String> = []
    /// Set when the connection is lost or a deadline passed mid-exchange: it must be dropped.
    private(set) var broken = false

    private init(raw: OpaquePointer) {
        self.raw = raw
    }

    /// The host and port this connection reached (`host:port`): of a multi-host URL, the one
    /// libpq picked. Compared by `FailoverGuard`.
    private(set) lazy var endpoint: String = {
        let host = PQhost(raw).map { String(cString: $0) } ?? ""
        let port = PQport(raw).map { String(cString: $0) } ?? ""
        return "\(host):\(port)"
    }()

    deinit { PQfinish(raw) }

    /// Connects to `uri` (a libpq connection URI, which may list several hosts), then runs
    /// `setup` (session settings). Throws `PGError.connection` when it cannot by `deadline`.
    static func connect(uri: String, setup: [PGStatement], deadline: ContinuousClock.Instant) throws(PGError) -> PGConnection {
        // Keywords before `dbname` are defaults that the URI's own parameters override.
        let keywords = ["application_name", "dbname"]
        let values = ["flowstack", uri]
        let started: OpaquePointer? = withCStrings(keywords) { keywordPointers in
            withCStrings(values) { valuePointers in
                PQconnectStartParams(keywordPointers, valuePointers, 1)
            }
        }
        guard let raw = started else { throw .connection("libpq could not allocate a connection", sent: false) }
        let connection = PGConnection(raw: raw)
        guard PQstatus(raw) != CONNECTION_BAD else { throw .connection(connection.errorMessage, sent: false) }
        var polling = PGRES_POLLING_WRITING
        while polling != PGRES_POLLING_OK {
            switch polling {
            case PGRES_POLLING_READING:
                try connection.wait(read: true, write: false, until: deadline, sent: false, what: "connecting")
            case PGRES_POLLING_WRITING:
                try connection.wait(read: false, write: true, until: deadline, sent: false, what: "connecting")
            case PGRES_POLLING_FAILED:
                throw .connection(connection.errorMessage, sent: false)
            default:
                break
            }
            polling = PQconnectPoll(raw)
        }
        guard PQsetnonblocking(raw, 1) == 0, PQenterPipelineMode(raw) == 1 else {
            throw .connection("cannot enter pipeline mode: \(connection.errorMessage)", sent: false)
        }
        if !setup.isEmpty {
            for outcome in try connection.run(setup, deadline: deadline) {
                if case let .failed(state, message) = outcome { throw .server(sqlState: state, message: message) }
            }
        }
        return connection
    }

    /// Sends `statements` in one round trip (libpq's pipeline mode, one sync at the end) and
    /// returns one outcome per statement. Statements not yet prepared on this connection are
    /// prepared in the same round trip.
    func run(_ statements: [PGStatement], deadline: ContinuousClock.Instant) throws(PGError) -> [PGOutcome] {
        guard !broken else { throw .connection("the connection is closed", sent: false) }
        // A C string ends at the first NUL, and PostgreSQL's text cannot hold one: refuse it,
        // before anything is sent, rather than store a shortened value.
        for statement in statements {
            for case .text(let text) in statement.parameters where text.utf8.contains(0) {
                throw .server(sqlState: "22021", message: "a text value contains a NUL character, which PostgreSQL cannot store")
            }
        }
        do throws(PGError) {
            var preparing: [Bool] = []
            preparing.reserveCapacity(statements.count)
            for statement in statements {
                preparing.append(try send(statement))
            }
            guard PQpipelineSync(raw) == 1 else { throw .connection(errorMessage, sent: false) }
            try flush(deadline: deadline)
            var outcomes: [PGOutcome] = []
            outcomes.reserveCapacity(statements.count)
            for (index, statement) in statements.enumerated() {
                var preparation: PGOutcome?
                if preparing[index] {
                    preparation = try readOutcome(deadline: deadline)
                    // `send` counted it prepared; a Prepare refused or skipped made nothing.
                    if case .rows = preparation {} else { prepared.remove(statement.sql) }
                }
                let outcome = try readOutcome(deadline: deadline)
                // A statement that did not prepare is skipped; its Prepare's error is the answer.
                if let preparation, case .failed = preparation, case .aborted = outcome {
                    outcomes.append(preparation)
                } else {
                    outcomes.append(outcome)
                }
            }
            try readSync(deadline: deadline)
            return outcomes
        } catch {
            broken = true
            throw error
        }
    }

    /// Runs `statements` as `run` does; when they begin a transaction (`BEGIN` first) and one
    /// is refused, rolls it back before returning, so that the connection goes back to its pool
    /// with no failed transaction open.
    func runTransaction(_ statements: [PGStatement], deadline: ContinuousClock.Instant) throws(PGError) -> [PGOutcome] {
        let outcomes = try run(statements, deadline: deadline)
        if statements.first?.sql == "BEGIN", outcomes.contains(where: { $0.rows == nil }) {
            let rollback = try run([PGStatement("ROLLBACK")], deadline: deadline)
            guard rollback.first?.rows != nil else {
                broken = true
                throw .connection("ROLLBACK failed", sent: true)
            }
        }
        return outcomes
    }

    /// Runs `sql` (one or more statements) with the simple query protocol, outside pipeline
    /// mode: for migrations, whose files hold several statements.
    func execute(script sql: String, deadline: ContinuousClock.Instant) throws(PGError) {
        guard !broken else { throw .connection("the connection is closed", sent: false) }
        do throws(PGError) {
            guard PQexitPipelineMode(raw) == 1 else { throw .connection("cannot leave pipeline mode: \(errorMessage)", sent: false) }
            guard PQsendQuery(raw, sql) == 1 else { throw .connection(errorMessage, sent: false) }
            try flush(deadline: deadline)
            var failure: PGError?
            while let result = try nextResult(deadline: deadline) {
                let status = PQresultStatus(result)
                if status == PGRES_FATAL_ERROR, failure == nil {
                    failure = .server(sqlState: Self.sqlState(result), message: Self.message(result))
                }
                PQclear(result)
            }
            guard PQenterPipelineMode(raw) == 1 else { throw .connection("cannot enter pipeline mode: \(errorMessage)", sent: true) }
            if let failure { throw failure }
        } catch {
            // A failed script may leave a transaction open: the connection is not reused.
            broken = true
            throw error
        }
    }

    // MARK: Sending

    /// Queues one statement; returns whether a Prepare was queued before it. The parameters'
    /// values are laid out in one buffer, each text ending with a NUL, and handed to libpq by
    /// pointer into it (libpq copies them into its output buffer before returning).
    private func send(_ statement: PGStatement) throws(PGError) -> Bool {
        if !statement.isPrepared {
            guard PQsendQueryParams(raw, statement.sql, 0, nil, nil, nil, nil, 0) == 1 else {
                throw .connection(errorMessage, sent: false)
            }
            return false
        }
        let count = Int32(statement.parameters.count)
        var buffer: [UInt8] = [0]  // never empty, so it always has a base address
        var offsets: [Int?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        offsets.reserveCapacity(statement.parameters.count)
        for parameter in statement.parameters {
            switch parameter {
            case .text(let text):
                offsets.append(buffer.count)
                buffer.append(contentsOf: text.utf8)
                buffer.append(0)
                lengths.append(0)
                formats.append(0)
            case .bytes(let bytes):
                offsets.append(buffer.count)
                buffer.append(contentsOf: bytes)
                lengths.append(Int32(bytes.count))
                formats.append(1)
            case .null:
                offsets.append(nil)
                lengths.append(0)
                formats.append(0)
            }
        }
        let statementName: String
        if let known = names[statement.sql] {
            statementName = known
        } else {
            statementName = "fs\(names.count + 1)"
            names[statement.sql] = statementName
        }
        var preparing = false
        if !prepared.contains(statement.sql) {
            guard PQsendPrepare(raw, statementName, statement.sql, count, nil) == 1 else {
                throw .connection(errorMessage, sent: false)
            }
            // Counted at once, so that the same statement later in this round trip (two
            // exposures of a new session, say) is not prepared twice: the server would refuse
            // the second Prepare (42P05, the name exists) and skip the rest. `run` takes it
            // back if the Prepare fails.
            prepared.insert(statement.sql)
            preparing = true
        }
        let accepted = buffer.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars -> Int32 in
                guard let base = chars.baseAddress else { return 0 }
                let values: [UnsafePointer<CChar>?] = offsets.map { $0.map { UnsafePointer(base + $0) } }
                return PQsendQueryPrepared(raw, statementName, count, values, lengths, formats, 0)
            }
        }
        guard accepted == 1 else { throw .connection(errorMessage, sent: false) }
        return preparing
    }

    /// Writes what libpq has queued, reading meanwhile so that the server never blocks on us.
    private func flush(deadline: ContinuousClock.Instant) throws(PGError) {
        while true {
            let state = PQflush(raw)
            if state == 0 { return }
            guard state == 1 else { throw .connection(errorMessage, sent: true) }
            try wait(read: true, write: true, until: deadline, sent: true, what: "sending")
            guard PQconsumeInput(raw) == 1 else { throw .connection(errorMessage, sent: true) }
        }
    }

    // MARK: Receiving

    private func nextResult(deadline: ContinuousClock.Instant) throws(PGError) -> OpaquePointer? {
        while PQisBusy(raw) != 0 {
            try wait(read: true, write: false, until: deadline, sent: true, what: "waiting for the answer")
            guard PQconsumeInput(raw) == 1 else { throw .connection(errorMessage, sent: true) }
        }
        return PQgetResult(raw)
    }

    /// One statement's result, then the NULL that ends it.
    private func readOutcome(deadline: ContinuousClock.Instant) throws(PGError) -> PGOutcome {
        guard let result = try nextResult(deadline: deadline) else {
            throw .connection("the server's answers ended early: \(errorMessage)", sent: true)
        }
        let outcome: PGOutcome
        switch PQresultStatus(result) {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK:
            outcome = .rows(Self.rows(of: result))
        case PGRES_PIPELINE_ABORTED:
            outcome = .aborted
        case PGRES_FATAL_ERROR:
            outcome = .failed(sqlState: Self.sqlState(result), message: Self.message(result))
        default:
            let status = String(cString: PQresStatus(PQresultStatus(result)))
            PQclear(result)
            throw .connection("unexpected answer \(status)", sent: true)
        }
        PQclear(result)
        // A connection lost mid-answer shows as a fatal error with no SQLSTATE.
        if case .failed(let state, let message) = outcome, state.isEmpty || PQstatus(raw) == CONNECTION_BAD {
            throw .connection(message, sent: true)
        }
        guard try nextResult(deadline: deadline) == nil else {
            throw .connection("a statement answered with more than one result", sent: true)
        }
        return outcome
    }

    private func readSync(deadline: ContinuousClock.Instant) throws(PGError) {
        guard let result = try nextResult(deadline: deadline) else {
            throw .connection("the server's answers ended before the sync: \(errorMessage)", sent: true)
        }
        let status = PQresultStatus(result)
        PQclear(result)
        guard status == PGRES_PIPELINE_SYNC else {
            throw .connection("expected the end of the round trip, got \(String(cString: PQresStatus(status)))", sent: true)
        }
    }

    private static func rows(of result: OpaquePointer) -> PGRows {
        let count = Int(PQntuples(result))
        let fields = Int(PQnfields(result))
        var rows = PGRows()
        rows.columns = fields
        rows.values.reserveCapacity(count)
        for row in 0..<count {
            var values: [String?] = []
            values.reserveCapacity(fields)
            for field in 0..<fields {
                if PQgetisnull(result, Int32(row), Int32(field)) == 1 {
                    values.append(nil)
                } else {
                    values.append(String(cString: PQgetvalue(result, Int32(row), Int32(field))))
                }
            }
            rows.values.append(values)
        }
        return rows
    }

    private static func sqlState(_ result: OpaquePointer) -> String {
        PQresultErrorField(result, flowstack_pg_diag_sqlstate()).map { String(cString: $0) } ?? ""
    }

    private static func message(_ result: OpaquePointer) -> String {
        PQresultErrorMessage(result).map { String(cString: $0) }?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "unknown error"
    }

    // MARK: Waiting

    private var errorMessage: String {
        let text = PQerrorMessage(raw).map { String(cString: $0) } ?? ""
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? "the connection failed" : trimmed
    }

    /// Waits until the socket can be read or written, or throws when `deadline` passes.
    private func wait(read: Bool, write: Bool, until deadline: ContinuousClock.Instant, sent: Bool,
                      what: String) throws(PGError) {
        let socket = PQsocket(raw)
        guard socket >= 0 else { throw .connection("the connection has no socket: \(errorMessage)", sent: sent) }
        var events: Int16 = 0
        if read { events |= Int16(POLLIN) }
        if write { events |= Int16(POLLOUT) }
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else {
                throw .connection("no answer in time (\(what))", sent: sent)
            }
            let milliseconds = remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000
            var descriptor = pollfd(fd: socket, events: events, revents: 0)
            let ready = poll(&descriptor, 1, Int32(clamping: max(1, milliseconds)))
            if ready > 0 { return }
            if ready < 0 && errno != EINTR {
                throw .connection("poll failed: \(String(cString: strerror(errno)))", sent: sent)
            }
        }
    }
}

/// Calls `body` with a C array of C strings made from `strings`, ending with NULL.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { for copy in copies { free(copy) } }
    let pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } } + [nil]
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
