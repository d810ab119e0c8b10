"""Lattice invariants: normalisers, variances and entropies against direct sums, the grid rules at their limits,
the exact discrete-Gaussian δ(ε) far into its regimes, and the zCDP conversions against a continuous optimiser.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize

from privnoise.dp.gaussian import gaussian_delta
from privnoise.dp.lattice_privacy import (
    discrete_gaussian_delta,
    discrete_gaussian_epsilon,
    discrete_laplace_epsilon,
    zcdp_delta,
    zcdp_epsilon,
)
from privnoise.exceptions import InvalidParameterError
from privnoise.mechanisms.discrete import DiscreteGaussian, DiscreteLaplace
from privnoise.mechanisms.lattice_grid import check_grid_exponent, default_grid_exponent, lattice_sensitivity


def _direct(log_unnormalised: np.ndarray) -> np.ndarray:
    p = np.exp(log_unnormalised - log_unnormalised.max())
    return p / p.sum()


@pytest.mark.parametrize("steps", [0.3, 1.7, 7.9, 8.0, 12.5, 40.0])
def test_discrete_gaussian_normaliser_variance_and_entropy_by_direct_sums(steps):
    grid = 2.0**-3
    mech = DiscreteGaussian(sigma=steps * grid, grid_exponent=-3)
    assert mech.steps == pytest.approx(steps)
    j = np.arange(-int(60 * steps) - 5, int(60 * steps) + 6, dtype=float)
    p = _direct(-(j * j) / (2 * steps * steps))
    log_z = math.log(np.exp(-(j * j) / (2 * steps * steps)).sum())
    assert mech._log_normaliser() == pytest.approx(log_z, rel=1e-12, abs=1e-12)
    assert mech.pmf(0.0) == pytest.approx(p[j == 0][0], rel=1e-12)
    assert mech.covariance() == pytest.approx(float(np.sum(p * j * j)) * grid**2, rel=1e-12)
    assert mech.entropy() == pytest.approx(float(-np.sum(p[p > 0] * np.log(p[p > 0]))), rel=1e-10)
    vector = DiscreteGaussian(sigma=steps * grid, grid_exponent=-3, dimension=3)
    assert vector.entropy() == pytest.approx(3 * mech.entropy(), rel=1e-12)
    assert np.allclose(vector.covariance(), mech.covariance() * np.eye(3))


@pytest.mark.parametrize("steps", [0.4, 1.0, 6.5])
def test_discrete_laplace_normaliser_variance_and_entropy_by_direct_sums(steps):
    grid = 2.0**-2
    mech = DiscreteLaplace(scale=steps * grid, grid_exponent=-2)
    j = np.arange(-int(80 * steps) - 5, int(80 * steps) + 6, dtype=float)
    p = _direct(-np.abs(j) / steps)
    assert mech.pmf(0.0) == pytest.approx(p[j == 0][0], rel=1e-12)
    assert mech.pmf(3 * grid) == pytest.approx(p[j == 3][0], rel=1e-12)
    assert mech.covariance() == pytest.approx(float(np.sum(p * j * j)) * grid**2, rel=1e-10)
    assert mech.entropy() == pytest.approx(float(-np.sum(p * np.log(p))), rel=1e-10)
    assert DiscreteLaplace(scale=steps * grid, grid_exponent=-2, dimension=2).entropy() == pytest.approx(
        2 * mech.entropy()
    )


def test_vector_pmf_is_the_product_of_coordinates():
    mech = DiscreteLaplace(scale=1.0, grid_exponent=-1, dimension=2)
    scalar = DiscreteLaplace(scale=1.0, grid_exponent=-1)
    assert mech.logpmf([0.5, -1.0]) == pytest.approx(scalar.logpmf(0.5) + scalar.logpmf(-1.0))
    assert mech.pmf([0.5, 0.3]) == 0.0  # one coordinate off the lattice
    assert mech.mean().shape == (2,) and scalar.mean() == 0.0
    assert np.array_equal(mech.logpmf(np.array([[0.5, -1.0], [0.0, 0.0]])).shape, (2,))


def test_default_grid_exponent_at_powers_of_two():
    for j in (-5, 0, 3, 10):
        assert default_grid_exponent(2.0**j) == j - 12  # Λ = scale/2^12 exactly
        assert default_grid_exponent(2.0**j * 1.0001) == j - 11
        assert default_grid_exponent(2.0**j * 0.9999) == j - 12
        assert default_grid_exponent(2.0**j, bits=3) == j - 3


def test_grid_exponent_limits():
    assert check_grid_exponent(None, 3.0, "o") == default_grid_exponent(3.0)
    assert check_grid_exponent(np.int64(-2), 3.0, "o") == -2
    assert check_grid_exponent(-40, 1.0, "o") == -40  # exactly 2^40 steps per scale: allowed
    with pytest.raises(InvalidParameterError, match="grid_exponent"):
        check_grid_exponent(-41, 1.0, "o")
    assert check_grid_exponent(1000, 1.0, "o") == 1000
    for bad in (1001, -1001, True, 1.0, "3"):
        with pytest.raises(InvalidParameterError, match="grid_exponent"):
            check_grid_exponent(bad, 2.0**-2000 if bad == -1001 else 1.0, "o")


def test_lattice_sensitivity_formulas_and_their_worst_cases():
    grid = 0.25
    assert lattice_sensitivity(1.0, grid) == 5.0  # ⌊4⌋ + 1
    assert lattice_sensitivity(0.99, grid) == 4.0  # ⌊3.96⌋ + 1
    assert lattice_sensitivity(1.0, grid, dim=3) == 7.0
    assert lattice_sensitivity(1.0, grid, dim=1, norm="l2") == 5.0
    assert lattice_sensitivity(1.0, grid, dim=4, norm="l2") == pytest.approx(4.0 + 2.0)
    # the ℓ1 value is attained: a shift of 0.99 rounding from just below a half step to just above one
    a = 0.49 * grid
    assert round((a + 0.99) / grid) - round(a / grid) == 4
    b = np.array([0.49, 0.49, 0.49]) * grid
    shifted = b + np.array([3.9, 0.02, 0.02]) * grid  # ℓ1 shift 3.94 Λ = 0.985 ≤ 0.99
    units = np.abs(np.rint(shifted / grid) - np.rint(b / grid)).sum()
    assert units == lattice_sensitivity(0.99, grid, dim=3) == 6.0


def test_discrete_laplace_epsilon_formula():
    assert discrete_laplace_epsilon(2.0, sensitivity=1.0, grid=0.25) == pytest.approx(5 * 0.25 / 2.0)
    assert discrete_laplace_epsilon(2.0, sensitivity=1.0, grid=0.25, dim=2) == pytest.approx(6 * 0.25 / 2.0)


def test_discrete_gaussian_delta_regimes():
    # nothing beyond the reach of the distribution: δ = 0 exactly
    assert discrete_gaussian_delta(1.0, 500.0, sensitivity=1) == 0.0
    # at ε = 0 it is the total variation of two shifted discrete Gaussians (direct sum)
    s = 1.5
    j = np.arange(-100, 101, dtype=float)
    p = _direct(-(j * j) / (2 * s * s))
    q = _direct(-((j - 2) ** 2) / (2 * s * s))
    assert discrete_gaussian_delta(s, 0.0, sensitivity=2) == pytest.approx(
        0.5 * np.abs(p - q).sum(), rel=1e-10
    )
    # a σ of more than 2^20/39 steps sums over several chunks: it matches the continuous profile
    big = 40_000.0
    assert discrete_gaussian_delta(big, 1e-4, sensitivity=3) == pytest.approx(
        gaussian_delta(big, 1e-4, sensitivity=3.0), rel=1e-4
    )
    with pytest.raises(InvalidParameterError, match="sigma"):
        discrete_gaussian_delta(2.0**31, 1.0, sensitivity=1)
    eps = discrete_gaussian_epsilon(3.0, 1e-5, sensitivity=2)
    assert (
        discrete_gaussian_delta(3.0, eps, sensitivity=2)
        <= 1e-5
        < discrete_gaussian_delta(3.0, eps * 0.999, sensitivity=2)
    )


def test_zcdp_conversions_against_a_continuous_optimiser():
    for rho in (0.005, 0.125, 2.0):
        for eps in (0.5, 2.0, 8.0):

            def log_delta(log_alpha_minus_one: float, r: float = rho, e: float = eps) -> float:
                a = 1.0 + math.exp(log_alpha_minus_one)
                return (a - 1) * (a * r - e) - math.log(a - 1) + a * math.log1p(-1 / a)

            best = optimize.minimize_scalar(log_delta, bounds=(-13.8, 13.8), method="bounded")
            exact = min(1.0, math.exp(min(best.fun, 0.0)))
            ours = zcdp_delta(rho, eps)
            assert ours >= exact * (1 - 1e-9)  # a grid minimum is never below the true infimum
            assert ours == pytest.approx(exact, rel=1e-2, abs=1e-300)
            if 1e-300 < ours < 1.0:
                back = zcdp_epsilon(rho, ours)
                assert back == pytest.approx(eps, rel=1e-2)
    assert zcdp_epsilon(0.1, 0.0) == math.inf
    assert zcdp_epsilon(1e-9, 0.9) == 0.0  # clamped at 0, never negative
    assert zcdp_delta(1e-9, 5.0) < 1e-100 and zcdp_delta(50.0, 0.1) == 1.0


def _chi2_pvalue(units: np.ndarray, log_unnormalised, reach: int) -> float:
    """χ² of integer draws against the pmf ∝ exp(log_unnormalised(j)), with the tails beyond ±reach pooled."""
    from scipy import stats

    j = np.arange(-10 * reach - 50, 10 * reach + 51, dtype=float)
    p = _direct(log_unnormalised(j))
    inner = np.abs(j) <= reach
    expected = np.concatenate([[p[j < -reach].sum()], p[inner], [p[j > reach].sum()]]) * units.size
    cells = np.clip(units, -reach - 1, reach + 1).astype(int) + reach + 1
    observed = np.bincount(cells, minlength=2 * reach + 3)
    keep = expected > 0
    return float(
        stats.chisquare(observed[keep], expected[keep] * observed.sum() / expected[keep].sum()).pvalue
    )


@pytest.mark.parametrize("steps", [0.3, 0.6])
def test_small_discrete_gaussians_need_several_batches_and_keep_their_law(steps, ks_alpha):
    # the acceptance rate of the rejection sampler is below 1/1.6 for σ below one step: the first batch of
    # 1.6 n + 64 proposals does not fill n draws, so the later batches are exercised
    mech = DiscreteGaussian(sigma=steps, grid_exponent=0)
    units = mech.sample(150_000, rng=41)
    assert units.shape == (150_000,) and np.array_equal(units, np.rint(units))
    reach = 3
    assert _chi2_pvalue(units, lambda j: -(j * j) / (2 * steps * steps), reach) > ks_alpha
    for wrong in (0.7, 1.3):
        assert _chi2_pvalue(units, lambda j, w=wrong: -(j * j) / (2 * (w * steps) ** 2), reach) < ks_alpha


def test_scalar_lattice_values_are_floats_and_vectors_are_arrays():
    for mech in (DiscreteLaplace(scale=1.0, grid_exponent=-2), DiscreteGaussian(sigma=1.0, grid_exponent=-2)):
        for value in (mech.pmf(0.25), mech.logpmf(0.25), mech.mean(), mech.covariance()):
            assert isinstance(value, float)
        assert mech.mean() == 0.0
    vector = DiscreteGaussian(sigma=1.0, grid_exponent=-2, dimension=2)
    assert np.array_equal(vector.mean(), np.zeros(2)) and vector.covariance().shape == (2, 2)
    assert DiscreteLaplace(scale=2.0, grid_exponent=-1, dimension=3).describe() == {
        "family": "discrete-laplace",
        "scale": 2.0,
        "grid": 0.5,
        "dimension": 3,
    }
    assert DiscreteGaussian(sigma=2.0, grid_exponent=-1).describe() == {
        "family": "discrete-gaussian",
        "sigma": 2.0,
        "grid": 0.5,
        "dimension": None,
    }
    for bad in (0, -1, 2.5, True):
        with pytest.raises(InvalidParameterError, match="dim"):
            DiscreteLaplace(scale=1.0, dimension=bad)


def test_grid_and_sensitivity_edges():
    assert check_grid_exponent(-1000, 2.0**-990, "o") == -1000  # the finest grid allowed
    assert lattice_sensitivity(1.0, 0.25, dim=2, norm="l2") == pytest.approx(4.0 + math.sqrt(2.0))
    assert discrete_gaussian_delta(2.0**30, 1.0, sensitivity=1) == 0.0  # the largest σ allowed
    assert zcdp_delta(0.125, 0.1) <= zcdp_delta(0.125, 0.0) <= 1.0  # ε = 0 is a valid argument
