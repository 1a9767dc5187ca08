// Session ids: their form, their order by creation time, and their random part.
@testable import FlowServer
import Foundation
import Testing
import TestSupport

struct SessionIdentifierTests {
    /// The time an id was made at, read back from its first seven characters after `s_`.
    static func milliseconds(of id: String) -> UInt64? {
        let bytes = Array(id.utf8)
        guard bytes.count == 24, bytes.starts(with: "s_".utf8) else { return nil }
        var value: UInt64 = 0
        for byte in bytes[2..<9] {
            guard let digit = SessionIdentifier.alphabet.firstIndex(of: byte) else { return nil }
            value = value << 6 | UInt64(digit)
        }
        return value
    }

    /// The alphabet is the 64 base64url characters, in ascending byte order.
    @Test func theAlphabetIsBase64URLSorted() {
        let base64URL = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        #expect(Set(SessionIdentifier.alphabet) == base64URL)
        #expect(SessionIdentifier.alphabet == SessionIdentifier.alphabet.sorted())
    }

    /// `s_` and 22 characters, every one a session id's path segment may hold, as before.
    @Test func idsHaveTheFormOfBefore() {
        for _ in 0..<1_000 {
            let id = SessionIdentifier.make(at: Date())
            #expect(id.utf8.count == 24)
            #expect(id.hasPrefix("s_"))
            #expect(SessionService.isPlausibleId(id), "\(id)")
        }
    }

    /// An id made a millisecond or more later sorts after, byte by byte (as SQLite compares keys)
    /// and as Swift compares strings, whatever either random part; at the carries of every digit too.
    @Test func laterIdsSortAfter() {
        var generator = SeededGenerator(seed: 35)
        var pairs: [(UInt64, UInt64)] = (0..<7).flatMap { digit -> [(UInt64, UInt64)] in
            let carry = UInt64(1) << (6 * UInt64(digit))
            return [(carry - 1, carry), (carry, carry + 1)]
        }
        pairs.append(((1 << 42) - 2, (1 << 42) - 1))
        let now = UInt64(Date().timeIntervalSince1970 * 1000)
        for _ in 0..<5_000 {
            let earlier = UInt64.random(in: now - 1_000_000_000...now, using: &generator)
            pairs.append((earlier, earlier + UInt64.random(in: 1...100, using: &generator)))
        }
        for (earlier, later) in pairs {
            let first = SessionIdentifier.make(milliseconds: earlier, using: &generator)
            let second = SessionIdentifier.make(milliseconds: later, using: &generator)
            #expect(Array(first.utf8).lexicographicallyPrecedes(Array(second.utf8)), "\(earlier) \(first), \(later) \(second)")
            #expect(first < second)
            #expect(Self.milliseconds(of: first) == earlier)
            #expect(Self.milliseconds(of: second) == later)
        }
    }

    /// Ids made in one millisecond differ by their 90 random bits: none repeats, and every random
    /// character takes each of the 64 values.
    @Test func theRandomPartIsRandom() {
        var generator = SystemRandomNumberGenerator()
        let ids = (0..<10_000).map { _ in SessionIdentifier.make(milliseconds: 1_796_000_000_000, using: &generator) }
        #expect(Set(ids).count == ids.count)
        #expect(Set(ids.map { $0.prefix(9) }).count == 1)
        for position in 9..<24 {
            let seen = Set(ids.map { Array($0.utf8)[position] })
            #expect(seen.count == 64, "character \(position): \(seen.count) values")
        }
    }

    /// A clock before 1970 makes ids of time 0 instead of trapping; the id is still well formed.
    @Test func aClockBefore1970MakesTimeZero() {
        let id = SessionIdentifier.make(at: Date(timeIntervalSince1970: -86_400))
        #expect(Self.milliseconds(of: id) == 0)
        #expect(SessionService.isPlausibleId(id))
    }
}
