"""The privacy profiles of the continuous noise families: Laplace, Gaussian, and ℓ2 and multi-user Laplace.

* :class:`LaplaceProfile` — independent Laplace noise of scales bᵢ, pure ε-DP at ℓ1 sensitivity Δ: ε = Δ/min bᵢ
  (Dwork & Roth 2014, Theorem 3.6); the exact rational ε, the dp-accounting event of a scalar, the Lipschitz
  constant max 1/bᵢ in the dual norm.
* :class:`GaussianProfile` — Gaussian noise of smallest standard deviation σ at ℓ2 sensitivity Δ: the exact δ(ε)
  of the analytic Gaussian mechanism (Balle & Wang 2018, Theorem 8; :mod:`privnoise.dp.gaussian`), ρ = Δ²/(2σ²)
  (Bun & Steinke 2016, Proposition 1.6), and the exact composition of T releases into one of σ/√T (Dong, Roth &
  Su 2022, Corollary 3.3).
* :class:`NormLaplaceProfile` — ℓ2 Laplace ∝ exp(−ε₀‖v‖₂), pure ε₀Δ-DP at ℓ2 sensitivity Δ (Koufogiannis, Han &
  Pappas, Theorem 8), or its multi-user block form at the per-user sensitivity Σ‖block‖₂ (Theorem 9, with the
  Lipschitz constant of constraint (5)).

A value rounded to a lattice Λ first has its sensitivity grown by the rounding
(:func:`~privnoise.mechanisms.lattice_grid.lattice_sensitivity`), one Λ per coordinate one record moves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from ...exceptions import CalibrationError
from ...mechanisms.error_laws import ErrorLaw, GaussianError, LaplaceError
from ...mechanisms.lattice_grid import lattice_sensitivity
from ...mechanisms.parameters import smallest
from ...queries import SensitivityNorm
from ..gaussian import gaussian_delta, gaussian_epsilon
from ..norms import dual_norm
from .base import PrivacyProfile, declared_value, round_up

__all__ = ["GaussianProfile", "LaplaceProfile", "NormLaplaceProfile"]


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
