// `flowstack serve`: opens and migrates the database, then serves HTTP until SIGTERM or SIGINT.
import ArgumentParser
import Dispatch
import FlowServer
import FlowStore
import Foundation
import HTTPServer
import Logging

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the HTTP API.",
        discussion: """
            Migrates the database at start. When FLOWSTACK_ADMIN_TOKEN is unset, the first start on a database makes \
            the admin token, prints it once and keeps its SHA-256 in the database; later starts (and other nodes) use \
            that one, and `flowstack admin-token --reset` makes a new one. A FLOWSTACK_ADMIN_TOKEN of fewer than 32 \
            bytes is refused at start (exit 2, the reason on stderr).
            A SQLite file is served by one flowstack at a time: a second one on the same file exits 3 \
            naming the first. A PostgreSQL database that does not answer is waited for up to --db-wait \
            seconds (each attempt at most 10 s), then serve exits 4; a refused login exits 3 at once.
            SIGTERM or SIGINT stops it gracefully: no new connections, requests being handled finish
            (up to --shutdown-grace seconds), the database is closed.
            """)

    @Option(help: "Address to listen on (env FLOWSTACK_HOST; default 127.0.0.1).")
    var host: String?
    @Option(help: "Port to listen on, 0 for any free one (env FLOWSTACK_PORT; default 8080).")
    var port: Int?
    @Option(help: "SQLite file, or a PostgreSQL URL postgresql://USER@HOST:PORT/DB (env FLOWSTACK_DB; default ./flowstack.sqlite).")
    var db: String?
    @Option(name: .customLong("db-wait"), help: "PostgreSQL: seconds to wait at start for a database that does not answer before exiting with status 4; 0 tries once (env FLOWSTACK_DB_WAIT; default 30).")
    var dbWait: Int?
    @Option(help: "HTTP worker threads (env FLOWSTACK_THREADS; default: the number of cores on SQLite, 4 per core on PostgreSQL).")
    var threads: Int?
    @Option(name: .customLong("max-body"), help: "Largest request body in bytes (env FLOWSTACK_MAX_BODY; default 1048576).")
    var maxBody: Int?
    @Option(name: .customLong("max-session-bytes"), help: "Largest session an action may leave, in bytes of its stored tree (screens, params, lists); an action past it is refused 422 session-too-large (env FLOWSTACK_MAX_SESSION_BYTES; default 4194304).")
    var maxSessionBytes: Int?
    @Option(name: .customLong("gzip-min-bytes"), help: "Answers of a text-like type of at least this many bytes are gzip-compressed for clients that accept it; 0 turns compression off, as behind a proxy that compresses (env FLOWSTACK_GZIP_MIN_BYTES; default 1024).")
    var gzipMinBytes: Int?
    @Option(help: "normal: SQLite commits survive a process crash, PostgreSQL commits are flushed (synchronous_commit=on); full: SQLite fsyncs every commit, PostgreSQL waits for a synchronous standby to apply it (remote_apply) (env FLOWSTACK_DURABILITY; default normal).")
    var durability: String?
    @Option(name: .customLong("connection-timeout"), help: "Seconds before an idle or stalled connection is closed (env FLOWSTACK_CONNECTION_TIMEOUT; default 30).")
    var connectionTimeout: Int?
    @Option(name: .customLong("max-connections"), help: "Open connections at most (env FLOWSTACK_MAX_CONNECTIONS; default 8192).")
    var maxConnections: Int?
    @Option(name: .customLong("max-connections-per-ip"), help: "Open connections from one IP at most (env FLOWSTACK_MAX_CONNECTIONS_PER_IP; default 2048).")
    var maxConnectionsPerIP: Int?
    @Option(name: .customLong("cache-sessions"), help: "Sessions kept in memory at most (env FLOWSTACK_CACHE_SESSIONS; default 100000).")
    var cacheSessions: Int?
    @Option(name: .customLong("shutdown-grace"), help: "Seconds a stop waits for requests being handled (env FLOWSTACK_SHUTDOWN_GRACE; default 5).")
    var shutdownGrace: Int?
    @Flag(name: .customLong("single-node"), help: "On PostgreSQL: this is the only FlowStack on the database, so trust the caches (reads answered from memory) instead of checking them; wrong with a second node (env FLOWSTACK_SINGLE_NODE=1).")
    var singleNode = false
    @Option(name: .customLong("node-url"), help: "On PostgreSQL with several nodes: this node's address as the other nodes reach it (http://host:port). Given to every node, the nodes own sessions under leases: each answers its sessions' reads from memory and the others forward their writes to it. Without it every read checks the database (env FLOWSTACK_NODE_URL).")
    var nodeURL: String?
    @Option(name: .customLong("lease-ms"), help: "On PostgreSQL with several nodes: how long a node owns a session after it last asked, in milliseconds; a node that stops answering hands its sessions on after this (env FLOWSTACK_LEASE_MS; default 2000).")
    var leaseMilliseconds: Int?
    @Flag(name: .customLong("require-client-key"), help: "Creating a session needs a client key (X-API-Key or Authorization: Bearer; see POST /v1/client-keys); turn it on in production (env FLOWSTACK_REQUIRE_CLIENT_KEY=1).")
    var requireClientKey = false
    @Flag(name: .customLong("require-review"), help: "A release must be approved (POST /v1/releases/{id}/approve) by another admin identity than its maker's before it can be activated (env FLOWSTACK_REQUIRE_REVIEW=1).")
    var requireReview = false
    @Option(name: .customLong("session-rate"), help: "Session creations, and failed checks of session tokens, client keys and stream tickets (each kind counted apart), per client address: RATE[/BURST] per second, such as 20/100; 429 past it, a valid credential is still served (env FLOWSTACK_SESSION_RATE; default off).")
    var sessionRate: String?
    @Option(name: .customLong("admin-failure-rate"), help: "Failed admin token and admin key checks per client address: RATE[/BURST] per second, or off; past it a wrong admin credential gets 429 with Retry-After, a valid one is still served (env FLOWSTACK_ADMIN_FAILURE_RATE; default 0.1667/10: 10 at once, then 10 a minute).")
    var adminFailureRate: String?
    @Option(name: .customLong("trusted-proxies"), help: "Comma-separated addresses or CIDR networks of proxies whose X-Forwarded-For names the client (env FLOWSTACK_TRUSTED_PROXIES; default none).")
    var trustedProxies: String?
    @Option(name: .customLong("cors-origins"), help: "Comma-separated browser origins (scheme://host[:port]) allowed to call OFREP and the session routes from another origin, or * for any (env FLOWSTACK_CORS_ORIGINS; default none).")
    var corsOrigins: String?
    @Option(name: .customLong("stream-reconnect-window"), help: "Seconds after its last stream ended that an event-stream ticket may open the stream again (an EventSource reconnecting by itself) (env FLOWSTACK_STREAM_RECONNECT_WINDOW; default 60).")
    var streamReconnectWindow: Int?
    @Option(name: .customLong("stream-ticket-max-lifetime"), help: "Seconds after it was made that an event-stream ticket opens nothing and its stream ends (env FLOWSTACK_STREAM_TICKET_MAX_LIFETIME; default 3600).")
    var streamTicketMaxLifetime: Int?
    @Option(help: "How long the action log keeps full history, and how long an expired session's data stays: a duration such as 30d, 12h, 15m, 3s or 500ms (env FLOWSTACK_RETENTION; default 30d).")
    var retention: String?
    @Option(name: .customLong("session-idle"), help: "How long a session may go without an action before its token stops working (401 session-expired): a duration such as 30d, 12h or 3s (env FLOWSTACK_SESSION_IDLE; default 30d).")
    var sessionIdle: String?
    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical (env FLOWSTACK_LOG_LEVEL; default info).")
    var logLevel: String?

    func run() throws {
        let env = Environment()
        // Before anything is opened: a weak token is refused whatever the database holds.
        if let token = env.values["FLOWSTACK_ADMIN_TOKEN"], !token.isEmpty, let problem = Application.adminTokenProblem(token) {
            throw ValidationError(problem)
        }
        var server = ServerConfiguration()
        server.host = env.string(host, "FLOWSTACK_HOST", default: "127.0.0.1")
        server.port = try env.integer(port, "FLOWSTACK_PORT", default: 8080, range: 0...65535)
        let location = try OpenStore.location(db, env)
        let dbWait = try env.integer(self.dbWait, "FLOWSTACK_DB_WAIT", default: 30, range: 0...3600)
        // On PostgreSQL some requests wait for a round trip on their thread (a head check, a
        // session or user read): more threads keep the cores busy meanwhile (reads +50% at 8
        // threads on 2 cores; see BENCHMARKS.md).
        var defaultThreads = ServerConfiguration.coreCount
        if case .postgresql = location { defaultThreads = 4 * ServerConfiguration.coreCount }
        server.threads = try env.integer(threads, "FLOWSTACK_THREADS", default: defaultThreads, range: 1...256)
        server.maxBodyBytes = try env.integer(maxBody, "FLOWSTACK_MAX_BODY", default: 1 << 20, range: 1...(256 << 20))
        let gzipMinimum = try env.integer(gzipMinBytes, "FLOWSTACK_GZIP_MIN_BYTES", default: 1024, range: 0...(256 << 20))
        server.gzipMinimumBytes = gzipMinimum == 0 ? nil : gzipMinimum
        server.connectionTimeoutSeconds = try env.integer(connectionTimeout, "FLOWSTACK_CONNECTION_TIMEOUT", default: 30, range: 1...3600)
        server.connectionLimit = try env.integer(maxConnections, "FLOWSTACK_MAX_CONNECTIONS", default: 8192, range: 1...1_000_000)
        server.perIPConnectionLimit = try env.integer(maxConnectionsPerIP, "FLOWSTACK_MAX_CONNECTIONS_PER_IP", default: 2048, range: 1...1_000_000)
        let sessionBytes = try env.integer(maxSessionBytes, "FLOWSTACK_MAX_SESSION_BYTES", default: Application.defaultMaxSessionBytes,
                                           range: 4096...(1 << 30))
        let cacheCapacity = try env.integer(cacheSessions, "FLOWSTACK_CACHE_SESSIONS", default: 100_000, range: 1...100_000_000)
        let leaseLength = try env.integer(leaseMilliseconds, "FLOWSTACK_LEASE_MS", default: 2000, range: 200...600_000)
        let nodeAddress = try Self.nodeAddress(env.string(nodeURL, "FLOWSTACK_NODE_URL", default: ""))
        let grace = try env.integer(shutdownGrace, "FLOWSTACK_SHUTDOWN_GRACE", default: 5, range: 0...300)
        let durabilityName = env.string(durability, "FLOWSTACK_DURABILITY", default: "normal")
        guard let durability = Durability(rawValue: durabilityName) else {
            throw ValidationError("durability must be normal or full; got '\(durabilityName)'.")
        }
        let access = try accessOptions(env)
        var cors = CORSOptions()
        do {
            cors.origins = try CORSOptions.parse(env.string(corsOrigins, "FLOWSTACK_CORS_ORIGINS", default: ""))
        } catch {
            throw ValidationError("cors origins: \(error.description)")
        }
        var events = EventOptions()
        let window = try env.integer(streamReconnectWindow, "FLOWSTACK_STREAM_RECONNECT_WINDOW", default: 60, range: 1...3600)
        let maxLifetime = try env.integer(streamTicketMaxLifetime, "FLOWSTACK_STREAM_TICKET_MAX_LIFETIME", default: 3600, range: 10...604_800)
        events.reconnectWindow = .seconds(window)
        events.ticketMaxLifetime = .seconds(maxLifetime)
        var retentionOptions = RetentionOptions()
        for (text, name, apply) in [(env.string(retention, "FLOWSTACK_RETENTION", default: "30d"), "retention", { retentionOptions.retention = $0 }),
                                    (env.string(sessionIdle, "FLOWSTACK_SESSION_IDLE", default: "30d"), "session-idle", { retentionOptions.sessionIdle = $0 })]
            as [(String, String, (Duration) -> Void)] {
            do throws(DurationText.Problem) { apply(try DurationText.parse(text)) } catch { throw ValidationError("--\(name): \(error.description)") }
        }
        let levelName = env.string(logLevel, "FLOWSTACK_LOG_LEVEL", default: "info")
        guard let level = Logger.Level(rawValue: levelName) else {
            throw ValidationError("log level must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")); got '\(levelName)'.")
        }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "flowstack")

        let store: any FlowStore
        do {
            store = try Self.openWaiting(location, durability: durability, threads: server.threads,
                                         wait: .seconds(dbWait), logger: logger)
            try store.migrate()
        } catch let error as StoreError {
            throw FailureMessage(error)
        }
        let adminToken: (configured: String?, made: String?)
        do {
            adminToken = try Self.adminToken(from: env, store: store)
        } catch {
            try? store.close()
            throw FailureMessage("cannot keep the admin token in the database: \(error)")
        }
        let app: Application
        do {
            let single = singleNode || ["1", "true", "yes"].contains(env.values["FLOWSTACK_SINGLE_NODE"]?.lowercased() ?? "")
            let review = requireReview || ["1", "true", "yes"].contains(env.values["FLOWSTACK_REQUIRE_REVIEW"]?.lowercased() ?? "")
            // A token made now is checked as a kept one (read from the database at each admin
            // request), so that `admin-token --reset` replaces it on this server too.
            app = try Application(store: store, adminToken: adminToken.configured, cacheCapacity: cacheCapacity,
                                  singleNode: single, events: events, access: access, cors: cors, requireReview: review, logger: logger,
                                  retention: retentionOptions, nodeAddress: nodeAddress,
                                  leaseDuration: .milliseconds(leaseLength), maxSessionBytes: sessionBytes)
        } catch let error as Application.SetupError {
            throw FailureMessage(error.description)
        }
        Self.raiseOpenFileLimit(to: server.connectionLimit + 256)
        let http = HTTPServer(configuration: server, handler: app.handle)
        do {
            try http.start()
        } catch let error as HTTPServerError {
            try? store.close()
            throw FailureMessage(error.description, status: .cannotUse)
        }
        // Once started, so that a start that fails says only why, on one line.
        if let version = Allocator.jemallocInUse() {
            logger.info("memory allocator: jemalloc \(version)")
        } else {
            logger.warning("memory allocator: not jemalloc (another malloc came first, such as one given with LD_PRELOAD); actions cost about 15% more CPU with glibc's")
        }
        // Before the line that says it listens: a stop sent right after that line stops it gracefully.
        let signal = SignalWaiter(signals: [SIGTERM, SIGINT])
        if let token = adminToken.made {
            print("admin token (FLOWSTACK_ADMIN_TOKEN was unset; made at this first start, kept hashed in the database, shown once): \(token)")
        } else if adminToken.configured == nil {
            print("admin token: the one printed at this database's first start (FLOWSTACK_ADMIN_TOKEN is unset; `flowstack admin-token --reset` makes a new one)")
        }
        print("flowstack listening on http://\(server.host):\(http.port) (database \(location.redacted), durability \(durability.rawValue), \(server.threads) threads)")
        fflush(nil)

        let received = signal.wait()
        logger.info("received \(received == SIGTERM ? "SIGTERM" : "SIGINT"): stopping")
        http.shutdown(gracePeriod: .seconds(grace))
        app.releaseLeases()
        try store.close()
        logger.info("stopped")
    }

    /// This node's address for the other nodes (`--node-url`), nil when not given (no leases).
    /// Leases are opt-in: each node needs an address of its own, which only the operator knows.
    /// A node without them commits without the fence; while one serves, the owners read the
    /// database too (`ClusterMembership`), so they are turned on by a rolling restart.
    static func nodeAddress(_ given: String) throws -> String? {
        guard !given.isEmpty, given != "off" else { return nil }
        guard PeerClient.hostAndPort(given) != nil else {
            throw ValidationError("--node-url must be http://host:port, the address the other nodes reach this one at; got '\(given)'.")
        }
        return given.hasSuffix("/") ? String(given.dropLast()) : given
    }

    /// Client keys, user hashes, rate limits and trusted proxies, from the options and the environment.
    func accessOptions(_ env: Environment) throws -> AccessOptions {
        var access = AccessOptions()
        access.requireClientKey = requireClientKey
            || ["1", "true", "yes"].contains(env.values["FLOWSTACK_REQUIRE_CLIENT_KEY"]?.lowercased() ?? "")
        if let secret = env.values["FLOWSTACK_USER_SECRET"], !secret.isEmpty { access.userSecret = secret }
        let rate = env.string(sessionRate, "FLOWSTACK_SESSION_RATE", default: "")
        if !rate.isEmpty {
            guard let limit = RateLimit(rate) else {
                throw ValidationError("session rate must be RATE or RATE/BURST per second, such as 20/100; got '\(rate)'.")
            }
            access.sessionRate = limit
        }
        let adminRate = env.string(adminFailureRate, "FLOWSTACK_ADMIN_FAILURE_RATE", default: "")
        if adminRate == "off" {
            access.adminFailureRate = nil
        } else if !adminRate.isEmpty {
            guard let limit = RateLimit(adminRate) else {
                throw ValidationError("admin failure rate must be RATE or RATE/BURST per second, such as 0.1667/10, or off; got '\(adminRate)'.")
            }
            access.adminFailureRate = limit
        }
        for entry in env.string(trustedProxies, "FLOWSTACK_TRUSTED_PROXIES", default: "").split(separator: ",") {
            let text = entry.trimmingCharacters(in: .whitespaces)
            guard !text.isEmpty else { continue }
            guard let network = IPNetwork(text) else {
                throw ValidationError("trusted proxies must be addresses or CIDR networks such as 10.0.0.0/8; got '\(text)'.")
            }
            access.trustedProxies.append(network)
        }
        return access
    }

    /// Opens the store; a PostgreSQL server that does not answer yet (refused, no route, a name
    /// that does not resolve, a host that never answers) is tried again every second for up to
    /// `wait` (a node restarted during a short database outage, or started just before its
    /// database, comes up once the database does). Each attempt ends within `attemptTimeout`
    /// and before the deadline (libpq's `connect_timeout` does not apply to the non-blocking
    /// connect FlowStack uses; this does its work), so a black-holed host cannot hold `serve`
    /// much longer than `wait` (about a second more, for the last attempt and closing). Past
    /// it, the last error is thrown (`StoreError.unavailable`: exit status 4) and a
    /// supervisor's restart takes over. A refused login fails at once (status 3): waiting
    /// would not mend it. One warning when waiting begins, then one every 10 s or when the
    /// reason changes. `wait` zero: one attempt of `attemptTimeout`.
    static func openWaiting(_ location: DatabaseLocation, durability: Durability, threads: Int, wait: Duration,
                            logger: Logger) throws -> any FlowStore {
        let start = ContinuousClock.now
        let deadline = start + wait
        var lastLogged: (at: ContinuousClock.Instant, detail: String)?
        while true {
            let attempt = wait == .zero ? attemptTimeout : min(attemptTimeout, max(.milliseconds(500), deadline - .now))
            do {
                return try OpenStore.open(location, durability: durability, threads: threads, exclusive: true,
                                          connectTimeout: attempt)
            } catch StoreError.unavailable(let shown, let message) {
                let detail = FlowStackCommand.oneLine(message)
                if Self.isRefusal(detail) {
                    throw FailureMessage("the database \(shown) refused the connection: \(detail)", status: .cannotUse)
                }
                guard ContinuousClock.now < deadline else {
                    let waited = Int((ContinuousClock.now - start).components.seconds)
                    throw StoreError.unavailable(location: shown, detail: detail
                        + " (gave up after \(waited) s; --db-wait sets how long serve waits at start)")
                }
                if lastLogged == nil || lastLogged?.detail != detail || ContinuousClock.now - (lastLogged?.at ?? start) >= .seconds(10) {
                    let left = Int((deadline - .now).components.seconds)
                    logger.warning("waiting for the database (\(left) s left, --db-wait)",
                                   metadata: ["database": "\(location.redacted)", "error": "\(detail)"])
                    lastLogged = (.now, detail)
                }
                let pause = min(.seconds(1), deadline - .now)
                Thread.sleep(forTimeInterval: Double(pause.components.seconds) + Double(pause.components.attoseconds) / 1e18)
            }
        }
    }

    /// The longest one attempt to reach PostgreSQL at start may take.
    static let attemptTimeout: Duration = .seconds(10)

    /// A connection the server refused for good (wrong password, unknown role or database):
    /// waiting would not help, so `serve` says so at once.
    static func isRefusal(_ detail: String) -> Bool {
        ["authentication", "password", "pg_hba.conf", "does not exist", "permission denied"].contains { detail.contains($0) }
    }

    /// `configured`: FLOWSTACK_ADMIN_TOKEN, when set. Else nil, the token is the one kept hashed
    /// in the database, and `made` is that token when this start made it (256 bits, hex; to print
    /// once) because the database kept none yet.
    static func adminToken(from env: Environment, store: any FlowStore) throws -> (configured: String?, made: String?) {
        if let token = env.values["FLOWSTACK_ADMIN_TOKEN"], !token.isEmpty { return (token, nil) }
        return (nil, try Application.makeAdminTokenIfNone(store: store))
    }

    /// Lets the process hold as many sockets as the connection limit asks for, up to the hard limit.
    static func raiseOpenFileLimit(to wanted: Int) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        let target = min(rlim_t(wanted), limit.rlim_max)
        if limit.rlim_cur < target {
            limit.rlim_cur = target
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
    }
}

/// Where the signal handler writes the number of a signal it caught; `SignalWaiter` reads it.
nonisolated(unsafe) private var signalPipeWrite: Int32 = -1

/// Blocks until one of the given signals arrives. The handler is installed (`sigaction`) when
/// the waiter is made, before anything is printed: a signal sent right after the "listening"
/// line is caught, not lost or fatal (a dispatch signal source arms itself later, on its
/// queue, and a signal in between was dropped). The handler only writes the signal's number
/// to a pipe, which is async-signal-safe.
final class SignalWaiter: @unchecked Sendable {
    private let readEnd: Int32

    init(signals: [Int32]) {
        var ends: [Int32] = [-1, -1]
        _ = pipe(&ends)
        readEnd = ends[0]
        signalPipeWrite = ends[1]
        for number in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                var byte = UInt8(truncatingIfNeeded: number)
                _ = write(signalPipeWrite, &byte, 1)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = Int32(SA_RESTART)
            _ = sigaction(number, &action, nil)
        }
        // A parent may have started us with these signals blocked (Foundation's Process does):
        // unblock them on this thread, which waits, so that they reach the handler. Threads
        // started before keep them blocked and leave them to this one.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for number in signals { sigaddset(&unblock, number) }
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        Glibc.signal(SIGPIPE, SIG_IGN)
    }

    /// The first signal caught.
    func wait() -> Int32 {
        var byte: UInt8 = 0
        while read(readEnd, &byte, 1) != 1 {
            guard errno == EINTR else { return SIGTERM }
        }
        return Int32(byte)
    }
}
