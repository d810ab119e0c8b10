"""Budgets split between levels and picks, and composed by every accountant, checked by independent composition.

Quantiles and top-k: the selections actually made are recorded (the scores, ε and Δ the mechanism is given); the
score sensitivity is found by brute force on the data (one unit of ≤ k rows anywhere on the grid), each selection's
ε is 2·(ε/(2Δ))·Δ_true (the exponential mechanism's temperature times the true sensitivity), and the parts are
summed exactly and compared with the charge. Accountants: the session's spent ε is recomputed with dp-accounting
(PLD, RDP) or the closed forms (advanced composition, zCDP) from the noise actually drawn, at δ less the partition
δ already spent.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import privnoise as pn
import privnoise.analysis.distributions as distributions_module
import privnoise.analysis.quantiles as quantiles_module
from privnoise.dp.families import FAMILIES
from tests.analysis import _brute as brute

CATS = ("north", "south", "east", "west")


def _data(households: int = 30, rows: int = 4, seed: int = 1) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    unit = np.tile(np.arange(households), rows)
    region = np.array(CATS[:3])[rng.integers(0, 3, unit.size)]
    return {"household": unit, "region": region, "kwh": np.round(rng.uniform(-1.0, 5.0, unit.size), 3)}


class _Recorder:
    def __init__(self, monkeypatch, module, name):
        self.calls = []
        original = getattr(module, name)

        def spy(*args, **kwargs):
            self.calls.append((args, kwargs))
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, spy)


def _bounded(values: np.ndarray, units: np.ndarray, k: int) -> np.ndarray:
    """The first k values of each unit (which k does not matter for a sensitivity over all neighbours)."""
    keep = np.zeros(values.size, dtype=bool)
    for u in np.unique(units):
        keep[np.flatnonzero(units == u)[:k]] = True
    return values[keep]


@pytest.mark.parametrize("family", ["laplace", "gaussian"])
@pytest.mark.parametrize(("levels", "k"), [([0.5], 1), ([0.25, 0.5, 0.9], 2)])
def test_quantile_levels_split_the_budget(monkeypatch, family, levels, k):
    recorder = _Recorder(monkeypatch, quantiles_module, "exponential_mechanism")
    data = _data(rows=k)  # no unit beyond the cap: the scores are those of every row
    accountant = "approximate" if family == "laplace" else "zcdp"
    s = pn.Session(data, privacy_unit="household", max_contributions=k, epsilon=20.0, delta=1e-5,
                   accountant=accountant, rng=3)
    before = s.remaining()
    price = {"epsilon": 0.9} if family == "laplace" else {"rho": Fraction(1, 20)}
    release = s.quantile("kwh", levels, bounds=(0, 4), resolution=4, **price)
    assert len(recorder.calls) == len(levels)
    grid = np.arange(0.0, 4.0 + 1e-9, 1.0)  # 4 steps of a power-of-two width: Λ = 1
    values = np.clip(np.rint(np.clip(data["kwh"], 0, 4) / 1.0), 0, 4)
    kept = _bounded(values, data["household"], k)
    total = Fraction(0)
    for q, (args, kwargs) in zip(levels, recorder.calls, strict=True):
        scores, eps = args[0], args[1]
        # the scores the mechanism is given are the documented quantile scores of the bounded data, point by point
        points = np.repeat(np.arange(len(scores)), kwargs["multiplicity"].astype(int))
        np.testing.assert_allclose(-np.asarray(scores)[points], brute.quantile_scores(kept, q, grid), atol=1e-12)
        true_sensitivity = brute.score_sensitivity(kept, q, grid, k)
        part = Fraction(eps) * Fraction(true_sensitivity) / Fraction(kwargs["sensitivity"])
        total += part if family == "laplace" else part * part / 8  # ε-bounded range: ε²/8-zCDP
    if family == "laplace":
        charged = before.exact_epsilon - s.remaining().exact_epsilon
        assert charged == Fraction(9, 10) and release.guarantee.epsilon == 0.9
        assert float(total) <= 0.9 * (1 + 1e-15) and float(total) == pytest.approx(0.9, rel=1e-12)
    else:
        assert float(total) <= 0.05 * (1 + 1e-15) and float(total) == pytest.approx(0.05, rel=1e-12)
        assert release.guarantee.rho == 0.05


@pytest.mark.parametrize("family", ["laplace", "gaussian"])
@pytest.mark.parametrize("method", ["exponential", "laplace"])
@pytest.mark.parametrize(("picks", "k"), [(1, 1), (3, 2)])
def test_top_k_picks_split_the_budget(monkeypatch, family, method, picks, k):
    recorder = _Recorder(monkeypatch, distributions_module, "report_noisy_max")
    data = _data()
    accountant = "approximate" if family == "laplace" else "zcdp"
    s = pn.Session(data, privacy_unit="household", max_contributions=k, epsilon=20.0, delta=1e-5,
                   accountant=accountant, rng=4)
    before = s.remaining()
    price = {"epsilon": 0.8} if family == "laplace" else {"rho": Fraction(1, 20)}
    release = s.top_k("region", candidates=CATS, k=picks, method=method, **price)
    assert len(release.value) == picks
    (args, kwargs), = recorder.calls
    eps = args[1]
    # the noise of each pick has scale c·Δ·k/ε (c = 1 for monotone counts), as dp/exponential draws it
    c = 1.0 if kwargs["monotone"] else 2.0
    scale = Fraction(c) * Fraction(kwargs["sensitivity"]) * kwargs["k"] / Fraction(eps)
    assert kwargs["k"] == picks and kwargs["method"] == method
    # the counts are monotone (a unit only adds rows) with sensitivity max_contributions, by brute force
    per_cell = max(float(np.max(np.abs(brute.per_cell(len(CATS))(rows))))
                   for rows in brute.unit_rows(k, (0.0,), len(CATS)))
    per_pick = Fraction(per_cell) / scale  # monotone scores: ε = Δ/scale per pick
    if family == "laplace":
        total = picks * per_pick
        charged = before.exact_epsilon - s.remaining().exact_epsilon
        assert charged == Fraction(4, 5) and release.guarantee.epsilon == 0.8
        assert float(total) <= 0.8 * (1 + 1e-15) and float(total) == pytest.approx(0.8, rel=1e-12)
    else:
        factor = 8 if method == "exponential" else 2  # bounded range, or pure ε-DP only
        total = picks * per_pick * per_pick / factor
        assert float(total) <= 0.05 * (1 + 1e-15)
        assert float(total) == pytest.approx(0.05 / picks * (8 / factor if method == "exponential" else 1),
                                             rel=1e-12)
        # the whole query spends ρ of an ε-DP release at most: picks·(ε/picks)²/c ≤ ε²/c
        assert release.guarantee.rho == 0.05


def test_the_epsilon_of_a_selection_is_never_above_its_exact_share():

    for share in (Fraction(9, 10), Fraction(3, 10), Fraction(1, 3), Fraction(7, 100), Fraction(2, 3)):
        assert Fraction(FAMILIES["laplace"].selection_epsilon(share)) <= share
        assert Fraction(FAMILIES["laplace"].selection_epsilon(share)) > share * (1 - Fraction(1, 10**15))
        for bounded, factor in ((True, 8), (False, 2)):
            eps = Fraction(FAMILIES["gaussian"].selection_epsilon(share, bounded_range=bounded))
            assert eps * eps / factor <= share
            assert eps * eps / factor > share * (1 - Fraction(1, 10**14))


# -- accountants: composition recomputed from the noise actually drawn ------------------------------------------
def _queries(s: pn.Session, k: int) -> list[tuple[object, list[tuple[str, float, int]]]]:
    """Run a mix of queries; for each, its components as (name, Δ₁ or Δ₂ by brute force, coordinates moved)."""
    out = []
    values_sum = brute.values_around(-1, 3)
    out.append((s.count(epsilon=0.3), {"count": brute.count}, (0.0,), 1))
    out.append((s.sum("kwh", bounds=(-1, 3), epsilon=0.4), {"sum": brute.total(-1, 3)}, values_sum, 1))
    out.append((s.mean("kwh", bounds=(1, 4), epsilon=0.5),
                {"sum": brute.centred(1, 4), "count": brute.count}, brute.values_around(1, 4), 1))
    out.append((s.histogram("kwh", bins=[0, 1, 2, 4], epsilon=0.3), {"cells": brute.per_cell(3)}, (0.0,), 3))
    return out


def _parts(release, aggregates, values, cells, k, norm):
    noise = {n["name"]: n for n in release.noise}
    for name, aggregate in aggregates.items():
        d = brute.sensitivity(aggregate, k, values, cells, norm=norm)
        scalar = cells == 1 or brute.moves_one_coordinate(aggregate, k, values, cells)
        yield noise[name], d, scalar


@pytest.mark.parametrize("k", [1, 2, 3])
def test_pld_accountant_composes_the_noise_drawn_with_the_partition_delta(k):
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    s = pn.Session(_data(), privacy_unit="household", max_contributions=k, epsilon=30.0, delta=1e-5,
                   accountant="pld", rng=5)
    interval = 1e-4
    composed = None

    def add(part):
        nonlocal composed
        composed = part if composed is None else composed.compose(part)

    for release, aggregates, values, cells in _queries(s, k):
        for noise, d, scalar in _parts(release, aggregates, values, cells, k, 1):
            if noise["family"] == "discrete-laplace" and scalar:
                add(pld.from_discrete_laplace_mechanism(1.0 / noise["t"], sensitivity=int(d),
                                                        value_discretization_interval=interval))
            elif noise["family"] == "laplace" and scalar:
                add(pld.from_laplace_mechanism(noise["b"] / d, value_discretization_interval=interval))
            else:  # a vector moved in several coordinates: its pure ε = Δ₁/scale
                eps = float(brute.epsilon_of(d, noise))
                add(pld.from_privacy_parameters(common.DifferentialPrivacyParameters(eps, 0.0),
                                                value_discretization_interval=interval))
    selected = s.group_by("region", delta=2e-6).count(epsilon=0.6)
    assert selected.guarantee.delta == 2e-6
    count_noise = selected.noise[0]
    eps0 = float(brute.epsilon_of(brute.sensitivity(brute.per_cell(3), k, (0.0,), 3), count_noise))
    eps_query = eps0 + (-math.log1p(-2e-6))
    assert eps_query <= 0.6 * (1 + 1e-15)
    add(pld.from_privacy_parameters(common.DifferentialPrivacyParameters(0.6, 2e-6),
                                    value_discretization_interval=interval))
    expected = composed.get_epsilon_for_delta(1e-5)
    assert s.spent().epsilon == pytest.approx(expected, rel=1e-6)
    assert s.spent().epsilon >= expected
    assert s.remaining().delta == pytest.approx(1e-5 - 2e-6, rel=1e-12)


@pytest.mark.parametrize("k", [1, 3])
def test_rdp_accountant_converts_at_delta_less_the_partition_delta(k):
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting import rdp

    s = pn.Session(_data(), privacy_unit="household", max_contributions=k, epsilon=30.0, delta=1e-5,
                   accountant="rdp", rng=6)
    accountant = rdp.RdpAccountant()
    for release, aggregates, values, cells in _queries(s, k):
        for noise, d, _ in _parts(release, aggregates, values, cells, k, 2):
            accountant.compose(dp_accounting.GaussianDpEvent(noise["sigma"] / d))
    selected = s.group_by("region", delta=4e-6).mean("kwh", bounds=(1, 4), epsilon=0.6)
    noise = {n["name"]: n for n in selected.noise}
    accountant.compose(dp_accounting.GaussianDpEvent(
        noise["count"]["sigma"] / brute.sensitivity(brute.per_cell(3), k, (0.0,), 3, norm=2)))
    accountant.compose(dp_accounting.GaussianDpEvent(
        noise["sum"]["sigma"] / brute.sensitivity(
            brute.per_cell(3, lambda v: brute.clamp(v, 1, 4) - 2.5), k, brute.values_around(1, 4), 3, norm=2)))
    assert selected.guarantee.delta == 4e-6
    expected = accountant.get_epsilon(1e-5 - 4e-6)
    assert s.spent().epsilon == pytest.approx(expected, rel=1e-6)
    assert s.spent().epsilon >= expected * (1 - 1e-12)
    assert s.remaining().delta == pytest.approx(6e-6, rel=1e-12)


def _advanced(epsilons: list[float], slack: float) -> float:
    basic = sum(epsilons)
    advanced = math.sqrt(2 * math.log(1 / slack) * sum(e * e for e in epsilons)) + sum(
        e * math.expm1(e) for e in epsilons)
    return min(basic, advanced)


def test_advanced_accountant_uses_the_delta_left_after_partition_selection():
    s = pn.Session(_data(), epsilon=30.0, delta=1e-5, accountant="advanced", rng=7)
    for _ in range(30):
        s.count(epsilon=0.05)
    s.group_by("region", delta=5e-6).count(epsilon=0.05)
    expected = _advanced([0.05] * 31, 1e-5 - 5e-6)
    assert expected < 31 * 0.05  # the advanced bound is the one in force
    assert s.spent().epsilon == pytest.approx(expected, rel=1e-9)
    assert s.spent().epsilon >= expected * (1 - 1e-12)
    assert s.remaining().delta == pytest.approx(5e-6, rel=1e-12)


def test_zcdp_session_converts_at_delta_less_the_partition_delta():
    from tests.dp.test_zcdp_conversions import _cks_epsilon, _gaussian_epsilon

    s = pn.Session(_data(), privacy_unit="household", max_contributions=2, epsilon=30.0, delta=1e-5,
                   accountant="zcdp", rng=8)
    rho = Fraction(0)
    for release, aggregates, values, cells in _queries(s, 2):
        for noise, d, _ in _parts(release, aggregates, values, cells, 2, 2):
            rho += brute.rho_of(d, noise)
    # Gaussian parts only: the exact Gaussian curve of their composition
    mu = math.sqrt(2 * float(rho))
    assert s.spent().epsilon == pytest.approx(_gaussian_epsilon(mu, 1e-5), rel=1e-6)
    left = s.remaining()
    assert left.rho == pytest.approx(pn.dp.zcdp.epsilon_to_zcdp(30.0, 1e-5) - float(rho), rel=1e-9)
    selected = s.group_by("region", delta=4e-6).count(rho=0.01)
    assert selected.guarantee.delta == 4e-6
    rho += brute.rho_of(brute.sensitivity(brute.per_cell(3), 2, (0.0,), 3, norm=2), selected.noise[0])
    assert s.spent().epsilon == pytest.approx(_cks_epsilon(float(rho), 1e-5 - 4e-6), rel=1e-6)
    left = s.remaining()
    assert left.delta == pytest.approx(6e-6, rel=1e-12)
    assert left.rho == pytest.approx(pn.dp.zcdp.epsilon_to_zcdp(30.0, 6e-6) - float(rho), rel=1e-9)
