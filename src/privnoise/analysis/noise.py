"""The noise of a session's releases: one calibrated component per released aggregate, drawn centrally.

A component is additive noise for one aggregate (a count, a sum, a vector of group counts or histogram cells) of
declared sensitivity Δ, calibrated from the share of the query's budget it is given:

* **Laplace family** (accountants "pure", "approximate", "advanced", "pld"): Laplace noise of scale b with
  Δ₁/b ≤ ε_share, checked in exact rationals through the noise's privacy profile
  (:func:`privnoise.dp.profile_of`); ℓ1 sensitivity.
* **Gaussian family** ("zcdp", "rdp"): Gaussian noise of standard deviation σ with Δ₂²/(2σ²) ≤ ρ_share, checked the
  same way; ℓ2 sensitivity.

The noise is added by the noise protocol's hardened addition (:meth:`privnoise.mechanisms.Noise.add_to`): the exact
sum is rounded to a power-of-two grid, post-processing that changes no guarantee. Counts are released as integers:
``discrete`` counts of the Laplace family get discrete Laplace (geometric) noise on ℤ,
P(K = j) ∝ e^{−|j|/t}, whose ε for an integer sensitivity Δ is exactly Δ/t (a shift of Δ integers changes every
log-probability by at most Δ/t; the count is an integer, so no rounding enters); other counts are rounded to the
grid 2⁰, their error round(W). The accuracy uses the exact law of either.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from ..dp.calibration import safe_side
from ..dp.lattice import DiscreteLaplace
from ..dp.profile import profile_of
from ..mechanisms import Gaussian, Laplace, Noise
from .accuracy import NoiseLaw

__all__ = ["Component", "calibrate"]

Family = Literal["laplace", "gaussian"]


@dataclass(frozen=True, slots=True)
class Component:
    """Calibrated noise for one released aggregate (see the module docstring)."""

    name: str
    noise: Noise
    sensitivity: float
    share: Fraction  # the ε (Laplace family) or ρ (Gaussian family) it spends
    family: Family
    integer: bool
    scale: float  # b (Laplace), t (discrete Laplace, in integers) or σ (Gaussian)
    discrete: bool = False

    @property
    def grid_exponent(self) -> int:
        return 0 if self.integer else self.noise.default_grid_exponent()

    @property
    def law(self) -> NoiseLaw:
        """The law of the released error (for accuracy)."""
        family: Any = "discrete-laplace" if self.discrete else self.family
        return NoiseLaw(family, self.scale, math.ldexp(1.0, self.grid_exponent), self.integer)

    def add(self, values: Any, generator: np.random.Generator) -> NDArray[np.float64]:
        """values + noise, hardened (rounded to the grid; to integers for counts)."""
        v = np.asarray(values, dtype=float)
        return np.asarray(self.noise.add_to(v, rng=generator, grid_exponent=self.grid_exponent), dtype=float)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "sensitivity": self.sensitivity, **self.law.describe()}


def calibrate(name: str, family: Family, sensitivity: float, share: Fraction, *, integer: bool = False,
              discrete: bool = False) -> Component:
    """The smallest noise whose exact ε (Laplace, ℓ1 Δ) or ρ (Gaussian, ℓ2 Δ) is within ``share``.

    Examples
    --------
    >>> from fractions import Fraction
    >>> c = calibrate("count", "laplace", 2.0, Fraction(1, 2), integer=True)
    >>> c.scale >= 4.0, c.law.integer
    (True, True)
    """
    if family == "laplace" and discrete:
        units = Fraction(int(sensitivity))
        if units != Fraction(sensitivity):
            raise ValueError("discrete Laplace noise needs an integer sensitivity")  # pragma: no cover

        def geometric_holds(t: float) -> bool:
            return units / Fraction(t) <= share  # ε = Δ/t exactly for integer data

        t = safe_side(float(units / share), geometric_holds, what=f"discrete Laplace noise for {name}")
        return Component(name, DiscreteLaplace(scale=t, grid_exponent=0), sensitivity, share, family, True, t, True)
    if family == "laplace":
        start = float(Fraction(sensitivity) / share)

        def laplace_holds(b: float) -> bool:
            return profile_of(Laplace(scale=b)).epsilon_fraction(sensitivity) <= share

        b = safe_side(start, laplace_holds, what=f"Laplace noise for {name}")
        return Component(name, Laplace(scale=b), sensitivity, share, family, integer, b)
    start = sensitivity / math.sqrt(2.0 * float(share))

    def gaussian_holds(s: float) -> bool:
        rho = profile_of(Gaussian.from_std(s)).rho(sensitivity)
        return rho is not None and rho <= share

    sigma = safe_side(start, gaussian_holds, what=f"Gaussian noise for {name}")
    return Component(name, Gaussian.from_std(sigma), sensitivity, share, family, integer, sigma)
