"""Empirical privacy audits of the session's mechanisms: the ε lower bound of :func:`privnoise.dp.audit` at confidence
1 − 1e-6 stays at or below the claimed ε, for the quantile, a histogram, the contribution-bounded mean, group-by
partition selection and noisy max — and exceeds it for a deliberately mis-calibrated variant (power)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import privnoise as pn
from privnoise.analysis.backend import AggregateRequest, InMemoryBackend, bound_contributions
from privnoise.analysis.quantiles import grid_steps, quantile_blocks, sample_quantile, score_sensitivity
from privnoise.analysis.table import Table
from privnoise.core import Bounds, UnitAddedOrRemoved
from privnoise.dp.exponential import report_noisy_max
from privnoise.dp.families import FAMILIES
from privnoise.planning import Plan, group_plan
from privnoise.planning.estimates import ratio_estimate

CONFIDENCE = 1 - 1e-6
SAMPLES = 400_000


def _audit(mechanism, claimed, *, delta=0.0):
    return pn.dp.audit(mechanism, [0.0], [1.0], samples=SAMPLES, confidence=CONFIDENCE, rng=21, delta=delta,
                       claimed_epsilon=claimed)


def _pick(x, first, second):
    return first if float(np.asarray(x).ravel()[0]) == 0.0 else second


def _quantile_mechanism(epsilon_used, k=2, q=0.5):
    values = np.array([1.0, 2.0, 2.5, 3.0, 4.0, 4.5, 5.0, 6.0, 7.0])
    step, low, high = grid_steps(0.0, 10.0, 64)
    base = np.rint(values / step).astype(np.int64)
    neighbour = np.concatenate([base, np.full(k, high)])  # one unit adds k rows at the top of the range

    def blocks_of(points):
        occupied, counts = np.unique(points, return_counts=True)
        return quantile_blocks(occupied, counts.astype(float), q, low, high, step)

    pair = blocks_of(base), blocks_of(neighbour)

    def mechanism(x, n, generator):
        return sample_quantile(_pick(x, *pair), epsilon_used, score_sensitivity(q, k), n, generator)

    return mechanism


def test_quantile_audit_stays_below_epsilon_and_catches_a_wrong_one():
    report = _audit(_quantile_mechanism(1.0), 1.0)
    assert report.epsilon_lower_bound <= 1.0 and report.epsilon_lower_bound > 0.3, report.summary()
    broken = _audit(_quantile_mechanism(3.0), 1.0)  # temperature 3× too high for the claimed ε
    assert broken.violates_claim, broken.summary()


@pytest.mark.parametrize("family", ["laplace", "gaussian"])
def test_histogram_audit(family):
    k, epsilon = 3, 1.0
    plan = Plan("histogram", FAMILIES[family], price=Fraction(1) if family == "laplace" else Fraction(1, 2))
    cells = plan.add("cells", float(k), plan.price, integer=True, vector=True, discrete=True)  # as Session.histogram
    base = np.array([5.0, 9.0, 2.0, 0.0])
    neighbour = base + np.array([0.0, 0.0, k, 0.0])  # the unit's k rows all fall in bin 2

    def mechanism(x, n, generator):
        return cells.add(np.tile(_pick(x, base, neighbour), (n, 1)), generator)[:, 2]

    delta = 0.0 if family == "laplace" else 1e-2  # a δ whose ε the audit's samples can reach
    claimed = epsilon if family == "laplace" else pn.dp.gaussian_epsilon(cells.scale, delta, sensitivity=k)
    assert cells.law.error.name == ("discrete-laplace" if family == "laplace" else "gaussian")
    report = _audit(mechanism, claimed, delta=delta)
    assert report.epsilon_lower_bound <= claimed and report.epsilon_lower_bound > 0.4 * claimed, report.summary()


def test_contribution_bounded_mean_audit_includes_the_random_choice_of_rows():
    k, bounds = 2, Bounds(0.0, 10.0)
    data = {"unit": np.repeat(np.arange(6), 2), "x": np.array([1.0, 2, 3, 4, 5, 6, 2, 3, 4, 5, 6, 7])}
    backend = InMemoryBackend(Table(data))
    request = AggregateRequest("moments", "x", (0.0, 10.0), "error", "unit", k, centre=bounds.centre)
    base = backend.aggregate(request, np.random.default_rng(0))
    extra = np.array([10.0, 0.0, 10.0, 10.0, 0.0])  # the added unit has 5 rows: k = 2 of them are kept at random
    plan = Plan("mean", FAMILIES["laplace"], price=Fraction(1))
    total = plan.add("sum", k * bounds.half, Fraction(1, 2))
    count = plan.add("count", float(k), Fraction(1, 2))

    def mechanism(x, n, generator):
        s = np.full(n, base.sum[0])
        c = np.full(n, base.count[0])
        if float(np.asarray(x).ravel()[0]) == 1.0:
            units = np.repeat(np.arange(n), extra.size)
            kept = bound_contributions(units, k, generator)
            assert kept is not None
            s = s + np.bincount(units[kept], weights=np.tile(extra - bounds.centre, n)[kept], minlength=n)
            c = c + k
        values, _, _ = ratio_estimate(total.add(s, generator), count.add(c, generator), bounds, total.law, count.law)
        return values

    report = _audit(mechanism, 1.0)
    assert report.epsilon_lower_bound <= 1.0 and report.epsilon_lower_bound > 0.2, report.summary()


def test_partition_selection_audit_with_its_delta():
    k, epsilon, delta = 2, 1.0, 1e-3
    plan = Plan("group count", FAMILIES["laplace"], UnitAddedOrRemoved(k), price=Fraction(epsilon))
    count, threshold = group_plan(plan, unknown_keys=True, delta=Fraction(delta), count_share=plan.price,
                                  integer=True)
    assert threshold is not None
    shared = float(threshold)  # a key near the threshold: its release depends on the unit's rows most

    def mechanism(x, n, generator):
        if float(np.asarray(x).ravel()[0]) == 0.0:
            noisy = count.add(np.full(n, shared), generator)
            own = np.zeros(n, dtype=bool)
        else:  # the unit adds one row to the shared key and one row to a key of its own
            noisy = count.add(np.full(n, shared + 1), generator)
            own = count.add(np.ones(n), generator) >= threshold
        return np.where(noisy >= threshold, noisy, -1.0) + 1e6 * own

    report = _audit(mechanism, epsilon, delta=delta)
    assert report.epsilon_lower_bound <= epsilon and report.epsilon_lower_bound > 0.3, report.summary()


@pytest.mark.parametrize("method", ["exponential", "laplace"])
def test_noisy_max_audit(method):
    k, epsilon = 2, 1.0
    counts = np.array([30.0, 29.0, 10.0])
    neighbour = counts + np.array([0.0, k, 0.0])

    def mechanism(x, n, generator):
        scores = _pick(x, counts, neighbour)
        return report_noisy_max(scores, epsilon, sensitivity=k, monotone=True, method=method, size=n,
                                rng=generator)[:, 0]

    report = _audit(mechanism, epsilon)
    assert report.epsilon_lower_bound <= epsilon and report.epsilon_lower_bound > 0.3, report.summary()
