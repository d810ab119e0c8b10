"""Partition selection: the threshold rule, its worst case over every way a unit spreads its rows, and a Monte Carlo
check that a key held by one unit is released with probability ≤ δ (binomial tolerance, with power)."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from privnoise.core import UnitAddedOrRemoved
from privnoise.dp.families import FAMILIES
from privnoise.dp.partition import (
    gaussian_partition_threshold,
    laplace_partition_threshold,
    pure_budget_share,
    release_probability,
    select_partitions,
    worst_case_release_probability,
)
from privnoise.exceptions import CalibrationError, InvalidParameterError
from privnoise.planning import Plan, group_plan

ALPHA = 1e-6


def _spreads(k: int):
    """Every multiset of positive row counts c₁ ≥ c₂ ≥ … with Σ cⱼ ≤ k (how one unit can hold keys of its own)."""
    for m in range(1, k + 1):
        for combo in itertools.combinations_with_replacement(range(1, k + 1), m):
            if sum(combo) <= k:
                yield combo


@pytest.mark.parametrize("noise", [{"scale": 2.0}, {"sigma": 1.5}])
@pytest.mark.parametrize("k", [1, 2, 5, 8])
def test_worst_case_rule_is_the_maximum_over_every_spread(noise, k):
    threshold = k + 6
    rule = worst_case_release_probability(threshold, max_contributions=k, **noise)
    exact_union = max(
        1.0 - np.prod([1.0 - release_probability(threshold, count=c, **noise) for c in spread])
        for spread in _spreads(k)
    )
    sum_bound = max(sum(release_probability(threshold, count=c, **noise) for c in spread) for spread in _spreads(k))
    assert rule == pytest.approx(sum_bound, rel=1e-12)  # the vertices found by convexity are the maximum
    assert exact_union <= rule * (1 + 1e-9)


@pytest.mark.parametrize("k", [1, 4, 336])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-9])
def test_threshold_is_the_smallest_integer_meeting_delta(k, delta):
    for threshold, noise in (
        (laplace_partition_threshold(k / 0.5, delta, max_contributions=k), {"scale": k / 0.5}),
        (gaussian_partition_threshold(k / 0.5, delta, max_contributions=k), {"sigma": k / 0.5}),
    ):
        assert worst_case_release_probability(threshold, max_contributions=k, **noise) <= delta
        if threshold > k + 1:
            assert worst_case_release_probability(threshold - 1, max_contributions=k, **noise) > delta


def _count_component(family: str, epsilon: float, delta: float, k: int):
    plan = Plan("group count", FAMILIES[family], UnitAddedOrRemoved(k),
                price=Fraction(epsilon) if family == "laplace" else Fraction(epsilon**2 / 2))
    return group_plan(plan, unknown_keys=True, delta=Fraction(delta), count_share=plan.price, integer=True)


@pytest.mark.parametrize("family", ["laplace", "gaussian"])
@pytest.mark.parametrize("spread", ["one key with k rows", "k keys with one row each"])
def test_a_key_held_by_one_unit_is_released_with_probability_at_most_delta(family, spread):
    k, delta, runs = 4, 0.02, 200_000
    component, threshold = _count_component(family, 1.0, delta, k)
    rows = np.array([k]) if spread == "one key with k rows" else np.ones(k)
    generator = np.random.default_rng(17)
    noisy = component.add(np.tile(rows, (runs, 1)), generator)
    released = int(np.count_nonzero(select_partitions(noisy, threshold).any(axis=1)))
    noise = {"scale": component.scale} if family == "laplace" else {"sigma": component.scale}
    # At most δ within binomial tolerance (one-sided test at α = 1e-6) ...
    assert stats.binomtest(released, runs, delta, alternative="greater").pvalue > ALPHA
    # ... and equal to the exact probability of this spread (so the test has power: 30 % more would be caught).
    exact = 1.0 - np.prod([1.0 - release_probability(threshold, count=int(c), **noise) for c in rows])
    assert stats.binomtest(released, runs, exact).pvalue > ALPHA
    assert stats.binomtest(released, runs, 1.3 * exact).pvalue < ALPHA
    assert exact <= worst_case_release_probability(threshold, max_contributions=k, **noise) * (1 + 1e-9)
    assert worst_case_release_probability(threshold, max_contributions=k, **noise) <= delta


def test_pure_share_makes_the_query_epsilon_delta():
    assert pure_budget_share(1.0, 1e-6) == pytest.approx(1.0 - 1e-6, abs=1e-12)
    assert pure_budget_share(1.0, 1e-6) < 1.0 + np.log1p(-1e-6) + 1e-15
    with pytest.raises(CalibrationError):
        pure_budget_share(1e-9, 0.5)


def test_bad_input():
    with pytest.raises(CalibrationError, match="delta"):
        laplace_partition_threshold(1.0, 0.0, max_contributions=1)
    with pytest.raises(InvalidParameterError, match="max_contributions"):
        laplace_partition_threshold(1.0, 1e-6, max_contributions=0)
    with pytest.raises(InvalidParameterError, match="threshold"):
        worst_case_release_probability(2, max_contributions=4, scale=1.0)
    with pytest.raises(InvalidParameterError, match="scale"):
        release_probability(5, count=1)
