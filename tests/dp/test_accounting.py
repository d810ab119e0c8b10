"""Privacy accounting: exact rationals, tight Gaussian composition, PLD vs RDP, advanced composition, bad inputs."""

from __future__ import annotations

import math
import threading
from fractions import Fraction

import numpy as np
import pytest

from privnoise.dp import accountant_for
from privnoise.dp.accounting import PrivacyAccountant, exact_rational
from privnoise.dp.gaussian import gaussian_delta, gaussian_epsilon
from privnoise.dp.laplace import laplace_for_epsilon
from privnoise.exceptions import BudgetExceededError, CalibrationError, InvalidParameterError
from privnoise.guarantees import DifferentialPrivacyGuarantee
from privnoise.mechanisms import Gaussian, Laplace, RaisedCosine
from privnoise.mechanisms.discrete import DiscreteGaussian, DiscreteLaplace
from privnoise.mechanisms.hardening import hardened

pytest.importorskip("dp_accounting")


def test_ten_charges_of_a_tenth_spend_exactly_one():
    for mode in ("pure", "approximate"):
        acc = accountant_for(mode=mode, epsilon_budget=1)
        for _ in range(10):
            acc.record_epsilon(0.1)
        assert acc.total_epsilon == 1 and acc.spent().epsilon == 1.0
        with pytest.raises(BudgetExceededError):
            acc.record_epsilon(Fraction(1, 10**9))
        assert len(acc) == 10 and acc.total_epsilon == 1  # the refused charge is not recorded
    acc = accountant_for(mode="approximate", delta_budget="3e-6")
    acc.record_epsilon("0.3", 1e-6, count=3)
    assert acc.total_delta == Fraction(3, 10**6) and acc.total_epsilon == Fraction(9, 10)
    with pytest.raises(BudgetExceededError):
        acc.record_epsilon(0.1, 1e-12)


def test_laplace_charges_are_exact():
    acc = accountant_for(mode="pure")
    acc.record_laplace(2.0, 1.0, count=3)
    acc.record(laplace_for_epsilon(0.1, sensitivity=1.0), sensitivity=1.0)
    assert acc.total_epsilon == Fraction(3, 2) + Fraction(1, 10)
    acc.record(Laplace(scale=[1.0, 4.0]), sensitivity=2.0)
    assert acc.total_epsilon == Fraction(16, 10) + 2
    g = acc.spent()
    assert isinstance(g, DifferentialPrivacyGuarantee) and g.epsilon == 3.6 and g.delta == 0.0


@pytest.mark.parametrize("k, sigma, delta", [(4, 2.0, 1e-5), (10, 5.0, 1e-6), (25, 3.0, 1e-3)])
def test_k_gaussians_equal_one_gaussian_with_sigma_over_root_k(k, sigma, delta):
    exact = gaussian_epsilon(sigma / math.sqrt(k), delta, sensitivity=1.0)
    pld = accountant_for(mode="pld", value_discretization_interval=1e-4)
    pld.record_gaussian(sigma, 1.0, count=k)
    eps = pld.epsilon(delta)
    assert exact <= eps <= exact * 1.01 + 1e-3  # pessimistic PLD: an upper bound, and tight
    assert pld.delta(exact) == pytest.approx(
        gaussian_delta(sigma / math.sqrt(k), exact, sensitivity=1.0), rel=0.05
    )
    # one call per release gives the same answer as count=k, and record(mech) the same as record_gaussian
    if k <= 10:
        each = accountant_for(mode="pld")
        for _ in range(k):
            each.record(Gaussian.from_std(sigma), sensitivity=1.0)
        assert each.epsilon(delta) == pytest.approx(eps, rel=1e-3)
    rdp = accountant_for(mode="rdp")
    rdp.record_gaussian(sigma, 1.0, count=k)
    assert rdp.epsilon(delta) > eps  # PLD is tighter than RDP
    assert pld.spent(delta).epsilon == eps


def test_pld_rdp_and_basic_ordering_for_laplace():
    basic = accountant_for(mode="pure")
    pld = accountant_for(mode="pld")
    rdp = accountant_for(mode="rdp")
    for acc in (basic, pld, rdp):
        acc.record_laplace(10.0, 1.0, count=50)  # ε = 0.1 each, Σ = 5
    delta = 1e-6
    assert pld.epsilon(delta) < rdp.epsilon(delta)
    assert pld.epsilon(delta) < basic.epsilon(delta) == 5.0
    single = accountant_for(mode="pld")
    single.record_laplace(10.0, 1.0)
    assert single.epsilon(1e-9) == pytest.approx(0.1, abs=2e-3)


def test_advanced_composition():
    basic = accountant_for(mode="approximate")
    adv = accountant_for(mode="approximate", advanced=True)
    pld = accountant_for(mode="pld")
    for acc in (basic, adv):
        acc.record_epsilon(0.05, count=400)
    pld.record_laplace(20.0, 1.0, count=400)
    delta = 1e-6
    expected = math.sqrt(2 * math.log(1 / delta) * 400 * 0.05**2) + 400 * 0.05 * math.expm1(0.05)
    assert adv.epsilon(delta) == pytest.approx(expected)
    assert pld.epsilon(delta) < adv.epsilon(delta) < basic.epsilon(delta) == 20.0
    assert adv.delta(adv.epsilon(delta)) == pytest.approx(delta, rel=1e-6)
    assert adv.epsilon(0.0) == 20.0  # no slack for δ': basic composition only
    few = accountant_for(mode="approximate", advanced=True)
    few.record_epsilon(1.0, count=2)
    assert few.epsilon(1e-6) == 2.0  # advanced is worse here; the smaller value is reported


def test_gaussian_in_approximate_mode_is_charged_up():
    acc = accountant_for(mode="approximate")
    acc.record_gaussian(3.0, 1.0, delta=1e-6, count=2)
    per = gaussian_epsilon(3.0, 1e-6, sensitivity=1.0)
    assert float(acc.total_epsilon) >= 2 * per
    assert float(acc.total_epsilon) == pytest.approx(2 * per, rel=1e-9)
    assert acc.total_delta == Fraction(2, 10**6)
    assert acc.epsilon(1e-6) == math.inf  # below the δ already spent
    assert acc.spent().delta == 2e-6


def test_hardened_mechanisms_are_recorded():
    lap = hardened(laplace_for_epsilon(0.5, sensitivity=1.0), sensitivity=1.0, bound=10.0)
    gauss = hardened(Gaussian.from_std(2.0), sensitivity=1.0, bound=10.0)
    acc = accountant_for(mode="approximate")
    acc.record(lap, count=2)
    acc.record(gauss, delta=1e-6)
    assert float(acc.total_epsilon) >= 2 * lap.epsilon() + gauss.epsilon(1e-6)
    pld = accountant_for(mode="pld")
    pld.record(gauss, count=4)
    assert pld.epsilon(1e-5) >= gaussian_epsilon(1.0, 1e-5, sensitivity=1.0 + gauss.grid)
    rdp = accountant_for(mode="rdp")
    rdp.record(hardened(DiscreteGaussian(sigma=2.0), sensitivity=1.0, bound=4.0), count=3)
    assert rdp.epsilon(1e-5) > 0
    with pytest.raises(InvalidParameterError):
        accountant_for(mode="pld").record(hardened(DiscreteLaplace(scale=1.0), sensitivity=1.0, bound=1.0))


def test_pld_budget_and_concurrency():
    acc = accountant_for(mode="pld", epsilon_budget=2, delta_budget=1e-5)
    acc.record_gaussian(4.0, 1.0, count=2)
    with pytest.raises(BudgetExceededError):
        acc.record_gaussian(0.5, 1.0)
    assert len(acc) == 2
    pure = accountant_for(mode="pure", epsilon_budget=Fraction(1))
    errors: list[Exception] = []

    def charge() -> None:
        for _ in range(50):
            try:
                pure.record_epsilon("0.01")
            except BudgetExceededError as exc:
                errors.append(exc)

    threads = [threading.Thread(target=charge) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert pure.total_epsilon == 1 and len(errors) == 100  # never overspent, every charge accounted for


def test_exact_rational():
    assert exact_rational(0.1, "e", "o") == Fraction(1, 10)
    assert exact_rational(np.float64(0.3), "e", "o") == Fraction(3, 10)
    assert exact_rational(2, "e", "o") == 2
    for bad in (np.nan, np.inf, -0.1, "abc", True, None, [0.1], 0):
        with pytest.raises(InvalidParameterError):
            exact_rational(bad, "epsilon", "owner")


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: accountant_for(mode="zcpd"), "mode"),
        (lambda: accountant_for(mode="pld", advanced=True), "advanced"),
        (lambda: accountant_for(mode="pld", epsilon_budget=1.0), "delta_budget"),
        (lambda: accountant_for(mode="pure", delta_budget=1e-5), "delta_budget"),
        (lambda: accountant_for(delta_budget=1.0), "delta_budget"),
        (lambda: accountant_for(mode="pure").record_epsilon(np.nan), "epsilon"),
        (lambda: accountant_for(mode="pure").record_epsilon(-1.0), "epsilon"),
        (lambda: accountant_for(mode="pure").record_epsilon(1.0, 1e-6), "delta"),
        (lambda: accountant_for().record_epsilon(1.0, 1.0), "delta"),
        (lambda: accountant_for().record_epsilon(1.0, count=0), "count"),
        (lambda: accountant_for(mode="pld").record_epsilon(1.0), "record_epsilon"),
        (lambda: accountant_for(mode="pure").record_gaussian(1.0, 1.0), "pure"),
        (lambda: accountant_for().record_gaussian(1.0, 1.0), "delta"),
        (lambda: accountant_for(mode="pld").record_gaussian(np.inf, 1.0), "sigma"),
        (lambda: accountant_for(mode="pld").record_laplace(1.0, -1.0), "sensitivity"),
        (lambda: accountant_for().record(Laplace(scale=1.0)), "sensitivity"),
        (
            lambda: accountant_for().record(RaisedCosine(lower=-1, upper=1), sensitivity=1.0),
            "RaisedCosine",
        ),
        (lambda: accountant_for().record("laplace", sensitivity=1.0), "mechanism"),
        (lambda: accountant_for(mode="pld").record(Laplace(scale=[1.0, 2.0]), sensitivity=1.0), "vector"),
        (lambda: accountant_for(mode="pld").spent(), "delta"),
        (lambda: accountant_for().epsilon(1.5), "delta"),
        (lambda: accountant_for(mode="pld").total_epsilon, "total_epsilon"),
        (lambda: accountant_for().record_guarantee((1.0, 0.0)), "guarantee"),
    ],
)
def test_bad_inputs(call, name):
    with pytest.raises(InvalidParameterError) as info:
        call()
    assert name in str(info.value)


def test_nothing_spent_and_pld_needs_delta():
    with pytest.raises(CalibrationError):
        accountant_for().spent()
    acc = accountant_for(mode="pld")
    acc.record_laplace(1.0, 1.0)
    with pytest.raises(CalibrationError):
        acc.epsilon(0.0)
    g = accountant_for(mode="approximate")
    g.record_guarantee(DifferentialPrivacyGuarantee(epsilon=0.5, delta=1e-7))
    assert g.total_delta == Fraction(1, 10**7)


def test_the_base_is_not_an_accountant():
    with pytest.raises(TypeError, match="accountant_for"):
        PrivacyAccountant(mode="pure")


def test_one_base_three_accountants():
    from privnoise.dp import LibraryAccountant, RationalAccountant, ZCDPAccountant
    from privnoise.dp.rational_accountant import compose

    for mode, kind in (("pure", RationalAccountant), ("approximate", RationalAccountant), ("pld", LibraryAccountant),
                       ("rdp", LibraryAccountant), ("zcdp", ZCDPAccountant)):
        acc = accountant_for(mode=mode)
        assert type(acc) is kind and isinstance(acc, PrivacyAccountant) and acc.mode == mode
    assert type(RationalAccountant()) is RationalAccountant and type(LibraryAccountant()) is LibraryAccountant
    with pytest.raises(InvalidParameterError, match="mode"):
        RationalAccountant(mode="pld")
    with pytest.raises(InvalidParameterError, match="mode"):
        LibraryAccountant(mode="pure")
    # the exact composition the query server's budgets use
    spent = (Fraction(9, 10), Fraction(0))
    assert compose(spent, (Fraction(1, 10), Fraction(0)), (Fraction(1), Fraction(0))) == (Fraction(1), Fraction(0))
    assert compose(spent, (Fraction(1, 10) + Fraction(1, 10**30), Fraction(0)), (Fraction(1), Fraction(0))) is None


def test_every_pure_profile_is_charged_exactly():
    from privnoise.mechanisms import L2Laplace, MultiUserLaplace

    acc = accountant_for(mode="pure")
    acc.record(L2Laplace(epsilon=0.25, dim=3), sensitivity=2.0)  # ε = 0.5
    acc.record(MultiUserLaplace(epsilon=0.5, users=2, user_dim=2), sensitivity=1.0)  # ε = 0.5
    assert acc.total_epsilon == 1  # exact rationals: ε₀ as drawn times Δ as declared
