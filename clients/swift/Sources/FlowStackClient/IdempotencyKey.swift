// IdempotencyKey: a tap's idempotency key, a UUIDv7 (RFC 9562, section 5.7) whose text sorts by the millisecond it was made.

import Foundation

/// The key a tap is posted under (`Idempotency-Key`), the same on every retry and in a batch.
///
/// A UUIDv7: the Unix time in milliseconds in its first 48 bits, then the version, 12 random
/// bits, the variant and 62 random bits. The server's index of keys leads by the key, so keys
/// that sort by time are added at its end instead of on a random page: a keyed action costs the
/// server less than under a random (v4) key, which it still takes. Keys made in one millisecond
/// are not ordered among themselves; 74 random bits keep them apart.
///
/// ```swift
/// let key = IdempotencyKey.make()  // "019a1b2c-3d4e-7f60-9a1b-2c3d4e5f6071"
/// ```
enum IdempotencyKey {
    /// A new key, made at `unixMilliseconds` (now unless given; a test passes its own clock's).
    static func make(at unixMilliseconds: UInt64 = currentUnixMilliseconds()) -> String {
        var random = SystemRandomNumberGenerator()
        // The first half: 48 bits of time, the version 7, 12 random bits.
        let high = (unixMilliseconds & 0xFFFF_FFFF_FFFF) << 16 | 0x7000 | (random.next() & 0x0FFF)
        // The second half: the variant `10`, 62 random bits.
        let low = 0x8000_0000_0000_0000 | (random.next() & 0x3FFF_FFFF_FFFF_FFFF)
        return canonicalText(high: high, low: low)
    }

    /// Now, in milliseconds since the Unix epoch (0 for a clock set before it).
    static func currentUnixMilliseconds() -> UInt64 {
        UInt64(max(0, (Date().timeIntervalSince1970 * 1000).rounded(.down)))
    }

    /// The 128 bits as lowercase hex in the 8-4-4-4-12 form, as
    /// `UUID(uuid:).uuidString.lowercased()` writes them.
    static func canonicalText(high: UInt64, low: UInt64) -> String {
        var text = [UInt8](repeating: UInt8(ascii: "-"), count: 36)
        var position = 0
        for nibble in 0..<32 {
            if position == 8 || position == 13 || position == 18 || position == 23 { position += 1 }
            let digit = UInt8(truncatingIfNeeded: ((nibble < 16 ? high : low) >> (60 - 4 * (nibble % 16))) & 0xF)
            text[position] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
            position += 1
        }
        return String(decoding: text, as: UTF8.self)
    }
}
