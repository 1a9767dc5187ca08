// Which in-memory tables /metrics shows, and under which names.
import HTTPServer
import Locking

extension Application {
    /// Shows every bounded in-memory table at `/metrics` (`flowstack_cache_*{cache="…"}`):
    /// `sessions` (the session cache: entries and capacity; it evicts by CLOCK and does not
    /// count evictions), `users` (user states), `catalogs` (flow catalogs per version set),
    /// `graphs` (SVG pictures), `gzip` (compressed bodies, shared by the process), and with a
    /// session rate `rate_limits` (session creations per address) and `failed_tokens` (failed
    /// token checks per address).
    ///
    /// Not shown: tables bounded by something else. Stream tickets held (one per open event
    /// stream), event subscribers and suspended connections go with their connection, which
    /// libmicrohttpd's connection limit bounds; idempotent answers are kept only in the database.
    static func watchCaches(_ metrics: ServerMetrics, sessions: SessionService, registry: DefinitionRegistry,
                            access: AccessPolicy, graphs: GraphRenderer) {
        let cache = sessions.cache, users = sessions.users
        metrics.watchCache("sessions") { .init(entries: cache.count, capacity: cache.capacity, evictions: nil) }
        metrics.watchCache("users") { users.figures }
        metrics.watchCache("catalogs") { registry.catalogFigures }
        metrics.watchCache("graphs") { graphs.figures }
        metrics.watchCache("gzip") { ContentCoding.cacheFigures }
        if let creations = access.creations { metrics.watchCache("rate_limits") { creations.figures } }
        if let failures = access.failures { metrics.watchCache("failed_tokens") { failures.figures } }
    }
}
