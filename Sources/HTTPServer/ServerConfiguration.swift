// The limits and sizes an HTTP server runs with.

/// How an `HTTPServer` listens and what it accepts.
public struct ServerConfiguration: Sendable {
    /// Address to bind (`127.0.0.1`, `0.0.0.0`, `::1`, `localhost`).
    public var host: String = "127.0.0.1"
    /// Port to bind; 0 picks a free one (read it back from `HTTPServer.port`).
    public var port: Int = 8080
    /// Threads of libmicrohttpd's pool, each with its own epoll loop.
    public var threads: Int = ServerConfiguration.coreCount
    /// The largest request body accepted, in bytes; larger ones get 413.
    public var maxBodyBytes: Int = 1 << 20
    /// Seconds a connection may stay idle (or stall mid-request) before it is closed.
    public var connectionTimeoutSeconds: Int = 30
    /// Connections open at once across all clients.
    public var connectionLimit: Int = 8192
    /// Connections open at once from one IP address.
    public var perIPConnectionLimit: Int = 2048
    /// Memory for one connection's request line and headers; a request that needs more gets 431.
    /// libmicrohttpd zeroes the unused part of it at every request, so every request writes
    /// (and pulls into the cache) about this many bytes: 32 KiB was a core's whole L1 data cache.
    /// 16 KiB, as Node.js allows, serves state reads 8–20% faster than 32 KiB did.
    public var connectionMemoryBytes: Int = 16 * 1024
    /// Pending connections the kernel may queue before `accept`.
    public var listenBacklog: Int = 1024
    /// Bodies of at least this many bytes, of a text-like type, are sent gzip-compressed to
    /// clients that accept it (`ContentCoding`); nil sends every body as it is.
    public var gzipMinimumBytes: Int? = 1024

    public init() {}

    /// Online processors, at least one.
    public static var coreCount: Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
