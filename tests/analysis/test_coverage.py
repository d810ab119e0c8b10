"""Coverage of the accuracy statements: over 10⁴ Monte Carlo releases, 95 % intervals cover the statistic of the
bounded data within binomial tolerance (α = 1e-6), for the mean, the sum, the count and the quantile, with a power
check (an interval computed with a 30 % smaller noise scale is caught)."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import privnoise as pn
from privnoise.analysis.backend import AggregateRequest, InMemoryBackend
from privnoise.analysis.quantiles import grid_steps, quantile_blocks, sample_quantile, score_sensitivity
from privnoise.analysis.table import Table
from privnoise.dp.families import FAMILIES
from privnoise.mechanisms.error_laws import error_law
from privnoise.planning import Plan
from privnoise.planning.accuracy import exponential_rank_radius, ratio_interval
from privnoise.planning.estimates import ratio_estimate, vector_interval

ALPHA = 1e-6
RUNS = 10_000
LEVEL = 0.95


def _data(rows_per_unit: int = 3, units: int = 400, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "unit": np.repeat(np.arange(units), rows_per_unit),
        "x": rng.gamma(2.0, 1.5, size=units * rows_per_unit),  # some values beyond the bound 10: clamped
    }


def _aggregates(data, k: int, bounds=(0.0, 10.0), **extra):
    backend = InMemoryBackend(Table(data))
    request = AggregateRequest("moments", "x", bounds, "error", "unit", k, **extra)
    return backend.aggregate(request, np.random.default_rng(1))


def _covers(low, high, truth) -> int:
    return int(np.count_nonzero((low <= truth) & (truth <= high)))


def _two_sided(covered: int, p: float) -> float:
    return stats.binomtest(covered, RUNS, p).pvalue


def narrowed(law):
    """The same law at 0.7 of its scale (a wrong scale the coverage test must reject)."""
    return replace(law, error=replace(law.error, scale=0.7 * law.scale))


@pytest.mark.parametrize("family", ["laplace", "gaussian"])
def test_mean_intervals_cover(family):
    k, bounds = 3, pn.core.Bounds(0.0, 10.0)
    aggregates = _aggregates(_data(), k, (0.0, 10.0), centre=bounds.centre)
    truth = bounds.centre + aggregates.sum[0] / aggregates.count[0]
    price = Fraction(1, 2) if family == "laplace" else Fraction(1, 8)
    plan = Plan("mean", FAMILIES[family], price=price)  # the components Session.mean builds
    total = plan.add("sum", k * bounds.half, price / 2)
    count = plan.add("count", float(k), price / 2)
    generator = np.random.default_rng(2)
    s_hat = total.add(np.full(RUNS, aggregates.sum[0]), generator)
    n_hat = count.add(np.full(RUNS, aggregates.count[0]), generator)
    _, _, interval = ratio_estimate(s_hat, n_hat, bounds, total.law, count.law)
    low, high, _ = interval(LEVEL)
    assert _two_sided(_covers(low, high, truth), LEVEL) > ALPHA
    narrow = [narrowed(total.law), narrowed(count.law)]
    low, high = ratio_interval(s_hat, n_hat, *narrow, LEVEL, half_range=bounds.half)
    assert _two_sided(_covers(bounds.centre + low, bounds.centre + high, truth), LEVEL) < ALPHA


def test_session_mean_uses_the_tested_components():
    s = pn.Session(_data(), privacy_unit="unit", max_contributions=3, epsilon=1.0, rng=4)
    release = s.mean("x", bounds=(0, 10), epsilon=0.5)
    scales = {c["name"]: c["b"] for c in release.noise}
    assert scales["sum"] == pytest.approx(3 * 5.0 / 0.25) and scales["count"] == pytest.approx(3 / 0.25)


@pytest.mark.parametrize("family", ["laplace", "gaussian"])
def test_sum_intervals_cover(family):
    k = 3
    aggregates = _aggregates(_data(), k)
    plan = Plan("sum", FAMILIES[family], price=Fraction(1, 2))
    component = plan.add("sum", k * 10.0, plan.price)
    noisy = component.add(np.full(RUNS, aggregates.sum[0]), np.random.default_rng(3))
    low, high, _ = vector_interval(noisy, component.law)(LEVEL)
    assert _two_sided(_covers(low, high, aggregates.sum[0]), LEVEL) > ALPHA
    narrow = narrowed(component.law)
    low, high, _ = vector_interval(noisy, narrow)(LEVEL)
    assert _two_sided(_covers(low, high, aggregates.sum[0]), LEVEL) < ALPHA


@pytest.mark.parametrize(("family", "discrete"), [("laplace", True), ("laplace", False), ("gaussian", False)])
def test_count_intervals_cover_with_their_exact_coverage(family, discrete):
    k = 3
    aggregates = _aggregates(_data(), k)
    plan = Plan("count", FAMILIES[family], price=Fraction(1, 5))
    component = plan.add("count", float(k), plan.price, integer=True, discrete=discrete)
    noisy = component.add(np.full(RUNS, aggregates.count[0]), np.random.default_rng(5))
    assert np.all(noisy == np.rint(noisy))  # integer-valued counts
    low, high, coverage = vector_interval(noisy, component.law)(LEVEL)
    assert coverage >= LEVEL
    assert _two_sided(_covers(low, high, aggregates.count[0]), coverage) > ALPHA
    narrow = narrowed(component.law)
    low, high, _ = vector_interval(noisy, narrow)(LEVEL)
    assert _two_sided(_covers(low, high, aggregates.count[0]), LEVEL) < ALPHA


def _quantile_runs(points, counts, q, epsilon, k, low, high, step, seed):
    blocks = quantile_blocks(points, counts, q, low, high, step)
    sensitivity = score_sensitivity(q, k)
    values = sample_quantile(blocks, epsilon, sensitivity, RUNS, np.random.default_rng(seed))
    index = np.searchsorted(blocks.start, np.rint(values / step).astype(np.int64), side="right") - 1
    gap = blocks.score[index] - blocks.score.min()
    return blocks, sensitivity, gap


def test_quantile_rank_accuracy_covers_on_data():
    k, epsilon, q = 3, 1.0, 0.5
    data = _data()
    backend = InMemoryBackend(Table(data))
    step, low, high = grid_steps(0.0, 10.0, 1 << 14)
    aggregates = backend.aggregate(
        AggregateRequest("grid", "x", (0.0, 10.0), "error", "unit", k, grid=(step, low, high)), np.random.default_rng(1)
    )
    blocks, sensitivity, gap = _quantile_runs(aggregates.grid_points, aggregates.grid_counts, q, epsilon, k, low, high,
                                              step, 6)
    radius = exponential_rank_radius(epsilon, sensitivity, blocks.candidates, LEVEL)
    covered = int(np.count_nonzero(gap <= radius))
    assert stats.binomtest(covered, RUNS, LEVEL, alternative="less").pvalue > ALPHA


def test_quantile_rank_accuracy_is_tight_on_the_worst_case():
    # Every row on one grid point: all other candidates share one score, the case where the union bound is attained.
    k, q, rows = 1, 0.5, 24
    step, low, high = grid_steps(0.0, 10.0, 1 << 10)
    candidates = high - low + 1
    # ε chosen so that the radius falls just short of the other candidates' score n/2: the miss rate is then ≈ α.
    epsilon = 2 * score_sensitivity(q, k) / (rows / 2) * np.log((candidates - 1) / (1 - LEVEL)) * 1.001
    radius = exponential_rank_radius(epsilon, score_sensitivity(q, k), candidates, LEVEL)
    assert radius < rows / 2
    blocks, sensitivity, gap = _quantile_runs(np.array([160]), np.array([float(rows)]), q, epsilon, k, low, high,
                                              step, 8)
    probabilities = blocks.probabilities(epsilon, sensitivity)
    miss = float(probabilities[blocks.score - blocks.score.min() > radius].sum())
    assert 0.9 * (1 - LEVEL) < miss <= 1 - LEVEL
    covered = int(np.count_nonzero(gap <= radius))
    assert _two_sided(covered, 1 - miss) > ALPHA
    assert _two_sided(covered, 1 - 1.3 * miss) < ALPHA


@pytest.mark.parametrize("family", ["laplace", "gaussian"])
def test_one_release_takes_the_same_limits_as_many(family: str) -> None:
    # one release is solved by Brent's method, many by bisection: the same limits to the solvers' tolerance,
    # including counts near zero (sets that are not intervals) and limits at the range's edges
    from privnoise.planning.accuracy import NoiseLaw

    rng = np.random.default_rng(11)
    sum_law, count_law = NoiseLaw(error_law(family, 3.0)), NoiseLaw(error_law(family, 2.0))
    s_hat, n_hat = rng.uniform(-400.0, 400.0, 200), rng.uniform(-5.0, 900.0, 200)
    low, high = ratio_interval(s_hat, n_hat, sum_law, count_law, 0.95, half_range=1.0, offset=0.3)
    assert np.any(low > -1.0) and np.any(high < 1.0) and np.any(low == -1.0)  # both kinds of limit occur
    for i in range(s_hat.size):
        one_low, one_high = ratio_interval(
            s_hat[i : i + 1], n_hat[i : i + 1], sum_law, count_law, 0.95, half_range=1.0, offset=0.3
        )
        assert one_low[0] == pytest.approx(low[i], abs=1e-11) and one_high[0] == pytest.approx(high[i], abs=1e-11)


@pytest.mark.parametrize("family", ["laplace", "gaussian"])
def test_the_scalar_p_value_equals_the_vectorised_one(family: str) -> None:
    # the root search of one release uses a math-module copy of the p-value: every branch (no count noise at
    # m = −offset, equal scales, general) agrees with the numpy version
    from privnoise.planning.accuracy import NoiseLaw, _p_value, _p_value_one

    rng = np.random.default_rng(5)
    first, second = NoiseLaw(error_law(family, 3.0), grid=2.0**-6), NoiseLaw(error_law(family, 2.0), grid=2.0**-5)
    offset = 0.3
    ms = np.r_[rng.uniform(-1.0, 1.0, 300), -offset, 3.0 / 2.0 - offset, 3.0 / 2.0 * (1 + 1e-7) - offset]
    s_hat, n_hat = rng.uniform(-50.0, 50.0, ms.size), rng.uniform(-5.0, 90.0, ms.size)
    vector = _p_value(ms, s_hat, n_hat, first, second, offset)
    scalar = [_p_value_one(float(m), float(s), float(n), first, second, offset) for m, s, n in zip(ms, s_hat, n_hat, strict=True)]
    assert 0.0 < vector.min() and vector.max() <= 1.0
    np.testing.assert_allclose(scalar, vector, rtol=1e-12, atol=1e-300)
