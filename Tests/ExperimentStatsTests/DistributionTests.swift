// The distributions against SciPy 1.17.1 (the library gbstats computes with), to 1e-12.
import ExperimentStats
import Testing

/// `|value − expected|` within `tolerance` of `expected`'s magnitude (or absolutely, near zero).
func close(_ value: Double, _ expected: Double, _ tolerance: Double = 1e-12) -> Bool {
    abs(value - expected) <= tolerance * max(abs(expected), 1e-300) || abs(value - expected) < 1e-300
}

struct DistributionTests {
    /// Student-t tails, with fractional and huge degrees of freedom (scipy.stats.t.sf).
    @Test(arguments: [
        (2.0, 1.0, 0.14758361765043326),
        (1.5, 2.5, 0.12391822654314809),
        (-0.7, 7.0, 0.7467412239022),
        (3.2, 29.5, 0.0016388584061534223),
        (2.0, 10000.0, 0.022763630330717714),
        (5.0, 1000000.0, 2.8669989354453723e-07),
        (2.0, 500000000.0, 0.02275013221813402),
        (40.0, 3.0, 1.7190340394579253e-05),
        (8.0, 200.0, 4.939600454665298e-14),
    ])
    func studentTTail(t: Double, degreesOfFreedom: Double, expected: Double) {
        let distribution = StudentTDistribution(degreesOfFreedom: degreesOfFreedom)
        #expect(close(distribution.sf(t), expected), "sf(\(t)) = \(distribution.sf(t))")
        #expect(close(distribution.cdf(-t), expected), "cdf(\(-t)) = \(distribution.cdf(-t))")
    }

    /// Student-t quantiles, the interval's width (scipy.stats.t.ppf).
    @Test(arguments: [
        (0.975, 1.0, 12.706204736174694),
        (0.975, 2.0, 4.302652729749462),
        (0.975, 2.5, 3.5746548420036817),
        (0.975, 17.3, 2.1070320037534676),
        (0.975, 1000.0, 1.9623390808264083),
        (0.975, 10000000.0, 1.959964221767205),
        (0.999, 4.0, 7.173182219782307),
        (0.6, 3.0, 0.2766706623326898),
    ])
    func studentTQuantile(p: Double, degreesOfFreedom: Double, expected: Double) {
        let distribution = StudentTDistribution(degreesOfFreedom: degreesOfFreedom)
        #expect(close(distribution.quantile(p), expected), "quantile(\(p)) = \(distribution.quantile(p))")
        #expect(close(distribution.quantile(1 - p), -expected, 1e-11))
    }

    /// A t-statistic of 1e-8 with one degree of freedom: exactly ½ + atan(t)/π (SciPy is off by 1.5e-9 there).
    @Test func cauchyNearZero() {
        let t = 1e-8
        #expect(close(StudentTDistribution(degreesOfFreedom: 1).cdf(t), 0.5 + t / Double.pi, 1e-15))
    }

    /// Chi-square tails, the sample-ratio p-value (scipy.stats.chi2.sf).
    @Test(arguments: [
        (3.841458820694124, 1.0, 0.04999999999999989),
        (0.5, 1.0, 0.47950012218695337),
        (10.0, 2.0, 0.006737946999085468),
        (25.0, 3.0, 1.5440498291101365e-05),
        (120.0, 4.0, 5.341471565244885e-25),
        (0.01, 9.0, 0.9999999999991591),
    ])
    func chiSquareTail(x: Double, degreesOfFreedom: Double, expected: Double) {
        #expect(close(ChiSquareDistribution(degreesOfFreedom: degreesOfFreedom).sf(x), expected))
    }

    /// Normal quantiles (scipy.stats.norm.ppf), and the CDF back.
    @Test(arguments: [(0.975, 1.959963984540054), (1e-10, -6.361340902404056), (0.3, -0.5244005127080409), (0.999, 3.090232306167813)])
    func normalQuantile(p: Double, expected: Double) {
        #expect(close(NormalDistribution.quantile(p), expected, 1e-14))
        #expect(close(NormalDistribution.cdf(expected), p, 1e-14))
    }

    /// ln B(a, b) keeps its digits when one argument is in the millions (scipy.special.betaln).
    @Test func logBetaOfLargeArguments() {
        #expect(close(SpecialFunctions.logBeta(5e6, 0.5), -7.140109267274488, 1e-14))
        #expect(close(SpecialFunctions.logBeta(1e5, 2e5), -190958.8852791167, 1e-14))
        #expect(close(SpecialFunctions.logBeta(3, 4), -4.0943445622221, 1e-14))
    }
}
