"""The privacy profile interface, and the two profiles that are not a noise family's own: none, and rounded.

A profile is the value :func:`privnoise.dp.profile.profile_of` returns for a noise object (through the dispatch
table there): the ε and δ at a sensitivity, the exact rational ε an accountant charges, the dp-accounting event,
the Lipschitz constant, the exact composition of repeated releases, and the rounding to a lattice Λ when the value
is rounded before the noise is added (one Λ per output one record moves, :meth:`PrivacyProfile.touching`).

* :class:`PrivacyProfile` — the interface, with the defaults of pure ε-DP noise: δ(ε) a step at ε, the exact
  rational ε (:func:`round_up`), ρ = ε²/2 of zCDP (Bun & Steinke 2016, Proposition 1.4), the guarantee.
* :class:`NoProfile` — a family without a differential-privacy guarantee: every question raises its reason.
* :class:`RoundedProfile` — a hardened release: the wrapped family's profile at the grid Λ the value is rounded to
  (:mod:`privnoise.mechanisms.hardening`).

The families' own profiles are in :mod:`privnoise.dp.privacy_profiles.continuous` (Laplace, Gaussian, ℓ2 and
multi-user Laplace) and :mod:`privnoise.dp.privacy_profiles.discrete` (discrete Laplace and Gaussian).
"""

from __future__ import annotations

import dataclasses
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ...exceptions import CalibrationError
from ...guarantees import DifferentialPrivacyGuarantee
from ...mechanisms.error_laws import ErrorLaw
from ...queries import SensitivityNorm

__all__ = ["NoProfile", "PrivacyProfile", "RoundedProfile", "declared_value", "round_up"]


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
