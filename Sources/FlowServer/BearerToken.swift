// Bearer tokens: made from 256 random bits, stored only as SHA-256, compared in constant time;
// the one that opened a cached session is kept in memory beside it (`OpenedToken`).
import Crypto
import Foundation
import HTTPServer

/// A secret that opens one session (or the admin routes).
///
/// ```swift
/// let token = BearerToken.generate()          // shown to the client once
/// let stored = BearerToken.hash(token)        // what the database keeps
/// BearerToken.matches(presented, hash: stored)
/// ```
enum BearerToken {
    /// 32 bytes from the system's secure generator, as 43 characters of unpadded base64url.
    static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for _ in 0..<4 {
            withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) }
        }
        return base64URL(bytes)
    }

    /// SHA-256 of the token's UTF-8 bytes.
    static func hash(_ token: String) -> [UInt8] {
        var token = token
        return token.withUTF8 { bytes(of: SHA256.hash(data: UnsafeRawBufferPointer($0))) }
    }

    /// SHA-256 of arbitrary bytes (request bodies for idempotency keys).
    static func digest(_ bytes: [UInt8]) -> [UInt8] {
        Self.bytes(of: SHA256.hash(data: bytes))
    }

    /// A digest's bytes, copied at once (`Array(digest)` iterated them one at a time, some
    /// 1,900 instructions for 32 bytes).
    private static func bytes(of digest: SHA256.Digest) -> [UInt8] {
        digest.withUnsafeBytes { Array($0) }
    }

    /// True when `presented` hashes to `hash`. Comparing fixed-length digests, byte for byte
    /// without an early exit, leaks neither the token nor how much of it was right.
    static func matches(_ presented: String, hash: [UInt8]) -> Bool {
        var presented = presented
        let digest = presented.withUTF8 { SHA256.hash(data: UnsafeRawBufferPointer($0)) }
        return digest.withUnsafeBytes { digest in
            hash.withUnsafeBytes { constantTimeEquals(digest, $0) }
        }
    }

    /// Compares two byte strings in time that depends only on their lengths.
    static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.withUnsafeBytes { a in b.withUnsafeBytes { b in constantTimeEquals(a, b) } }
    }

    static func constantTimeEquals(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in 0..<a.count { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    /// The token of an `Authorization: Bearer <token>` header, or nil when absent or malformed.
    static func presented(in request: Request) -> String? {
        guard let header = request.headers["Authorization"] else { return nil }
        return token(inAuthorization: header)
    }

    /// The token of an `Authorization` header's value: the scheme `Bearer` (any case), spaces,
    /// then 1 to 512 bytes, spaces and tabs around them dropped. Read byte by byte: this runs on
    /// every session request, where splitting and trimming with Foundation cost more than the
    /// rest of a cached read.
    static func token(inAuthorization header: String) -> String? {
        var header = header
        return header.withUTF8 { bytes -> String? in
            let space = UInt8(ascii: " "), tab = UInt8(ascii: "\t")
            var index = 0
            while index < bytes.count, bytes[index] == space { index += 1 }
            // A static string, read in place: an array of its bytes was allocated at every request.
            let scheme: StaticString = "bearer"
            let length = scheme.utf8CodeUnitCount
            guard bytes.count - index > length else { return nil }
            for offset in 0..<length {
                let byte = bytes[index + offset]
                guard (byte >= 65 && byte <= 90 ? byte | 0x20 : byte) == scheme.utf8Start[offset] else { return nil }
            }
            index += length
            guard bytes[index] == space else { return nil }
            while index < bytes.count, bytes[index] == space || bytes[index] == tab { index += 1 }
            var end = bytes.count
            while end > index, bytes[end - 1] == space || bytes[end - 1] == tab { end -= 1 }
            guard end > index, end - index <= 512 else { return nil }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[index..<end]), as: UTF8.self)
        }
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var out: [UInt8] = []
        var index = 0
        while index + 3 <= bytes.count {
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], alphabet[Int(n & 63)]]
            index += 3
        }
        let rest = bytes.count - index
        if rest == 1 {
            let n = UInt32(bytes[index]) << 16
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)]]
        } else if rest == 2 {
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)]]
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// The token that last opened a session, kept with the session's state in memory (never
/// stored, logged or exported), so that its next request compares its bytes in constant time
/// instead of hashing it: SHA-256 through swift-crypto was 3,800 instructions of every session
/// request, 5% of a cached read. Held in place, without an allocation; a token longer than
/// `capacity` (the server makes 43-byte ones) is not kept and is hashed at each request.
struct OpenedToken: Sendable {
    static let capacity = 48

    private var bytes: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)
    private let count: Int

    /// `token`'s bytes, or nil when there are more than `capacity`.
    init?(_ token: String) {
        var token = token
        let count = token.utf8.count
        guard count <= Self.capacity else { return nil }
        self.count = count
        token.withUTF8 { source in
            withUnsafeMutableBytes(of: &bytes) { $0.copyMemory(from: UnsafeRawBufferPointer(source)) }
        }
    }

    /// Whether `presented` is this token, in time that depends only on the lengths.
    func matches(_ presented: String) -> Bool {
        var presented = presented
        return presented.withUTF8 { presented in
            guard presented.count == count else { return false }
            return withUnsafeBytes(of: bytes) { kept in
                BearerToken.constantTimeEquals(UnsafeRawBufferPointer(presented), UnsafeRawBufferPointer(rebasing: kept.prefix(count)))
            }
        }
    }
}

/// A kept token prints as `<redacted>`, alone or inside a session (`String(describing:)`,
/// `dump`, a test's failure message): its bytes, shown as six integers, were the token.
extension OpenedToken: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    var description: String { "<redacted>" }
    var debugDescription: String { "<redacted>" }
    var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
