// Every in-memory table stays at its bound, evicts the least recently used entry (never all of
// them), counts evictions, and shows its size at /metrics.
@testable import FlowServer
import FlowEngine
import FlowGraph
import FlowStore
import Foundation
import HTTPServer
import HTTPTestClient
import Locking
import StoreTestSupport
import Testing

struct CacheBoundsTests {
    /// Past its bound the user-state table holds exactly its capacity, the least recently used
    /// user goes first, a user used again is kept, and /metrics (through a real socket) shows
    /// the users' and the sessions' tables with their sizes and evictions.
    @Test func userStatesEvictLeastRecentlyUsed() throws {
        let test = try TestApp(cacheCapacity: 3)
        let client = SessionClient(sender: test.direct)
        for user in ["u1", "u2", "u3", "u4", "u5"] { _ = try client.create(userId: user) }
        #expect(test.app.sessions.users.heldByRecency == ["u5", "u4", "u3"])
        _ = try client.create(userId: "u3")  // used again: now the most recent
        _ = try client.create(userId: "u6")
        #expect(test.app.sessions.users.heldByRecency == ["u6", "u3", "u5"], "u4 was the least recently used")
        #expect(test.app.sessions.users.figures == CacheFigures(entries: 3, capacity: 3, evictions: 3))

        let text = try test.withLiveServer { try $0.send("GET", "/metrics").text }
        #expect(text.contains("# TYPE flowstack_cache_entries gauge\n"))
        #expect(text.contains("# TYPE flowstack_cache_capacity gauge\n"))
        #expect(text.contains("# TYPE flowstack_cache_evictions_total counter\n"))
        #expect(text.contains(#"flowstack_cache_entries{cache="users"} 3"#))
        #expect(text.contains(#"flowstack_cache_capacity{cache="users"} 3"#))
        #expect(text.contains(#"flowstack_cache_evictions_total{cache="users"} 3"#))
        #expect(text.contains(#"flowstack_cache_entries{cache="sessions"} 3"#))
        #expect(text.contains(#"flowstack_cache_capacity{cache="sessions"} 3"#))
        for table in ["catalogs", "graphs", "gzip"] {
            #expect(text.contains(#"flowstack_cache_capacity{cache="\#(table)"} "#), "\(table) is shown")
        }
        #expect(!text.contains(#"cache="rate_limits""#), "no session rate: no limiter to show")
    }

    /// The change stamps that keep a racing read out of the table are bounded like the states;
    /// once a user's stamp is pushed out, a later read of that user is still kept (a forgotten
    /// stamp refuses only reads that began before it).
    @Test func boundedChangeStampsStillKeepLaterReads() throws {
        let users = UserStates(capacity: 2)
        let database = try TestDatabase()
        let store = try database.migratedStore()
        defer { try? store.close() }
        _ = try users.held("a", store: store)
        users.apply([(key: "onboarded", value: .bool(true))], to: "a")
        #expect(try users.state(of: "a", store: store)["onboarded"] == .bool(true))
        for other in ["b", "c", "d"] { users.forget(other) }  // pushes a's change stamp out
        users.forget("a")
        _ = try users.held("a", store: store)
        #expect(users.heldByRecency.first == "a", "read again from the database and kept")
    }

    /// The catalog table keeps at most its capacity of version sets, drops the least recently
    /// used one, and keeps its entries, their order and its count when definitions are reloaded.
    @Test func catalogsEvictLeastRecentlyUsed() throws {
        let app = try #require(BundledFlows.documents.first { $0.name == "app" })
        let records = (1...3).map {
            FlowVersionRecord(name: "app", version: $0, definition: String(decoding: app.bytes, as: UTF8.self), createdAt: "2026-01-01T00:00:00Z")
        }
        let registry = DefinitionRegistry.load(flows: records, live: ["app": 1], catalogCapacity: 2).registry
        #expect(registry.catalog(for: ["app": 1]) != nil)
        #expect(registry.catalog(for: ["app": 2]) != nil)
        #expect(registry.catalog(for: ["app": 1]) != nil)  // used again
        #expect(registry.catalog(for: ["app": 3]) != nil)
        #expect(registry.catalogsByRecency == ["app:3", "app:1"])
        #expect(registry.catalogFigures == CacheFigures(entries: 2, capacity: 2, evictions: 1))
        registry.replace(with: DefinitionRegistry.load(flows: records, live: ["app": 2]).registry)
        #expect(registry.catalogsByRecency == ["app:3", "app:1"])
        #expect(registry.catalogFigures == CacheFigures(entries: 2, capacity: 2, evictions: 1))
        #expect(registry.catalog(for: ["app": 2]) != nil, "an evicted catalog is built again")
    }

    /// The graph pictures are kept least-recently-used first out, not first in first out.
    @Test func graphPicturesEvictLeastRecentlyUsed() throws {
        let renderer = GraphRenderer(logger: .init(label: "test"), capacity: 2)
        let catalog = BundledFlows.catalog().catalog
        let graphs = ["app", "onboarding", "home"].map { FlowGraph(catalog: catalog, root: $0) }
        for index in [0, 1, 0, 2] { _ = try renderer.render(graphs[index], format: .svg) }
        #expect(renderer.picturesByRecency == [graphs[2].dot(), graphs[0].dot()], "app was used again; onboarding went")
        #expect(renderer.figures == CacheFigures(entries: 2, capacity: 2, evictions: 1))
    }

    /// /metrics shows each watched table once per family, with HELP and TYPE, and leaves out
    /// the evictions of a table that does not count them.
    @Test func metricsShowWatchedTables() {
        let metrics = ServerMetrics()
        metrics.watchCache("users") { CacheFigures(entries: 2, capacity: 5, evictions: 7) }
        metrics.watchCache("sessions") { CacheFigures(entries: 1, capacity: 9, evictions: nil) }
        let text = String(decoding: metrics.exposition(), as: UTF8.self)
        #expect(text.contains("""
            # HELP flowstack_cache_entries Entries held now in a bounded in-memory table.
            # TYPE flowstack_cache_entries gauge
            flowstack_cache_entries{cache="users"} 2
            flowstack_cache_entries{cache="sessions"} 1
            # HELP flowstack_cache_capacity The most entries a bounded in-memory table holds; past it the least recently used goes.
            # TYPE flowstack_cache_capacity gauge
            flowstack_cache_capacity{cache="users"} 5
            flowstack_cache_capacity{cache="sessions"} 9
            # HELP flowstack_cache_evictions_total Entries evicted from a full table to make room for a new one.
            # TYPE flowstack_cache_evictions_total counter
            flowstack_cache_evictions_total{cache="users"} 7

            """))
        #expect(!text.contains(#"flowstack_cache_evictions_total{cache="sessions"}"#))
    }

    /// With a session rate, both limiters' tables are shown.
    @Test func rateLimitTablesAreShown() throws {
        var options = AccessOptions()
        options.sessionRate = RateLimit("5/5")
        let test = try TestApp(access: options)
        let text = try test.direct.send("GET", "/metrics").text
        #expect(text.contains(#"flowstack_cache_capacity{cache="rate_limits"} 65536"#))
        #expect(text.contains(#"flowstack_cache_capacity{cache="failed_tokens"} 65536"#))
    }
}
