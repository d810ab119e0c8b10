"""The parts of a Session query's plan against references computed here.

Selections (quantile levels, top-k picks) are composed by every accountant as the pure ε-DP part they are: ε²/8-zCDP
when bounded-range (the exponential mechanism), ε²/2 otherwise (report-noisy-max with Laplace noise), composed with
dp-accounting's RdpAccountant, as (ε, 0)-DP pairs in dp-accounting's PLD, and through Canonne, Kamath & Steinke's
conversion (not the Gaussian curve) in the zCDP accountant, from the ε the mechanism is actually given. Group-by
counts: the noise actually drawn (integers, its law against scipy, its ε or ρ by brute force over one unit's rows)
and the PLD pieces (a scalar pair when a unit moves one cell, else the pure ε-DP worst case) recomputed here. The
variance and per-coordinate intervals against interval arithmetic, the rank radii against the union bound's closed
form, and the ε of a selection against its exact share.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import privnoise as pn
import privnoise.analysis.distributions as distributions_module
import privnoise.analysis.quantiles as quantiles_module
from privnoise.core import Bounds
from privnoise.dp.families import FAMILIES
from privnoise.mechanisms.error_laws import error_law
from privnoise.planning.accuracy import NoiseLaw
from privnoise.planning.estimates import variance_estimate, vector_interval
from tests.analysis import _brute as brute
from tests.analysis.test_budget_splits import CATS, _bounded, _data, _Recorder

GRID = np.arange(0.0, 4.0 + 1e-9, 1.0)  # bounds (0, 4) at resolution 4: Λ = 1, five candidates


def _quantile_epsilons(recorder, data, levels, k):
    """The ε of each level's selection at the true score sensitivity (brute force over one unit's rows)."""
    values = np.clip(np.rint(np.clip(data["kwh"], 0, 4)), 0, 4)
    kept = _bounded(values, data["household"], k)
    out = []
    for q, (args, kwargs) in zip(levels, recorder.calls, strict=True):
        true = brute.score_sensitivity(kept, q, GRID, k)
        # the mechanism is told the true Δ (up to rounding in the brute force), so its ε is the one it is given
        assert true == pytest.approx(kwargs["sensitivity"], rel=1e-12)
        out.append(float(args[1]))
    return out


def _top_k_epsilons(recorder, k, picks):
    """The ε of each pick: monotone counts of sensitivity k (brute force)."""
    (args, kwargs), = recorder.calls
    per_cell = max(float(np.max(brute.per_cell(len(CATS))(rows))) for rows in brute.unit_rows(k, (0.0,), len(CATS)))
    assert kwargs["monotone"] and kwargs["sensitivity"] == per_cell
    # the noise of a pick has scale Δ·picks/ε and the counts' true Δ is the one given: ε/picks per pick
    return [args[1] / picks] * picks


# -- selections composed by each accountant ------------------------------------------------------------------
@pytest.mark.parametrize("k", [1, 2])
def test_rdp_session_composes_quantile_levels_as_bounded_range_zcdp(monkeypatch, k):
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting import rdp

    recorder = _Recorder(monkeypatch, quantiles_module, "exponential_mechanism")
    data = _data(rows=k)
    s = pn.Session(data, privacy_unit="household", max_contributions=k, epsilon=20.0, delta=1e-6,
                   accountant="rdp", rng=11)
    levels = [0.25, 0.5, 0.9]
    release = s.quantile("kwh", levels, bounds=(0, 4), resolution=4, rho=0.3)
    accountant = rdp.RdpAccountant()
    for eps in _quantile_epsilons(recorder, data, levels, k):
        accountant.compose(dp_accounting.ZCDpEvent(eps * eps / 8))  # ε-bounded range is ε²/8-zCDP
    expected = accountant.get_epsilon(1e-6)
    assert s.spent().epsilon == pytest.approx(expected, rel=1e-6)
    assert s.spent().epsilon >= expected * (1 - 1e-12)
    assert release.guarantee.rho == 0.3 and release.guarantee.delta == 0.0


@pytest.mark.parametrize("method", ["exponential", "laplace"])
@pytest.mark.parametrize(("picks", "k"), [(1, 1), (3, 2)])
def test_rdp_session_composes_top_k_picks_by_their_zcdp(monkeypatch, method, picks, k):
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting import rdp

    recorder = _Recorder(monkeypatch, distributions_module, "report_noisy_max")
    s = pn.Session(_data(), privacy_unit="household", max_contributions=k, epsilon=20.0, delta=1e-6,
                   accountant="rdp", rng=12)
    s.top_k("region", candidates=CATS, k=picks, method=method, rho=0.2)
    accountant = rdp.RdpAccountant()
    for eps in _top_k_epsilons(recorder, k, picks):
        # the exponential mechanism is ε-bounded range (ε²/8); report-noisy-max with Laplace noise only ε-DP (ε²/2)
        accountant.compose(dp_accounting.ZCDpEvent(eps * eps / (8 if method == "exponential" else 2)))
    expected = accountant.get_epsilon(1e-6)
    assert s.spent().epsilon == pytest.approx(expected, rel=1e-6)
    assert s.spent().epsilon >= expected * (1 - 1e-12)


def test_pld_session_composes_selections_as_pure_pairs(monkeypatch):
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    quantile_calls = _Recorder(monkeypatch, quantiles_module, "exponential_mechanism")
    top_calls = _Recorder(monkeypatch, distributions_module, "report_noisy_max")
    data = _data(rows=2)
    s = pn.Session(data, privacy_unit="household", max_contributions=2, epsilon=20.0, delta=1e-5,
                   accountant="pld", rng=13)
    levels = [0.3, 0.5]
    s.quantile("kwh", levels, bounds=(0, 4), resolution=4, epsilon=0.7)
    s.top_k("region", candidates=CATS, k=2, epsilon=0.9)
    composed = None
    for eps in [*_quantile_epsilons(quantile_calls, data, levels, 2), *_top_k_epsilons(top_calls, 2, 2)]:
        part = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(eps, 0.0),
                                           value_discretization_interval=1e-4)
        composed = part if composed is None else composed.compose(part)
    expected = composed.get_epsilon_for_delta(1e-5)
    assert s.spent().epsilon == pytest.approx(expected, rel=1e-6)
    assert s.spent().epsilon >= expected


@pytest.mark.parametrize("query", ["quantile", "top_k"])
def test_zcdp_session_converts_selections_by_the_general_bound_not_the_gaussian_curve(query):
    from tests.dp.test_zcdp_conversions import _cks_epsilon, _gaussian_epsilon

    s = pn.Session(_data(), privacy_unit="household", max_contributions=2, epsilon=20.0, delta=1e-6,
                   accountant="zcdp", rng=14)
    if query == "quantile":
        release = s.quantile("kwh", [0.5, 0.75], bounds=(0, 4), resolution=4, rho=0.125)
    else:
        release = s.top_k("region", candidates=CATS, k=2, rho=0.125)
    assert release.guarantee.rho == 0.125 and release.guarantee.delta == 0.0
    # a selection is not Gaussian noise: its ρ converts through Canonne, Kamath & Steinke's bound only
    expected = _cks_epsilon(0.125, 1e-6)
    assert s.spent().epsilon == pytest.approx(expected, rel=1e-6)
    assert s.spent().epsilon > _gaussian_epsilon(math.sqrt(2 * 0.125), 1e-6) * 1.01
    assert s.remaining().rho == pytest.approx(pn.dp.zcdp.epsilon_to_zcdp(20.0, 1e-6) - 0.125, rel=1e-9)


# -- rank radii ------------------------------------------------------------------------------------------------
def _union_bound(c: float, sensitivity: float, epsilon: float, candidates: int, alpha: float) -> float:
    """(cΔ/ε)·log((C − 1)/α): P(some worse candidate beats the best by more) ≤ α, by the union bound."""
    return c * sensitivity / epsilon * math.log((candidates - 1) / alpha)


@pytest.mark.parametrize("k", [1, 3])
def test_quantile_rank_radius_is_the_union_bound_with_factor_two(k):
    s = pn.Session(_data(), privacy_unit="household", max_contributions=k, epsilon=20.0, rng=15)
    levels = [0.25, 0.5]
    release = s.quantile("kwh", levels, bounds=(0, 4), resolution=4, epsilon=0.8)
    for alpha in (0.05, 0.2):
        expected = [_union_bound(2.0, k * max(q, 1 - q), 0.4, len(GRID), alpha) for q in levels]
        np.testing.assert_allclose(release.accuracy(alpha), expected, rtol=1e-12)


@pytest.mark.parametrize(("picks", "k"), [(1, 1), (2, 3)])
def test_top_k_rank_radius_is_the_union_bound_of_monotone_counts(picks, k):
    s = pn.Session(_data(), privacy_unit="household", max_contributions=k, epsilon=20.0, rng=16)
    release = s.top_k("region", candidates=CATS, k=picks, epsilon=0.8)
    for alpha in (0.05, 0.2):
        expected = _union_bound(1.0, float(k), 0.8 / picks, len(CATS), alpha)
        assert release.accuracy(alpha) == pytest.approx(expected, rel=1e-12)


# -- the ε of a selection ------------------------------------------------------------------------------------
@pytest.mark.parametrize("share", [Fraction(1, 2), Fraction(3, 4), Fraction(1), Fraction(5, 8), Fraction(9, 10),
                                   Fraction(3, 10), Fraction(1, 3), Fraction(2, 3), Fraction(7, 100)])
def test_laplace_selection_epsilon_is_the_largest_double_within_its_share(share):
    eps = FAMILIES["laplace"].selection_epsilon(share)
    assert Fraction(eps) <= share < Fraction(math.nextafter(eps, math.inf))


# -- group-by counts: the noise drawn -------------------------------------------------------------------------
ABSENT = tuple(f"absent-{i}" for i in range(20000))


def _cells_sensitivity(k: int, norm: int) -> float:
    return brute.sensitivity(brute.per_cell(3), k, (0.0,), 3, norm=norm)


def test_declared_group_counts_of_the_laplace_family_are_discrete_laplace_draws():
    s = pn.Session(_data(), epsilon=5.0, rng=17)
    release = s.group_by("region", keys=CATS[:3] + ABSENT).count(epsilon=1.0)
    (noise,) = release.noise
    t = noise["t"]
    assert noise["family"] == "discrete-laplace" and noise["integer"]
    assert brute.epsilon_of(_cells_sensitivity(1, 1), noise) <= 1 and t == pytest.approx(1.0, rel=1e-12)
    absent = np.asarray(release.value)[3:]  # no rows: max(K, 0) with K the noise
    law = stats.dlaplace(1.0 / t)
    assert np.all(absent == np.round(absent))
    n = absent.size
    for m in range(4):
        p = law.cdf(m)
        assert abs(np.mean(absent <= m) - p) < 5 * math.sqrt(p * (1 - p) / n)
    # the stated radius is the smallest integer with the law's coverage, and its coverage that law's exactly
    for level in (0.8, 0.95):
        low, high = release.confidence_interval(level)
        j = 0
        while law.cdf(j) - law.cdf(-j - 1) < level:
            j += 1
        assert release.coverage(level) == pytest.approx(law.cdf(j) - law.cdf(-j - 1), rel=1e-12)
        positive = absent > 0
        np.testing.assert_array_equal(np.asarray(high)[3:][positive], absent[positive] + j)
        np.testing.assert_array_equal(np.asarray(low)[3:], np.maximum(absent - j, 0.0))


@pytest.mark.parametrize("accountant", ["zcdp", "rdp"])
@pytest.mark.parametrize("k", [1, 2])
def test_declared_group_counts_of_the_gaussian_family_are_rounded_gaussian_draws(accountant, k):
    s = pn.Session(_data(rows=k), privacy_unit="household", max_contributions=k, epsilon=20.0, delta=1e-6,
                   accountant=accountant, rng=18)
    release = s.group_by("region", keys=CATS[:3] + ABSENT).count(rho=0.5)
    (noise,) = release.noise
    sigma = noise["sigma"]
    rho = brute.rho_of(_cells_sensitivity(k, 2), noise)
    assert rho <= Fraction(1, 2) and float(rho) == pytest.approx(0.5, rel=1e-12)
    absent = np.asarray(release.value)[3:]
    assert np.all(absent == np.round(absent))  # released as integers: round(W)
    n = absent.size
    for m in range(3):
        p = stats.norm(scale=sigma).cdf(m + 0.5)  # P(round(W) ≤ m)
        assert abs(np.mean(absent <= m) - p) < 5 * math.sqrt(p * (1 - p) / n)
    level = 0.9
    j = 0
    while stats.norm(scale=sigma).cdf(j + 0.5) - stats.norm(scale=sigma).cdf(-j - 0.5) < level:
        j += 1
    low, high = release.confidence_interval(level)
    np.testing.assert_array_equal(np.asarray(low)[3:], np.maximum(absent - j, 0.0))
    assert release.coverage(level) == pytest.approx(
        stats.norm(scale=sigma).cdf(j + 0.5) - stats.norm(scale=sigma).cdf(-j - 0.5), rel=1e-9)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_pld_composes_declared_group_parts_by_the_cells_a_unit_moves(k):
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    s = pn.Session(_data(), privacy_unit="household", max_contributions=k, epsilon=50.0, delta=1e-3,
                   accountant="pld", rng=19)
    counts = s.group_by("region", keys=CATS).count(epsilon=1.0)
    means = s.group_by("region", keys=CATS).mean("kwh", bounds=(1, 4), epsilon=1.5)
    aggregates = {"count": (brute.per_cell(4), (0.0,)),
                  "sum": (brute.per_cell(4, lambda v: brute.clamp(v, 1, 4) - 2.5), brute.values_around(1, 4))}
    composed = None
    for release in (counts, means):
        for noise in release.noise:
            aggregate, values = aggregates[noise["name"]]
            d = brute.sensitivity(aggregate, k, values, 4)
            if brute.moves_one_coordinate(aggregate, k, values, 4):  # a scalar pair is exact
                if noise["family"] == "discrete-laplace":
                    part = pld.from_discrete_laplace_mechanism(1.0 / noise["t"], sensitivity=int(d),
                                                               value_discretization_interval=1e-4)
                else:
                    part = pld.from_laplace_mechanism(noise["b"] / d, value_discretization_interval=1e-4)
            else:  # several cells move: the pure ε-DP worst case
                eps = float(brute.epsilon_of(d, noise))
                part = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(eps, 0.0),
                                                   value_discretization_interval=1e-4)
            composed = part if composed is None else composed.compose(part)
    assert [n["family"] for n in counts.noise] == ["discrete-laplace"]
    assert {n["name"]: n["integer"] for n in means.noise} == {"sum": False, "count": False}
    expected = composed.get_epsilon_for_delta(1e-3)
    assert s.spent().epsilon == pytest.approx(expected, rel=1e-6)
    assert s.spent().epsilon >= expected


@pytest.mark.parametrize("label", ["count", "mean"])
def test_selected_group_keys_of_the_laplace_family_name_their_count_noise(label):
    s = pn.Session(_data(), privacy_unit="household", max_contributions=2, epsilon=20.0, delta=1e-5, rng=20)
    grouped = s.group_by("region", delta=1e-6)
    release = grouped.count(epsilon=1.0) if label == "count" else grouped.mean("kwh", bounds=(1, 4), epsilon=1.0)
    noise = {n["name"]: n for n in release.noise}
    assert set(noise) == ({"count"} if label == "count" else {"count", "sum"})
    count_share = 1.0 if label == "count" else 0.5
    eps0 = float(brute.epsilon_of(_cells_sensitivity(2, 1), noise["count"]))
    # ε₀ + log(1/(1 − δ)) is the count's share: the query is (ε, δ)-DP with the partition threshold
    assert eps0 - math.log1p(-1e-6) <= count_share * (1 + 1e-15)
    assert eps0 - math.log1p(-1e-6) == pytest.approx(count_share, rel=1e-12)
    assert noise["count"]["integer"]
    if label == "count":
        assert np.all(np.asarray(release.value) == np.round(release.value))


# -- variance and per-coordinate intervals ------------------------------------------------------------------
LAWS = (NoiseLaw(error_law("laplace", 1.0)), NoiseLaw(error_law("laplace", 1.0)), NoiseLaw(error_law("laplace", 1.0)))


@pytest.mark.parametrize(("n_hat", "s1_hat", "s2_hat"), [
    (10.0, 4.0, 30.0),     # inside [0, h²]
    (10.0, 2.0, 75.0),     # between 2h and h² (h = 3)
    (4.0, 1.0, 200.0),     # above h²
    (10.0, 9.0, 5.0),      # below 0
    (10.0, 3.0, 5.0),      # in (0, 1)
    (0.5, 0.5, 2.0),       # a count in (0, 1)
    (0.5, 0.25, 0.25),     # a count in (0, 1), value below 1
    (0.0, 3.0, 2.0),       # a count of 0
    (-2.0, 3.0, 2.0),      # a negative count
])
def test_variance_value_is_the_plug_in_clipped_to_its_range(n_hat, s1_hat, s2_hat):
    bounds = Bounds(-1.0, 5.0)  # h = 3
    top = Fraction(9)
    if n_hat > 0:
        raw = Fraction(s2_hat) / Fraction(n_hat) - (Fraction(s1_hat) / Fraction(n_hat)) ** 2
        expected = min(max(raw, Fraction(0)), top)
        clamped = expected != raw
    else:
        expected, clamped = Fraction(0), True
    value, was_clamped, _ = variance_estimate(n_hat, s1_hat, s2_hat, bounds, LAWS)
    assert value == pytest.approx(float(expected), rel=1e-12, abs=1e-15)
    assert was_clamped is clamped


@pytest.mark.parametrize("family", ["laplace", "gaussian"])
@pytest.mark.parametrize(("low", "high"), [(None, None), (0.0, None), (None, 0.0), (-2.0, 1.0)])
def test_vector_intervals_are_the_noise_quantile_cut_to_the_possible_range(family, low, high):
    law = NoiseLaw(error_law(family, 1.5), 0.25)
    noisy = np.array([-6.0, -1.0, -0.2, 0.0, 0.4, 2.5, 7.0])
    level = 0.9
    r = (stats.laplace(scale=1.5) if family == "laplace" else stats.norm(scale=1.5)).ppf((1 + level) / 2) + 0.125
    lo_ref = np.clip(noisy - r, -np.inf if low is None else low, np.inf if high is None else high)
    hi_ref = np.clip(noisy + r, -np.inf if low is None else low, np.inf if high is None else high)
    lo, hi, coverage = vector_interval(noisy, law, low=low, high=high)(level)
    np.testing.assert_allclose(lo, lo_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(hi, hi_ref, rtol=1e-12, atol=1e-12)
    assert coverage == level
    for i, x in enumerate(noisy):  # a scalar release gives plain floats
        a, b, _ = vector_interval(np.float64(x), law, low=low, high=high)(level)
        assert type(a) is float and type(b) is float
        assert (a, b) == pytest.approx((lo_ref[i], hi_ref[i]), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("query", ["sum", "group sum"])
def test_sums_of_non_positive_values_have_intervals_at_most_zero(query):
    data = {"unit": np.arange(6), "g": np.array(["a", "b"] * 3), "x": np.array([-1.0, -2.0, -1.5, -1.0, -3.0, -1.0])}
    s = pn.Session(data, privacy_unit="unit", max_contributions=1, epsilon=100.0, rng=21)
    for _ in range(20):
        if query == "sum":
            release = s.sum("x", bounds=(-4, -1), epsilon=0.5)
        else:
            release = s.group_by("g", keys=["a", "b"]).sum("x", bounds=(-4, -1), epsilon=0.5)
        b = release.noise[0]["b"]
        assert brute.sensitivity(brute.total(-4, -1), 1, brute.values_around(-4, -1)) / b <= 0.5
        r = stats.laplace(scale=b).ppf(0.95) + release.noise[0]["grid"] / 2
        value = np.atleast_1d(np.asarray(release.value, dtype=float))
        low, high = (np.atleast_1d(np.asarray(v, dtype=float)) for v in release.confidence_interval(0.9))
        assert np.all(high <= 0) and np.all(low <= high)
        # the value is clipped to ≤ 0 (then it is the noisy sum where below 0), and says where it was
        inside = value < 0
        assert np.all(value <= 0)
        assert np.array_equal(np.atleast_1d(release.clamped), value == 0.0)
        np.testing.assert_allclose(low[inside], value[inside] - r, rtol=1e-12)
        np.testing.assert_allclose(high[inside], np.minimum(value[inside] + r, 0.0), rtol=1e-12)
        if query == "sum":
            assert all(type(v) is float for v in release.confidence_interval(0.9))
