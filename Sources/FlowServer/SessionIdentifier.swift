// Session ids that sort by their creation time, so that a new session's rows land where the
// newest sessions' rows are in every table and index keyed by the session's id.
import FlowStore
import Foundation

/// A new session's id: `s_` and 22 characters of an alphabet in byte order
/// (`-0-9A-Z_a-z`: the base64url characters, sorted), 7 for the milliseconds since 1970 (42
/// bits, until the year 2109, when they wrap) and 15 random ones (90 bits).
///
/// Ids made later sort after ids made earlier, byte by byte as SQLite's keys compare them (and
/// about so under PostgreSQL's collations): the sessions live now are at the end of each B-tree
/// keyed by their id (the sessions, their heads, exposures, features), so that creating one and
/// committing its actions write a few pages that are in memory and written again soon, where
/// random ids put every new session on a page of its own, anywhere in the file (more pages for
/// each checkpoint to copy and sync, a cold page to read at each creation, and pages split
/// half full). BENCHMARKS.md, thirty-fifth session, measures it. The random part keeps
/// ids unique and unguessable across nodes; the time it shows is the session's `createdAt`
/// (to the millisecond).
/// Ids made by earlier releases are 128 random bits in the same characters and length: both are served.
enum SessionIdentifier {
    /// Ascending byte values: the order of the characters is the order of the numbers they write.
    static let alphabet = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz".utf8)
    static let timeCharacters = 7
    static let randomCharacters = 15

    /// The id of a session made at `created`.
    static func make(at created: Date) -> String {
        var generator = SystemRandomNumberGenerator()
        // As `Timestamp` writes the session's `created_at`, so that the two agree to the
        // millisecond; a clock outside the years 1970 to 9999 makes time 0.
        return make(milliseconds: UInt64(Timestamp.milliseconds(created) ?? 0), using: &generator)
    }

    /// The id of a session made at `milliseconds` since 1970, its random part from `generator`.
    static func make(milliseconds: UInt64, using generator: inout some RandomNumberGenerator) -> String {
        var bytes = [UInt8]("s_".utf8)
        bytes.reserveCapacity(2 + timeCharacters + randomCharacters)
        for index in (0..<timeCharacters).reversed() {
            bytes.append(alphabet[Int(milliseconds >> (6 * UInt64(index)) & 63)])
        }
        var random = generator.next() as UInt64
        var left = 64
        for _ in 0..<randomCharacters {
            if left < 6 {
                random = generator.next()
                left = 64
            }
            bytes.append(alphabet[Int(random & 63)])
            random >>= 6
            left -= 6
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
