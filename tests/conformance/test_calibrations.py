"""Every calibration meets its target against the exact curve of the noise it returns, computed independently
(the rounding to the grid by brute force, the Gaussian curve by quadrature, Laplace ε in exact rationals)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from privnoise import dp

from . import _references as ref

TARGETS = [(Fraction(1, 10), "1e-3"), (Fraction(1, 2), "1e-6"), (Fraction(1), "1e-9"), (Fraction(3), "1e-6"),
           (Fraction(1, 3), "1e-7")]
SENSITIVITIES = [0.1, 1.0, 2.5, 40.0]


@pytest.mark.parametrize(("epsilon", "delta"), TARGETS)
@pytest.mark.parametrize("sensitivity", SENSITIVITIES)
def test_hardened_gaussian_meets_its_target_with_the_rounding(epsilon, delta, sensitivity):
    h = dp.hardened_gaussian_for_epsilon_delta(epsilon, delta, sensitivity=sensitivity)
    sigma = float(np.sqrt(h.mechanism.covariance()))
    shift = ref.rounded_shift(sensitivity, h.grid)
    exact = ref.gaussian_delta((shift, sigma, 1), float(epsilon))
    assert Fraction(exact) <= Fraction(delta)  # the δ at the target ε, as declared (in rationals)
    # not loose beyond the one grid step the calibration adds for the rounding: with that step, a 1e-6 smaller σ
    # misses the target
    loose = ref.gaussian_delta_fast((shift + h.grid, sigma * (1 - 1e-6), 1), float(epsilon))
    assert loose > float(delta) * (1 - 1e-3)


@pytest.mark.parametrize(("epsilon", "delta"), TARGETS)
@pytest.mark.parametrize("sensitivity", SENSITIVITIES)
def test_hardened_laplace_meets_its_target_with_the_rounding(epsilon, delta, sensitivity):
    h = dp.hardened_laplace_for_epsilon(epsilon, sensitivity=sensitivity)
    b = Fraction(float(np.ravel(h.mechanism.scale)[0]))
    shift = Fraction(ref.rounded_shift(sensitivity, h.grid))
    assert shift / b <= epsilon  # ε of Laplace at the rounded shift, exactly
    assert (shift + Fraction(h.grid)) / (b * (1 - Fraction(1, 10**6))) > epsilon  # within one grid step


@pytest.mark.parametrize(("epsilon", "delta"), TARGETS)
@pytest.mark.parametrize("sensitivity", SENSITIVITIES)
def test_plain_calibrations_meet_their_targets(epsilon, delta, sensitivity):
    laplace = dp.laplace_for_epsilon(float(epsilon), sensitivity=sensitivity)
    # ε = Δ/b for the binary values of Δ and of the target (a decimal reading differs by an ulp at most)
    assert Fraction(sensitivity) / Fraction(float(np.ravel(laplace.scale)[0])) <= Fraction(float(epsilon))
    gaussian = dp.gaussian_for_epsilon_delta(float(epsilon), float(delta), sensitivity=sensitivity)
    sigma = float(np.sqrt(gaussian.covariance()))
    assert ref.gaussian_delta((sensitivity, sigma, 1), float(epsilon)) <= float(delta)


def test_a_calibration_a_rounding_step_short_is_caught():
    # power: ignoring the rounding (shift Δ instead of the rounded shift) misses the target on a coarse grid
    h = dp.hardened_laplace_for_epsilon(Fraction(1, 2), sensitivity=1.3)
    b = Fraction(float(np.ravel(h.mechanism.scale)[0]))
    naive = dp.laplace_for_epsilon(0.5, sensitivity=1.3)
    shift = Fraction(ref.rounded_shift(1.3, h.grid))
    assert shift > Fraction(1.3) and shift / Fraction(float(np.ravel(naive.scale)[0])) > Fraction(1, 2) >= shift / b
