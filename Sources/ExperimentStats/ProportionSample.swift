// ProportionSample: one variant's units and conversions, as a proportion with its variance.

/// One variant's sample for a conversion metric: `units` (sessions) of which `conversions`
/// converted.
///
/// As gbstats' `ProportionStatistic`: the mean is `conversions / units` (0 for no units) and the
/// variance the Bernoulli `p (1 − p)`, zero when nobody or everybody converted.
///
/// ```swift
/// ProportionSample(units: 200, conversions: 50).mean       // 0.25
/// ProportionSample(units: 200, conversions: 50).variance   // 0.1875
/// ```
public struct ProportionSample: Sendable, Equatable {
    public var units: Int
    public var conversions: Int

    public init(units: Int, conversions: Int) {
        self.units = units
        self.conversions = conversions
    }

    /// The conversion rate; 0 when there are no units, as gbstats has it.
    public var mean: Double {
        units == 0 ? 0 : Double(conversions) / Double(units)
    }

    /// `p (1 − p)`, the variance of one unit's conversion.
    public var variance: Double {
        let p = mean
        return p * (1 - p)
    }

    /// Whether the variance is zero (no units, nobody or everybody converted): no test can say
    /// anything about this sample.
    public var hasZeroVariance: Bool { variance <= 0 }
}
