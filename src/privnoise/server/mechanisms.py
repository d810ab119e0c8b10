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

Calibrations are cached (:func:`build_noise` is called once per policy, sensitivity and dimension), and every
number they produce is checked: the sensitivity and the noise scale must be finite and in
:data:`~.checks.SCALE_RANGE`-compatible ranges, the noise's Fisher information finite and positive, else the
query is refused (:class:`~privnoise.exceptions.InvalidParameterError`) before anything is charged.
"""

from __future__ import annotations

import functools
import importlib
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..dp.gaussian import gaussian_sigma
from ..dp.hardening import HardenedMechanism, hardened, noise_scale
from ..dp.lattice import default_grid_exponent, lattice_sensitivity
from ..exceptions import CalibrationError, InvalidParameterError
from ..fisher import optimal_noise
from ..mechanisms import Gaussian, Laplace, Mechanism, RaisedCosine
from ..queries import LinearQuery
from .checks import SCALE_RANGE
from .config import PolicySpec

__all__ = ["GAUSSIAN_IDENTITY_MAX", "Noise", "build_noise"]

_BOUND_STEPS = 2.0**50
GAUSSIAN_IDENTITY_MAX = 2048
_OWNER = "query"


@dataclass(frozen=True, slots=True)
class Noise:
    """A hardened mechanism ready to release one component of an answer, with what it spends."""

    hardened: HardenedMechanism
    epsilon: Fraction | None  # the DP charge (None: no DP guarantee, Fisher budget only)
    delta: Fraction | None
    information: float | None  # per-coordinate Fisher information 𝓘_w of the noise (None: unknown, custom)

    def release(self, value: Any) -> Any:
        return self.hardened.release(value)

    @property
    def root_information(self) -> float | None:
        """√𝓘_w, so that slope² 𝓘_w = (slope √𝓘_w)² is computed without overflow or underflow."""
        return None if self.information is None else math.sqrt(self.information)

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


def _checked_scale(scale: float, what: str) -> float:
    low, high = SCALE_RANGE
    if not math.isfinite(scale) or not low <= scale <= high:
        raise InvalidParameterError(
            f"the {what} of `{_OWNER}` would be {scale:g}, outside [{low:g}, {high:g}]: the coefficients or "
            "the declared bounds are too extreme for this policy."
        )
    return scale


def _laplace(eps: Fraction, sensitivity: float, dim: int) -> tuple[HardenedMechanism, Mechanism]:
    e = float(eps)
    _checked_scale(sensitivity / e, "Laplace scale")
    k = default_grid_exponent(sensitivity / e)
    grid = math.ldexp(1.0, k)
    units = lattice_sensitivity(sensitivity, grid, dim=dim)
    b = _checked_scale(units * grid / e, "Laplace scale")
    for _ in range(64):
        noise = Laplace(scale=b) if dim == 1 else Laplace(scale=np.full(dim, b))
        h = hardened(noise, sensitivity=sensitivity, bound=_bound(grid), grid_exponent=k)
        if h.epsilon_fraction() <= eps:
            return h, Laplace(scale=b)
        b = math.nextafter(b, math.inf) * (1.0 + 1e-15)
    raise CalibrationError(
        "could not calibrate hardened Laplace noise to the declared ε."
    )  # pragma: no cover


def _gaussian(
    eps: Fraction, delta: Fraction, sensitivity: float, dim: int
) -> tuple[HardenedMechanism, Mechanism]:
    e, d = float(eps), float(delta)
    sigma0 = _checked_scale(gaussian_sigma(e, d, sensitivity=sensitivity), "Gaussian σ")
    k = default_grid_exponent(sigma0)
    grid = math.ldexp(1.0, k)
    effective = lattice_sensitivity(sensitivity, grid, dim=dim, norm="l2") * grid
    sigma = _checked_scale(gaussian_sigma(e, d, sensitivity=effective) * (1.0 + 1e-9), "Gaussian σ")
    for _ in range(64):
        noise = Gaussian.from_std(sigma, dim if dim > 1 else None)
        h = hardened(noise, sensitivity=sensitivity, bound=_bound(grid), grid_exponent=k)
        if h.epsilon(d) <= e * (1.0 - 1e-12):
            return h, Gaussian.from_std(sigma)
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


def _check_dimension(policy: PolicySpec, dim: int) -> None:
    """Gaussian noise on many coordinates is held as a dense covariance matrix: identity releases of Gaussian
    type are limited to :data:`GAUSSIAN_IDENTITY_MAX` records."""
    if policy.mechanism in ("gaussian", "fisher-gaussian") and dim > GAUSSIAN_IDENTITY_MAX:
        raise InvalidParameterError(
            f"identity releases with Gaussian noise are limited to {GAUSSIAN_IDENTITY_MAX} records; the dataset "
            f"has {dim} (use a Laplace or fisher-cosine policy for identity)."
        )


def _information(mech: Mechanism) -> float:
    info = float(np.max(np.diag(mech.fisher_information_matrix())))
    if not math.isfinite(info) or info <= 0.0:
        raise InvalidParameterError(
            f"the noise of `{_OWNER}` would carry a Fisher information of {info:g} per record; it must be finite "
            "and > 0 (the coefficients or the declared bounds are too extreme for this policy)."
        )
    return info


def build_noise(policy: PolicySpec, *, sensitivity: float, dim: int = 1, share: int = 1) -> Noise:
    """The noise for one of ``share`` components of an answer (the policy's (ε, δ) is split evenly).

    Cached: the same policy, sensitivity and dimension give the same (immutable) calibrated noise.
    """
    if not math.isfinite(sensitivity) or sensitivity <= 0.0:
        raise InvalidParameterError(
            f"the sensitivity of `{_OWNER}` must be finite and > 0; got {sensitivity!r} "
            "(a linear query needs a non-zero coefficient)."
        )
    try:
        return _build(policy, sensitivity, dim, share)
    except CalibrationError as exc:
        raise InvalidParameterError(f"cannot calibrate the noise of `{_OWNER}`: {exc}") from None


@functools.lru_cache(maxsize=4096)
def _build(policy: PolicySpec, sensitivity: float, dim: int, share: int) -> Noise:
    eps = None if policy.epsilon is None else policy.epsilon / share
    delta = None if policy.delta is None else policy.delta / share
    if policy.mechanism in ("laplace", "gaussian"):
        # DP noise carries Fisher information too (1/b² for Laplace, 1/σ² for the Gaussian, per coordinate);
        # the snapped output carries no more than the continuous noise (data processing), so this bounds it.
        _check_dimension(policy, dim)
        coordinate: Mechanism
        if policy.mechanism == "laplace":
            assert eps is not None
            h, coordinate = _laplace(eps, sensitivity, dim)
            charge_delta = Fraction(0)
        else:
            assert eps is not None and delta is not None
            h, coordinate = _gaussian(eps, delta, sensitivity, dim)
            charge_delta = delta
        # per coordinate, the information of the isotropic noise is that of one of its coordinates
        return Noise(h, eps, charge_delta, _information(coordinate))
    if policy.mechanism == "custom":
        assert policy.factory is not None
        mech = _import_factory(policy.factory)(policy)
        if not isinstance(mech, Mechanism):
            raise CalibrationError(f"custom factory {policy.factory!r} must return a privnoise Mechanism.")
        h = _harden(mech, sensitivity)
        return Noise(h, eps, delta or Fraction(0), None)
    # Fisher policies: the optimal noise of one scalar release (Problems 2 and 4 for C = 1), or independent
    # copies per record for identity (the optimal Σ ∝ (CCᵀ)^{1/2} = I).
    if policy.mechanism == "fisher-cosine":
        assert policy.half_width is not None
        w = policy.half_width
        scalar: Mechanism = RaisedCosine(lower=-w, upper=w)
        # for f(x) = x on a box, the optimum is the product of the scalar optima (Corollary 1)
        noise = scalar if dim == 1 else RaisedCosine(lower=np.full(dim, -w), upper=np.full(dim, w))
    else:
        _check_dimension(policy, dim)
        assert policy.quality is not None
        designed = optimal_noise(LinearQuery(np.eye(1)), quality_budget=policy.quality)
        assert isinstance(designed, Gaussian)
        sigma = float(np.sqrt(designed.covariance()[0, 0]))
        scalar = Gaussian.from_std(sigma)
        noise = scalar if dim == 1 else Gaussian.from_std(sigma, dim)
    assert isinstance(noise, Mechanism)
    return Noise(_harden(noise, sensitivity), None, None, _information(scalar))
