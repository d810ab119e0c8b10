"""Conformance of every noise family's law: its density integrates to 1, its draws follow the law written from
the family's definition (KS or χ² at α = 1e-6 on 10⁵ draws, and the same test rejects the law at a 30 % larger
scale), its moments are the closed forms, and lattice and hardened outputs lie on their grid."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import numpy as np
import pytest
from scipy import integrate, stats

import privnoise
from privnoise.mechanisms import Noise

from ._families import EXCLUDED, FAMILIES, Example, LatticeLaw

ALPHA = 1e-6
DRAWS = 100_000
EXAMPLES = [pytest.param(e, id=f"{f.cls.__name__}-{e.name}") for f in FAMILIES.values() for e in f.examples]


def _concrete_families() -> set[type]:
    seen: set[type] = set()
    stack = [Noise]
    while stack:
        cls = stack.pop()
        for sub in cls.__subclasses__():
            stack.append(sub)
            module = sub.__module__
            if not inspect.isabstract(sub) and module.startswith("privnoise.") and not sub.__name__.startswith("_"):
                seen.add(sub)
    return seen


def _import_every_module() -> None:
    """Import every module of privnoise (those whose optional extras are missing aside), so that every family it
    ships is defined whatever the order the tests ran in."""
    for info in pkgutil.walk_packages(privnoise.__path__, "privnoise."):
        if info.name.split(".")[1] in ("server", "scale", "cli", "_cli", "client"):
            continue  # interfaces: they define no noise
        try:
            importlib.import_module(info.name)
        except ImportError:
            continue


def test_every_family_is_registered():
    _import_every_module()
    missing = {cls.__name__ for cls in _concrete_families()} - {c.__name__ for c in FAMILIES} - set(EXCLUDED)
    assert not missing, f"noise families without a conformance entry: {sorted(missing)}"


def _lattice_test(units: np.ndarray, law: LatticeLaw) -> float:
    """χ² p-value of integer steps against a lattice pmf (tails pooled so every expected count is ≥ 5)."""
    low, high = int(units.min()), int(units.max())
    reach = max(abs(low), abs(high))
    j = np.arange(-reach, reach + 1)
    expected = law.pmf(j) * units.size
    observed = np.bincount((units + reach).astype(np.int64), minlength=j.size).astype(float)
    keep = expected >= 5
    inner_obs, inner_exp = observed[keep], expected[keep]
    rest_obs = units.size - inner_obs.sum()
    rest_exp = units.size - inner_exp.sum()
    if rest_exp >= 5:
        inner_obs = np.append(inner_obs, rest_obs)
        inner_exp = np.append(inner_exp, rest_exp)
    inner_exp *= inner_obs.sum() / inner_exp.sum()
    return float(stats.chisquare(inner_obs, inner_exp).pvalue)


def _p_value(example: Example, draws: np.ndarray, law) -> float:
    values = np.asarray(example.statistic(draws), dtype=float)
    if isinstance(law, LatticeLaw):
        units = values / law.grid
        assert np.array_equal(units, np.rint(units))
        return _lattice_test(np.rint(units), law)
    return float(stats.kstest(values, law.cdf).pvalue)


@pytest.mark.parametrize("example", EXAMPLES)
def test_draws_follow_the_law_and_a_wrong_scale_is_rejected(example: Example):
    noise = example.noise
    draws = np.asarray(noise.sample(DRAWS, rng=20261126), dtype=float)
    assert np.all(np.isfinite(draws))
    assert _p_value(example, draws, example.law) > ALPHA
    assert _p_value(example, draws, example.wrong) < ALPHA  # power: the same test sees a 30 % wrong scale


@pytest.mark.parametrize("example", EXAMPLES)
def test_moments_are_the_closed_forms(example: Example):
    noise = example.noise
    if example.mean is not None:
        np.testing.assert_allclose(np.asarray(noise.mean(), dtype=float), example.mean, atol=1e-12)
    if example.covariance is not None:
        np.testing.assert_allclose(np.asarray(noise.covariance(), dtype=float), example.covariance, rtol=1e-9,
                                   atol=1e-12)
        draws = np.asarray(noise.sample(DRAWS, rng=7), dtype=float)
        sample_cov = np.cov(draws.reshape(DRAWS, -1), rowvar=False)
        scale = float(np.max(np.diag(np.atleast_2d(example.covariance))))
        # standard error of a (co)variance estimate from 10⁵ draws of laws with kurtosis ≤ 6 is ≤ 0.01·scale
        np.testing.assert_allclose(np.atleast_2d(sample_cov), np.atleast_2d(example.covariance), atol=0.05 * scale)


@pytest.mark.parametrize("example", EXAMPLES)
def test_density_sums_to_one(example: Example):
    noise = example.noise
    if isinstance(example.law, LatticeLaw) and hasattr(noise, "pmf"):
        grid = example.law.grid
        reach = int(np.ceil(80 * np.sqrt(noise.second_moment()) / grid)) + 2
        points = np.arange(-reach, reach + 1) * grid
        assert float(np.sum(noise.pmf(points))) == pytest.approx(1.0, abs=1e-12)
        np.testing.assert_allclose(noise.pmf(points[::7]), example.law.pmf(np.arange(-reach, reach + 1)[::7]),
                                   rtol=1e-9, atol=1e-300)
        return
    if not hasattr(noise, "pdf"):
        pytest.skip(f"{type(noise).__name__} is a release on a grid (its law is checked by the χ² test)")
    if noise.dim == 1:
        low, high = noise.support() if hasattr(noise, "support") else (-np.inf, np.inf)
        low, high = float(np.ravel(low)[0]), float(np.ravel(high)[0])
        total, _ = integrate.quad(lambda x: float(noise.pdf(np.array([x]) if noise.shape else x)), low, high,
                                  limit=400, epsabs=1e-12)
        assert total == pytest.approx(1.0, abs=1e-8)
        return
    # a vector law: importance sampling from a wide Gaussian, a second method that never uses the sampler
    rng = np.random.default_rng(5)
    dim = noise.dim
    spread = 3.0 * float(np.sqrt(np.max(np.diag(np.atleast_2d(noise.covariance())))))
    x = rng.normal(scale=spread, size=(400_000, dim))
    proposal = stats.multivariate_normal(mean=np.zeros(dim), cov=spread**2 * np.eye(dim)).pdf(x)
    weights = np.asarray(noise.pdf(x), dtype=float) / proposal
    estimate = float(np.mean(weights))
    error = float(np.std(weights) / np.sqrt(weights.size))
    assert abs(estimate - 1.0) < 6 * error + 1e-9


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.values[0].on_grid])
def test_outputs_lie_on_their_grid(example: Example):
    grid = example.on_grid
    draws = np.asarray(example.noise.sample(10_000, rng=3), dtype=float)
    assert np.array_equal(draws / grid, np.rint(draws / grid))
    if hasattr(example.noise, "release"):
        out = np.asarray(example.noise.release(np.linspace(-3.3, 3.3, 1000), rng=4), dtype=float)
        assert np.array_equal(out / grid, np.rint(out / grid))
