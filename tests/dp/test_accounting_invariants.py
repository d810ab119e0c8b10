"""Accounting invariants: a charge of ``count`` releases is k single charges, the budget refuses exactly at its
limit in every mode, and a float sensitivity is charged at its larger reading.

The second method throughout is the definition: k separate records (basic composition, or dp-accounting's own
composition of k events), and exact rationals computed here from the binary and decimal readings of a float.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privnoise.dp import accountant_for
from privnoise.dp.gaussian import gaussian_epsilon
from privnoise.exceptions import BudgetExceededError, InvalidParameterError
from privnoise.guarantees import DifferentialPrivacyGuarantee
from privnoise.mechanisms import Gaussian, Laplace
from privnoise.mechanisms.discrete import DiscreteGaussian
from privnoise.mechanisms.hardening import hardened

pytest.importorskip("dp_accounting")


def _readings(value: float) -> tuple[Fraction, Fraction]:
    """(decimal reading, binary reading) of a float."""
    return Fraction(repr(value)), Fraction(value)


# -- count > 1 ---------------------------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(
    numerator=st.integers(1, 40),
    denominator=st.integers(1, 40),
    count=st.integers(2, 12),
    budget=st.integers(1, 6),
)
def test_count_is_k_single_charges_and_refuses_at_the_limit(numerator, denominator, count, budget):
    eps = Fraction(numerator, denominator)
    fits = count * eps <= budget
    for mode in ("pure", "approximate"):
        batched = accountant_for(mode=mode, epsilon_budget=budget)
        singles = accountant_for(mode=mode, epsilon_budget=budget)
        if fits:
            batched.record_epsilon(eps, count=count)
            assert batched.total_epsilon == count * eps and len(batched) == count
        else:
            with pytest.raises(BudgetExceededError):
                batched.record_epsilon(eps, count=count)
            assert batched.total_epsilon == 0 and len(batched) == 0  # nothing recorded
        accepted = 0
        for _ in range(count):
            try:
                singles.record_epsilon(eps)
                accepted += 1
            except BudgetExceededError:
                break
        assert (accepted == count) == fits
        assert accepted * eps <= budget < (accepted + 1) * eps or accepted == count


def test_count_multiplies_delta_and_the_delta_budget():
    acc = accountant_for(mode="approximate", delta_budget=Fraction(4, 10**6))
    acc.record_epsilon(0.1, 1e-6, count=4)  # exactly at the δ budget: accepted
    assert acc.total_delta == Fraction(4, 10**6) and acc.total_epsilon == Fraction(4, 10)
    with pytest.raises(BudgetExceededError):
        acc.record_epsilon(0.1, Fraction(1, 10**12))
    over = accountant_for(mode="approximate", delta_budget=Fraction(3, 10**6))
    with pytest.raises(BudgetExceededError):
        over.record_epsilon(0.1, 1e-6, count=4)  # 4e-6 > 3e-6 although one release alone fits


@pytest.mark.parametrize("mode", ["pure", "approximate"])
def test_laplace_and_mechanism_counts_against_the_budget(mode):
    # ε = Δ/b = 1/4 per release: three fit a budget of 3/4, the fourth does not, whichever way it is recorded.
    for record in (
        lambda acc, k: acc.record_laplace(4.0, 1.0, count=k),
        lambda acc, k: acc.record(Laplace(scale=4.0), sensitivity=1.0, count=k),
        lambda acc, k: acc.record(Laplace(scale=[4.0, 8.0]), sensitivity=1.0, count=k),
    ):
        acc = accountant_for(mode=mode, epsilon_budget=Fraction(3, 4))
        with pytest.raises(BudgetExceededError):
            record(acc, 4)
        record(acc, 3)
        assert acc.total_epsilon == Fraction(3, 4) and len(acc) == 3
        with pytest.raises(BudgetExceededError):
            record(acc, 1)


def test_gaussian_count_in_approximate_mode_against_the_budget():
    per = gaussian_epsilon(3.0, 1e-6, sensitivity=1.0)
    budget = Fraction(3 * per * (1 + 1e-9))  # three releases fit, four do not
    acc = accountant_for(mode="approximate", epsilon_budget=budget, delta_budget=Fraction(1, 10**5))
    with pytest.raises(BudgetExceededError):
        acc.record_gaussian(3.0, 1.0, count=4, delta=1e-6)
    acc.record(Gaussian.from_std(3.0), sensitivity=1.0, delta=1e-6, count=3)
    assert len(acc) == 3 and acc.total_delta == Fraction(3, 10**6)
    assert Fraction(3 * per) <= acc.total_epsilon <= budget


def test_hardened_count_against_the_budget():
    h = hardened(Laplace(scale=2.0), sensitivity=1.0, bound=10.0, grid_exponent=-4)
    per = h.epsilon_fraction()
    assert per == Fraction(17, 32)  # (16 + 1)·2⁻⁴/2: the rounding adds one grid step to Δ
    acc = accountant_for(mode="pure", epsilon_budget=2 * per)
    with pytest.raises(BudgetExceededError):
        acc.record(h, count=3)
    acc.record(h, count=2)
    assert acc.total_epsilon == 2 * per
    g = hardened(Gaussian.from_std(2.0), sensitivity=1.0, bound=10.0, grid_exponent=-5)
    approx = accountant_for(mode="approximate")
    approx.record(g, delta=1e-6, count=3)
    assert approx.total_delta == Fraction(3, 10**6)
    assert float(approx.total_epsilon) >= 3 * g.epsilon(1e-6)
    assert float(approx.total_epsilon) == pytest.approx(3 * g.epsilon(1e-6), rel=1e-9)


@pytest.mark.parametrize("mode", ["pld", "rdp"])
def test_library_modes_compose_count_like_single_records(mode):
    delta = 1e-6
    batched = accountant_for(mode=mode)
    batched.record_gaussian(4.0, 1.0, count=3)
    batched.record_laplace(20.0, 1.0, count=2)
    singles = accountant_for(mode=mode)
    for _ in range(3):
        singles.record_gaussian(4.0, 1.0)
    for _ in range(2):
        singles.record_laplace(20.0, 1.0)
    assert batched.epsilon(delta) == pytest.approx(singles.epsilon(delta), rel=1e-6)
    one = accountant_for(mode=mode)
    one.record_gaussian(4.0, 1.0)
    assert batched.epsilon(delta) > 1.5 * one.epsilon(delta)  # five releases cost visibly more than one
    assert len(batched) == 5


@pytest.mark.parametrize("mode", ["pld", "rdp"])
def test_library_budget_refuses_count_beyond_it(mode):
    delta = 1e-6
    probe = accountant_for(mode=mode)
    probe.record_gaussian(4.0, 1.0, count=3)
    three = probe.epsilon(delta)
    probe.record_gaussian(4.0, 1.0)
    four = probe.epsilon(delta)
    budget = (three + four) / 2
    acc = accountant_for(mode=mode, epsilon_budget=budget, delta_budget=delta)
    with pytest.raises(BudgetExceededError):
        acc.record_gaussian(4.0, 1.0, count=4)
    assert len(acc) == 0
    acc.record_gaussian(4.0, 1.0, count=3)
    with pytest.raises(BudgetExceededError):
        acc.record_gaussian(4.0, 1.0)
    assert len(acc) == 3 and acc.epsilon(delta) == pytest.approx(three, rel=1e-9)


def test_rdp_composes_hardened_discrete_gaussians_by_count():
    h = hardened(DiscreteGaussian(sigma=3.0, grid_exponent=-2), sensitivity=1.0, bound=4.0)
    batched, singles = accountant_for(mode="rdp"), accountant_for(mode="rdp")
    batched.record(h, count=4)
    for _ in range(4):
        singles.record(h)
    assert batched.epsilon(1e-6) == pytest.approx(singles.epsilon(1e-6), rel=1e-9)


# -- float sensitivities ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("sensitivity", [0.1, 0.3, 0.7, 1e-3, 2.2])
@pytest.mark.parametrize("scale", [1.0, 0.1, 3.0])
def test_float_sensitivity_is_charged_at_its_larger_reading(sensitivity, scale):
    decimal, binary = _readings(sensitivity)
    assert decimal != binary  # none of these floats is exact: the two readings differ
    b = Fraction(scale)  # the noise actually drawn has the binary scale
    acc = accountant_for(mode="pure")
    acc.record_laplace(scale, sensitivity)
    charged = acc.total_epsilon
    assert charged >= decimal / b and charged >= binary / b  # safe for either reading of the declaration
    assert charged == max(decimal, binary) / b  # and no more than that
    via_mechanism = accountant_for(mode="pure")
    via_mechanism.record(Laplace(scale=scale), sensitivity=sensitivity)
    assert via_mechanism.total_epsilon == charged


def test_binary_above_and_below_decimal():
    # 0.1 in binary lies above 1/10, 0.3 below 3/10: a min in place of the max fails one of them.
    assert Fraction(0.1) > Fraction(1, 10) and Fraction(0.3) < Fraction(3, 10)
    acc = accountant_for(mode="pure", epsilon_budget=Fraction(1, 10))
    with pytest.raises(BudgetExceededError):
        acc.record_laplace(1.0, 0.1)  # charged at the binary 0.1000…0555 > 1/10
    acc.record_laplace(1.0, Fraction(1, 10))  # an exact declaration is charged exactly
    assert acc.total_epsilon == Fraction(1, 10)
    exact = accountant_for(mode="pure", epsilon_budget=Fraction(3, 10))
    exact.record_laplace(1.0, 0.3)  # charged at the decimal 3/10, which fits exactly
    assert exact.total_epsilon == Fraction(3, 10)


def test_computed_gaussian_epsilon_is_rounded_up():
    for sigma, delta in ((3.0, 1e-6), (0.7, 1e-3), (11.0, 1e-9)):
        acc = accountant_for(mode="approximate")
        acc.record_gaussian(sigma, 1.0, delta=delta)
        per = gaussian_epsilon(sigma, delta, sensitivity=1.0)
        assert acc.total_epsilon >= Fraction(per)  # never below the float the profile gives
        assert float(acc.total_epsilon) == pytest.approx(per, rel=1e-10)
        assert acc.total_delta == Fraction(repr(delta))


# -- epsilon(δ) and delta(ε) of the rational modes ----------------------------------------------------------------
def test_approximate_epsilon_and_delta_answer_at_the_exact_limit():
    acc = accountant_for(mode="approximate")
    acc.record_epsilon("0.5", "1e-6", count=2)
    assert acc.epsilon(2e-6) == 1.0  # δ equal to what is spent: the basic ε
    assert acc.epsilon(1.999e-6) == math.inf  # below it: no ε
    assert acc.delta(1.0) == 2e-6  # at the spent ε: the spent δ
    assert acc.delta(0.999) == 1.0  # below it, basic composition certifies nothing
    assert acc.spent(3e-6).epsilon == 1.0
    pure = accountant_for(mode="pure")
    pure.record_epsilon(0.25, count=3)
    assert pure.epsilon(0.0) == pure.epsilon(0.5) == 0.75
    assert pure.delta(0.75) == 0.0 and pure.delta(0.7) == 1.0


def test_advanced_delta_inverts_advanced_epsilon():
    from scipy import optimize

    acc = accountant_for(mode="approximate", advanced=True)
    acc.record_epsilon(0.02, 1e-8, count=300)
    acc.record_epsilon(0.05, count=100)
    spent_delta = 300 * 1e-8
    for target in (2.0, 3.0, 4.0):
        dl = acc.delta(target)
        assert dl < 1.0
        # second method: solve epsilon(spent δ + δ') = target for δ' by root finding
        root = optimize.brentq(
            lambda t, goal=target: acc.epsilon(spent_delta + math.exp(t)) - goal, -200.0, math.log(0.5)
        )
        assert dl == pytest.approx(spent_delta + math.exp(root), rel=1e-6)
        assert acc.epsilon(dl * (1 + 1e-9)) <= target * (1 + 1e-9)
    basic_total = float(acc.total_epsilon)
    assert acc.delta(basic_total) == pytest.approx(spent_delta)  # the basic ε needs no extra δ


# -- the library modes: sensitivities, hardened noise, defaults -------------------------------------------------
@pytest.mark.parametrize("mode", ["pld", "rdp"])
def test_library_modes_scale_by_the_sensitivity(mode):
    # Noise of scale b at sensitivity Δ is the same event as noise of scale b/Δ at sensitivity 1.
    delta = 1e-6
    for record, reference in (
        (lambda a: a.record_laplace(3.0, 0.5), lambda a: a.record_laplace(6.0, 1.0)),
        (lambda a: a.record_gaussian(3.0, 0.5), lambda a: a.record_gaussian(6.0, 1.0)),
        (lambda a: a.record(Laplace(scale=3.0), sensitivity=2.0), lambda a: a.record_laplace(1.5, 1.0)),
    ):
        scaled, unit = accountant_for(mode=mode), accountant_for(mode=mode)
        record(scaled)
        reference(unit)
        assert scaled.epsilon(delta) == pytest.approx(unit.epsilon(delta), rel=1e-9)
    single = accountant_for(mode="pld")
    single.record_laplace(4.0, 2.0)  # ε = Δ/b = 1/2 for pure Laplace: PLD at a tiny δ is close to it
    assert single.epsilon(1e-12) == pytest.approx(0.5, abs=2e-3)
    gauss = accountant_for(mode="pld")
    gauss.record_gaussian(3.0, 0.5)
    assert gauss.epsilon(delta) == pytest.approx(gaussian_epsilon(6.0, delta, sensitivity=1.0), rel=2e-3)


def test_pld_composes_hardened_laplace_at_the_lattice_sensitivity():
    h = hardened(Laplace(scale=2.0), sensitivity=1.0, bound=10.0, grid_exponent=-4)
    acc = accountant_for(mode="pld")
    acc.record(h, count=3)
    assert len(acc) == 3 and [c.label for c in acc.charges] == ["hardened"]
    reference = accountant_for(mode="pld")
    reference.record_laplace(2.0, (16 + 1) / 16, count=3)  # Δ + Λ: one grid step added by the rounding
    assert acc.epsilon(1e-6) == pytest.approx(reference.epsilon(1e-6), rel=1e-9)
    one = accountant_for(mode="pld")
    one.record(h)
    assert one.epsilon(1e-12) == pytest.approx(h.epsilon(), abs=2e-3)  # the pure ε of the hardened release
    with pytest.raises(InvalidParameterError, match="cannot compose"):
        accountant_for(mode="pld").record(hardened(Laplace(scale=[1.0, 2.0]), sensitivity=1.0, bound=1.0))
    with pytest.raises(InvalidParameterError, match="cannot compose"):
        accountant_for(mode="pld").record(
            hardened(DiscreteGaussian(sigma=2.0), sensitivity=1.0, bound=1.0)
        )


def test_rdp_composes_hardened_discrete_gaussian_like_its_continuous_twin():
    # zCDP with ρ = Δ²/(2σ²) is the Rényi curve ρα of a Gaussian of noise multiplier σ/Δ (CKS20, Theorem 14):
    # composed by the RDP accountant, both give the same ε.
    h = hardened(DiscreteGaussian(sigma=3.0, grid_exponent=-2), sensitivity=1.0, bound=4.0)
    assert h.grid == 0.25
    sigma, sens = 3.0, 1.0 + h.grid  # the rounding adds one grid step to the sensitivity
    discrete = accountant_for(mode="rdp")
    discrete.record(h, count=2)
    twin = accountant_for(mode="rdp")
    twin.record_gaussian(sigma, sens, count=2)
    assert discrete.epsilon(1e-6) == pytest.approx(twin.epsilon(1e-6), rel=1e-9)
    assert len(discrete) == 2


def test_library_budget_accepts_a_charge_exactly_at_its_limit():
    delta = 1e-6
    probe = accountant_for(mode="pld")
    probe.record_gaussian(4.0, 1.0, count=3)
    limit = Fraction(probe.epsilon(delta))  # the binary value of the float ε: exactly the composition's
    acc = accountant_for(mode="pld", epsilon_budget=limit, delta_budget=delta)
    acc.record_gaussian(4.0, 1.0, count=3)
    assert len(acc) == 3


def test_pld_discretisation_interval_is_used():
    coarse = accountant_for(mode="pld", value_discretization_interval=0.05)
    fine = accountant_for(mode="pld")
    for acc in (coarse, fine):
        acc.record_gaussian(2.0, 1.0, count=2)
    exact = gaussian_epsilon(2.0 / math.sqrt(2), 1e-6, sensitivity=1.0)
    assert exact <= fine.epsilon(1e-6) < coarse.epsilon(1e-6)  # pessimistic: coarser is looser


def test_defaults_and_empty_accountants():
    for mode in ("pld", "rdp"):
        empty = accountant_for(mode=mode)
        assert empty.epsilon(1e-6) == 0.0 and empty.delta(0.5) == 0.0
        empty.record(Laplace(scale=1.0), sensitivity=1.0)  # a scalar Laplace composes in every mode
        assert len(empty) == 1
        with pytest.raises(InvalidParameterError, match="delta"):
            empty.spent()
        with pytest.raises(InvalidParameterError, match="delta_budget"):
            accountant_for(mode=mode, epsilon_budget=1.0)
    approx = accountant_for(mode="approximate")
    assert approx.delta(0.0) == 0.0
    approx.record_epsilon(0.5)
    assert approx.epsilon() == 0.5  # δ defaults to 0
    assert approx.delta(0.0) == 1.0
    assert approx.spent().adjacency == "composition of 1 records"
    with pytest.raises(InvalidParameterError, match="delta"):
        accountant_for().record_gaussian(1.0, 1.0, delta=1.0)


def test_zero_delta_budget_allows_pure_charges_only():
    for mode in ("pure", "approximate"):
        acc = accountant_for(mode=mode, epsilon_budget=1, delta_budget=0)
        acc.record_epsilon(0.5)
        assert acc.total_delta == 0
    strict = accountant_for(mode="approximate", delta_budget=0)
    with pytest.raises(BudgetExceededError):
        strict.record_epsilon(0.5, 1e-12)


def test_every_charge_is_labelled_and_pure_charges_spend_no_delta():
    acc = accountant_for(mode="approximate")
    acc.record_epsilon(0.1)
    acc.record_epsilon(0.1, label="mine")
    acc.record_guarantee(DifferentialPrivacyGuarantee(epsilon=0.2, delta=1e-9), count=2)
    acc.record_laplace(10.0, 1.0)
    acc.record_gaussian(5.0, 1.0, delta=1e-9)
    acc.record(hardened(Laplace(scale=2.0), sensitivity=1.0, bound=3.0, grid_exponent=-4), count=2)
    assert [c.label for c in acc.charges] == [
        "epsilon-delta",
        "mine",
        "guarantee",
        "laplace",
        "gaussian",
        "hardened",
    ]
    assert [c.count for c in acc.charges] == [1, 1, 2, 1, 1, 2]
    assert acc.total_delta == Fraction(3, 10**9)  # the Laplace-type charges add no δ
    for mode in ("pld", "rdp"):
        lib = accountant_for(mode=mode)
        lib.record_laplace(1.0, 1.0)
        lib.record_gaussian(1.0, 1.0)
        assert [c.label for c in lib.charges] == ["laplace", "gaussian"]


def test_tiny_gaussian_epsilon_is_still_rounded_up():
    for sigma in (1e3, 1e4, 3e5):
        acc = accountant_for(mode="approximate")
        acc.record_gaussian(sigma, 1.0, delta=1e-7)
        per = gaussian_epsilon(sigma, 1e-7, sensitivity=1.0)
        assert 0.0 < per < 1e-2
        assert acc.total_epsilon >= Fraction(per)


def test_advanced_delta_below_the_drift_and_at_unit_square():
    # Σ ε_i(e^{ε_i} − 1) is the drift: below it advanced composition certifies nothing (δ = 1).
    acc = accountant_for(mode="approximate", advanced=True)
    acc.record_epsilon(0.5, count=10)  # basic ε 5, drift 10·0.5·(e^0.5 − 1) ≈ 3.24
    drift = 10 * 0.5 * math.expm1(0.5)
    assert acc.delta(0.9 * drift) == 1.0
    assert acc.delta(1.2 * drift) < 1.0
    unit = accountant_for(mode="approximate", advanced=True)
    unit.record_epsilon(0.5, count=4)  # Σ ε_i² = 1 exactly
    drift = 4 * 0.5 * math.expm1(0.5)
    target = drift + 0.6
    assert unit.delta(target) == pytest.approx(math.exp(-(0.6**2) / 2.0), rel=1e-12)
    capped = accountant_for(mode="approximate", advanced=True)
    capped.record_epsilon(0.5, Fraction(6, 10), count=1)
    capped.record_epsilon(0.05, count=100)
    assert capped.delta(1.2) == 1.0  # spent δ plus δ' beyond 1 is reported as 1


def test_exact_scales_and_refusals():
    acc = accountant_for(mode="pure")
    acc.record_laplace(Fraction(5, 2), 1)  # an exact scale is charged exactly
    acc.record_laplace(4, Fraction(1, 3))
    assert acc.total_epsilon == Fraction(2, 5) + Fraction(1, 12)
    for scale in (-1.0, 0.0, -2, float("nan")):
        with pytest.raises(InvalidParameterError, match="scale"):
            accountant_for(mode="pure").record_laplace(scale, 1.0)
    for mode in ("pld", "rdp"):
        with pytest.raises(InvalidParameterError, match="vector"):
            accountant_for(mode=mode).record(Laplace(scale=[1.0, 2.0]), sensitivity=1.0)


def test_every_library_mode_names_its_extra(monkeypatch):
    import sys

    from privnoise.exceptions import MissingExtraError

    monkeypatch.setitem(sys.modules, "dp_accounting", None)  # looks uninstalled
    for mode in ("pld", "rdp"):
        with pytest.raises(MissingExtraError, match=rf"accountant_for\(mode='{mode}'\).*privnoise\[dp\]"):
            accountant_for(mode=mode)
    for mode in ("pure", "approximate"):
        accountant_for(mode=mode).record_epsilon(0.5)  # the exact modes need nothing


def test_the_running_sums_equal_the_sums_of_the_charges_through_refusals_and_restores() -> None:
    """The exact totals are kept as running sums; they must equal Σ count·ε_i, Σ count·δ_i recomputed here from the
    recorded charges after refusals (not kept), restores to a checkpoint, and further charges."""
    from fractions import Fraction as F

    from privnoise.exceptions import BudgetExceededError

    acc = accountant_for("approximate", epsilon_budget=5.0, delta_budget=1e-3)
    rng = np.random.default_rng(3)

    def recomputed() -> tuple[F, F]:
        return (sum((c.count * c.epsilon for c in acc.charges), F(0)),
                sum((c.count * c.delta for c in acc.charges), F(0)))

    mark = None
    for step in range(60):
        eps, dl = float(rng.uniform(0.01, 0.3)), float(rng.choice([0.0, 1e-6]))
        try:
            acc.record_epsilon(eps, dl, count=int(rng.integers(1, 3)))
        except BudgetExceededError:
            assert (acc.total_epsilon, acc.total_delta) == recomputed()  # the refused charge is not counted
        if step == 10:
            mark = acc.checkpoint()
        if step == 30:
            acc.restore(mark)
        assert (acc.total_epsilon, acc.total_delta) == recomputed()
    assert acc.total_epsilon <= 5


def test_the_running_sums_follow_a_restore_then_more_charges_than_were_summed() -> None:
    """Without a budget nothing is summed on record: a restore followed by more charges than were summed before must
    still give the sums of the charges now recorded."""
    acc = accountant_for("approximate")
    for eps in (0.5, 0.25, 0.125, 0.0625, 0.03125):
        acc.record_epsilon(eps)
    assert acc.total_epsilon == Fraction(31, 32)
    mark = acc.checkpoint()[:2]
    acc.restore(mark)
    for eps in (1.0, 2.0, 4.0, 8.0):
        acc.record_epsilon(eps)
    assert acc.total_epsilon == Fraction(3, 4) + 15 and acc.total_delta == 0
