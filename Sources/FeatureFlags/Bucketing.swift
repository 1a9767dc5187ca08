// Bucketing: GrowthBook's FNV-1a hashing, which turns a seed and a user's id into a number in [0, 1).

/// GrowthBook-compatible hashing and bucketing, so an assignment made here can be cross-checked
/// with any GrowthBook SDK.
///
/// Hashing works on UTF-16 code units, as the JavaScript SDK does (`str.charCodeAt(i)`): an
/// accented letter is one unit, an emoji two. Version 2 is the one FlowStack buckets with;
/// version 1 is kept because GrowthBook's published test vectors cover it.
///
/// ```swift
/// Bucketing.hash(seed: "seed", value: "a", version: 2)   // 0.0505
/// let ranges = Bucketing.bucketRanges(count: 2, coverage: 1, weights: [0.5, 0.5])
/// Bucketing.chooseVariation(n: 0.0505, ranges: ranges)     // 0
/// ```
public enum Bucketing {
    /// The FNV-1a 32-bit offset basis.
    static let offsetBasis: UInt32 = 0x811C_9DC5
    /// The FNV 32-bit prime (the JS SDK multiplies by it as a sum of shifts: 1 + 2 + 16 + 128 + 256 + 2^24).
    static let prime: UInt32 = 0x0100_0193

    /// FNV-1a 32-bit over the UTF-16 code units of `text`.
    ///
    /// Each code unit is XORed in whole (not byte by byte), exactly like the JS SDK's
    /// `hval ^= str.charCodeAt(i)`, so non-ASCII ids hash the same as in the browser.
    ///
    /// ```swift
    /// Bucketing.fnv1a32("a")   // 3826002220
    /// ```
    public static func fnv1a32(_ text: String) -> UInt32 {
        var hash = offsetBasis
        for unit in text.utf16 {
            hash ^= UInt32(unit)
            hash = hash &* prime
        }
        return hash
    }

    /// GrowthBook's hash of `value` with `seed`: a number in [0, 1), or `nil` for an unknown
    /// `version`.
    ///
    /// - version 1 (biased, kept for compatibility): `(fnv1a32(value + seed) % 1000) / 1000`
    /// - version 2: `(fnv1a32(String(fnv1a32(seed + value))) % 10000) / 10000`
    ///
    /// ```swift
    /// Bucketing.hash(seed: "", value: "a", version: 1)      // 0.22
    /// Bucketing.hash(seed: "foo", value: "ab", version: 2)  // 0.2575
    /// Bucketing.hash(seed: "abc", value: "def", version: 99) // nil
    /// ```
    public static func hash(seed: String, value: String, version: Int) -> Double? {
        switch version {
        case 2:
            // The inner hash is rehashed as its decimal text, as JS's `hash + ""` does.
            let inner = fnv1a32(seed + value)
            return Double(fnv1a32(String(inner)) % 10_000) / 10_000
        case 1:
            return Double(fnv1a32(value + seed) % 1_000) / 1_000
        default:
            return nil
        }
    }
}
