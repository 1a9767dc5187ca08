// BucketingTests: GrowthBook's hash, bucket ranges and variation choice against published vectors.

import FeatureFlags
import Testing

struct BucketingTests {
    /// The hash matches every GrowthBook vector, ASCII and non-ASCII, v1 and v2, and is nil for unknown versions.
    @Test(arguments: GrowthBookVectors.hash)
    func hashMatchesGrowthBook(_ vector: GrowthBookVectors.HashCase) {
        #expect(Bucketing.hash(seed: vector.seed, value: vector.value, version: vector.version) == vector.expected)
    }

    /// FNV-1a over UTF-16 code units gives the JS SDK's raw values.
    @Test(arguments: GrowthBookVectors.fnv1a32)
    func fnvMatchesJavaScript(_ text: String, _ expected: UInt32) {
        #expect(Bucketing.fnv1a32(text) == expected)
    }

    /// Hashing reads UTF-16 code units, not characters or bytes: composed and decomposed é differ.
    @Test func hashReadsCodeUnitsNotCharacters() {
        let composed = "jos\u{E9}"
        let decomposed = "jose\u{301}"
        #expect(composed == decomposed)  // Swift calls them equal…
        #expect(Bucketing.fnv1a32(composed) != Bucketing.fnv1a32(decomposed))  // …JS does not.
    }

    /// Bucket ranges match every getBucketRange case (to 6 places, as the SDK tests compare).
    @Test(arguments: GrowthBookVectors.bucketRanges)
    func bucketRangesMatchGrowthBook(_ vector: GrowthBookVectors.BucketRangeCase) {
        let ranges = Bucketing.bucketRanges(count: vector.count, coverage: vector.coverage, weights: vector.weights)
        #expect(ranges.count == vector.expected.count)
        for (range, expected) in zip(ranges, vector.expected) {
            #expect(rounded(range.start) == rounded(expected.0))
            #expect(rounded(range.end) == rounded(expected.1))
        }
    }

    /// chooseVariation matches every GrowthBook case, nil standing for -1.
    @Test(arguments: GrowthBookVectors.chooseVariation)
    func chooseVariationMatchesGrowthBook(_ vector: GrowthBookVectors.ChooseVariationCase) {
        let ranges = vector.ranges.map { BucketRange(start: $0.0, end: $0.1) }
        #expect(Bucketing.chooseVariation(n: vector.n, ranges: ranges) == vector.expected)
    }

    /// Equal weights match the getEqualWeights cases.
    @Test(arguments: GrowthBookVectors.equalWeights)
    func equalWeightsMatchGrowthBook(_ count: Int, _ expected: [Double]) {
        let weights = Bucketing.equalWeights(count: count)
        #expect(weights.map { rounded($0, places: 8) } == expected)
    }

    /// Weights that are negative or not finite fall back to equal weights even when they sum to 1, so ranges never run backwards.
    @Test(arguments: [[1.2, -0.2], [Double.nan, 1], [Double.infinity, 0]])
    func unusableWeightsFallBackToEqual(_ weights: [Double]) {
        let ranges = Bucketing.bucketRanges(count: 2, coverage: 1, weights: weights)
        #expect(ranges == [BucketRange(start: 0, end: 0.5), BucketRange(start: 0.5, end: 1)])
    }

    /// A NaN coverage counts as none, and no count gives no ranges: nothing traps.
    @Test func degenerateInputsDoNotTrap() {
        let ranges = Bucketing.bucketRanges(count: 2, coverage: .nan)
        #expect(ranges == [BucketRange(start: 0, end: 0), BucketRange(start: 0.5, end: 0.5)])
        #expect(Bucketing.bucketRanges(count: 0).isEmpty)
        #expect(Bucketing.bucketRanges(count: -3).isEmpty)
        #expect(Bucketing.chooseVariation(n: .nan, ranges: Bucketing.bucketRanges(count: 2)) == nil)
    }

    /// Growing coverage keeps every covered user in the variant they had (ranges shrink in place).
    @Test func growingCoverageKeepsAssignments() {
        let narrow = Bucketing.bucketRanges(count: 2, coverage: 0.1, weights: [0.4, 0.6])
        let wide = Bucketing.bucketRanges(count: 2, coverage: 1, weights: [0.4, 0.6])
        for step in 0..<10_000 {
            let n = Double(step) / 10_000
            if let before = Bucketing.chooseVariation(n: n, ranges: narrow) {
                #expect(Bucketing.chooseVariation(n: n, ranges: wide) == before)
            }
        }
    }

    private func rounded(_ value: Double, places: Int = 6) -> Double {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        return (value * scale).rounded() / scale
    }
}
