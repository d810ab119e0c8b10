"""Conformance of every privacy statement privnoise makes about a noise family: the (ε, δ) of one release
(:func:`privnoise.dp.epsilon_delta_of`) and of k = 1, 10, 100 releases in every accountant that takes the family
(``PrivacyAccountant`` in modes pure, approximate, pld and rdp; ``ZCDPAccountant``) is at or above the exact value,
computed independently (``_references``) over a grid of sensitivities and δ.

The references are exact (Gaussian noise by quadrature, the discrete Gaussian by sums over the lattice and
convolutions of its privacy loss, pure noise by brute force over outputs and shifts) or a lower bound on the
exact value (dp-accounting's optimistic privacy-loss distribution for Laplace and discrete Laplace), so a
statement below them is a statement below the truth. A family whose exact curve at δ > 0 privnoise cannot
compute independently (vector ℓ2 and multi-user Laplace) is checked at δ = 0, where its pure ε composes exactly.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from privnoise import dp
from privnoise.dp.zcdp import ZCDPAccountant
from privnoise.exceptions import CalibrationError, InvalidParameterError
from privnoise.mechanisms import Laplace

from . import _references as ref
from ._families import FAMILIES, Example

SENSITIVITIES = (0.7, 1.5, 3.0)
DELTAS = (1e-3, 1e-6, 1e-9)
COUNTS = (1, 10, 100)
RELATIVE = 1e-12  # "at or above the exact value", beyond rounding of the last bits
PRIVATE = [
    pytest.param(f, e, id=f"{f.cls.__name__}-{e.name}")
    for f in FAMILIES.values() if f.privacy != "none" for e in f.examples
]


# -- the exact curve of each family, from its definition --------------------------------------------------------
def _inner(example: Example):
    noise = example.noise
    return getattr(noise, "mechanism", noise), getattr(noise, "grid", None) if hasattr(noise, "mechanism") else None


class Truth:
    """The exact ε(δ) of k releases of one example at sensitivity Δ (or a lower bound on it); None when unknown."""

    def __init__(self, kind: str, example: Example, sensitivity: float) -> None:
        self.kind, self.example, self.sensitivity = kind, example, sensitivity
        noise, grid = _inner(example)
        if kind == "hardened":  # the value is rounded to the grid first: the shift grows to the rounded one
            self.kind = "laplace" if isinstance(noise, Laplace) else "gaussian"
            self.sensitivity = ref.rounded_shift(sensitivity, grid)
        if kind == "snapped":  # the exact sum snapped: post-processing of the noise at the exact shift
            self.kind = "laplace" if isinstance(noise, Laplace) else "snapped-lattice"
        self.noise = noise

    @functools.cached_property
    def pure_epsilon(self) -> float | None:
        noise, d = self.noise, self.sensitivity
        if self.kind == "laplace":
            b = np.atleast_1d(np.asarray(noise.scale, dtype=float))
            shift = np.zeros(b.size)
            shift[int(np.argmin(b))] = d
            return ref.worst_log_ratio(lambda x: -np.sum(np.abs(x) / b, axis=1), shift, b.size, seed=1)
        if self.kind == "norm-laplace":
            eps0 = noise.epsilon
            block = getattr(noise, "user_dim", noise.dim)
            shift = np.zeros(noise.dim)
            shift[:block] = d / math.sqrt(block)  # the whole ℓ2 (or per-user) sensitivity on one block
            users = noise.dim // block

            def log_density(x):
                return -eps0 * sum(np.linalg.norm(x[:, i * block:(i + 1) * block], axis=1) for i in range(users))

            return ref.worst_log_ratio(log_density, shift, noise.dim, seed=2)
        if self.kind in ("discrete-laplace", "snapped-lattice"):
            # on integers (snapped lattice noise) the shift is Δ itself, whole grid steps; else rounded to the grid
            exact = self.kind == "snapped-lattice" and float(d / noise.grid).is_integer()
            units = round((d if exact else ref.rounded_shift(d, noise.grid)) / noise.grid)
            t = noise.scale / noise.grid
            j = np.arange(-2000, 2001)
            return float(np.max((np.abs(j - units) - np.abs(j)) / t))  # log pmf(j)/pmf(j − units), brute force
        return None

    def epsilon(self, delta: float, count: int) -> float | None:
        if self.kind in ("laplace", "norm-laplace", "discrete-laplace", "snapped-lattice") and delta == 0.0:
            return count * self.pure_epsilon
        return _epsilon_at(self.kind, self._parameters(), delta, count)

    def _parameters(self) -> tuple:
        noise, d = self.noise, self.sensitivity
        if self.kind == "gaussian":
            sigma_min = math.sqrt(float(np.min(np.linalg.eigvalsh(np.atleast_2d(noise.covariance())))))
            return (d, sigma_min)
        if self.kind == "laplace":
            return (float(np.min(np.asarray(noise.scale, dtype=float))) / d,)
        if self.kind == "norm-laplace":
            return (1.0 / (noise.epsilon * d),) if noise.dim == 1 else ()
        if self.kind in ("discrete-laplace", "snapped-lattice"):
            exact = self.kind == "snapped-lattice" and float(d / noise.grid).is_integer()
            units = round((d if exact else ref.rounded_shift(d, noise.grid)) / noise.grid)
            return (noise.grid / noise.scale, units)
        units = round(ref.rounded_shift(d, noise.grid) / noise.grid)
        return (noise.sigma / noise.grid, units)


@functools.cache
def _epsilon_at(kind: str, parameters: tuple, delta: float, count: int) -> float | None:
    if kind == "gaussian":
        mu_k = (*parameters, count)  # k Gaussian releases are one of Δ√k/σ (their losses add)
        return ref.epsilon_for(lambda e: ref.gaussian_delta_fast(mu_k, e), delta,
                               precise=lambda e: ref.gaussian_delta(mu_k, e))
    if kind in ("laplace", "norm-laplace"):
        if not parameters:
            return None
        return ref.laplace_pld_lower(parameters[0], count, delta)
    if kind in ("discrete-laplace", "snapped-lattice"):
        return ref.discrete_laplace_pld_lower(parameters[0], parameters[1], count, delta)
    steps, units = parameters
    precise = (lambda e: ref.discrete_gaussian_delta_precise(steps, units, e)) if count == 1 else None
    return ref.epsilon_for(lambda e: ref.discrete_gaussian_delta(steps, units, e, count), delta, precise=precise)


def _at_or_above(stated: float, truth: float, what: str) -> None:
    assert stated >= truth * (1 - RELATIVE) - 1e-300, f"{what}: stated ε = {stated!r} below the exact {truth!r}"


# -- one release ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("family", "example"), PRIVATE)
@pytest.mark.parametrize("sensitivity", SENSITIVITIES)
def test_one_release_states_at_least_the_exact_epsilon(family, example, sensitivity):
    truth = Truth(family.privacy, example, sensitivity)
    for delta in DELTAS:
        try:
            stated = dp.epsilon_delta_of(example.noise, sensitivity=sensitivity, delta=delta)
        except CalibrationError:
            continue
        exact = truth.epsilon(stated.delta, 1)
        if exact is None:
            continue
        _at_or_above(stated.epsilon, exact, f"epsilon_delta_of at δ = {stated.delta:g}")
        if stated.delta == 0.0:
            break


# -- k releases in every accountant --------------------------------------------------------------------------
def _accountants(delta: float, count: int):
    yield "pure", dp.accountant_for(mode="pure"), None
    yield "approximate", dp.accountant_for(mode="approximate"), delta / count
    yield "pld", dp.accountant_for(mode="pld"), None
    yield "rdp", dp.accountant_for(mode="rdp"), None
    yield "zcdp", ZCDPAccountant(), None


@pytest.mark.parametrize(("family", "example"), PRIVATE)
@pytest.mark.parametrize("count", COUNTS)
def test_composition_in_every_accountant_states_at_least_the_exact_epsilon(family, example, count):
    pytest.importorskip("dp_accounting")
    declared = getattr(example.noise, "declared_sensitivity", None)
    sensitivity = 1.5 if declared is None else declared  # a hardened release charges its own sensitivity
    truth = Truth(family.privacy, example, sensitivity)
    checked = []
    for delta in (1e-6, 1e-3):
        for name, accountant, per_release in _accountants(delta, count):
            try:
                accountant.record(example.noise, sensitivity=sensitivity, delta=per_release, count=count)
            except InvalidParameterError:
                continue  # the accountant refuses this family: it states nothing about it
            stated = accountant.epsilon(0.0 if name == "pure" else delta)
            exact = truth.epsilon(0.0 if name == "pure" else delta, count)
            if exact is None and name != "pure":
                exact = truth.epsilon(0.0, count) if name == "approximate" and truth.pure_epsilon else None
            if exact is None:
                continue
            _at_or_above(stated, exact, f"{name} accountant, {count} releases, δ = {delta:g}")
            checked.append(name)
    assert checked, "no accountant stated anything about this family"


# -- the cases where a guarantee was once below the truth -------------------------------------------------------
def test_zcdp_of_the_discrete_gaussian_is_not_the_continuous_gaussian_curve():
    noise = dp.DiscreteGaussian(sigma=1.0, grid_exponent=0)
    accountant = ZCDPAccountant()
    accountant.record(noise, sensitivity=1.5)
    exact = ref.epsilon_for(lambda e: ref.discrete_gaussian_delta(1.0, 2, e), 1e-3,
                            precise=lambda e: ref.discrete_gaussian_delta_precise(1.0, 2, e))
    assert exact == pytest.approx(7.779, abs=1e-3)
    assert accountant.epsilon(1e-3) >= exact
    # the continuous Gaussian at the same ρ states less: the shortcut that was taken would be caught here
    continuous = ref.epsilon_for(lambda e: ref.gaussian_delta_fast((2.0, 1.0, 1), e), 1e-3)
    assert continuous < exact


@pytest.mark.parametrize("sigma", [0.6, 1.0, 2.5])
@pytest.mark.parametrize("count", [1, 10, 100])
def test_zcdp_of_mixed_and_discrete_charges_is_at_least_the_exact_composition(sigma, count):
    noise = dp.DiscreteGaussian(sigma=sigma, grid_exponent=0)
    accountant = ZCDPAccountant()
    accountant.record(noise, sensitivity=1.0, count=count)
    for delta in (1e-3, 1e-6):
        exact = ref.epsilon_for(lambda e: ref.discrete_gaussian_delta(sigma, 1, e, count), delta)
        _at_or_above(accountant.epsilon(delta), exact, f"zCDP of {count} discrete Gaussians")
    gaussian = ZCDPAccountant()
    gaussian.record_gaussian(sigma, sensitivity=1.0, count=count)
    mu = (1.0, sigma, count)
    exact = ref.epsilon_for(lambda e: ref.gaussian_delta_fast(mu, e), 1e-6, precise=lambda e: ref.gaussian_delta(mu, e))
    assert gaussian.epsilon(1e-6) == pytest.approx(exact, rel=1e-9)  # the exact shortcut, where it applies
    _at_or_above(gaussian.epsilon(1e-6), exact, "zCDP of Gaussians")


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 3.0, 10.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10])
@pytest.mark.parametrize("sensitivity", [0.5, 7.3])
def test_gaussian_calibration_is_never_below_the_exact_root(epsilon, delta, sensitivity):
    sigma = dp.gaussian_sigma(epsilon, delta, sensitivity=sensitivity)
    # at the σ returned the exact δ(ε) — by quadrature, 50 digits — is within the target
    assert ref.gaussian_delta((sensitivity, sigma, 1), epsilon) <= delta
    # and the σ is the root, not a loose bound
    assert ref.gaussian_delta((sensitivity, sigma * (1 - 1e-9), 1), epsilon) > delta * (1 - 1e-6)
    stated = dp.gaussian_epsilon(sigma, delta, sensitivity=sensitivity)
    mu = (sensitivity, sigma, 1)
    exact = ref.epsilon_for(lambda e: ref.gaussian_delta_fast(mu, e), delta, precise=lambda e: ref.gaussian_delta(mu, e))
    _at_or_above(stated, exact, "gaussian_epsilon")


@pytest.mark.parametrize(("mu", "epsilon"), [(0.3, 0.1), (1.0, 1.0), (2.0, 7.0), (5.0, 3.0)])
def test_the_closed_form_reference_agrees_with_quadrature(mu, epsilon):
    assert ref.gaussian_delta_fast(mu, epsilon) == pytest.approx(ref.gaussian_delta(mu, epsilon), rel=1e-12)


def test_every_private_family_is_checked_against_a_reference():
    kinds = {f.privacy for f in FAMILIES.values()}
    assert kinds >= {"laplace", "gaussian", "norm-laplace", "discrete-laplace", "discrete-gaussian", "hardened",
                     "snapped"}
