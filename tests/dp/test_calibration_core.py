"""The one safe-side calibrator: brackets, refines, never rounds to the unsafe side; every calibration round-trips."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privnoise import dp
from privnoise.dp.calibration import safe_side, smallest_parameter
from privnoise.exceptions import CalibrationError


def test_smallest_parameter_finds_the_root_on_the_safe_side():
    for target in (0.5, 1e-3, 1e-12):
        p = smallest_parameter(lambda s: math.exp(-s), target, start=1.0, what="a test")
        assert math.exp(-p) <= target
        assert p == pytest.approx(-math.log(target), rel=1e-12)
        assert math.exp(-math.nextafter(p, 0.0) * (1 - 1e-12)) > target  # a little less would not do


def test_smallest_parameter_refuses_what_it_cannot_bracket():
    with pytest.raises(CalibrationError, match="could not bracket a flat measure"):
        smallest_parameter(lambda s: 1.0, 0.5, start=1.0, what="a flat measure")


def test_safe_side_steps_up_only_as_far_as_needed():
    assert safe_side(2.0, lambda b: 1.0 / b <= 0.5, what="x") == 2.0
    value = safe_side(0.1, lambda b: 0.3 / b <= 3.0, what="x")  # 0.3 / 0.1 = 3.0000000000000004 in doubles
    assert 0.3 / value <= 3.0 and value == pytest.approx(0.1, rel=1e-15)
    with pytest.raises(CalibrationError):
        safe_side(1.0, lambda b: False, what="nothing")


@settings(max_examples=60, deadline=None)
@given(
    epsilon=st.floats(0.01, 10.0),
    delta=st.floats(1e-12, 1e-2),
    sensitivity=st.floats(1e-3, 1e3),
)
def test_every_calibration_meets_its_target_exactly(epsilon, delta, sensitivity):
    lap = dp.laplace_for_epsilon(epsilon, sensitivity=sensitivity)
    assert sensitivity / float(lap.scale) <= epsilon
    gauss = dp.gaussian_for_epsilon_delta(epsilon, delta, sensitivity=sensitivity)
    assert dp.gaussian_delta(gauss.std, epsilon, sensitivity=sensitivity) <= delta
    eps = dp.gaussian_epsilon(gauss.std, delta, sensitivity=sensitivity)
    assert dp.gaussian_delta(gauss.std, eps, sensitivity=sensitivity) <= delta and eps <= epsilon * (1 + 1e-9)


@pytest.mark.parametrize("epsilon", [Fraction(1, 10), Fraction(1, 2), Fraction(3)])
@pytest.mark.parametrize("sensitivity, dim", [(1.0, 1), (0.3, 1), (2.0, 4)])
def test_hardened_calibrations_include_the_rounding(epsilon, sensitivity, dim):
    lap = dp.hardened_laplace_for_epsilon(epsilon, sensitivity=sensitivity, dim=dim)
    assert lap.epsilon_fraction() <= epsilon  # exact, rounding included
    assert lap.epsilon_fraction() > epsilon * Fraction(999, 1000)  # and tight
    gauss = dp.hardened_gaussian_for_epsilon_delta(float(epsilon), 1e-6, sensitivity=sensitivity, dim=dim)
    assert gauss.epsilon(1e-6) <= float(epsilon)
    assert gauss.epsilon(1e-6) > 0.999 * float(epsilon)
    assert np.all(gauss.release(np.zeros(dim) if dim > 1 else 0.0, rng=1) % gauss.grid == 0)


def test_smallest_parameter_answers_to_the_exact_test_it_is_given():
    # the float measure 1/p meets 0.5 at p = 2, but the exact test demands p ≥ 2.5: the answer follows the test,
    # stepped up from Brent's root 2 by less than twice the step it needs
    p = smallest_parameter(lambda s: 1.0 / s, 0.5, start=1.0, what="a test", holds=lambda s: s >= 2.5)
    assert 2.5 <= p <= 3.0


@pytest.mark.parametrize("start", [0.25, 1.0, 2.0])
def test_smallest_parameter_accepts_a_target_met_with_equality(start):
    # 1/p ≤ 1/2 first holds at p = 2 exactly, an end of the doubling bracket: a measure equal to its target meets it
    assert smallest_parameter(lambda s: 1.0 / s, 0.5, start=start, what="a test") == 2.0


@pytest.mark.parametrize("scale", [1e-13, 1e-9, 1.0, 1e6])
def test_smallest_parameter_is_precise_relative_to_the_scale_of_its_answer(scale):
    # exp(−p/s) ≤ 0.3 ⇔ p ≥ −s·ln 0.3: the answer to 1e-12 relative, whatever its magnitude
    p = smallest_parameter(lambda q: math.exp(-q / scale), 0.3, start=scale, what="a test")
    assert p == pytest.approx(-scale * math.log(0.3), rel=1e-12, abs=0.0)
    assert math.exp(-p / scale) <= 0.3


@pytest.mark.parametrize("start", [1e-10, 1.0, 1e10])
def test_smallest_parameter_returns_a_tiny_parameter_when_every_one_meets_the_target(start):
    p = smallest_parameter(lambda s: 0.0, 0.5, start=start, what="a test")
    assert 0.0 < p < 1e-300 * start


@pytest.mark.parametrize("value", [1.0, 3.7, 1e-8])
@pytest.mark.parametrize("needed_ulps", [1.5, 37.2, 1.01 * 3**12])
def test_safe_side_overshoots_by_less_than_twice_the_needed_step(value, needed_ulps):
    # the steps double: the first one that passes is less than twice the step the test needs (plus rounding)
    threshold = value * (1 + needed_ulps * 2.0**-52)
    result = safe_side(value, lambda b: b >= threshold, what="x")
    assert result >= threshold
    assert result - value <= 2 * (threshold - value) + 2 * math.ulp(value)


def _counting(measure):
    calls = []

    def counted(*args):
        calls.append(args)
        return measure(*args)

    return counted, calls


@pytest.mark.parametrize("bias", [0.0, 1e-11, -1e-11])
def test_an_estimate_only_decides_where_the_exact_measure_is_evaluated(bias):
    """A near estimate gives the same safe-side root as the exact search, from a handful of exact evaluations."""
    for target in (0.5, 1e-3, 1e-12):
        exact, calls = _counting(lambda s: math.exp(-s))
        guided = smallest_parameter(
            exact, target, start=1.0, what="a test", estimate=lambda s: math.exp(-s * (1.0 + bias))
        )
        plain = smallest_parameter(lambda s: math.exp(-s), target, start=1.0, what="a test")
        assert math.exp(-guided) <= target
        assert guided == pytest.approx(plain, rel=1e-13)
        assert len(calls) <= 12


@pytest.mark.parametrize("estimate", [lambda s: math.exp(-2.0 * s), lambda s: -1.0, lambda s: 1.0, lambda s: math.nan])
def test_a_misleading_estimate_falls_back_to_the_exact_search(estimate):
    for target in (0.5, 1e-3):
        guided = smallest_parameter(lambda s: math.exp(-s), target, start=1.0, what="a test", estimate=estimate)
        assert math.exp(-guided) <= target
        assert guided == pytest.approx(-math.log(target), rel=1e-12)
        assert math.exp(-math.nextafter(guided, 0.0) * (1 - 1e-12)) > target


def test_the_gaussian_calibrations_evaluate_the_exact_profile_a_handful_of_times(monkeypatch):
    """σ, ε and hardened σ are located on the double-precision profile; the multiple-precision one (slow) is
    evaluated only near the answer. The answers stay tight: a σ 1e-9 smaller misses the target."""
    import mpmath

    exact, calls = _counting(mpmath.ncdf)  # two per evaluation of the exact profile
    monkeypatch.setattr(mpmath, "ncdf", exact)
    sigma = dp.gaussian_sigma(0.7, 1e-8, sensitivity=2.0)
    assert 0 < len(calls) <= 24
    assert dp.gaussian_delta(sigma, 0.7, sensitivity=2.0) <= 1e-8 < dp.gaussian_delta(
        sigma * (1 - 1e-9), 0.7, sensitivity=2.0
    )
    calls.clear()
    eps = dp.gaussian_epsilon(sigma, 1e-8, sensitivity=2.0)
    assert 0 < len(calls) <= 24 and eps == pytest.approx(0.7, rel=1e-10)
    calls.clear()
    dp.hardened_gaussian_for_epsilon_delta("0.7", "1e-8", sensitivity=2.0)
    assert 0 < len(calls) <= 80
