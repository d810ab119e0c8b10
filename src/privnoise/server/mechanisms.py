"""Policy → mechanism: every answer the server gives is a hardened (clamped, grid-snapped) release drawn from
the cryptographically strong default generator. No seed exists anywhere on this path.

Differential-privacy policies are calibrated so that the hardened release, rounding included, satisfies the
declared (ε, δ): Laplace noise of scale b = (⌊Δ/Λ⌋ + m)Λ/ε (pure ε-DP, checked exactly with
:meth:`~privnoise.dp.hardening.HardenedMechanism.epsilon_fraction`); Gaussian noise whose σ is the analytic
Gaussian σ at the lattice sensitivity, checked with the exact profile. The budget is then charged the declared
(ε, δ) exactly, as rationals.

Fisher policies use Farokhi & Sandberg's optimal noise for a scalar (or identity) linear release: cos² noise on
[−h, h] (Problem 2) or Gaussian noise with E w² = Q (Problem 4); the information they carry about each record
is ``c_i² 𝓘_w`` (Proposition 1), charged to the Fisher budgets.

``mechanism = "custom"`` calls an owner-supplied ``module:function`` returning a privnoise Mechanism; the server
hardens it and charges the declared (ε, δ). It exists for owners with their own noise (and for the failure
tests).
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..dp.gaussian import gaussian_sigma
from ..dp.hardening import HardenedMechanism, hardened, noise_scale
from ..dp.lattice import default_grid_exponent, lattice_sensitivity
from ..exceptions import CalibrationError
from ..fisher import optimal_noise
from ..mechanisms import Gaussian, Laplace, Mechanism, RaisedCosine
from ..queries import LinearQuery
from .config import PolicySpec

__all__ = ["Noise", "build_noise"]

_BOUND_STEPS = 2.0**50


@dataclass(frozen=True, slots=True)
class Noise:
    """A hardened mechanism ready to release one component of an answer, with what it spends."""

    hardened: HardenedMechanism
    epsilon: Fraction | None  # the DP charge (None: no DP guarantee, Fisher budget only)
    delta: Fraction | None
    information: float | None  # per-coordinate Fisher information 𝓘_w of the noise (None: unknown, custom)

    def release(self, value: Any) -> Any:
        return self.hardened.release(value)

    def describe(self) -> dict[str, Any]:
        noise = self.hardened.mechanism
        family = type(noise).__name__
        out: dict[str, Any] = {"family": family, "grid": self.hardened.grid, "hardened": True}
        if isinstance(noise, Laplace):
            out["scale"] = float(np.min(noise.scale))
        elif isinstance(noise, Gaussian):
            out["sigma"] = float(np.sqrt(np.min(np.diag(np.atleast_2d(noise.covariance())))))
        else:
            out["second_moment"] = float(noise.second_moment())
        return out


def _bound(grid: float) -> float:
    return _BOUND_STEPS * grid


def _laplace(eps: Fraction, sensitivity: float, dim: int) -> HardenedMechanism:
    e = float(eps)
    k = default_grid_exponent(sensitivity / e)
    grid = math.ldexp(1.0, k)
    units = lattice_sensitivity(sensitivity, grid, dim=dim)
    b = units * grid / e
    for _ in range(64):
        noise = Laplace(scale=b) if dim == 1 else Laplace(scale=np.full(dim, b))
        h = hardened(noise, sensitivity=sensitivity, bound=_bound(grid), grid_exponent=k)
        if h.epsilon_fraction() <= eps:
            return h
        b = math.nextafter(b, math.inf) * (1.0 + 1e-15)
    raise CalibrationError(
        "could not calibrate hardened Laplace noise to the declared ε."
    )  # pragma: no cover


def _gaussian(eps: Fraction, delta: Fraction, sensitivity: float, dim: int) -> HardenedMechanism:
    e, d = float(eps), float(delta)
    sigma0 = gaussian_sigma(e, d, sensitivity=sensitivity)
    k = default_grid_exponent(sigma0)
    grid = math.ldexp(1.0, k)
    effective = lattice_sensitivity(sensitivity, grid, dim=dim, norm="l2") * grid
    sigma = gaussian_sigma(e, d, sensitivity=effective) * (1.0 + 1e-9)
    for _ in range(64):
        noise = Gaussian.from_std(sigma, dim if dim > 1 else None)
        h = hardened(noise, sensitivity=sensitivity, bound=_bound(grid), grid_exponent=k)
        if h.epsilon(d) <= e * (1.0 - 1e-12):
            return h
        sigma *= 1.0 + 1e-6
    raise CalibrationError(
        "could not calibrate hardened Gaussian noise to the declared (ε, δ)."
    )  # pragma: no cover


def _harden(mech: Mechanism, sensitivity: float) -> HardenedMechanism:
    k = default_grid_exponent(noise_scale(mech))
    return hardened(mech, sensitivity=sensitivity, bound=_bound(math.ldexp(1.0, k)), grid_exponent=k)


def _import_factory(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def build_noise(policy: PolicySpec, *, sensitivity: float, dim: int = 1, share: int = 1) -> Noise:
    """The noise for one of ``share`` components of an answer (the policy's (ε, δ) is split evenly)."""
    eps = None if policy.epsilon is None else policy.epsilon / share
    delta = None if policy.delta is None else policy.delta / share
    if policy.mechanism in ("laplace", "gaussian"):
        # DP noise carries Fisher information too (1/b² for Laplace, 1/σ² for the Gaussian, per coordinate);
        # the snapped output carries no more than the continuous noise (data processing), so this bounds it.
        if policy.mechanism == "laplace":
            assert eps is not None
            h = _laplace(eps, sensitivity, dim)
            charge_delta = Fraction(0)
        else:
            assert eps is not None and delta is not None
            h = _gaussian(eps, delta, sensitivity, dim)
            charge_delta = delta
        info = float(np.max(np.diag(h.mechanism.fisher_information_matrix())))
        return Noise(h, eps, charge_delta, info)
    if policy.mechanism == "custom":
        assert policy.factory is not None
        mech = _import_factory(policy.factory)(policy)
        if not isinstance(mech, Mechanism):
            raise CalibrationError(f"custom factory {policy.factory!r} must return a privnoise Mechanism.")
        h = _harden(mech, sensitivity)
        return Noise(h, eps, delta or Fraction(0), None)
    # Fisher policies: the optimal noise of one scalar (or per-coordinate) release.
    query = LinearQuery(np.eye(1))
    if policy.mechanism == "fisher-cosine":
        assert policy.half_width is not None
        noise = optimal_noise(query, support=(-policy.half_width, policy.half_width))
    else:
        assert policy.quality is not None
        noise = optimal_noise(query, quality_budget=policy.quality)
    assert isinstance(noise, Mechanism)
    info = float(np.atleast_2d(noise.fisher_information())[0, 0])
    # One scalar release, or (identity) independent copies per record: the optimal Σ ∝ (CCᵀ)^{1/2} = I.
    if isinstance(noise, Gaussian):
        noise = Gaussian.from_std(float(np.sqrt(noise.covariance()[0, 0])), dim if dim > 1 else None)
    else:
        h_ = float(policy.half_width or 0.0)
        noise = (
            optimal_noise(LinearQuery(np.eye(dim)), support=(-h_, h_))
            if dim > 1
            else RaisedCosine(lower=-h_, upper=h_)
        )
    assert isinstance(noise, Mechanism)
    h = _harden(noise, sensitivity)
    return Noise(h, None, None, info)
