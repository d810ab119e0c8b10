"""Partition-selection thresholds against their closed forms, re-derived here for the mechanism implemented.

The mechanism (dp/partition.py) releases a key when round(c + W) ≥ T, i.e. when W ≥ T − ½ − c. A unit holding keys
of its own with at most k rows releases one of them with probability at most max(S(T − ½ − k), k·S(T − 3/2)),
S the survival function of W. Solving each term for T:

* Laplace of scale b (S(x) = ½e^{−x/b}, x ≥ 0): T ≥ ½ + k + b·log(1/(2δ)) and T ≥ 3/2 + b·log(k/(2δ));
* Gaussian of standard deviation σ: T ≥ ½ + k + σ·Q⁻¹(δ) and T ≥ 3/2 + σ·Q⁻¹(δ/k);

and T ≥ k + 1, the smallest integer meeting all three. The rounding term ½ is what a threshold missing it
would get wrong; the factor k of the second term is what a threshold ignoring the cap would get wrong.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privnoise.dp.partition import (
    gaussian_partition_threshold,
    laplace_partition_threshold,
    pure_budget_share,
    release_probability,
    select_partitions,
    worst_case_release_probability,
)

# (scale, delta, k): scales chosen so that no bound falls on an integer.
CASES = [
    (1.0, 1e-6, 1),
    (2.3, 1e-6, 1),
    (0.37, 1e-3, 1),
    (3.7, 1e-5, 2),
    (5.3, 1e-6, 4),
    (0.61, 1e-9, 3),
    (17.9, 1e-7, 8),
    (0.13, 0.2, 5),  # the floor k + 1 binds
    (47.3, 2e-6, 30),
]


def _laplace_threshold(b: float, delta: float, k: int) -> int:
    first = 0.5 + k + b * math.log(1.0 / (2.0 * delta))
    second = 1.5 + b * math.log(k / (2.0 * delta))
    return max(k + 1, math.ceil(max(first, second)))


def _gaussian_threshold(sigma: float, delta: float, k: int) -> int:
    first = 0.5 + k + sigma * stats.norm.isf(delta)
    second = 1.5 + sigma * stats.norm.isf(delta / k)
    return max(k + 1, math.ceil(max(first, second)))


@pytest.mark.parametrize(("scale", "delta", "k"), CASES)
def test_laplace_threshold_is_the_closed_form(scale, delta, k):
    assert laplace_partition_threshold(scale, delta, max_contributions=k) == _laplace_threshold(scale, delta, k)


@pytest.mark.parametrize(("scale", "delta", "k"), CASES)
def test_gaussian_threshold_is_the_closed_form(scale, delta, k):
    assert gaussian_partition_threshold(scale, delta, max_contributions=k) == _gaussian_threshold(scale, delta, k)


def test_the_floor_of_the_threshold_is_one_more_than_the_cap():
    # A noise so small that any T ≥ k + 1 meets δ: the threshold is k + 1 (a key of one unit never reaches it).
    for k in (1, 2, 7):
        assert laplace_partition_threshold(0.01, 0.3, max_contributions=k) == k + 1
        assert gaussian_partition_threshold(0.01, 0.3, max_contributions=k) == k + 1


@pytest.mark.parametrize("count", [0, 3, 9, 12, 20])
def test_release_probability_is_the_survival_beyond_the_rounding(count):
    threshold = 10
    x = threshold - 0.5 - count  # both sides of 0: the two branches of the Laplace survival
    assert release_probability(threshold, count=count, scale=2.5) == pytest.approx(
        stats.laplace.sf(x, scale=2.5), rel=1e-12
    )
    assert release_probability(threshold, count=count, sigma=1.7) == pytest.approx(
        stats.norm.sf(x, scale=1.7), rel=1e-12
    )


@pytest.mark.parametrize("k", [1, 2, 5])
def test_worst_case_probability_is_the_larger_of_the_two_vertices(k):
    threshold = k + 4
    for noise, sf in (({"scale": 1.3}, lambda x: stats.laplace.sf(x, scale=1.3)),
                      ({"sigma": 0.9}, lambda x: stats.norm.sf(x, scale=0.9))):
        expected = max(sf(threshold - 0.5 - k), k * sf(threshold - 1.5))
        assert worst_case_release_probability(threshold, max_contributions=k, **noise) == pytest.approx(
            expected, rel=1e-12
        )
    # the smallest admissible threshold k + 1 is accepted
    assert worst_case_release_probability(k + 1, max_contributions=k, scale=1.0) > 0


@pytest.mark.parametrize(("epsilon", "delta"), [(1.0, 1e-6), (0.3, 0.01), (2.0, 0.4)])
def test_pure_share_is_epsilon_less_log_one_over_one_minus_delta(epsilon, delta):
    share = pure_budget_share(epsilon, delta)
    exact = epsilon - math.log(1.0 / (1.0 - delta))
    assert share <= exact  # never above: (share + log(1/(1 − δ)), δ) must stay within (ε, δ)
    assert share == pytest.approx(exact, rel=1e-14)


def test_selection_keeps_counts_at_or_above_the_threshold():
    chosen = select_partitions(np.array([14.0, 15.0, 16.0, -3.0]), 15)
    assert chosen.tolist() == [False, True, True, False]
    assert select_partitions([15.0], np.int64(15)).tolist() == [True]
    from privnoise.exceptions import InvalidParameterError

    for bad in (True, 15.0, "15"):
        with pytest.raises(InvalidParameterError, match="threshold"):
            select_partitions([15.0], bad)


@pytest.mark.parametrize("k", [1, 3])
def test_a_delta_met_with_equality_is_met(k):
    # δ(T) ≤ δ includes equality: at δ = δ(T) exactly the threshold is T, an int.
    for threshold in (k + 3, k + 10, k + 37):
        for noise, find in (({"scale": 1.9}, laplace_partition_threshold), ({"sigma": 1.9}, gaussian_partition_threshold)):
            delta = worst_case_release_probability(threshold, max_contributions=k, **noise)
            found = find(next(iter(noise.values())), delta, max_contributions=k)
            assert found == threshold and type(found) is int


def test_the_worst_case_rule_needs_a_threshold_of_at_least_k_and_a_half():
    from privnoise.exceptions import InvalidParameterError

    assert worst_case_release_probability(3.5, max_contributions=3, scale=1.0) == pytest.approx(
        max(stats.laplace.sf(0.0), 3 * stats.laplace.sf(2.0)), rel=1e-12
    )
    for bad in (3, 3.4):
        with pytest.raises(InvalidParameterError, match="threshold"):
            worst_case_release_probability(bad, max_contributions=3, scale=1.0)


def test_no_share_is_left_when_epsilon_is_all_log_one_over_one_minus_delta():
    from privnoise.exceptions import CalibrationError

    delta = 0.25
    with pytest.raises(CalibrationError):
        pure_budget_share(-math.log1p(-delta), delta)
