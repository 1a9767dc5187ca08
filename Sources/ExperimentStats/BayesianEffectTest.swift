// BayesianEffectTest: the chance to beat the baseline, as gbstats' EffectBayesianABTest.

/// The Bayesian comparison with gbstats' default configuration (`EffectBayesianConfig()`: a
/// relative effect, an improper flat prior on it), so the numbers equal gbstats 0.8.0's
/// `EffectBayesianABTest(...).compute_result()`.
///
/// With the improper prior the posterior of the relative effect is normal with the estimate as
/// its mean and the delta-method variance as its variance; the chance to win is the posterior
/// mass above zero.
///
/// ```swift
/// let test = BayesianEffectTest(RelativeEffect(baseline: .init(units: 100, conversions: 10),
///                                              treatment: .init(units: 100, conversions: 15)))
/// test.chanceToWin   // 0.8079558…
/// ```
///
/// Only meaningful when ``RelativeEffect/problem`` is nil.
public struct BayesianEffectTest: Sendable, Equatable {
    public var effect: RelativeEffect

    public init(_ effect: RelativeEffect) {
        self.effect = effect
    }

    /// The posterior mean of the relative effect.
    public var posteriorMean: Double { effect.estimate }

    /// The posterior standard deviation of the relative effect.
    public var posteriorStandardDeviation: Double { effect.variance.squareRoot() }

    /// `P(effect > 0)`: the chance that the treatment beats the baseline.
    public var chanceToWin: Double {
        NormalDistribution.sf(-posteriorMean / posteriorStandardDeviation)
    }
}
