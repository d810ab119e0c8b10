"""The privacy profiles of lattice noise: discrete Laplace and discrete Gaussian on Λℤ.

The value is always rounded to the noise's own lattice Λ, so the sensitivity is always the lattice sensitivity
(:func:`~privnoise.mechanisms.lattice_grid.lattice_sensitivity`), one Λ per coordinate one record moves.

* :class:`DiscreteLaplaceProfile` — pure ε-DP with ε = (⌊Δ/Λ⌋ + m)·Λ/b, and its exact rational value.
* :class:`DiscreteGaussianProfile` — the exact δ(ε) of the scalar discrete Gaussian (Canonne, Kamath & Steinke
  2020, Theorem 7), and for vectors its ρ = Δ²/(2σ²) of zCDP (Theorem 14) converted to (ε, δ) (Corollary 13);
  :mod:`privnoise.dp.lattice_privacy`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ...exceptions import CalibrationError
from ...mechanisms.error_laws import ErrorLaw, LaplaceError
from ...mechanisms.lattice_grid import lattice_sensitivity
from ...queries import SensitivityNorm
from ..lattice_privacy import discrete_gaussian_delta, discrete_gaussian_epsilon, zcdp_delta, zcdp_epsilon
from .base import PrivacyProfile, round_up

__all__ = ["DiscreteGaussianProfile", "DiscreteLaplaceProfile"]


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
