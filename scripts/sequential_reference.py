#!/usr/bin/env python3
"""The reference numbers of Tests/ExperimentStatsTests/SequentialProportionTestTests.swift.

Usage: $(scripts/python-tools.sh)/python scripts/sequential_reference.py

Prints, for each case, gbstats 0.8.0's `SequentialTwoSidedTTest` (Howard et al. asymptotic
confidence sequences, `difference_type="absolute"`) on two `ProportionStatistic`s: the point
estimate, the confidence sequence and the anytime-valid p-value, in the test's tuple form.
"""
from gbstats.frequentist.tests import SequentialTwoSidedTTest, SequentialConfig
from gbstats.models.statistics import ProportionStatistic

# (baseline n, sum), (treatment n, sum), alpha, sequential_tuning_parameter
CASES = [((1000, 100), (1000, 130), 0.05, 5000), ((200, 0), (50, 12), 0.05, 5000), ((5000, 2500), (5000, 2400), 0.05, 5000),
         ((90, 2), (10, 5), 0.05, 200), ((400, 40), (100, 31), 0.01, 1000), ((12345, 617), (1234, 80), 0.05, 5000)]

for (na, ca), (nb, cb), alpha, tuning in CASES:
    a = ProportionStatistic(n=na, sum=ca)
    b = ProportionStatistic(n=nb, sum=cb)
    config = SequentialConfig(alpha=alpha, difference_type="absolute", sequential_tuning_parameter=tuning)
    test = SequentialTwoSidedTTest(a, b, config)
    lower, upper = test.confidence_interval
    print(f"(({na}, {ca}), ({nb}, {cb}), {alpha}, {float(tuning)}, {test.point_estimate!r}, {lower!r}, {upper!r}, {test.p_value!r}),")
