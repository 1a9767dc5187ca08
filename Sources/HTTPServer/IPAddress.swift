// Client addresses: an IPv4 or IPv6 address as a value, and networks (CIDR) that contain them.
import CMicroHTTPD  // the socket constants: with the shim including <sys/socket.h>, Swift may find them only through it
#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 address, held as 128 bits (IPv4 as `::ffff:a.b.c.d`), cheap to copy and hash.
///
/// ```swift
/// let address = IPAddress("203.0.113.7")     // nil for anything that is not an address
/// address?.description                       // "203.0.113.7"
/// ```
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    public let high: UInt64
    public let low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Parses a numeric IPv4 or IPv6 address (no brackets, port or zone).
    public init?(_ text: some StringProtocol) {
        var trimmed = Substring(text)
        while trimmed.first == " " || trimmed.first == "\t" { trimmed.removeFirst() }
        while trimmed.last == " " || trimmed.last == "\t" { trimmed.removeLast() }
        let string = String(trimmed)
        guard !string.isEmpty, string.utf8.count <= 45 else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, string, &v4) == 1 {
            self.init(ipv4: UInt32(bigEndian: v4.s_addr))
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, string, &v6) == 1 else { return nil }
        self.init(bytes: withUnsafeBytes(of: &v6) { Array($0) })
    }

    init(ipv4: UInt32) {
        high = 0
        low = 0xFFFF_0000_0000 | UInt64(ipv4)
    }

    init(bytes: [UInt8]) {
        var high: UInt64 = 0, low: UInt64 = 0
        for index in 0..<8 { high = high << 8 | UInt64(bytes[index]) }
        for index in 8..<16 { low = low << 8 | UInt64(bytes[index]) }
        self.high = high
        self.low = low
    }

    /// The address of a socket address (`sockaddr_in` or `sockaddr_in6`), or nil.
    init?(_ address: UnsafePointer<sockaddr>) {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            let v4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
            self.init(ipv4: UInt32(bigEndian: v4))
        case AF_INET6:
            var v6 = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
            self.init(bytes: withUnsafeBytes(of: &v6) { Array($0) })
        default:
            return nil
        }
    }

    public var isIPv4: Bool { high == 0 && low >> 32 == 0xFFFF }

    public var description: String {
        if isIPv4 {
            let v4 = UInt32(truncatingIfNeeded: low)
            return "\(v4 >> 24).\(v4 >> 16 & 0xFF).\(v4 >> 8 & 0xFF).\(v4 & 0xFF)"
        }
        var v6 = in6_addr()
        withUnsafeMutableBytes(of: &v6) { raw in
            for index in 0..<8 { raw[index] = UInt8(truncatingIfNeeded: high >> (56 - 8 * index)) }
            for index in 0..<8 { raw[8 + index] = UInt8(truncatingIfNeeded: low >> (56 - 8 * index)) }
        }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &v6, &buffer, socklen_t(buffer.count)) != nil else { return "?" }
        return String(cString: buffer)
    }
}

/// A network in CIDR notation (`10.0.0.0/8`, `::1/128`); a bare address is a network of one.
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    public let address: IPAddress
    /// Leading bits that must match, out of 128 (an IPv4 prefix is counted after the 96 bits of `::ffff:`).
    public let prefix: Int

    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(parts[0]) else { return nil }
        let bits = address.isIPv4 ? 32 : 128
        var length = bits
        if parts.count == 2 {
            guard let parsed = Int(parts[1]), (0...bits).contains(parsed) else { return nil }
            length = parsed
        }
        self.address = address
        self.prefix = address.isIPv4 ? 96 + length : length
    }

    public func contains(_ candidate: IPAddress) -> Bool {
        func masked(_ value: UInt64, _ bits: Int) -> UInt64 {
            bits <= 0 ? 0 : bits >= 64 ? value : value & ~(UInt64.max >> bits)
        }
        return masked(candidate.high, prefix) == masked(address.high, prefix)
            && masked(candidate.low, prefix - 64) == masked(address.low, prefix - 64)
    }

    public var description: String {
        "\(address)/\(address.isIPv4 ? prefix - 96 : prefix)"
    }
}
