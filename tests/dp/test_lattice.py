"""Lattice noise: exact grid, χ² on the pmf with power checks, and the exact DP guarantees against brute force."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privnoise.dp.gaussian import gaussian_delta, gaussian_epsilon
from privnoise.dp.lattice_privacy import (
    discrete_gaussian_delta,
    discrete_gaussian_epsilon,
    discrete_laplace_epsilon,
    zcdp_delta,
    zcdp_epsilon,
)
from privnoise.exceptions import InvalidParameterError
from privnoise.mechanisms.discrete import DiscreteGaussian, DiscreteLaplace
from privnoise.mechanisms.lattice_grid import default_grid_exponent, lattice_sensitivity

ALPHA = 1e-6


def chi2_pvalue(units: np.ndarray, pmf, reach: int) -> float:
    """χ² of integer samples against ``pmf(j)`` on cells −reach..reach plus two pooled tails."""
    j = np.arange(-reach, reach + 1)
    observed = np.bincount(
        np.clip(units, -reach - 1, reach + 1).astype(int) + reach + 1, minlength=2 * reach + 3
    )
    inner = pmf(j)
    tail = (1.0 - inner.sum()) / 2.0
    expected = np.concatenate([[tail], inner, [tail]]) * units.size
    keep = expected > 0
    expected_kept = expected[keep] * observed.sum() / expected[keep].sum()
    return float(stats.chisquare(observed[keep], expected_kept).pvalue)


def laplace_pmf(t):
    q = math.exp(-1.0 / t)
    return lambda j: (1 - q) / (1 + q) * q ** np.abs(j)


def gaussian_pmf(s):
    k = np.arange(-math.ceil(40 * s) - 1, math.ceil(40 * s) + 2)
    z = np.exp(-(k * k) / (2 * s * s)).sum()
    return lambda j: np.exp(-(j * j) / (2 * s * s)) / z


def test_default_grid_exponent():
    for scale in (1e-3, 0.7, 1.0, 3.0, 1234.5):
        k = default_grid_exponent(scale)
        assert 2.0**k >= scale / 2**12 > 2.0 ** (k - 1)
    assert default_grid_exponent(1.0, bits=0) == 0


def test_lattice_sensitivity_bounds_rounded_neighbours():
    rng = np.random.default_rng(0)
    grid = 2.0**-3
    for dim, norm in ((1, "l1"), (4, "l1"), (4, "l2")):
        sens = 0.37
        units = lattice_sensitivity(sens, grid, dim=dim, norm=norm)
        a = rng.uniform(-5, 5, (20000, dim))
        d = rng.normal(size=(20000, dim))
        d /= np.linalg.norm(d, ord=1 if norm == "l1" else 2, axis=1, keepdims=True)
        b = a + d * sens * rng.uniform(0, 1, (20000, 1))
        diff = (np.rint(a / grid) - np.rint(b / grid)).astype(float)
        size = np.abs(diff).sum(axis=1) if norm == "l1" else np.linalg.norm(diff, axis=1)
        assert size.max() <= units + 1e-12


@pytest.mark.slow
@pytest.mark.parametrize("scale, k", [(1.5, -1), (0.4, -2)])
def test_discrete_laplace_chi2_and_power(scale, k):
    mech = DiscreteLaplace(scale=scale, grid_exponent=k)
    w = mech.sample(200_000, rng=11)
    units = w / mech.grid
    assert np.array_equal(units, np.rint(units))
    t = mech.steps
    reach = int(8 * t) + 2
    assert chi2_pvalue(units, laplace_pmf(t), reach) > ALPHA
    for wrong in (0.7, 1.3):
        assert chi2_pvalue(units, laplace_pmf(t * wrong), reach) < ALPHA


@pytest.mark.slow
@pytest.mark.parametrize("sigma, k", [(3.0, -1), (0.8, 0), (1.0, -5)])
def test_discrete_gaussian_chi2_and_power(sigma, k):
    mech = DiscreteGaussian(sigma=sigma, grid_exponent=k)
    w = mech.sample(200_000, rng=12)
    units = w / mech.grid
    assert np.array_equal(units, np.rint(units))
    s = mech.steps
    reach = int(4 * s) + 1
    assert chi2_pvalue(units, gaussian_pmf(s), reach) > ALPHA
    for wrong in (0.7, 1.3):
        assert chi2_pvalue(units, gaussian_pmf(s * wrong), reach) < ALPHA


def test_vector_lattice_noise_and_moments(assert_moments):
    for mech in (
        DiscreteLaplace(scale=1.0, grid_exponent=-2, dimension=3),
        DiscreteGaussian(sigma=0.9, grid_exponent=-1, dimension=2),
    ):
        w = mech.sample(100_000, rng=5)
        assert w.shape == (100_000, mech.dim)
        assert np.array_equal(w / mech.grid, np.rint(w / mech.grid))
        assert_moments(mech, w)


@pytest.mark.parametrize(
    "mech", [DiscreteLaplace(scale=0.6, grid_exponent=-2), DiscreteGaussian(sigma=0.5, grid_exponent=-3)]
)
def test_pmf_sums_to_one_and_is_zero_off_grid(mech):
    j = np.arange(-2000, 2001) * mech.grid
    assert mech.pmf(j).sum() == pytest.approx(1.0, abs=1e-12)
    assert mech.pmf(mech.grid / 3) == 0.0
    var = float(np.sum(mech.pmf(j) * j * j))
    assert mech.covariance() == pytest.approx(var, rel=1e-10)


@pytest.mark.parametrize("scale, sens, k", [(1.0, 1.0, -3), (2.0, 0.3, -4), (0.5, 1.0, 0)])
def test_discrete_laplace_epsilon_is_the_max_log_ratio(scale, sens, k):
    grid = 2.0**k
    units = lattice_sensitivity(sens, grid)
    mech = DiscreteLaplace(scale=scale, grid_exponent=k)
    j = np.arange(-200, 201) * grid
    ratio = np.max(np.abs(mech.logpmf(j) - mech.logpmf(j + units * grid)))
    assert discrete_laplace_epsilon(scale, sensitivity=sens, grid=grid) == pytest.approx(ratio, rel=1e-9)


@pytest.mark.parametrize(
    "s, eps, sens", [(0.7, 0.5, 1), (2.0, 1.0, 1), (3.0, 0.2, 2), (5.5, 2.0, 3), (1.0, 0.0, 1)]
)
def test_discrete_gaussian_delta_is_the_hockey_stick_divergence(s, eps, sens):
    pmf = gaussian_pmf(s)
    y = np.arange(-int(60 * s) - 60, int(60 * s) + 60)
    brute = float(np.sum(np.maximum(0.0, pmf(y) - math.exp(eps) * pmf(y - sens))))
    assert discrete_gaussian_delta(s, eps, sensitivity=sens) == pytest.approx(brute, rel=1e-9, abs=1e-15)


def test_discrete_gaussian_approaches_continuous_and_round_trips():
    for s in (20.0, 200.0):
        assert discrete_gaussian_delta(s, 0.05, sensitivity=1) == pytest.approx(
            gaussian_delta(s, 0.05, sensitivity=1.0), rel=1e-3
        )
    eps = discrete_gaussian_epsilon(4.0, 1e-6, sensitivity=1)
    assert discrete_gaussian_delta(4.0, eps, sensitivity=1) <= 1e-6
    assert discrete_gaussian_delta(4.0, eps * 0.999, sensitivity=1) > 1e-6


def test_zcdp_conversion_is_valid_and_consistent():
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting import rdp

    for rho in (0.01, 0.125, 1.0):
        for delta in (1e-3, 1e-6):
            ours = zcdp_epsilon(rho, delta)
            # looser than the exact profile of the continuous Gaussian with the same ρ, ...
            assert ours >= gaussian_epsilon(1.0 / math.sqrt(2.0 * rho), delta, sensitivity=1.0)
            # ... and no looser than dp-accounting's RDP conversion of the same ρ-zCDP event.
            acc = rdp.RdpAccountant()
            acc.compose(dp_accounting.ZCDpEvent(rho))
            assert ours <= acc.get_epsilon(delta) + 1e-9
            assert zcdp_delta(rho, ours) == pytest.approx(delta, rel=1e-2)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: DiscreteLaplace(scale=0.0), "scale"),
        (lambda: DiscreteLaplace(scale=np.nan), "scale"),
        (lambda: DiscreteLaplace(scale=1.0, grid_exponent=-60), "grid_exponent"),
        (lambda: DiscreteLaplace(scale=1.0, grid_exponent=1.5), "grid_exponent"),
        (lambda: DiscreteGaussian(sigma=-1.0), "sigma"),
        (lambda: DiscreteGaussian(sigma=1.0, dimension=0), "dim"),
        (lambda: DiscreteGaussian(sigma=1.0, dimension=True), "dim"),
        (lambda: discrete_gaussian_delta(1.0, 1.0, sensitivity=1.5), "sensitivity"),
        (lambda: discrete_gaussian_delta(1.0, np.inf, sensitivity=1), "epsilon"),
        (lambda: discrete_gaussian_epsilon(1.0, 1.0, sensitivity=1), "delta"),
        (lambda: lattice_sensitivity(1.0, 0.5, norm="linf"), "norm"),
        (lambda: lattice_sensitivity(-1.0, 0.5), "sensitivity"),
        (lambda: zcdp_epsilon(0.0, 1e-5), "rho"),
        (lambda: DiscreteLaplace(scale=1.0).pmf("a"), "x"),
    ],
)
def test_bad_parameters(call, name):
    with pytest.raises(InvalidParameterError) as info:
        call()
    assert name in str(info.value)


def test_lattice_noise_is_a_sibling_of_mechanism_without_density_methods():
    from privnoise.mechanisms import LatticeMechanism, Mechanism, Noise

    for noise in (DiscreteLaplace(scale=1.0), DiscreteGaussian(sigma=2.0, dimension=3)):
        assert isinstance(noise, LatticeMechanism) and isinstance(noise, Noise)
        assert not isinstance(noise, Mechanism)
        for method in ("pdf", "logpdf", "score", "fisher_information"):
            assert not hasattr(noise, method)  # absent, not present-and-raising
        assert np.all(noise.pmf(np.zeros(noise.shape)) > 0)
