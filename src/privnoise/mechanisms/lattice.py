"""Noise on a lattice Λℤ, Λ = 2^k: the base of discrete Laplace and discrete Gaussian noise.

:class:`LatticeMechanism` is the sibling of :class:`~privnoise.mechanisms.Mechanism` for noise that takes only
lattice values: ``pmf``, ``logpmf``, ``mean``, ``covariance``, ``sample_units`` (draws in lattice units); no density
and no location Fisher information (a shift smaller than Λ does not change the law), so none of those methods
exists on it. Added to a value rounded to the same lattice, every output is an exact lattice point computed in
integer-valued double arithmetic (:func:`privnoise.snapping.lattice_sum`; Mironov 2012), and its guarantee is the
(ε, δ) of the family's privacy profile with the rounding added to the sensitivity, through the rules registered in
:mod:`privnoise.mechanisms.statements`. The families are :class:`~privnoise.mechanisms.DiscreteLaplace` and
:class:`~privnoise.mechanisms.DiscreteGaussian` (:mod:`privnoise.mechanisms.discrete`).

References
----------
.. [1] I. Mironov, "On significance of the least significant bits for differential privacy", CCS 2012.
"""

from __future__ import annotations

import dataclasses
import math
from abc import abstractmethod
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_positive_int
from ..exceptions import InvalidParameterError
from ..random import RNGLike
from .protocol import GridFiller, Noise, Perturbation, as_output, points

if TYPE_CHECKING:
    from ..guarantees import Guarantee
    from ..queries import Query

__all__ = ["LatticeMechanism"]


class LatticeMechanism(Noise):
    """Noise on the lattice Λℤ, Λ = 2^grid_exponent (per coordinate): exact multiples of ``grid``.

    Added to a value rounded to the same lattice, the output is an exact lattice point computed in integer-valued
    double arithmetic; the rounding of the value moves it by at most Λ/2 per coordinate, which the guarantee adds to
    the sensitivity (:func:`privnoise.mechanisms.lattice_grid.lattice_sensitivity`).
    """

    __slots__ = ()
    grid_exponent: int

    @abstractmethod
    def _units(self, n: int, generator: np.random.Generator) -> NDArray[np.float64]:
        """``n`` draws of shape ``(n,) + shape`` in lattice units (integer-valued doubles)."""

    @abstractmethod
    def _log_unnormalised(self, j: NDArray[np.float64]) -> NDArray[np.float64]:
        """log P(w = jΛ) up to the normaliser, per coordinate."""

    @abstractmethod
    def _log_normaliser(self) -> float:
        """log Σ_j exp(_log_unnormalised(j)) per coordinate."""

    @abstractmethod
    def _variance(self) -> float:
        """Variance of one coordinate."""

    @abstractmethod
    def entropy(self) -> float:
        """Shannon entropy in nats."""

    @property
    def grid(self) -> float:
        """Λ = 2^grid_exponent, the spacing of the lattice."""
        return math.ldexp(1.0, self.grid_exponent)

    def default_grid_exponent(self) -> int:
        return self.grid_exponent

    @property
    def shape(self) -> tuple[int, ...]:
        dimension = getattr(self, "dimension", None)
        if dimension is None:
            return ()
        return (check_positive_int(dimension, "dimension", self.name),)

    def marginal(self, start: int, stop: int) -> LatticeMechanism | None:
        """Independent coordinates: the same lattice noise on ``stop − start`` of them."""
        if not self.shape:
            return None
        return dataclasses.replace(self, dimension=stop - start)  # type: ignore[type-var]

    @property
    def identical_coordinates(self) -> bool:
        """Every coordinate of a vector lattice law has the same law: its marginals depend on their length only."""
        return bool(self.shape)

    def _sample(self, n: int, generator: np.random.Generator) -> NDArray[np.float64]:
        units = self._units(n, generator)
        units *= self.grid  # exact: integers times a power of two (2^k ≥ 2^−1000, no subnormal)
        return units

    def sample_units(self, n: int, *, rng: RNGLike = None) -> NDArray[np.float64]:
        """``n`` draws in lattice units (integer-valued doubles), shape ``(n,) + shape``."""
        from ..random import default_rng

        return self._units(check_positive_int(n, "n", f"{self.name}.sample_units", minimum=0), default_rng(rng))

    def _perturb(self, values: NDArray[np.float64], how: Perturbation) -> NDArray[np.float64]:
        """Λ·(rint(v/Λ) + K) with K the lattice noise in units: always on the lattice (``harden`` cannot be
        turned off for lattice noise, and ``grid_exponent`` must be the lattice's own or None)."""
        from ..snapping import lattice_add

        if how.grid_exponent is not None and how.grid_exponent != self.grid_exponent:
            raise InvalidParameterError(
                f"`grid_exponent` of `{self.name}.add_to` must be the lattice's own ({self.grid_exponent}); "
                f"got {how.grid_exponent}."
            )
        return lattice_add(values, self.unit_filler(how.generator), self.grid_exponent, out=how.out, width=max(self.dim, 1))

    def unit_filler(self, generator: np.random.Generator) -> GridFiller:
        """``fill(buffer, start)`` writing draws in lattice units into ``buffer`` (every coordinate has the same law,
        so the position does not matter)."""

        def fill(buffer: NDArray[np.float64], start: int) -> None:
            self.draw_units(buffer, generator)

        return fill

    def draw_units(self, buffer: NDArray[np.float64], generator: np.random.Generator) -> None:
        """Fill a flat ``buffer`` with independent coordinates in lattice units (one coordinate's law each)."""
        if buffer.size % max(self.dim, 1):
            raise ValueError("a buffer of lattice draws must hold whole draws")
        buffer[...] = self._units(buffer.size // max(self.dim, 1), generator).reshape(-1)

    def guarantee_for(
        self, query: Query, x: ArrayLike | None = None, *, delta: float | None = None, grid: float = 0.0
    ) -> Guarantee:
        """(ε, δ) for the query's declared sensitivity, the lattice rounding included; lattice noise has no location
        Fisher information (a shift smaller than Λ does not change the law), so no Fisher guarantee."""
        from ..exceptions import CalibrationError
        from .statements import DIFFERENTIAL_PRIVACY, statement

        guarantee = statement(DIFFERENTIAL_PRIVACY)(self, query, delta=delta)
        if guarantee is None:
            raise CalibrationError(
                f"`{self.name}` noise states a differential-privacy guarantee only: declare the bounds of query "
                f"`{query.name}` (and pass `delta` for Gaussian-type noise)."
            )
        return guarantee

    def logpmf(self, x: ArrayLike, /) -> Any:
        """Log probability of the lattice point(s) ``x`` (``-inf`` off the lattice)."""
        arr = points(self, x, "logpmf")
        j = np.ldexp(arr, -self.grid_exponent)
        on = np.isfinite(j) & (j == np.rint(j))
        per = np.where(on, self._log_unnormalised(np.where(on, j, 0.0)) - self._log_normaliser(), -np.inf)
        return as_output(np.asarray(per.sum(axis=-1) if self.shape else per))

    def pmf(self, x: ArrayLike, /) -> Any:
        """Probability of the lattice point(s) ``x`` (0 off the lattice)."""
        return as_output(np.exp(np.asarray(self.logpmf(x))))

    def mean(self) -> Any:
        from .._validation import readonly

        return 0.0 if not self.shape else readonly(np.zeros(self.shape))

    def covariance(self) -> Any:
        from .._validation import readonly

        v = self._variance()
        return v if not self.shape else readonly(v * np.eye(self.dim))

    def second_moment(self) -> float:
        """E‖w‖² = m · variance."""
        return self.dim * self._variance()
