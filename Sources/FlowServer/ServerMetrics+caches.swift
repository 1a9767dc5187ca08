// The sizes of the bounded in-memory tables at /metrics: entries, capacity and evictions by table.
import Locking

extension ServerMetrics {
    /// Shows the table `name` at `/metrics` from now on, as
    /// `flowstack_cache_entries{cache="name"}`, `flowstack_cache_capacity{…}` and
    /// `flowstack_cache_evictions_total{…}` (left out when the table does not count them).
    /// `figures` is called at each scrape: it takes the table's lock briefly.
    ///
    /// ```swift
    /// metrics.watchCache("users") { users.figures }
    /// ```
    public func watchCache(_ name: String, _ figures: @escaping @Sendable () -> CacheFigures) {
        caches.withLock { $0.append((name, figures)) }
    }

    func appendCaches(to out: inout [UInt8]) {
        let watched = caches.withLock { $0 }
        guard !watched.isEmpty else { return }
        let figures = watched.map { (label: Self.escape($0.name), figures: $0.figures()) }
        out.append(contentsOf: "# HELP flowstack_cache_entries Entries held now in a bounded in-memory table.\n# TYPE flowstack_cache_entries gauge\n".utf8)
        for table in figures {
            out.append(contentsOf: "flowstack_cache_entries{cache=\"\(table.label)\"} \(table.figures.entries)\n".utf8)
        }
        out.append(contentsOf: "# HELP flowstack_cache_capacity The most entries a bounded in-memory table holds; past it the least recently used goes.\n# TYPE flowstack_cache_capacity gauge\n".utf8)
        for table in figures {
            out.append(contentsOf: "flowstack_cache_capacity{cache=\"\(table.label)\"} \(table.figures.capacity)\n".utf8)
        }
        out.append(contentsOf: "# HELP flowstack_cache_evictions_total Entries evicted from a full table to make room for a new one.\n# TYPE flowstack_cache_evictions_total counter\n".utf8)
        for table in figures {
            guard let evictions = table.figures.evictions else { continue }
            out.append(contentsOf: "flowstack_cache_evictions_total{cache=\"\(table.label)\"} \(evictions)\n".utf8)
        }
    }
}
