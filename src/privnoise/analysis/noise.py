"""The noise of a session's releases: one calibrated component per released aggregate, drawn centrally.

A component is additive noise for one aggregate (a count, a sum, a vector of group counts or histogram cells) of
declared sensitivity Δ, calibrated from the share of the query's budget it is given, by the session's noise family
(:mod:`privnoise.dp.families`): the smallest scale whose exact share, read from the noise's own privacy profile, is
within the share — ε in exact rationals for the families of the ε accountants ("pure", "approximate", "advanced",
"pld"; Laplace by default, ℓ1 sensitivity), ρ for those of the zCDP accountants ("zcdp", "rdp"; Gaussian by
default, ℓ2 sensitivity).

The noise is added by the noise protocol's hardened addition (:meth:`privnoise.mechanisms.Noise.add_to`): the exact
sum is rounded to a power-of-two grid, post-processing that changes no guarantee. Counts are released as integers:
``discrete`` counts get the family's variant on ℤ where it has one (Laplace: discrete Laplace noise,
P(K = j) ∝ e^{−|j|/t}, whose ε for an integer sensitivity Δ is exactly Δ/t — a shift of Δ integers changes every
log-probability by at most Δ/t; the count is an integer, so no rounding enters); other counts are rounded to the
grid 2⁰, their error round(W). The accuracy uses the exact law of either.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..dp.families import NoiseFamily
from ..mechanisms import Noise
from .accuracy import NoiseLaw

__all__ = ["Component", "calibrate"]


@dataclass(frozen=True, slots=True)
class Component:
    """Calibrated noise for one released aggregate (see the module docstring)."""

    name: str
    noise: Noise
    sensitivity: float
    share: Fraction  # the ε or ρ (the family's currency) it spends
    family: NoiseFamily  # the family it was drawn from (a family's variant on ℤ for discrete counts)
    integer: bool
    scale: float  # the family's scale parameter: b (Laplace), t (discrete Laplace, in integers), σ (Gaussian)

    @property
    def grid_exponent(self) -> int:
        return 0 if self.integer else self.noise.default_grid_exponent()

    @property
    def law(self) -> NoiseLaw:
        """The law of the released error (for accuracy)."""
        error = self.family.law(self.noise)
        assert error is not None  # a family without a law is refused when the session is built
        return NoiseLaw(error, math.ldexp(1.0, self.grid_exponent), self.integer)

    def event(self, *, scalar: bool) -> Any:
        """The privacy event of this part (:mod:`privnoise.dp.events`): the family's own on a scalar pair."""
        return self.family.event(self.noise, self.sensitivity, self.share, scalar=scalar)

    def add(self, values: Any, generator: np.random.Generator) -> NDArray[np.float64]:
        """values + noise, hardened (rounded to the grid; to integers for counts)."""
        v = np.asarray(values, dtype=float)
        return np.asarray(self.noise.add_to(v, rng=generator, grid_exponent=self.grid_exponent), dtype=float)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "sensitivity": self.sensitivity, **self.law.describe()}


@functools.lru_cache(maxsize=256)
def calibrate(name: str, family: NoiseFamily, sensitivity: float, share: Fraction, *, integer: bool = False,
              discrete: bool = False) -> Component:
    """The smallest noise of ``family`` (its variant on ℤ for ``discrete`` counts, where it has one) whose exact share
    at sensitivity Δ is within ``share``. A function of public parameters only, into a frozen component: the
    calibrations of a session's repeated queries are computed once and kept.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from privnoise.dp.families import LAPLACE
    >>> c = calibrate("count", LAPLACE, 2.0, Fraction(1, 2), integer=True)
    >>> c.scale >= 4.0, c.law.integer
    (True, True)
    """
    chosen = family.integer if discrete and family.integer is not None else family
    noise = chosen.calibrate(sensitivity, share, what=f"{chosen.name} noise for {name}")
    return Component(name, noise, sensitivity, share, chosen, integer or chosen is not family, chosen.scale(noise))
