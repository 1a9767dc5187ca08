// Resolves a host and port to the socket address the server binds.
import CMicroHTTPD  // the socket constants: with the shim including <sys/socket.h>, Swift may find them only through it
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

    /// The length `bind` is given for this address's family.
    var length: socklen_t {
        socklen_t(isIPv6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
    }

    /// The port of an IPv4 or IPv6 address, as `getsockname` fills it; 0 for another family.
    static func port(of storage: sockaddr_storage) -> Int {
        let family = Int32(storage.ss_family)
        return withUnsafePointer(to: storage) { pointer in
            switch family {
            case AF_INET:
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            case AF_INET6:
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            default:
                0
            }
        }
    }

    func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>) -> T) -> T {
        withUnsafePointer(to: storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1, body)
        }
    }
}
