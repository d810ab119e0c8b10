"""Policy → mechanism: every answer the server gives is a hardened (clamped, grid-snapped) release drawn from
the cryptographically strong default generator. No seed exists anywhere on this path.

Differential-privacy policies are calibrated by the library (:func:`privnoise.dp.hardened_laplace_for_epsilon`,
:func:`privnoise.dp.hardened_gaussian_for_epsilon_delta`, through the one safe-side calibrator) so that the
hardened release, rounding included, satisfies the declared (ε, δ): Laplace noise of scale b = (⌊Δ/Λ⌋ + m)Λ/ε
(pure ε-DP, checked exactly with :meth:`~privnoise.dp.hardening.HardenedMechanism.epsilon_fraction`); Gaussian
noise whose σ is the analytic Gaussian σ at the lattice sensitivity, checked with the exact profile. The budget is
then charged the declared (ε, δ) exactly, as rationals. What a noise reports (its scale, its Fisher information)
comes from its privacy profile and its structured information, never from a switch on its family.

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

from .. import queries
from ..dp.hardened_calibration import hardened_gaussian_for_epsilon_delta, hardened_laplace_for_epsilon
from ..dp.hardening import HardenedMechanism, hardened, noise_scale
from ..dp.lattice import default_grid_exponent
from ..dp.profile import NoProfile, profile_of
from ..exceptions import CalibrationError
from ..fisher import optimal_noise
from ..mechanisms import Mechanism
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
        noise: Any = self.hardened.mechanism
        out: dict[str, Any] = {"family": type(noise).__name__, "grid": self.hardened.grid, "hardened": True}
        profile = profile_of(noise)
        if profile.pure and profile.norm == "l1":  # Laplace-type: its smallest scale
            out["scale"] = profile.scale
        elif not isinstance(profile, NoProfile):  # Gaussian-type: σ in its weakest direction
            out["sigma"] = profile.scale
        else:
            out["second_moment"] = float(noise.second_moment())
        return out


def _bound(grid: float) -> float:
    return _BOUND_STEPS * grid


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
            h = hardened_laplace_for_epsilon(eps, sensitivity=sensitivity, dim=dim)
            charge_delta = Fraction(0)
        else:
            assert eps is not None and delta is not None
            h = hardened_gaussian_for_epsilon_delta(eps, delta, sensitivity=sensitivity, dim=dim)
            charge_delta = delta
        return Noise(h, eps, charge_delta, _information(h.mechanism))
    if policy.mechanism == "custom":
        assert policy.factory is not None
        mech = _import_factory(policy.factory)(policy)
        if not isinstance(mech, Mechanism):
            raise CalibrationError(f"custom factory {policy.factory!r} must return a privnoise Mechanism.")
        h = _harden(mech, sensitivity)
        return Noise(h, eps, delta or Fraction(0), None)
    # Fisher policies: the optimal noise of the release itself, one scalar or an identity over `dim` records
    # (Problems 2 and 4 for C = I: independent copies per record, Σ ∝ (CCᵀ)^{1/2} = I, kept structured).
    query = queries.mean(1) if dim == 1 else queries.identity(dim)
    goal = _goal(policy)
    if "quality_budget" in goal:
        goal["quality_budget"] *= dim  # E w_i² = Q per record
    noise = optimal_noise(query, **goal)
    assert isinstance(noise, Mechanism)
    return Noise(_harden(noise, sensitivity), None, None, _information(noise))


def _goal(policy: PolicySpec) -> dict[str, Any]:
    if policy.mechanism == "fisher-cosine":
        assert policy.half_width is not None
        return {"support": (-policy.half_width, policy.half_width)}
    assert policy.quality is not None
    return {"quality_budget": policy.quality}


def _information(noise: Any) -> float:
    """The Fisher information of one coordinate of the noise (the largest, for a vector)."""
    return float(noise.information_form().max_diagonal())
