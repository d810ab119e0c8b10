"""``median``, ``percentile`` and ``count_distinct`` of a session, against scipy's laws and brute force."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import privnoise as pn
from privnoise.exceptions import InvalidParameterError

ALPHA = 1e-6


def _data(seed: int = 4) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"u": rng.integers(0, 40, 300), "x": rng.normal(50.0, 10.0, 300)}


def _chi_square_p(draws: np.ndarray, pmf) -> float:
    values, counts = np.unique(draws, return_counts=True)
    span = np.arange(values.min(), values.max() + 1)
    expected = pmf(span) * draws.size
    observed = np.zeros(span.size)
    observed[np.searchsorted(span, values)] = counts
    # pool the tails so that every expected count is at least 5
    keep = expected >= 5
    observed = np.append(observed[keep], draws.size - observed[keep].sum())
    expected = np.append(expected[keep], draws.size - expected[keep].sum())
    return float(stats.chisquare(observed, expected).pvalue)


def test_count_distinct_has_sensitivity_one_whatever_the_cap():
    data = _data()
    units = len(np.unique(data["u"]))
    session = pn.Session(data, privacy_unit="u", max_contributions=5, epsilon=2000, rng=11)
    draws = np.array([session.count_distinct(epsilon=0.5).value for _ in range(2000)]) - units
    # discrete Laplace noise of parameter ε/Δ = 0.5 (Δ = 1: a unit added or removed changes the number of units by
    # one, whatever k), clipped at −units (far in its tail: P < e^{-10})
    assert _chi_square_p(draws, stats.dlaplace(0.5).pmf) > ALPHA
    # power: the noise of a count of rows with k = 5 (Δ = 5, parameter 0.1) is rejected
    assert _chi_square_p(draws, stats.dlaplace(0.1).pmf) < ALPHA
    assert session.spent().epsilon == pytest.approx(1000.0)


def test_count_distinct_counts_units_with_a_matching_row_after_filters():
    data = _data()
    session = pn.Session(data, privacy_unit="u", max_contributions=3, epsilon=1e6, rng=5)
    view = session.where("x > 55")
    exact = len(np.unique(data["u"][data["x"] > 55]))
    assert abs(view.count_distinct(epsilon=1e5).value - exact) <= 1  # noise of parameter 1e5: |noise| < 1 w.h.p.
    # without a privacy unit each row is a unit
    rows = pn.Session(data, epsilon=1e6, rng=5)
    assert abs(rows.count_distinct(epsilon=1e5).value - 300) <= 1


def test_median_and_percentile_are_the_quantiles_they_name():
    data = _data()
    a = pn.Session(data, privacy_unit="u", max_contributions=3, epsilon=3, rng=21)
    b = pn.Session(data, privacy_unit="u", max_contributions=3, epsilon=3, rng=21)
    assert a.median("x", bounds=(0, 100), epsilon=1).value == b.quantile("x", 0.5, bounds=(0, 100), epsilon=1).value
    got = a.percentile("x", [0.5, 90], bounds=(0, 100), epsilon=1).value
    assert np.array_equal(got, b.quantile("x", [0.005, 0.9], bounds=(0, 100), epsilon=1).value)
    assert a.spent().epsilon == b.spent().epsilon == 2


@pytest.mark.parametrize("p", [-1, 100.5, [50, 101], "fifty", np.nan, True])
def test_percentile_refuses_what_is_not_a_percentage(p):
    session = pn.Session(_data(), epsilon=1)
    with pytest.raises(InvalidParameterError, match="`p` of `percentile`"):
        session.percentile("x", p, bounds=(0, 100), epsilon=0.5)
    assert session.spent().epsilon == 0.0


def _radius(a: float, level: float) -> int:
    """The smallest integer r with P(|K| ≤ r) ≥ level for K ~ discrete Laplace of parameter a (scipy)."""
    law = stats.dlaplace(a)
    r = 0
    while law.cdf(r) - law.cdf(-r - 1) < level:
        r += 1
    return r


def test_count_distinct_states_its_noise_interval_and_query():
    data = _data()
    session = pn.Session(data, privacy_unit="u", max_contributions=5, epsilon=3, rng=2)
    estimate = session.count_distinct(epsilon=0.5)
    assert estimate.noise == [{"name": "count", "sensitivity": 1.0, "family": "discrete-laplace", "t": 2.0,
                               "grid": 1.0, "integer": True}]
    assert estimate.query["query"] == "count distinct" and estimate.query["privacy_unit"] == "u"
    assert estimate.guarantee.as_dict()["epsilon"] == 0.5
    r = _radius(0.5, 0.95)
    value = estimate.value
    assert isinstance(value, int) and value > r
    assert estimate.confidence_interval(0.95) == (value - r, value + r)
    # the same research seed gives the same release
    again = pn.Session(data, privacy_unit="u", max_contributions=5, epsilon=3, rng=2)
    assert again.count_distinct(epsilon=0.5).value == value


def test_count_distinct_of_no_unit_is_clipped_at_zero_with_its_interval():
    session = pn.Session(_data(), privacy_unit="u", max_contributions=2, epsilon=100, rng=6)
    empty = session.where("x > 1000")
    releases = [empty.count_distinct(epsilon=0.5) for _ in range(60)]
    values = [e.value for e in releases]
    assert min(values) == 0 and sum(v == 0 for v in values) > 20  # P(noise ≤ 0) = 1/(1 + e^{-1/2}) ≈ 0.62
    for e in releases:
        low, high = e.confidence_interval(0.95)
        assert low >= 0 and high - low <= 2 * _radius(0.5, 0.95)
        assert not e.clamped or e.value == 0  # only a negative noisy count is clipped (to 0)
    # the noisy count is K (no unit matches): K < 0 is clipped and flagged, K = 0 released as it is (P(K = 0) ≈ 0.24)
    zeros = [e for e in releases if e.value == 0]
    assert any(e.clamped for e in zeros) and any(not e.clamped for e in zeros)
    assert any(e.confidence_interval(0.95)[0] == 0 for e in releases)


def test_derived_queries_spend_rho_under_zcdp():
    data = _data()
    z = pn.Session(data, privacy_unit="u", max_contributions=3, epsilon=4, delta=1e-6, accountant="zcdp", rng=9)
    z.count_distinct(rho=0.01)
    z.median("x", bounds=(0, 100), rho=0.01)
    z.percentile("x", 25, bounds=(0, 100), rho=0.01)
    assert z.remaining().rho == pytest.approx(float(pn.dp.epsilon_to_zcdp(4, 1e-6)) - 0.03, rel=1e-9)


def test_a_scalar_percentile_is_the_quantile_at_p_over_100_with_its_resolution():
    data = _data()
    for p in (0.5, 90):
        a = pn.Session(data, epsilon=3, rng=13)
        b = pn.Session(data, epsilon=3, rng=13)
        got = a.percentile("x", p, bounds=(0, 100), epsilon=1, resolution=64)
        want = b.quantile("x", p / 100, bounds=(0, 100), epsilon=1, resolution=64)
        assert got.value == want.value and got.query == want.query
    a, b = pn.Session(data, epsilon=3, rng=13), pn.Session(data, epsilon=3, rng=13)
    got = a.median("x", bounds=(0, 100), epsilon=1, resolution=64)
    assert got.value == b.quantile("x", 0.5, bounds=(0, 100), epsilon=1, resolution=64).value
    assert got.query["grid"] == 1.0  # the largest power of two ≤ 100/64: the resolution was passed on
