// The idempotency keys a cached session has committed, so that a new key's stored answer is
// not looked up in the database before every keyed action.

/// A Bloom filter of the idempotency keys committed on one session that grows with the session
/// (a scalable Bloom filter, Almeida et al. 2007). It never forgets a key it was given, so "not
/// in it" is certain and "in it" only likely: a key that was never used may look used, and its
/// answer is then looked up as before.
///
/// The first 40 keys go into 512 bits held inline (three bits a key, no allocation: most
/// sessions never take more). Each later segment is twice the one before, in bits and in keys,
/// and sets one bit more per key, so that however many segments a session has, no more than
/// about 1 new key in 37 looks used: 1 in 740 after 20 taps, 1 in 110 after 40, 1 in 70 after
/// 120, 1 in 48 after 1,000. The clients send a key with every tap, and a session kept across
/// launches takes thousands: a filter of fixed size (the one before this, 64 bytes) took one
/// new key in three for used after 200. Past `maximumKeys` (8 KB of later segments) it says
/// "maybe" to every key, as a session with no filter does.
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
    /// The first segment, eight words inline, aligned as a word (a SIMD vector would align the
    /// whole cached session to 64 bytes).
    private var first = InlineArray<8, UInt64>(repeating: 0)
    /// The keys inserted, whose number says which segment the next one goes into.
    private var count = 0
    /// The segments after the first, end to end: segment `s` (from 1) has `8 << s` words and
    /// holds keys `capacity * (2^s - 1) ..< capacity * (2^(s+1) - 1)`. Empty until key 41.
    private var later: [UInt64] = []

    /// Keys in the first segment; segment `s` holds `capacity << s`.
    static let capacity = 40
    /// Segments, the inline one included: 40 × (2^7 - 1) = 5,080 keys in 8,064 bytes of later
    /// segments, past which every key looks used.
    static let segments = 7
    static let maximumKeys = capacity * ((1 << segments) - 1)

    /// The most keys a session read from the database brings into its filter; one with more
    /// looks every key up. Read once, when a session not cached is loaded.
    static let loadedLimit = 1_000

    init() {}

    /// Remembers a committed key.
    mutating func insert(_ key: String) {
        guard count < Self.maximumKeys else { return }  // full: `mayContain` is true from now on
        let segment = Self.segment(ofKey: count)
        count += 1
        let hash = Self.hash(key)
        if segment == 0 {
            for probe in 0..<3 {
                let bit = Self.bit(hash, probe: probe, segment: 0)
                first[bit >> 6] |= Self.mask(bit)
            }
            return
        }
        let words = Self.words(of: segment)
        if later.count < words.upperBound { later.append(contentsOf: repeatElement(0, count: words.upperBound - later.count)) }
        for probe in 0..<(3 + segment) {
            let bit = Self.bit(hash, probe: probe, segment: segment)
            later[words.lowerBound + (bit >> 6)] |= Self.mask(bit)
        }
    }

    /// False when `key` was certainly never inserted.
    func mayContain(_ key: String) -> Bool {
        guard count < Self.maximumKeys else { return true }
        let hash = Self.hash(key)
        if (0..<3).allSatisfy({ probe in
            let bit = Self.bit(hash, probe: probe, segment: 0)
            return Self.isSet(bit, in: first[bit >> 6])
        }) { return true }
        guard count > Self.capacity else { return false }
        return later.withUnsafeBufferPointer { later in
            for segment in 1...Self.segment(ofKey: count - 1) {
                let start = Self.words(of: segment).lowerBound
                if (0..<(3 + segment)).allSatisfy({ probe in
                    let bit = Self.bit(hash, probe: probe, segment: segment)
                    return Self.isSet(bit, in: later[start + (bit >> 6)])
                }) { return true }
            }
            return false
        }
    }

    /// Bit `bit` of a segment, in the word `bit >> 6` of it.
    private static func isSet(_ bit: Int, in word: UInt64) -> Bool {
        word & Self.mask(bit) != 0
    }

    /// The bit of its word that `bit` of a segment is.
    private static func mask(_ bit: Int) -> UInt64 { 1 << UInt64(bit & 63) }

    /// The segment the key inserted `index`th (from 0) goes into.
    static func segment(ofKey index: Int) -> Int {
        // Segment s ends before key capacity × (2^(s+1) - 1).
        var segment = 0
        while index >= capacity * ((2 << segment) - 1) { segment += 1 }
        return segment
    }

    /// Where segment `segment` (from 1) lies in `later`, in words.
    private static func words(of segment: Int) -> Range<Int> {
        let start = 8 * ((1 << segment) - 2)
        return start..<(start + (8 << segment))
    }

    /// The `probe`th bit a key sets in a segment of `512 << segment` bits (it sets
    /// `3 + segment`), by double hashing (Kirsch and Mitzenmacher) from the two halves of one hash.
    private static func bit(_ hash: UInt64, probe: Int, segment: Int) -> Int {
        let mask = UInt64((512 << segment) - 1)
        return Int(truncatingIfNeeded: ((hash & 0xFFFF_FFFF) &+ UInt64(probe) &* ((hash >> 32) | 1)) & mask)
    }

    /// The process's seeded hasher, so that a client cannot choose keys that fill the filter.
    private static func hash(_ key: String) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(key)
        return UInt64(bitPattern: Int64(hasher.finalize()))
    }
}
