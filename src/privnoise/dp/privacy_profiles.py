"""The privacy profiles of the noise families: how each one's (ε, δ) depends on the sensitivity it meets.

A profile is the value :func:`privnoise.dp.profile.profile_of` returns for a noise object (through the dispatch
table there): the ε and δ at a sensitivity, the exact rational ε an accountant charges, the dp-accounting event,
the Lipschitz constant, the exact composition of repeated releases, and the rounding to a lattice Λ when the value
is rounded before the noise is added (one Λ per output one record moves, :meth:`PrivacyProfile.touching`).
"""

from __future__ import annotations

import dataclasses
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from ..exceptions import CalibrationError
from ..guarantees import DifferentialPrivacyGuarantee
from ..mechanisms.error_laws import ErrorLaw, GaussianError, LaplaceError
from ..mechanisms.parameters import smallest
from ..queries import SensitivityNorm
from .gaussian import gaussian_delta, gaussian_epsilon
from .lattice import (
    discrete_gaussian_delta,
    discrete_gaussian_epsilon,
    lattice_sensitivity,
    zcdp_delta,
    zcdp_epsilon,
)
from .norms import dual_norm

__all__ = [
    "DiscreteGaussianProfile",
    "DiscreteLaplaceProfile",
    "GaussianProfile",
    "LaplaceProfile",
    "NoProfile",
    "NormLaplaceProfile",
    "PrivacyProfile",
    "RoundedProfile",
    "declared_value",
    "round_up",
]


def round_up(value: float) -> Fraction:
    """A rational ≥ ``value`` (a computed float, possibly a few ulp low): what an exact accountant charges."""
    return Fraction(math.nextafter(value * (1.0 + 1e-12) + 1e-15, math.inf))


def declared_value(value: float) -> Fraction:
    """A declared float read at the larger of its binary and shortest-decimal values (0.1 means at least 1/10)."""
    return max(Fraction(repr(float(value))), Fraction(float(value)))


class PrivacyProfile(ABC):
    """How one noise family's (ε, δ) depends on the sensitivity Δ of what it is added to."""

    __slots__ = ()
    norm: SensitivityNorm  # the sensitivity norm: "l1", "l2" or "l1-l2"
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

    @property
    def gaussian_curve(self) -> bool:
        """Whether the privacy loss of one release *is* that of the continuous Gaussian mechanism at
        Δ/σ = √(2ρ) (then T adaptive releases compose exactly into one such mechanism, Dong, Roth & Su 2022,
        Corollary 3.3, and a zCDP total converts through the exact Gaussian profile). Only continuous Gaussian
        noise says yes: the discrete Gaussian has the same ρ but leaks more at every (ε, δ) (Canonne, Kamath &
        Steinke 2020, Figure 1), pure families have other curves."""
        return False

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

    def error_law(self) -> ErrorLaw | None:
        """A law whose two-sided tails bound those of every coordinate of the noise, for the accuracy an answer
        states (:mod:`privnoise.mechanisms.error_laws`: Laplace of scale b or Gaussian of σ at the largest coordinate
        scale); None when privnoise states no interval for this family (then an answer says so rather than borrow
        another family's law)."""
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
    norm: SensitivityNorm = "l2"
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
    norm: SensitivityNorm = "l1"
    pure: bool = True
    label: str = "Laplace"
    touched: int | None = None
    scale: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", smallest(self.scales))

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
            return declared_value(sensitivity) / Fraction(self.scale)
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

    def error_law(self) -> ErrorLaw | None:
        return LaplaceError(float(np.max(self.scales)))

    def lipschitz(self, norm: str, block: int | None) -> tuple[float, str] | None:
        inverse = np.atleast_1d(1.0 / np.asarray(self.scales, dtype=float))  # |score_i| = 1/b_i a.e.
        return float(dual_norm(inverse, norm, block=block)), "Laplace: |∂ᵢ log g| = 1/bᵢ a.e."  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class GaussianProfile(PrivacyProfile):
    """Gaussian noise with smallest standard deviation σ (ℓ2 sensitivity; Balle & Wang 2018, Theorem 8)."""

    sigma: float
    dim: int
    norm: SensitivityNorm = "l2"
    pure: bool = False
    label: str = "Gaussian"
    touched: int | None = None
    marginal: float | None = None  # the largest standard deviation of a coordinate (σ when None: isotropic)
    scale: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", self.sigma)

    def error_law(self) -> ErrorLaw | None:
        return GaussianError(float(self.sigma if self.marginal is None else max(self.marginal, self.sigma)))

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

    @property
    def gaussian_curve(self) -> bool:
        return True

    def lipschitz(self, norm: str, block: int | None) -> tuple[float, str] | None:
        return math.inf, "Gaussian score Σ⁻¹(w − μ) is unbounded"

    def rho(self, sensitivity: float, *, grid: float | None = None) -> Fraction | None:
        """ρ = Δ²/(2σ²) (Bun & Steinke 2016, Proposition 1.6), the rounding to ``grid`` included."""
        return round_up(self._sensitivity(sensitivity, grid) ** 2 / (2.0 * self.sigma**2))

    def composed(self, count: int) -> GaussianProfile:
        """T adaptive Gaussian releases compose exactly to one of σ/√T (Dong, Roth & Su 2022, Corollary 3.3)."""
        marginal = None if self.marginal is None else self.marginal / math.sqrt(count)
        return GaussianProfile(self.sigma / math.sqrt(count), self.dim, marginal=marginal)


@dataclass(frozen=True, slots=True)
class NormLaplaceProfile(PrivacyProfile):
    """ℓ2 Laplace ∝ exp(−ε₀‖v‖₂) (Theorem 8) or its multi-user block form (Theorem 9, norm "l1-l2")."""

    epsilon_per_unit: float
    dim: int
    norm: SensitivityNorm = "l2"
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

    def error_law(self) -> ErrorLaw | None:
        # In one dimension exp(−ε₀|v|) is Laplace of scale 1/ε₀; a coordinate of a vector has another law.
        return LaplaceError(1.0 / self.epsilon_per_unit) if (self.block or self.dim) == 1 else None

    def epsilon_fraction(self, sensitivity: float, *, grid: float | None = None) -> Fraction:
        if grid:
            return round_up(self.epsilon(sensitivity, grid=grid))
        return Fraction(self.epsilon_per_unit) * declared_value(sensitivity)  # exact: ε₀ as drawn times Δ as declared

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
    norm: SensitivityNorm = "l1"
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

    def error_law(self) -> ErrorLaw | None:
        # P(K ≥ m) = q^m/(1 + q) ≤ q^{m − 1/2}/2 (q = e^{−Λ/b}, AM–GM): no heavier than Laplace(b) rounded to Λ.
        return LaplaceError(self.lattice_scale)


@dataclass(frozen=True, slots=True)
class DiscreteGaussianProfile(PrivacyProfile):
    """Discrete Gaussian N_ℤ(0, σ²) on Λℤ: the exact δ(ε) for scalars (Canonne, Kamath & Steinke, Theorem 7), its
    zCDP bound for vectors (Theorem 14 and Corollary 13)."""

    sigma: float
    lattice_grid: float
    dim: int
    norm: SensitivityNorm = "l2"
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
    norm: SensitivityNorm = field(init=False)
    pure: bool = field(init=False)
    scale: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "norm", self.inner.norm)
        object.__setattr__(self, "pure", self.inner.pure)
        object.__setattr__(self, "scale", self.inner.scale)

    def touching(self, coordinates: int) -> RoundedProfile:
        return RoundedProfile(self.inner.touching(coordinates), self.grid)

    def error_law(self) -> ErrorLaw | None:
        return self.inner.error_law()

    @property
    def gaussian_curve(self) -> bool:
        return self.inner.gaussian_curve  # rounding the input only enlarges the sensitivity; the output is a
        # post-processing of the wrapped noise added to the rounded value

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
