"""A component: one released aggregate with its calibrated noise, the unit every plan is made of.

A component is additive noise for one aggregate (a count, a sum, a vector of group counts or histogram cells, the
records themselves) of declared sensitivity Δ under the plan's neighbours (:mod:`privnoise.core.adjacency`). The
analyst's :class:`~privnoise.Session` calibrates its components here, from the share of the query's budget each is
given, by the session's noise family (:mod:`privnoise.dp.families`): the smallest scale whose exact share, read from
the noise's own privacy profile, is within the share — ε in exact rationals for the families of the ε accountants
("pure", "approximate", "advanced", "pld"; Laplace by default, ℓ1 sensitivity), ρ for those of the zCDP accountants
("zcdp", "rdp"; Gaussian by default, ℓ2 sensitivity). The query server's components are the same type, holding
the hardened noise of a policy (``server.mechanisms``), the Fisher information 𝓘_w of that noise and the slope of
the aggregate in each column (Farokhi & Sandberg, Proposition 1: a record's information is slope² 𝓘_w), and the
number of cells ``dim`` of a vector aggregate.

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
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Generic, TypeVar

import numpy as np
from numpy.typing import NDArray

from ..dp.families import NoiseFamily
from ..mechanisms import Noise
from .accuracy import NoiseLaw

__all__ = ["Component", "calibrate"]

#: The noise a component holds: any noise of the protocol (the server's components hold hardened noise).
NoiseT = TypeVar("NoiseT", bound=Noise)


@dataclass(frozen=True, slots=True, kw_only=True)
class Component(Generic[NoiseT]):
    """Calibrated noise for one released aggregate (see the module docstring).

    ``share`` is the ε or ρ (the family's currency) it spends and ``family`` the family it was drawn from (a
    family's variant on ℤ for discrete counts); a component of a policy's noise that no family calibrated (the
    server's Fisher designs, an owner's own noise) has neither. ``scale`` is the family's scale parameter: b
    (Laplace), t (discrete Laplace, in integers), σ (Gaussian). ``information`` is 𝓘_w of the noise (per
    coordinate), ``slopes`` the aggregate's slope in each column it reads, ``dim`` its number of cells.
    ``exponent`` is the grid 2^k its outputs are snapped to when its builder chose one (a direct release coarsens the
    noise's own grid until the query's declared outputs fit; None: the noise's default), and ``hardened`` False adds
    the raw floating-point noise (research on the unhardened release only). The ``sensitivity`` of a component
    whose guarantee its builder states (a direct release of any design) may be None.
    """

    name: str
    noise: NoiseT
    sensitivity: float | None
    share: Fraction | None = None
    family: NoiseFamily | None = None
    integer: bool = False
    scale: float | None = None
    dim: int = 1
    information: float | None = None
    slopes: Mapping[str, float] = field(default_factory=dict)
    exponent: int | None = None
    hardened: bool = True
    # What is derived from the fields above (grid, law, events), computed once: the component is frozen, and a
    # calibrated one is shared by a session's repeated queries (:func:`calibrate`).
    _derived: dict[Any, Any] = field(init=False, default_factory=dict, repr=False, compare=False)

    def _once(self, key: Any, compute: Any) -> Any:
        if key not in self._derived:
            self._derived[key] = compute()
        return self._derived[key]

    @property
    def grid_exponent(self) -> int:
        if self.exponent is not None:
            return self.exponent
        return int(self._once("grid", lambda: 0 if self.integer else self.noise.default_grid_exponent()))

    @property
    def law(self) -> NoiseLaw:
        """The law of the released error (for accuracy)."""
        law: NoiseLaw = self._once("law", self._law)
        return law

    def _law(self) -> NoiseLaw:
        error = None if self.family is None else self.family.law(self.noise)
        if error is None:
            raise ValueError(f"the noise of component {self.name!r} states no error law.")
        return NoiseLaw(error, math.ldexp(1.0, self.grid_exponent), self.integer)

    def event(self, *, scalar: bool) -> Any:
        """The privacy event of this part (:mod:`privnoise.dp.events`): the family's own on a scalar pair."""
        if self.family is None or self.share is None or self.sensitivity is None:
            raise ValueError(f"component {self.name!r} was not calibrated by a noise family: it has no event.")
        family, share, sensitivity = self.family, self.share, self.sensitivity
        return self._once(("event", scalar), lambda: family.event(self.noise, sensitivity, share, scalar=scalar))

    def add(self, values: Any, generator: np.random.Generator) -> NDArray[np.float64]:
        """values + noise, hardened (rounded to the grid; to integers for counts).

        Vector noise of shape (d,) on a longer vector of n values (a server's Fisher design on n records) adds its
        noise to blocks of d consecutive values, each with its own draw (the last block padded, its padding
        dropped). One value takes the noise's scalar path where it has one (:meth:`~privnoise.mechanisms.Noise.add_one`: the
        same release from the same generator state)."""
        if not self.hardened:
            return np.asarray(self.noise.add_to(values, rng=generator, harden=False, grid_exponent=self.exponent),
                              dtype=float)
        if type(values) is float and not self.noise.shape:  # one number (a server's answer): no array made
            one = self.noise.add_one(values, generator, self.grid_exponent)
            if one is not None:
                return np.float64(one)  # type: ignore[return-value]
        v = np.asarray(values, dtype=float)
        if v.size == 1 and not self.noise.shape:
            one = self.noise.add_one(float(v.flat[0]), generator, self.grid_exponent)
            if one is not None:
                return np.full(v.shape, one)
        shape = self.noise.shape
        if v.ndim == 1 and len(shape) == 1 and v.shape != shape:  # blocks of d values, each with its own draw
            d, n = shape[0], v.size
            padded = np.zeros(-(-n // d) * d)
            padded[:n] = v
            blocks = self.noise.add_to(padded.reshape(-1, d), rng=generator, grid_exponent=self.grid_exponent)
            return np.asarray(blocks, dtype=float).reshape(-1)[:n]
        return np.asarray(self.noise.add_to(v, rng=generator, grid_exponent=self.grid_exponent), dtype=float)

    def describe(self) -> dict[str, Any]:
        """Its name, sensitivity and noise: the error law a family states, or the noise's own description (noise no
        family calibrated)."""
        described: dict[str, Any] = self._once("describe", self._describe)
        return dict(described)

    def _describe(self) -> dict[str, Any]:
        noise = self.noise.describe() if self.family is None else self.law.describe()
        if self.sensitivity is None:
            return {**noise, "name": self.name}
        return {**noise, "name": self.name, "sensitivity": self.sensitivity}


@functools.lru_cache(maxsize=256)
def calibrate(name: str, family: NoiseFamily, sensitivity: float, share: Fraction, *, integer: bool = False,
              discrete: bool = False) -> Component[Noise]:
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
    return Component(name=name, noise=noise, sensitivity=sensitivity, share=share, family=chosen,
                     integer=integer or chosen is not family, scale=chosen.scale(noise))
