"""zCDP conversions computed here, independently: the Canonne–Kamath–Steinke bound minimised over a dense grid of
orders, dp-accounting's RDP accountant at δ − Σδ (the δ of approximate charges already spent), and the exact
Gaussian curve by root finding; the accountant's totals, budget and refusals in exact rationals."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import optimize, stats

from privnoise.dp.zcdp import (
    ZCDPAccountant,
    epsilon_to_zcdp,
    exponential_mechanism_zcdp,
    gaussian_zcdp,
    pure_zcdp,
    zcdp_to_delta,
    zcdp_to_epsilon,
)
from privnoise.exceptions import BudgetExceededError, InvalidParameterError
from privnoise.mechanisms import Gaussian, Laplace

_LOG_ORDERS = np.linspace(-16.0, 16.0, 40_001)  # log(α − 1)


def _minimum_over_orders(curve) -> float:
    """The minimum of ``curve`` (a function of t = log(α − 1)) over a dense grid, refined by golden section."""
    values = curve(_LOG_ORDERS)
    i = int(np.argmin(values))
    low, high = _LOG_ORDERS[max(i - 1, 0)], _LOG_ORDERS[min(i + 1, _LOG_ORDERS.size - 1)]
    found = optimize.minimize_scalar(lambda t: float(curve(np.array([t]))[0]), bounds=(low, high),
                                     method="bounded", options={"xatol": 1e-13})
    return min(float(values[i]), float(found.fun))


def _cks_epsilon(rho: float, delta: float) -> float:
    """inf_α αρ + (log(1/δ) + (α − 1)log(1 − 1/α) − log α)/(α − 1) (Canonne, Kamath & Steinke 2020, Cor. 13)."""

    def curve(t: np.ndarray) -> np.ndarray:
        a = 1.0 + np.exp(t)
        return a * rho + (math.log(1.0 / delta) + (a - 1.0) * np.log1p(-1.0 / a) - np.log(a)) / (a - 1.0)

    return _minimum_over_orders(curve)


def _cks_delta(rho: float, epsilon: float) -> float:
    """inf_α exp((α − 1)(αρ − ε)) (1 − 1/α)^α / (α − 1), the same bound read for δ."""

    def curve(t: np.ndarray) -> np.ndarray:
        a = 1.0 + np.exp(t)
        return (a - 1.0) * (a * rho - epsilon) - np.log(a - 1.0) + a * np.log1p(-1.0 / a)

    return float(min(1.0, math.exp(min(_minimum_over_orders(curve), 0.0))))


def _library_epsilon(rho: float, delta: float) -> float:
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting import rdp

    accountant = rdp.RdpAccountant()
    accountant.compose(dp_accounting.ZCDpEvent(rho))
    return float(accountant.get_epsilon(delta))


def _gaussian_delta(mu: float, epsilon: float) -> float:
    return float(stats.norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * stats.norm.cdf(-epsilon / mu - mu / 2))


def _gaussian_epsilon(mu: float, delta: float) -> float:
    """The exact ε(δ) of the Gaussian mechanism with Δ/σ = μ (Balle & Wang 2018), by root finding."""
    if _gaussian_delta(mu, 0.0) <= delta:
        return 0.0
    return float(optimize.brentq(lambda e: _gaussian_delta(mu, e) - delta, 0.0, 100.0, xtol=1e-14))


@pytest.mark.parametrize(("rho", "delta"), [(0.003, 1e-6), (0.125, 1e-5), (0.7, 1e-8), (3.0, 0.01)])
def test_epsilon_of_rho_is_the_minimum_over_orders(rho, delta):
    ours = zcdp_to_epsilon(rho, delta)
    assert ours >= _cks_epsilon(rho, delta) * (1 - 1e-13)
    assert ours == pytest.approx(_cks_epsilon(rho, delta), rel=2e-12)  # the minimum, found precisely
    assert ours <= _library_epsilon(rho, delta) * (1 + 1e-9)
    assert zcdp_to_epsilon(0.0, delta) == 0.0
    assert zcdp_to_epsilon(rho, 0.0) == math.inf


@pytest.mark.parametrize(("rho", "epsilon"), [(0.003, 0.5), (0.125, 1.0), (0.7, 4.0), (1.0, 6.0), (3.0, 12.0),
                                              (20.0, 50.0)])
def test_delta_of_rho_is_the_minimum_over_orders(rho, epsilon):
    ours = zcdp_to_delta(rho, epsilon)
    assert ours >= _cks_delta(rho, epsilon) * (1 - 1e-12)
    assert ours == pytest.approx(_cks_delta(rho, epsilon), rel=2e-11)  # the minimum, found precisely
    assert zcdp_to_delta(0.0, epsilon) == 0.0
    assert zcdp_to_delta(50.0, 1.0) == 1.0  # the bound caps at 1


@pytest.mark.parametrize(("epsilon", "delta"), [(0.5, 1e-6), (1.0, 1e-5), (4.0, 1e-9), (1e-6, 1e-6)])
def test_rho_of_a_budget_is_the_largest_within_it(epsilon, delta):
    rho = epsilon_to_zcdp(epsilon, delta)
    assert _cks_epsilon(rho, delta) <= epsilon * (1 + 1e-12)
    assert _cks_epsilon(rho * (1 + 1e-6), delta) > epsilon


def test_a_budget_without_delta_has_no_rho():
    from privnoise.exceptions import CalibrationError

    with pytest.raises(CalibrationError, match="no pure"):
        epsilon_to_zcdp(1.0, 0.0)
    assert zcdp_to_delta(0.5, 0.0) == pytest.approx(_cks_delta(0.5, 0.0), rel=2e-11)  # ε = 0 is a valid question


def test_rho_of_each_mechanism_is_exact():
    assert gaussian_zcdp(3.0, sensitivity=1.5) == pytest.approx(1.5**2 / (2 * 9.0), rel=1e-15)
    assert pure_zcdp("0.3") == Fraction(9, 200)
    assert exponential_mechanism_zcdp("0.4") == Fraction(1, 50)


def _approximate_then_gaussian() -> ZCDPAccountant:
    acc = ZCDPAccountant()
    acc.record_rho("0.01", delta="3e-6", label="partition selection")
    acc.record_gaussian(4.0, 1.0, count=2)  # ρ = 1/32 each
    return acc


def test_spent_delta_is_deducted_before_the_conversion():
    acc = _approximate_then_gaussian()
    rho = 0.01 + 2 / 32
    assert acc.total_rho >= Fraction(1, 100) + Fraction(1, 16)
    assert float(acc.total_rho) == pytest.approx(rho, rel=1e-12)
    assert acc.total_delta == Fraction(3, 10**6)
    delta = 1e-5
    eps = acc.epsilon(delta)
    assert eps == pytest.approx(_cks_epsilon(rho, delta - 3e-6), rel=1e-9)
    assert eps == pytest.approx(_library_epsilon(rho, delta - 3e-6), rel=1e-3)
    assert eps > _cks_epsilon(rho, delta) * (1 + 1e-4)  # the spent δ made a difference
    assert acc.epsilon(2e-6) == math.inf  # less δ than already spent
    # δ(ε) adds the spent δ to the conversion's
    assert acc.delta(2.0) == pytest.approx(3e-6 + _cks_delta(rho, 2.0), rel=1e-9)
    assert acc.spent(delta).epsilon == pytest.approx(eps, rel=1e-12)


def test_only_continuous_gaussian_charges_take_the_exact_gaussian_curve():
    acc = ZCDPAccountant()
    acc.record_gaussian(2.0, 1.0)
    acc.record_gaussian(4.0, 2.0)  # ρ = 1/8 each: one Gaussian with μ = √(2ρ) = 1/√2·√2 = 1
    mu = math.sqrt(2 * 0.25)
    assert acc.epsilon(1e-6) == pytest.approx(_gaussian_epsilon(mu, 1e-6), rel=1e-6)
    assert acc.epsilon(1e-6) < _cks_epsilon(0.25, 1e-6)
    assert acc.delta(1.0) == pytest.approx(_gaussian_delta(mu, 1.0), rel=1e-6)
    acc.record_laplace(20.0, 1.0)  # a pure part (ρ = ε²/2 = 1/800): back to the zCDP conversion
    rho = 0.25 + 1 / 800
    assert float(acc.total_rho) == pytest.approx(rho, rel=1e-12)
    assert acc.epsilon(1e-6) == pytest.approx(_cks_epsilon(rho, 1e-6), rel=1e-9)
    assert acc.delta(1.0) == pytest.approx(_cks_delta(rho, 1.0), rel=1e-9)
    approximate = ZCDPAccountant()
    approximate.record_rho(0.125, delta=1e-7, gaussian=True)  # approximate: not a Gaussian curve
    assert approximate.epsilon(1e-6) == pytest.approx(_cks_epsilon(0.125, 1e-6 - 1e-7), rel=1e-9)
    assert ZCDPAccountant().epsilon(1e-6) == 0.0
    assert ZCDPAccountant().delta(1.0) == 0.0


def test_budget_is_the_rho_of_the_delta_left_and_refused_exactly():
    acc = ZCDPAccountant(epsilon_budget=2, delta_budget="1e-5")
    acc.record_rho("0.01", delta="4e-6")
    limit = acc.rho_budget()
    assert float(limit) == pytest.approx(epsilon_to_zcdp(2.0, 6e-6), rel=1e-12)
    assert _cks_epsilon(float(limit), 6e-6) <= 2.0 * (1 + 1e-12)
    assert acc.rho_budget("1e-5") > limit  # more δ left, more ρ
    acc.record_rho(limit - Fraction(1, 100))  # exactly at the budget: accepted
    assert acc.total_rho == limit
    with pytest.raises(BudgetExceededError):
        acc.record_rho(Fraction(1, 10**12))
    with pytest.raises(BudgetExceededError, match="δ"):
        acc.record_rho(Fraction(1, 10**12), delta="7e-6")
    assert acc.total_rho == limit  # nothing recorded


def test_pure_charges_cost_half_epsilon_squared():
    acc = ZCDPAccountant()
    acc.record_epsilon("0.2", count=3)
    acc.record_guarantee(__import__("privnoise").DifferentialPrivacyGuarantee(0.5, 0.0, "row"))
    assert acc.total_rho == 3 * Fraction(1, 50) + Fraction(1, 8)
    acc.record(Gaussian.from_std(2.0), sensitivity=1.0)
    acc.record(Laplace(scale=2.0), sensitivity=1.0)
    assert float(acc.total_rho) == pytest.approx(3 / 50 + 3 / 8, rel=1e-12)
    with pytest.raises(InvalidParameterError, match="delta"):
        acc.record_epsilon(0.1, 1e-6)
    with pytest.raises(InvalidParameterError, match="delta"):
        acc.record_rho(0.1, delta=1)
    with pytest.raises(InvalidParameterError, match="delta"):
        acc.spent()
    with pytest.raises(InvalidParameterError, match="budget"):
        acc.rho_budget()
    with pytest.raises(BudgetExceededError):
        ZCDPAccountant(epsilon_budget=1).record_rho(0.01)


def test_the_delta_of_a_new_charge_is_deducted_before_its_rho_is_checked():
    budget = ZCDPAccountant(epsilon_budget=2, delta_budget="1e-5")
    at_full = epsilon_to_zcdp(2.0, 1e-5)
    at_rest = epsilon_to_zcdp(2.0, 6e-6)
    assert at_rest < at_full
    between = Fraction((at_rest + at_full) / 2)
    with pytest.raises(BudgetExceededError):  # within ρ_max(δ) but not within ρ_max(δ − 4e-6)
        budget.record_rho(between, delta="4e-6")
    assert budget.total_rho == 0 and budget.total_delta == 0
    budget.record_rho(Fraction(at_rest) * (1 - Fraction(1, 10**9)), delta="4e-6")
    # ρ_max is rounded down, strictly below the conversion's root
    assert budget.rho_budget("6e-6") < Fraction(at_rest)
    assert budget.rho_budget("6e-6") > Fraction(at_rest) * (1 - Fraction(1, 10**12))


def test_a_charge_spending_all_the_delta_is_refused_as_over_budget():
    acc = ZCDPAccountant(epsilon_budget=1, delta_budget="1e-6")
    assert acc.rho_budget(0) == 0  # no δ left, no ρ
    with pytest.raises(BudgetExceededError):
        acc.record_rho("1e-9", delta="1e-6")
    assert acc.total_rho == 0
    with pytest.raises(InvalidParameterError, match="budget"):
        ZCDPAccountant(delta_budget="1e-6").rho_budget()
    with pytest.raises(InvalidParameterError, match="budget"):
        ZCDPAccountant(epsilon_budget=1).rho_budget()


def test_a_rho_charge_is_not_gaussian_unless_said():
    acc = ZCDPAccountant()
    acc.record_rho(0.125)
    assert acc.epsilon(1e-6) == pytest.approx(_cks_epsilon(0.125, 1e-6), rel=1e-9)
    assert acc.epsilon() == math.inf  # zCDP gives no pure ε
    pure = ZCDPAccountant()
    pure.record_epsilon("0.2")
    assert pure.total_rho == Fraction(1, 50)
    empty = ZCDPAccountant()
    assert empty.epsilon(0.0) == 0.0 and empty.delta(0.0) == 0.0
    assert acc.delta(0.0) == pytest.approx(_cks_delta(0.125, 0.0), rel=2e-11)
    heavy = ZCDPAccountant()
    heavy.record_rho(50, delta="0.5")
    assert heavy.delta(0.1) == 1.0  # the spent δ plus the conversion's, never above 1


@pytest.mark.parametrize(("rho", "epsilon"), [(0.05, 2.0), (0.125, 4.0), (0.7, 12.0)])
def test_delta_of_rho_is_the_minimum_to_the_conversion_margin(rho, epsilon):
    # The δ of a conversion is the minimum over orders within its safety margin (1e-12), not a nearby order's δ:
    # each extra 1e-11 is δ the budget loses.
    exact = _cks_delta(rho, epsilon)
    assert exact <= zcdp_to_delta(rho, epsilon) <= exact * (1 + 3e-12)


@pytest.mark.parametrize(("epsilon", "delta"), [(1e3, 1e-6), (1e5, 1e-9), (1e8, 1e-6), (5e12, 1e-6), (5e12, 0.01)])
def test_rho_of_a_large_budget_is_the_largest_within_it(epsilon, delta):
    # ρ ≈ ε for a large ε: the search for ρ must reach it and find it to high precision.
    rho = epsilon_to_zcdp(epsilon, delta)
    assert _cks_epsilon(rho, delta) <= epsilon * (1 + 1e-12)
    assert _cks_epsilon(rho * (1 + 1e-10), delta) > epsilon
