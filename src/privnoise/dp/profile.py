"""The differential privacy of every noise family, answered by one dispatch table.

:func:`profile_of` maps a noise object to its :class:`PrivacyProfile` — in the manner of dp_accounting's events —
through the table :data:`PROFILES` (family → profile). Calibration inverses (:func:`epsilon_delta_of`), hardened
releases, accountants, Lipschitz constants and release guarantees all ask the profile; no other module switches on
the concrete noise family.

=====================================  ==========================================================================
family                                 profile (sensitivity Δ in the norm named)
=====================================  ==========================================================================
``Laplace`` (scale bᵢ)                 ε = Δ₁ / minᵢ bᵢ, δ = 0 (ℓ1 sensitivity)
``L2Laplace`` (ε₀)                     ε = ε₀ Δ₂, δ = 0 (ℓ2 sensitivity; Koufogiannis et al., Theorem 8)
``MultiUserLaplace`` (ε₀)              ε = ε₀ Δ for Δ = Σ_users ‖block‖₂ (adjacency (4), Theorem 9)
``Gaussian`` (Σ)                       exact profile at Δ₂/√λ_min(Σ) (Balle & Wang 2018; worst direction of Σ)
``DiscreteLaplace``, ``DiscreteGaussian``  their lattice profiles, the rounding of the value to the lattice included
``HardenedMechanism``                  the wrapped family's profile with the input rounded to its grid
``RaisedCosine`` and other bounded     none: bounded-support noise gives no ε-DP (a shift moves mass outside the
                                       support), so :class:`CalibrationError` is raised
=====================================  ==========================================================================

With ``grid`` = Λ, the value is rounded to Λℤ before the noise is added (a hardened release): the rounding moves it by
at most Λ/2 per coordinate, so the sensitivity grows to :func:`~privnoise.dp.lattice.lattice_sensitivity`.
"""

from __future__ import annotations

import dataclasses
import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from .._validation import check_positive, check_positive_int, check_probability
from ..exceptions import CalibrationError, InvalidParameterError
from ..guarantees import DifferentialPrivacyGuarantee
from ..mechanisms import Gaussian, L2Laplace, Laplace, MultiUserLaplace
from ..queries import Query
from .gaussian import gaussian_delta, gaussian_epsilon
from .hardening import HardenedMechanism
from .lattice import (
    DiscreteGaussian,
    DiscreteLaplace,
    discrete_gaussian_delta,
    discrete_gaussian_epsilon,
    lattice_sensitivity,
    zcdp_delta,
    zcdp_epsilon,
)

__all__ = [
    "PROFILES",
    "NoProfile",
    "PrivacyProfile",
    "dp_guarantee_for",
    "epsilon_delta_of",
    "profile_of",
    "round_up",
]

_OWNER = "epsilon_delta_of"


def round_up(value: float) -> Fraction:
    """A rational ≥ ``value`` (a computed float, possibly a few ulp low): what an exact accountant charges."""
    return Fraction(math.nextafter(value * (1.0 + 1e-12) + 1e-15, math.inf))


def _declared(value: float) -> Fraction:
    """A declared float read at the larger of its binary and shortest-decimal values (0.1 means at least 1/10)."""
    return max(Fraction(repr(float(value))), Fraction(float(value)))


class PrivacyProfile(ABC):
    """How one noise family's (ε, δ) depends on the sensitivity Δ of what it is added to."""

    __slots__ = ()
    norm: str  # the sensitivity norm: "l1", "l2" or "l1-l2"
    block: int | None = None
    pure: bool
    scale: float  # the noise scale that sets a default grid
    label: str

    @abstractmethod
    def epsilon(self, sensitivity: float, delta: float = 0.0, *, grid: float | None = None) -> float:
        """The smallest ε of (ε, δ)-DP at sensitivity Δ (value rounded to Λℤ first when ``grid`` = Λ)."""

    def delta(self, epsilon: float, sensitivity: float, *, grid: float | None = None) -> float:
        """The smallest δ of (ε, δ)-DP at sensitivity Δ: for pure noise 0 at or above its ε (no δ(ε) profile is
        computed below it, 1 there); Gaussian-type profiles give their exact δ(ε)."""
        return 0.0 if epsilon >= self.epsilon(sensitivity, grid=grid) else 1.0

    def epsilon_fraction(self, sensitivity: float, *, grid: float | None = None) -> Fraction:
        """The pure ε as an exact rational upper bound (what an exact accountant charges)."""
        if not self.pure:
            raise CalibrationError(f"{self.label} noise gives no pure ε-DP.")
        return round_up(self.epsilon(sensitivity, grid=grid))

    def event(self, sensitivity: float, *, grid: float | None = None, mode: str = "pld") -> Any:
        """The dp_accounting event of one release (None when dp-accounting has none for this family)."""
        return None

    def rho(self, sensitivity: float, *, grid: float | None = None) -> Fraction | None:
        """The ρ of ρ-zCDP as an exact rational upper bound: ε²/2 for pure ε-DP noise (Bun & Steinke 2016,
        Proposition 1.4); Gaussian-type families give Δ²/(2σ²); None when no zCDP statement is known."""
        if not self.pure:
            return None
        eps = self.epsilon_fraction(sensitivity, grid=grid)
        return eps * eps / 2

    def lipschitz(self, norm: str, block: int | None) -> tuple[float, str] | None:
        """The Lipschitz constant sup ‖∇log g‖_* in closed form, with its reason (None when unknown)."""
        return None

    def touching(self, coordinates: int) -> PrivacyProfile:
        """The profile for a query one record of which moves at most ``coordinates`` outputs (the identity moves
        one): only the rounding to a lattice depends on it, one Λ per moved coordinate."""
        if "touched" not in getattr(self, "__dataclass_fields__", {}):
            return self
        return dataclasses.replace(self, touched=coordinates)  # type: ignore[type-var]

    @property
    def moved(self) -> int:
        """The coordinates one record moves (all of them unless the query says fewer)."""
        touched = getattr(self, "touched", None)
        return int(touched if touched is not None else getattr(self, "dim", 1))

    def composed(self, count: int) -> PrivacyProfile | None:
        """The profile of ``count`` adaptive releases when they compose exactly into one of this kind, else None."""
        return None

    def guarantee(self, sensitivity: float, delta: float = 0.0, *, grid: float | None = None) -> DifferentialPrivacyGuarantee:
        """The :class:`~privnoise.guarantees.DifferentialPrivacyGuarantee` at sensitivity Δ (δ ignored when pure)."""
        names = {"l1": "ℓ1", "l2": "ℓ2", "l1-l2": "per-user ℓ2 (Σ‖block‖₂)"}
        adjacency = f"{names[self.norm]} sensitivity {sensitivity:g}"
        if grid:
            adjacency += f", value rounded to the grid {grid:g}"
        if self.pure:
            return DifferentialPrivacyGuarantee(self.epsilon(sensitivity, grid=grid), 0.0, adjacency)
        if delta == 0.0:
            raise CalibrationError(f"{self.label} noise gives no pure ε-DP; pass delta > 0.")
        return DifferentialPrivacyGuarantee(self.epsilon(sensitivity, delta, grid=grid), delta, adjacency)


@dataclass(frozen=True, slots=True)
class NoProfile(PrivacyProfile):
    """A family without a differential-privacy guarantee (bounded support, or none known)."""

    reason: str
    scale: float = 1.0
    norm: str = "l2"
    pure: bool = False
    label: str = "this"

    def epsilon(self, sensitivity: float, delta: float = 0.0, *, grid: float | None = None) -> float:
        raise CalibrationError(self.reason)

    def delta(self, epsilon: float, sensitivity: float, *, grid: float | None = None) -> float:
        raise CalibrationError(self.reason)

    def guarantee(self, sensitivity: float, delta: float = 0.0, *, grid: float | None = None) -> DifferentialPrivacyGuarantee:
        raise CalibrationError(self.reason)


@dataclass(frozen=True, slots=True)
class LaplaceProfile(PrivacyProfile):
    """Independent Laplace noise of scales bᵢ (ℓ1 sensitivity; Dwork & Roth, Theorem 3.6)."""

    scales: np.ndarray
    dim: int
    norm: str = "l1"
    pure: bool = True
    label: str = "Laplace"
    touched: int | None = None
    scale: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", float(np.min(self.scales)))

    def _uniform(self) -> bool:
        b = self.scales
        return bool(b.strides == (0,) or b.size == 1 or np.all(b == b.flat[0]))

    def epsilon(self, sensitivity: float, delta: float = 0.0, *, grid: float | None = None) -> float:
        if not grid:
            return sensitivity / self.scale
        if self._uniform():
            return lattice_sensitivity(sensitivity, grid, dim=self.moved) * grid / self.scale
        return float(sensitivity / self.scale + grid * np.sum(1.0 / self.scales))

    def epsilon_fraction(self, sensitivity: float, *, grid: float | None = None) -> Fraction:
        if not grid:
            return _declared(sensitivity) / Fraction(self.scale)
        g = Fraction(grid)
        if self._uniform():
            units = Fraction(int(lattice_sensitivity(sensitivity, grid, dim=self.moved)))
            return units * g / Fraction(self.scale)
        inverse = sum((1 / Fraction(float(v)) for v in np.ravel(self.scales)), Fraction(0))
        return Fraction(sensitivity) / Fraction(self.scale) + g * inverse

    def event(self, sensitivity: float, *, grid: float | None = None, mode: str = "pld") -> Any:
        if self.dim != 1:
            return None
        import dp_accounting

        sens = sensitivity if not grid else lattice_sensitivity(sensitivity, grid) * grid
        return dp_accounting.LaplaceDpEvent(self.scale / sens)

    def lipschitz(self, norm: str, block: int | None) -> tuple[float, str] | None:
        from .lipschitz import dual_norm

        inverse = np.atleast_1d(1.0 / np.asarray(self.scales, dtype=float))  # |score_i| = 1/b_i a.e.
        return float(dual_norm(inverse, norm, block=block)), "Laplace: |∂ᵢ log g| = 1/bᵢ a.e."  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class GaussianProfile(PrivacyProfile):
    """Gaussian noise with smallest standard deviation σ (ℓ2 sensitivity; Balle & Wang 2018, Theorem 8)."""

    sigma: float
    dim: int
    norm: str = "l2"
    pure: bool = False
    label: str = "Gaussian"
    touched: int | None = None
    scale: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", self.sigma)

    def _sensitivity(self, sensitivity: float, grid: float | None) -> float:
        if not grid:
            return sensitivity
        return lattice_sensitivity(sensitivity, grid, dim=self.moved, norm="l2") * grid

    def epsilon(self, sensitivity: float, delta: float = 0.0, *, grid: float | None = None) -> float:
        if delta == 0.0:
            raise CalibrationError("Gaussian noise gives no pure ε-DP; pass delta > 0.")
        return gaussian_epsilon(self.sigma, delta, sensitivity=self._sensitivity(sensitivity, grid))

    def delta(self, epsilon: float, sensitivity: float, *, grid: float | None = None) -> float:
        return gaussian_delta(self.sigma, epsilon, sensitivity=self._sensitivity(sensitivity, grid))

    def event(self, sensitivity: float, *, grid: float | None = None, mode: str = "pld") -> Any:
        import dp_accounting

        return dp_accounting.GaussianDpEvent(self.sigma / self._sensitivity(sensitivity, grid))

    def lipschitz(self, norm: str, block: int | None) -> tuple[float, str] | None:
        return math.inf, "Gaussian score Σ⁻¹(w − μ) is unbounded"

    def rho(self, sensitivity: float, *, grid: float | None = None) -> Fraction | None:
        """ρ = Δ²/(2σ²) (Bun & Steinke 2016, Proposition 1.6), the rounding to ``grid`` included."""
        return round_up(self._sensitivity(sensitivity, grid) ** 2 / (2.0 * self.sigma**2))

    def composed(self, count: int) -> GaussianProfile:
        """T adaptive Gaussian releases compose exactly to one of σ/√T (Dong, Roth & Su 2022, Corollary 3.3)."""
        return GaussianProfile(self.sigma / math.sqrt(count), self.dim)


@dataclass(frozen=True, slots=True)
class NormLaplaceProfile(PrivacyProfile):
    """ℓ2 Laplace ∝ exp(−ε₀‖v‖₂) (Theorem 8) or its multi-user block form (Theorem 9, norm "l1-l2")."""

    epsilon_per_unit: float
    dim: int
    norm: str = "l2"
    block: int | None = None
    users: int = 1
    pure: bool = True
    label: str = "ℓ2 Laplace"
    touched: int | None = None
    scale: float = field(init=False)

    def __post_init__(self) -> None:
        size = self.block or self.dim
        object.__setattr__(self, "scale", math.sqrt(size + 1.0) / self.epsilon_per_unit)

    def epsilon(self, sensitivity: float, delta: float = 0.0, *, grid: float | None = None) -> float:
        if grid:
            sensitivity = lattice_sensitivity(sensitivity, grid, dim=self.moved, norm="l2") * grid
        return self.epsilon_per_unit * sensitivity

    def lipschitz(self, norm: str, block: int | None) -> tuple[float, str] | None:
        eps = self.epsilon_per_unit
        if self.block is None:  # sup over unit directions û of ‖ε û‖_*
            factor = math.sqrt(self.dim) if norm == "linf" else 1.0
            return eps * factor, "ℓ2 Laplace: ∇log g = −ε v/‖v‖₂ (sup of ‖ε û‖_* over unit û)"
        reason = "multi-user Laplace: block i of ∇log g is −ε vᵢ/‖vᵢ‖₂"
        if norm == "l1":
            return eps, reason
        if norm == "l2":
            return eps * math.sqrt(self.users), reason
        if norm == "linf":
            return eps * self.users * math.sqrt(self.block), reason
        if block == self.block:
            return eps, reason + " (constraint (5))"
        return None


@dataclass(frozen=True, slots=True)
class DiscreteLaplaceProfile(PrivacyProfile):
    """Discrete Laplace of scale b on Λℤ (the value is always rounded to the lattice)."""

    lattice_scale: float
    lattice_grid: float
    dim: int
    norm: str = "l1"
    pure: bool = True
    label: str = "discrete Laplace"
    touched: int | None = None
    scale: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", self.lattice_scale)

    def epsilon(self, sensitivity: float, delta: float = 0.0, *, grid: float | None = None) -> float:
        g = self.lattice_grid
        return lattice_sensitivity(sensitivity, g, dim=self.moved) * g / self.lattice_scale

    def epsilon_fraction(self, sensitivity: float, *, grid: float | None = None) -> Fraction:
        g = self.lattice_grid
        units = Fraction(int(lattice_sensitivity(sensitivity, g, dim=self.moved)))
        return units * Fraction(g) / Fraction(self.lattice_scale)


@dataclass(frozen=True, slots=True)
class DiscreteGaussianProfile(PrivacyProfile):
    """Discrete Gaussian N_ℤ(0, σ²) on Λℤ: the exact δ(ε) for scalars (Canonne, Kamath & Steinke, Theorem 7), its
    zCDP bound for vectors (Theorem 14 and Corollary 13)."""

    sigma: float
    lattice_grid: float
    dim: int
    norm: str = "l2"
    pure: bool = False
    label: str = "discrete Gaussian"
    touched: int | None = None
    scale: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", self.sigma)

    def _rho(self, sensitivity: float) -> float:
        sens = lattice_sensitivity(sensitivity, self.lattice_grid, dim=self.moved, norm="l2") * self.lattice_grid
        return sens**2 / (2.0 * self.sigma**2)

    def epsilon(self, sensitivity: float, delta: float = 0.0, *, grid: float | None = None) -> float:
        if delta == 0.0:
            raise CalibrationError("Gaussian-type noise gives no pure ε-DP; pass delta > 0.")
        if self.moved > 1:
            return zcdp_epsilon(self._rho(sensitivity), delta)
        units = lattice_sensitivity(sensitivity, self.lattice_grid)
        return discrete_gaussian_epsilon(self.sigma / self.lattice_grid, delta, sensitivity=units)

    def delta(self, epsilon: float, sensitivity: float, *, grid: float | None = None) -> float:
        if self.moved > 1:
            return zcdp_delta(self._rho(sensitivity), epsilon)
        units = lattice_sensitivity(sensitivity, self.lattice_grid)
        return discrete_gaussian_delta(self.sigma / self.lattice_grid, epsilon, sensitivity=units)

    def rho(self, sensitivity: float, *, grid: float | None = None) -> Fraction | None:
        """ρ = Δ²/(2σ²) of the discrete Gaussian (Canonne, Kamath & Steinke 2020, Theorem 14)."""
        return round_up(self._rho(sensitivity))

    def event(self, sensitivity: float, *, grid: float | None = None, mode: str = "pld") -> Any:
        if mode != "rdp":
            return None
        import dp_accounting

        return dp_accounting.ZCDpEvent(self._rho(sensitivity))  # CKS20 Theorem 14


@dataclass(frozen=True, slots=True)
class RoundedProfile(PrivacyProfile):
    """A hardened release: the wrapped family's profile with the value rounded to the grid Λ first."""

    inner: PrivacyProfile
    grid: float
    label: str = "hardened"
    norm: str = field(init=False)
    pure: bool = field(init=False)
    scale: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "norm", self.inner.norm)
        object.__setattr__(self, "pure", self.inner.pure)
        object.__setattr__(self, "scale", self.inner.scale)

    def touching(self, coordinates: int) -> RoundedProfile:
        return RoundedProfile(self.inner.touching(coordinates), self.grid)

    def epsilon(self, sensitivity: float, delta: float = 0.0, *, grid: float | None = None) -> float:
        return self.inner.epsilon(sensitivity, delta, grid=self.grid)

    def delta(self, epsilon: float, sensitivity: float, *, grid: float | None = None) -> float:
        return self.inner.delta(epsilon, sensitivity, grid=self.grid)

    def epsilon_fraction(self, sensitivity: float, *, grid: float | None = None) -> Fraction:
        return self.inner.epsilon_fraction(sensitivity, grid=self.grid)

    def event(self, sensitivity: float, *, grid: float | None = None, mode: str = "pld") -> Any:
        return self.inner.event(sensitivity, grid=self.grid, mode=mode)

    def rho(self, sensitivity: float, *, grid: float | None = None) -> Fraction | None:
        return self.inner.rho(sensitivity, grid=self.grid)

    def guarantee(self, sensitivity: float, delta: float = 0.0, *, grid: float | None = None) -> DifferentialPrivacyGuarantee:
        return self.inner.guarantee(sensitivity, delta, grid=self.grid)


def _laplace(noise: Laplace) -> PrivacyProfile:
    return LaplaceProfile(np.atleast_1d(noise.scale), noise.dim)


def _gaussian(noise: Gaussian) -> PrivacyProfile:
    return GaussianProfile(noise.noise_scale(), noise.dim)


def _l2_laplace(noise: L2Laplace) -> PrivacyProfile:
    return NormLaplaceProfile(noise.epsilon, noise.dim)


def _multi_user(noise: MultiUserLaplace) -> PrivacyProfile:
    return NormLaplaceProfile(
        noise.epsilon, noise.dim, norm="l1-l2", block=noise.user_dim, users=noise.users, label="multi-user Laplace"
    )


def _discrete_laplace(noise: DiscreteLaplace) -> PrivacyProfile:
    return DiscreteLaplaceProfile(noise.scale, noise.grid, noise.dim)


def _discrete_gaussian(noise: DiscreteGaussian) -> PrivacyProfile:
    return DiscreteGaussianProfile(noise.sigma, noise.grid, noise.dim)


def _hardened(noise: HardenedMechanism) -> PrivacyProfile:
    return RoundedProfile(profile_of(noise.mechanism), noise.grid)


#: The dispatch table: noise family → its privacy profile. The one place that names concrete families.
PROFILES: dict[type, Callable[[Any], PrivacyProfile]] = {
    Laplace: _laplace,
    Gaussian: _gaussian,
    L2Laplace: _l2_laplace,
    MultiUserLaplace: _multi_user,
    DiscreteLaplace: _discrete_laplace,
    DiscreteGaussian: _discrete_gaussian,
    HardenedMechanism: _hardened,
}


def profile_of(noise: Any) -> PrivacyProfile:
    """The :class:`PrivacyProfile` of a noise object (:class:`NoProfile` when it has none)."""
    for family in type(noise).__mro__:
        build = PROFILES.get(family)
        if build is not None:
            return build(noise)
    name = getattr(noise, "name", type(noise).__name__)
    support = getattr(noise, "support", None)
    if support is not None:
        low, high = support()
        if np.all(np.isfinite(low)) or np.all(np.isfinite(high)):
            return NoProfile(
                f"{name} has bounded support: a shifted input puts mass where the original has none, so no "
                "ε-differential privacy holds. Its guarantee is Fisher-information privacy.",
                scale=noise.noise_scale(),
            )
    scale = noise.noise_scale() if hasattr(noise, "noise_scale") else 1.0
    return NoProfile(f"no differential-privacy guarantee is known for {name}.", scale=scale)


def epsilon_delta_of(
    mechanism: Any, *, sensitivity: float, delta: float = 0.0, coordinates: int | None = None
) -> DifferentialPrivacyGuarantee:
    """The (ε, δ) differential privacy of ``mechanism`` for a query of the given sensitivity.

    Parameters
    ----------
    mechanism : Noise
        The noise (a mechanism, lattice noise or a hardened mechanism).
    sensitivity : float
        Δ > 0: ℓ1 for Laplace, ℓ2 for the Gaussian and ℓ2 Laplace, Σ_users ‖·‖₂ for multi-user Laplace.
    delta : float, default 0
        The δ at which ε is wanted (Gaussian-type noise needs δ > 0; pure mechanisms report δ = 0).
    coordinates : int, optional
        How many coordinates one record moves (the query's ``changed_outputs()``; all of them by default). Only the
        rounding to a lattice depends on it.

    Returns
    -------
    DifferentialPrivacyGuarantee

    Raises
    ------
    CalibrationError
        For Gaussian noise with δ = 0, and for bounded-support noise (no ε exists).

    Examples
    --------
    >>> from privnoise import dp
    >>> g = dp.gaussian_for_epsilon_delta(1.0, 1e-6, sensitivity=1.0)
    >>> round(epsilon_delta_of(g, sensitivity=1.0, delta=1e-6).epsilon, 9)
    1.0
    >>> epsilon_delta_of(dp.laplace_for_epsilon(0.5, sensitivity=2.0), sensitivity=2.0).epsilon
    0.5
    """
    from ..mechanisms import Noise

    sens = check_positive(sensitivity, "sensitivity", _OWNER)
    dl = check_probability(delta, "delta", _OWNER)
    if not isinstance(mechanism, Noise):
        raise InvalidParameterError(
            f"`mechanism` of `{_OWNER}` must be a privnoise mechanism; got {type(mechanism).__name__}."
        )
    profile = profile_of(mechanism)
    if coordinates is not None:
        profile = profile.touching(check_positive_int(coordinates, "coordinates", _OWNER))
    return profile.guarantee(sens, dl)


def dp_guarantee_for(noise: Any, query: Query, *, delta: float | None = None) -> DifferentialPrivacyGuarantee | None:
    """The DP guarantee of ``query(x) + noise`` at the query's declared sensitivity, or None where none holds: no
    profile, no declared bounds (or Jacobian bound), or Gaussian-type noise without a ``delta``."""
    profile = profile_of(noise)
    if isinstance(profile, NoProfile) or query.bounds is None:
        return None
    profile = profile.touching(query.changed_outputs())
    if not profile.pure and not delta:
        return None
    try:
        sensitivity = query.sensitivity(profile.norm, block=profile.block)
    except InvalidParameterError:
        return None
    if sensitivity <= 0:
        return None
    dl = 0.0 if profile.pure else check_probability(delta, "delta", "release")
    guarantee = profile.guarantee(sensitivity, dl)
    bounds = query.bounds
    return DifferentialPrivacyGuarantee(
        guarantee.epsilon,
        guarantee.delta,
        f"one record changes within [{bounds.lower:g}, {bounds.upper:g}] ({guarantee.adjacency})",
    )
