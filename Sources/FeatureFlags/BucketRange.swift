// BucketRange: the half-open slice [start, end) of the hash space that one variation owns.

/// The half-open range `[start, end)` of hash values that fall into one variation.
///
/// A range whose `start` equals its `end` holds nothing: that is how zero weight and zero
/// coverage show.
///
/// ```swift
/// let range = BucketRange(start: 0, end: 0.5)
/// range.contains(0.5)   // false: the end belongs to the next variation
/// ```
public struct BucketRange: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The first hash value in the range.
    public var start: Double
    /// The first hash value past the range.
    public var end: Double

    public init(start: Double, end: Double) {
        self.start = start
        self.end = end
    }

    /// Whether `n` lies in `[start, end)`, GrowthBook's `inRange`.
    public func contains(_ n: Double) -> Bool {
        n >= start && n < end
    }

    /// The range as `[start, end)`.
    public var description: String { "[\(start), \(end))" }
}
