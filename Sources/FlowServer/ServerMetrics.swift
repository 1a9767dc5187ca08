// Request counters and latency histograms, exposed in Prometheus text format at /metrics.
import CoreMetrics
import Prometheus
import Synchronization

/// The server's metrics, kept in a registry of its own (no global bootstrap), so that several
/// servers, as in tests, never mix their figures.
public final class ServerMetrics: Sendable {
    public let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private let counters = Mutex<[CounterKey: CoreMetrics.Counter]>([:])
    private let timers = Mutex<[String: CoreMetrics.Timer]>([:])

    private struct CounterKey: Hashable {
        let route: String
        let method: String
        let status: Int
    }

    public init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500),
            .milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10),
            .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
            .milliseconds(500), .seconds(1),
        ]
        self.factory = factory
    }

    /// Counts one answered request and its latency under its route pattern (`unmatched` for 404s).
    public func record(route: String, method: String, status: Int, nanoseconds: Int64) {
        let key = CounterKey(route: route, method: method, status: status)
        let counter = counters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = CoreMetrics.Counter(
                label: "flowstack_http_requests_total",
                dimensions: [("route", route), ("method", method), ("status", String(status))],
                factory: factory)
            counters[key] = counter
            return counter
        }
        counter.increment()
        let timer = timers.withLock { timers in
            if let timer = timers[route] { return timer }
            let timer = CoreMetrics.Timer(
                label: "flowstack_http_request_duration_seconds", dimensions: [("route", route)], factory: factory)
            timers[route] = timer
            return timer
        }
        timer.recordNanoseconds(nanoseconds)
    }

    /// The Prometheus text exposition of every metric.
    public func exposition() -> [UInt8] {
        registry.emitToBuffer()
    }
}
