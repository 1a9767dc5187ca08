// The operations routes, called in-process and through a live socket.
import FlowServer
import FlowStore
import StoreTestSupport
import Foundation
import HTTPServer
import HTTPTestClient
import Testing

/// An application on a fresh, migrated database of the run's store (a SQLite file, or a schema
/// of its own on the throwaway PostgreSQL).
final class TestApp: Sendable {
    static let adminToken = "test-admin-token"
    let database: TestDatabase
    let store: any FlowStore
    let app: Application

    init(cacheCapacity: Int = 100_000, events: EventOptions = EventOptions(), access: AccessOptions = AccessOptions(),
         cors: CORSOptions = CORSOptions(), requireReview: Bool = false,
         maxSessionBytes: Int = Application.defaultMaxSessionBytes) throws {
        database = try TestDatabase()
        store = try database.migratedStore()
        app = try Application(store: store, adminToken: TestApp.adminToken, cacheCapacity: cacheCapacity, events: events,
                              access: access, cors: cors, requireReview: requireReview, maxSessionBytes: maxSessionBytes)
        keepAlive = nil
    }

    /// Another application on the same database, as after a restart (this one's store is closed).
    private init(reopening other: TestApp, access: AccessOptions) throws {
        try other.store.close()
        database = other.database
        store = try database.migratedStore()
        app = try Application(store: store, adminToken: TestApp.adminToken, access: access)
        keepAlive = other
    }

    /// Another application on the same database beside this one, as a second node would be.
    init(beside other: TestApp, events: EventOptions = EventOptions()) throws {
        database = other.database
        store = try database.migratedStore()
        app = try Application(store: store, adminToken: TestApp.adminToken, events: events)
        keepAlive = other
    }

    /// A node that owns sessions under leases (`node`: its address), on a fresh database, or
    /// beside `other` on its database. `trust`: how long it trusts its memory after a look at
    /// the other nodes (2 s in a server; longer where a test counts round trips on a machine
    /// whose membership thread may wait its turn for more than the 1.5 s of margin).
    init(node: String, lease: Duration, trust: Duration = .seconds(2), beside other: TestApp? = nil,
         access: AccessOptions = AccessOptions()) throws {
        database = try other?.database ?? TestDatabase()
        store = try database.migratedStore()
        app = try Application(store: store, adminToken: TestApp.adminToken, access: access, nodeAddress: node, leaseDuration: lease,
                              trustWindow: trust)
        keepAlive = other
    }

    func reopened(access: AccessOptions = AccessOptions()) throws -> TestApp { try TestApp(reopening: self, access: access) }

    private let keepAlive: TestApp?

    deinit {
        try? store.close()
    }

    var direct: DirectSender { DirectSender(app.handle) }

    /// Runs `body` with a sender through libmicrohttpd on an ephemeral port.
    func withLiveServer<T>(_ body: (SocketSender) throws -> T) throws -> T {
        try withServer { server in try body(SocketSender(port: server.port)) }
    }

    /// Runs `body` with this application served by libmicrohttpd on an ephemeral port.
    func withServer<T>(_ configure: (inout ServerConfiguration) -> Void = { _ in }, _ body: (HTTPServer) throws -> T) throws -> T {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configure(&configuration)
        let server = HTTPServer(configuration: configuration, handler: app.handle)
        try server.start()
        defer { server.shutdown(gracePeriod: .seconds(2)) }
        return try body(server)
    }
}

struct OperationsTests {
    /// /healthz answers 200 JSON with the schema version when the database answers.
    @Test func healthzReportsDatabase() throws {
        let test = try TestApp()
        let response = try test.direct.send("GET", "/healthz")
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"] == "application/json")
        #expect(response.text == #"{"status":"ok","database":"ok","schemaVersion":\#(Migration.bundled(test.store.dialect).last?.version ?? 0)}"#)
    }

    /// /healthz answers 503 problem+json once the database is closed.
    @Test func healthzFailsWithoutDatabase() throws {
        let test = try TestApp()
        try test.store.close()
        let response = try test.direct.send("GET", "/healthz")
        #expect(response.status == 503)
        #expect(response.headers["Content-Type"] == "application/problem+json")
    }

    /// A refusal found by the health check's own query (a new connection reached a former
    /// primary, and the failover guard then saw two writable hosts) is the 503's reason, not
    /// "does not answer": the operator learns of the split brain at the first failed check.
    @Test func healthzNamesARefusalFoundByItsQuery() throws {
        let database = try TestDatabase()
        let store = StallingStore(base: try database.migratedStore())
        defer { try? store.close() }
        let direct = DirectSender(try Application(store: store, adminToken: TestApp.adminToken).handle)
        #expect(try direct.send("GET", "/healthz").status == 200)
        store.refuseAtHealthCheck("2 database hosts accept writes")
        let response = try direct.send("GET", "/healthz")
        #expect(response.status == 503)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        #expect(response.text.contains("2 database hosts accept writes"))
        #expect(!response.text.contains("does not answer"))
    }

    /// /openapi.yaml serves the repo's openapi.yaml byte for byte.
    @Test func servesOpenAPIDocument() throws {
        let test = try TestApp()
        let response = try test.direct.send("GET", "/openapi.yaml")
        let file = Repository.path("openapi.yaml")
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"] == "application/yaml")
        #expect(response.text == (try String(contentsOf: file, encoding: .utf8)))
        #expect(response.text.contains("/healthz"))
    }

    /// /metrics counts requests by route and status, in Prometheus text format, through a real socket.
    @Test func metricsCountRequestsByRouteAndStatus() throws {
        let test = try TestApp()
        let text = try test.withLiveServer { sender in
            _ = try sender.send("GET", "/healthz")
            _ = try sender.send("GET", "/healthz")
            _ = try sender.send("GET", "/no/such/route")
            _ = try sender.send("POST", "/healthz", body: "{}")
            return try sender.send("GET", "/metrics").text
        }
        #expect(text.contains(#"flowstack_http_requests_total{route="/healthz",method="GET",status="200"} 2"#))
        #expect(text.contains(#"flowstack_http_requests_total{route="unmatched",method="GET",status="404"} 1"#))
        #expect(text.contains(#"flowstack_http_requests_total{route="/healthz",method="POST",status="405"} 1"#))
        #expect(text.contains(#"flowstack_http_request_duration_seconds_bucket{route="/healthz",le="+Inf"} 3"#))
    }

    /// Counters and histograms recorded from many threads at once lose no request, and a route
    /// or status outside the prepared table is still counted.
    @Test func metricsCountExactlyUnderConcurrency() {
        let metrics = ServerMetrics()
        metrics.prepare(routes: ["/a", "/b"])
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<1000 {
                metrics.record(route: thread % 2 == 0 ? "/a" : "/b", method: "GET", status: 200, nanoseconds: Int64(index) * 1000)
            }
        }
        metrics.record(route: "/later", method: "PUT", status: 418, nanoseconds: 2_000_000_000)
        metrics.record(route: "/a", method: "BREW", status: 599, nanoseconds: 1)
        let text = String(decoding: metrics.exposition(), as: UTF8.self)
        #expect(text.contains(#"flowstack_http_requests_total{route="/a",method="GET",status="200"} 4000"#))
        #expect(text.contains(#"flowstack_http_requests_total{route="/b",method="GET",status="200"} 4000"#))
        #expect(text.contains(#"flowstack_http_requests_total{route="/later",method="PUT",status="418"} 1"#))
        #expect(text.contains(#"flowstack_http_requests_total{route="/a",method="OTHER",status="599"} 1"#))
        // 0…999 µs: 51 requests of each thread at or under 50 µs, 101 at or under 100 µs.
        #expect(text.contains(#"flowstack_http_request_duration_seconds_bucket{route="/a",le="0.00005"} 205"#))
        #expect(text.contains(#"flowstack_http_request_duration_seconds_bucket{route="/b",le="0.0001"} 404"#))
        #expect(text.contains(#"flowstack_http_request_duration_seconds_bucket{route="/a",le="+Inf"} 4001"#))
        #expect(text.contains(#"flowstack_http_request_duration_seconds_count{route="/later"} 1"#))
        #expect(text.contains(#"flowstack_http_request_duration_seconds_bucket{route="/later",le="1.0"} 0"#))
        #expect(text.contains(#"flowstack_http_request_duration_seconds_sum{route="/later"} 2.0"#))
        #expect(text.contains(#"flowstack_http_request_duration_seconds_sum{route="/b"} 1.998"#))
    }

    /// A route recorded by its index in the prepared list counts under that route's pattern
    /// (routes of one pattern share it); an index that does not name the pattern given is
    /// ignored for the pattern, and one outside the list too.
    @Test func metricsRecordedByIndexCountUnderTheirPattern() {
        let metrics = ServerMetrics()
        metrics.prepare(routes: ["/a", "/b", "/a"])
        metrics.record(route: "/a", index: 0, method: "GET", status: 200, nanoseconds: 1000)
        metrics.record(route: "/a", index: 2, method: "POST", status: 200, nanoseconds: 1000)
        metrics.record(route: "/b", index: 1, method: "GET", status: 200, nanoseconds: 1000)
        metrics.record(route: "/b", index: 0, method: "GET", status: 200, nanoseconds: 1000)  // index of /a: counted as /b
        metrics.record(route: "/a", index: 9, method: "GET", status: 200, nanoseconds: 1000)
        metrics.record(route: "/c", index: 1, method: "GET", status: 200, nanoseconds: 1000)  // not prepared: overflow
        for status in [99, 600, -1, 0, 1000] {  // outside the array of statuses: counted under the lock
            metrics.record(route: "/b", index: 1, method: "GET", status: status, nanoseconds: 1000)
        }
        let text = String(decoding: metrics.exposition(), as: UTF8.self)
        #expect(text.contains(#"flowstack_http_requests_total{route="/a",method="GET",status="200"} 2"#))
        #expect(text.contains(#"flowstack_http_requests_total{route="/a",method="POST",status="200"} 1"#))
        #expect(text.contains(#"flowstack_http_requests_total{route="/b",method="GET",status="200"} 2"#))
        #expect(text.contains(#"flowstack_http_requests_total{route="/c",method="GET",status="200"} 1"#))
        #expect(text.contains(#"flowstack_http_request_duration_seconds_count{route="/a"} 3"#))
        for status in [99, 600, -1, 0, 1000] {
            #expect(text.contains(#"flowstack_http_requests_total{route="/b",method="GET",status="\#(status)"} 1"#), "\(status)")
        }
    }

    /// Made-up methods are counted under one OTHER label, so clients cannot grow the metrics.
    @Test func unknownMethodsShareOneLabel() throws {
        let test = try TestApp()
        for index in 0..<20 { _ = try test.direct.send("X\(index)METHOD", "/healthz") }
        let text = try test.direct.send("GET", "/metrics").text
        #expect(text.contains(#"flowstack_http_requests_total{route="/healthz",method="OTHER",status="405"} 20"#))
        #expect(!text.contains("X1METHOD"))
    }

    /// Every route in the application is described in openapi.yaml.
    @Test func everyRouteIsInOpenAPI() throws {
        let test = try TestApp()
        let spec = try test.direct.send("GET", "/openapi.yaml").text
        for route in test.app.routes {
            #expect(spec.contains("\n  \(route.pattern):\n"), "openapi.yaml lacks \(route.pattern)")
            #expect(spec.contains("    \(route.method.lowercased()):"), "openapi.yaml lacks \(route.method) \(route.pattern)")
        }
    }
}

struct BundledFlowsTests {
    /// The sample app embedded in the binary is the repo's flows/ folder, and it is valid.
    @Test func bundledFlowsAreTheRepoFilesAndValid() throws {
        let folder = Repository.path("flows")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }.sorted()
        #expect(BundledFlows.documents.map { $0.name + ".json" }.sorted() == files)
        #expect(files == ["address.json", "app.json", "checkout.json", "home.json", "login.json", "modal.json", "onboarding.json", "paywall.json"])
        let (catalog, problems) = BundledFlows.catalog()
        #expect(problems.isEmpty, "\(problems)")
        #expect(catalog.names == ["address", "app", "checkout", "home", "login", "modal", "onboarding", "paywall"])
    }
}
