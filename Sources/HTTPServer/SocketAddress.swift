// Resolves a host and port to the socket address libmicrohttpd binds.
#if canImport(Glibc)
import Glibc
#endif

/// A resolved IPv4 or IPv6 address to listen on.
struct SocketAddress {
    private var storage = sockaddr_storage()
    let isIPv6: Bool

    /// Resolves `host` (a numeric address or a name such as `localhost`) for listening.
    static func resolve(host: String, port: Int) throws -> SocketAddress {
        guard (0...65535).contains(port) else {
            throw HTTPServerError(description: "port \(port) is not in 0...65535")
        }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &result)
        guard status == 0, let first = result else {
            throw HTTPServerError(description: "cannot resolve host '\(host)': \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(result) }
        // Prefer IPv4 when a name resolves to both, as `localhost` does.
        var chosen = first
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if entry.pointee.ai_family == AF_INET { chosen = entry; break }
            cursor = entry.pointee.ai_next
        }
        var address = SocketAddress(isIPv6: chosen.pointee.ai_family == AF_INET6)
        withUnsafeMutableBytes(of: &address.storage) { target in
            let length = min(Int(chosen.pointee.ai_addrlen), target.count)
            if let source = chosen.pointee.ai_addr {
                target.copyMemory(from: UnsafeRawBufferPointer(start: source, count: length))
            }
        }
        return address
    }

    private init(isIPv6: Bool) {
        self.isIPv6 = isIPv6
    }

    func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>) -> T) -> T {
        withUnsafePointer(to: storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1, body)
        }
    }
}
