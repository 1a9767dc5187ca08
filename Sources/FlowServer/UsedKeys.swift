// The idempotency keys a cached session has committed, so that a new key's stored answer is
// not looked up in the database before every keyed action.

/// A Bloom filter of the idempotency keys committed on one session: 512 bits, three per key.
/// It never forgets a key it was given, so "not in it" is certain and "in it" only likely (a
/// key that was never used may look used, and its answer is then looked up as before): about
/// 1 in 740 new keys after 20 taps, 1 in 60 after 50, 1 in 11 after 100. A longer session looks
/// up more often, never wrongly. It has a fixed size (64 bytes in the cached session) whatever
/// the number of taps, and needs no allocation.
///
/// It holds only while the cached session knows every commit of the session. `LiveSession`
/// keeps one for a session this node created, and for one read from the database (a restart, a
/// cache miss, a conflict, a lease taken back) when the store tells its keys, read after the
/// session (SQLite, up to `loadedLimit`); else a loaded session looks every key up. A key
/// another writer committed meanwhile on a stale cache is still caught: the database checks
/// keys in the commit's transaction (a conflict, after which the turn reads the session and
/// the answer), and on a shared database a refusal on the cached state is judged again on the
/// stored one.
struct UsedKeys: Sendable {
    /// Eight words inline, aligned as a word (a SIMD vector would align the whole cached
    /// session to 64 bytes).
    private var bits = InlineArray<8, UInt64>(repeating: 0)

    /// The most keys a session read from the database brings into its filter; one with more
    /// looks every key up (a filter of 200 keys already takes one new key in three for used).
    static let loadedLimit = 200

    init() {}

    /// Remembers a committed key.
    mutating func insert(_ key: String) {
        let hash = Self.hash(key)
        for shift in stride(from: 0, through: 18, by: 9) {
            let bit = Int(truncatingIfNeeded: hash >> UInt64(shift)) & 511
            bits[bit >> 6] |= 1 << UInt64(bit & 63)
        }
    }

    /// False when `key` was certainly never inserted.
    func mayContain(_ key: String) -> Bool {
        let hash = Self.hash(key)
        for shift in stride(from: 0, through: 18, by: 9) {
            let bit = Int(truncatingIfNeeded: hash >> UInt64(shift)) & 511
            if bits[bit >> 6] & (1 << UInt64(bit & 63)) == 0 { return false }
        }
        return true
    }

    /// Three bits of nine from one hash: the process's seeded hasher, so that a client cannot
    /// choose keys that fill the filter.
    private static func hash(_ key: String) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(key)
        return UInt64(bitPattern: Int64(hasher.finalize()))
    }
}
