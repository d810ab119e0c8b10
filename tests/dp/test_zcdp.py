"""zCDP: ρ of each mechanism, the conversion to (ε, δ) against dp-accounting and a direct computation, the
accountant's exact composition and refusal."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import integrate, stats

from privnoise import dp
from privnoise.dp.zcdp import (
    ZCDPAccountant,
    epsilon_to_zcdp,
    exponential_mechanism_zcdp,
    gaussian_zcdp,
    pure_zcdp,
    zcdp_to_delta,
    zcdp_to_epsilon,
)
from privnoise.exceptions import BudgetExceededError, CalibrationError, InvalidParameterError

CASES = [(0.01, 1e-6), (0.125, 1e-6), (0.5, 1e-5), (2.0, 1e-9), (5.0, 1e-3)]


@pytest.mark.parametrize(("rho", "delta"), CASES)
def test_conversion_is_at_most_dp_accounting_and_close(rho, delta):
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting import rdp

    accountant = rdp.RdpAccountant()
    accountant.compose(dp_accounting.ZCDpEvent(rho))
    theirs = accountant.get_epsilon(delta)
    ours = zcdp_to_epsilon(rho, delta)
    assert ours <= theirs * (1 + 1e-9)  # the exact minimum over α is below the library's grid of orders
    assert ours >= theirs * (1 - 1e-3)  # and it is the same bound


def _gaussian_delta_by_quadrature(mu: float, epsilon: float) -> float:
    """δ(ε) = ∫ max(0, p(y) − e^ε q(y)) dy for N(μ, 1) vs N(0, 1), by quadrature (a second method)."""
    cross = epsilon / mu + mu / 2.0  # where p = e^ε q
    f = lambda y: stats.norm.pdf(y, loc=mu) - math.exp(epsilon) * stats.norm.pdf(y)  # noqa: E731
    value, _ = integrate.quad(f, cross, np.inf, epsabs=1e-14, limit=200)
    return value


@pytest.mark.parametrize(("rho", "epsilon"), [(0.02, 0.5), (0.125, 1.0), (0.5, 3.0)])
def test_conversion_is_valid_for_the_gaussian_that_attains_rho(rho, epsilon):
    # A Gaussian with Δ/σ = √(2ρ) is exactly ρ-zCDP, so a valid conversion never gives less than its true δ.
    exact = _gaussian_delta_by_quadrature(math.sqrt(2 * rho), epsilon)
    assert exact == pytest.approx(dp.gaussian_delta(1.0, epsilon, sensitivity=math.sqrt(2 * rho)), rel=1e-6)
    assert zcdp_to_delta(rho, epsilon) >= exact
    assert zcdp_to_delta(rho, epsilon) < 10 * exact  # and not vacuous


@pytest.mark.parametrize(("rho", "delta"), CASES)
def test_delta_and_epsilon_conversions_are_inverse(rho, delta):
    eps = zcdp_to_epsilon(rho, delta)
    assert zcdp_to_delta(rho, eps) == pytest.approx(delta, rel=1e-6)
    assert zcdp_to_delta(rho, eps) <= delta * (1 + 1e-9)


@pytest.mark.parametrize(("epsilon", "delta"), [(0.5, 1e-6), (1.0, 1e-6), (3.0, 1e-9)])
def test_budget_inversion_is_the_largest_rho_on_the_safe_side(epsilon, delta):
    rho = epsilon_to_zcdp(epsilon, delta)
    assert zcdp_to_epsilon(rho, delta) <= epsilon
    assert zcdp_to_epsilon(rho * (1 + 1e-6), delta) > epsilon * (1 - 1e-9)


def test_rho_of_each_mechanism():
    assert gaussian_zcdp(2.0, sensitivity=1.0) == 0.125
    assert pure_zcdp("0.2") == Fraction(1, 50)
    assert exponential_mechanism_zcdp(2) == Fraction(1, 2)
    g = dp.profile_of(pn_gaussian(2.0)).rho(1.0)
    assert float(g) == pytest.approx(0.125, rel=1e-11) and g >= Fraction(1, 8)
    assert dp.profile_of(pn_laplace(2.0)).rho(1.0) == Fraction(1, 8)  # ε = 1/2 pure → ε²/2


def pn_gaussian(sigma):
    from privnoise.mechanisms import Gaussian

    return Gaussian.from_std(sigma)


def pn_laplace(b):
    from privnoise.mechanisms import Laplace

    return Laplace(scale=b)


def test_accountant_composes_rho_and_delta_exactly():
    acc = ZCDPAccountant(epsilon_budget=3, delta_budget="1e-6")
    for _ in range(10):
        acc.record_rho("0.01")
    assert acc.total_rho == Fraction(1, 10)
    acc.record_rho("0.01", delta="1e-7")
    assert acc.total_delta == Fraction(1, 10**7)
    assert acc.epsilon(1e-6) == pytest.approx(zcdp_to_epsilon(0.11, 1e-6 - 1e-7))


def test_accountant_uses_the_exact_gaussian_profile_when_every_charge_is_gaussian():
    acc = ZCDPAccountant()
    acc.record_gaussian(3.0, sensitivity=1.0, count=4)
    rho = 4 / (2 * 9.0)
    assert float(acc.total_rho) == pytest.approx(rho, rel=1e-11)
    exact = dp.gaussian_epsilon(1.0, 1e-6, sensitivity=math.sqrt(2 * rho))
    assert acc.epsilon(1e-6) == pytest.approx(exact, rel=1e-6)
    assert acc.epsilon(1e-6) < zcdp_to_epsilon(rho, 1e-6)
    acc.record_laplace(1.0, sensitivity=0.1)  # pure ε = 0.1 → ρ = 0.005, no longer all Gaussian
    assert acc.epsilon(1e-6) == pytest.approx(zcdp_to_epsilon(float(acc.total_rho), 1e-6))


def test_accountant_refuses_exactly_at_the_budget():
    acc = ZCDPAccountant(epsilon_budget=1, delta_budget="1e-6")
    limit = acc.rho_budget()
    assert zcdp_to_epsilon(float(limit), 1e-6) <= 1.0
    acc.record_rho(limit / 2)
    acc.record_rho(limit / 2)  # exactly the budget: accepted
    with pytest.raises(BudgetExceededError):
        acc.record_rho(Fraction(1, 10**12))
    assert acc.total_rho == limit  # the refused charge left nothing behind


def test_accountant_refuses_delta_beyond_budget_and_bad_input():
    acc = ZCDPAccountant(epsilon_budget=1, delta_budget="1e-6")
    with pytest.raises(BudgetExceededError):
        acc.record_rho("0.001", delta="2e-6")
    with pytest.raises(InvalidParameterError, match="rho"):
        acc.record_rho(float("nan"))
    with pytest.raises(InvalidParameterError, match="delta"):
        acc.record_epsilon(0.1, 1e-7)
    with pytest.raises(InvalidParameterError, match="delta"):
        acc.spent()
    with pytest.raises(CalibrationError):
        epsilon_to_zcdp(1.0, 0.0)
