"""The noise protocol every noise object implements, and the plumbing of a perturbation.

:class:`NoiseDesign`
    What :func:`privnoise.release` needs of anything that adds noise: ``shape``, ``guarantee_for(query)`` (the
    guarantee the noise gives for a release of that query), ``law_at(query, x)`` (the noise law at the data;
    itself for data-independent noise) and ``as_dict()``. Data-dependent policies
    (:class:`privnoise.fisher.Policy`) are designs without a ``sample`` of their own.
:class:`Noise`
    A design whose law does not depend on the data: adds ``sample(size, *, rng)``, ``marginal(start, stop)`` (the law
    of a block of independent coordinates, for releases computed chunk by chunk) and ``add_to(values, *, rng)``
    (values + noise, snapped to a 2^k grid by default so that no low-order bit leaks).
:class:`Perturbation`, :func:`deliver`
    How :meth:`Noise.add_to` hands a batch to a family's ``_perturb`` (draws, generator, hardening, grid, range
    promise, output array), and the ``out`` convention of its result.
:func:`sample_shape`, :func:`points`, :func:`as_output`
    The checks of a ``size`` argument and of evaluation points, and the float-or-array form of an output.

The two sibling bases of noise distributions build on it: :class:`~privnoise.mechanisms.Mechanism` (noise with a
density, :mod:`privnoise.mechanisms.density`) and :class:`~privnoise.mechanisms.LatticeMechanism` (noise on a
lattice Λℤ, :mod:`privnoise.mechanisms.lattice`).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_finite_array, check_positive_int, describe
from ..exceptions import DimensionError, InvalidParameterError
from ..random import RNGLike

if TYPE_CHECKING:
    from ..guarantees import Guarantee
    from ..queries import Query

__all__ = ["GridFiller", "Noise", "NoiseDesign", "Perturbation", "as_output", "deliver", "points", "sample_shape"]

#: ``fill(buffer, start)``: writes the draws for flat positions ``start, …, start + buffer.size − 1`` into ``buffer``.
GridFiller = Callable[[NDArray[np.float64], int], object]


def sample_shape(size: int | tuple[int, ...] | None, owner: str) -> tuple[int, ...]:
    """Normalise a ``size`` argument (None, an int or a tuple of ints) to a shape tuple."""
    if size is None:
        return ()
    if isinstance(size, int | np.integer) and not isinstance(size, bool):
        return (check_positive_int(size, "size", owner, minimum=0),)
    if isinstance(size, tuple) and all(
        isinstance(s, int | np.integer) and not isinstance(s, bool) for s in size
    ):
        return tuple(check_positive_int(s, "size", owner, minimum=0) for s in size)
    raise InvalidParameterError(
        f"`size` of `{owner}` must be None, an int >= 0 or a tuple of them; got {size!r}."
    )


@dataclass(frozen=True, slots=True)
class Perturbation:
    """How :meth:`Noise.add_to` perturbs a batch: draws, generator, hardening, grid, range promise, output."""

    count: int
    generator: np.random.Generator
    harden: bool
    grid_exponent: int | None
    in_range: bool
    out: NDArray[np.float64] | None


def deliver(result: NDArray[np.float64], out: NDArray[np.float64] | None) -> NDArray[np.float64]:
    """``result``, copied into ``out`` when one is given (the ``out`` convention of :meth:`Noise.add_to`)."""
    if out is None:
        return result
    out[...] = result
    return out


def as_output(draws: NDArray[np.float64]) -> Any:
    """A float for a 0-d array, else the array itself (what ``sample``, ``pdf``, ``pmf``, … return)."""
    return float(draws) if draws.ndim == 0 else draws


def points(noise: NoiseDesign, x: ArrayLike, method: str) -> NDArray[np.float64]:
    """Validate evaluation points ``x`` of ``noise.method``: real, no NaN, trailing shape = the noise's shape."""
    if isinstance(x, str | bytes) or (isinstance(x, np.ndarray) and x.dtype.kind not in "iuf"):
        arr = None
    else:
        try:
            arr = np.asarray(x, dtype=np.float64)
        except (TypeError, ValueError):
            arr = None
    if arr is None:
        raise InvalidParameterError(f"`x` of `{noise.name}.{method}` must be a real numeric array; got {describe(x)}.")
    if np.isnan(arr).any():
        raise InvalidParameterError(f"`x` of `{noise.name}.{method}` must not contain NaN.")
    k = len(noise.shape)
    if k and arr.shape[arr.ndim - k :] != noise.shape:
        raise DimensionError(
            f"`x` of `{noise.name}.{method}` must end with shape {noise.shape}; got shape {arr.shape}."
        )
    return arr


class NoiseDesign(ABC):
    """Anything a release can add: it has a shape, gives a guarantee for a query and a law at the data."""

    __slots__ = ()

    @property
    @abstractmethod
    def shape(self) -> tuple[int, ...]:
        """``()`` for scalar noise, ``(m,)`` for a vector."""

    @abstractmethod
    def guarantee_for(
        self, query: Query, x: ArrayLike | None = None, *, delta: float | None = None, grid: float = 0.0
    ) -> Guarantee:
        """The guarantee of releasing ``query(x)`` plus this noise.

        Parameters
        ----------
        query : Query
            What is released (its declared bounds give the sensitivity of a DP statement).
        x : array_like, optional
            The data, needed only where the guarantee depends on it (scope "at-data").
        delta : float, optional
            The δ at which Gaussian-type noise states its ε (pure-ε noise ignores it).
        grid : float, default 0
            The grid Λ the release is snapped to (0: not snapped).
        """

    @abstractmethod
    def law_at(self, query: Query, x: NDArray[np.float64]) -> Noise:
        """The noise law for a release of ``query`` at the (validated) database ``x``."""

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """A JSON-ready summary of the parameters."""

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready summary of the parameters (same as :meth:`describe`)."""
        return self.describe()

    def output_range(self) -> tuple[Any, Any] | None:
        """A box every release lies in, when the design promises one (None: no promise)."""
        return None

    @property
    def dim(self) -> int:
        """Number of coordinates m of the noise (1 for a scalar)."""
        return int(math.prod(self.shape))

    @property
    def name(self) -> str:
        return type(self).__name__


class Noise(NoiseDesign):
    """Data-independent noise: sampling, marginals of independent blocks, and hardened addition.

    A family provides ``_sample(n, generator)`` (``n`` draws of shape ``(n,) + shape``) and
    ``default_grid_exponent()``; it overrides ``_perturb`` when its values are combined with the noise otherwise than
    by the exact snapped sum (lattice noise, hardened releases).
    """

    __slots__ = ()

    @abstractmethod
    def _sample(self, n: int, generator: np.random.Generator) -> NDArray[np.float64]:
        """Return ``n`` draws as an array of shape ``(n,) + shape``."""

    @abstractmethod
    def default_grid_exponent(self) -> int:
        """k of the grid 2^k a hardened release of this noise is snapped to."""

    def sample(self, size: int | tuple[int, ...] | None = None, *, rng: RNGLike = None) -> Any:
        """Independent draws, an array of shape ``size + shape`` (a float when both are empty).

        ``rng`` is None (the cryptographically strong per-thread generator), an int seed (research only) or a
        numpy Generator.
        """
        from ..random import default_rng

        leading = sample_shape(size, f"{self.name}.sample")
        draws = self._sample(math.prod(leading), default_rng(rng))
        return as_output(np.asarray(draws).reshape(leading + self.shape))

    def add_to(
        self,
        values: ArrayLike,
        *,
        rng: RNGLike = None,
        harden: bool = True,
        grid_exponent: int | None = None,
        checked: bool = False,
        out: NDArray[np.float64] | None = None,
    ) -> NDArray[np.float64]:
        """``values`` (shape ``(..., *shape)``, each trailing block with its own noise) plus noise.

        Hardened (the default), every output is an exact multiple of a power of two 2^k (``grid_exponent`` or the
        family's default), so that no low-order bit depends on the values. ``checked=True`` states that ``values`` is
        a float64 array already checked finite and within 2^50 grid steps (a release checks its data once, in the
        pass that reads it); ``out`` receives the result when given.
        """
        from ..random import default_rng

        v = self._check_values(values, f"{self.name}.add_to", checked=checked)
        count = math.prod(v.shape[: v.ndim - len(self.shape)])
        return self._perturb(v, Perturbation(count, default_rng(rng), harden, grid_exponent, checked, out))

    def add_one(self, value: float, generator: np.random.Generator, grid_exponent: int | None = None) -> float | None:
        """The hardened :meth:`add_to` of one finite value, for a scalar noise whose addition is the protocol's own:
        the family's scalar draw (:meth:`grid_draw`) snapped by :func:`~privnoise.snapping.snapped_point` — the same
        release from the same generator state, without arrays. None, with nothing drawn, otherwise (also on a grid
        so coarse that the array path rounds in grid units)."""
        from ..snapping import snapped_point

        k = self.default_grid_exponent() if grid_exponent is None else grid_exponent
        if self.shape or self._perturb.__func__ is not _PROTOCOL_PERTURB or not math.isfinite(value):  # type: ignore[attr-defined]
            return None
        if snapped_point(0.0, 0.0, k) is None:  # decided before anything is drawn
            return None
        w = self.grid_draw(generator, 0)  # the noise in the units of the value, as ``_perturb``'s filler
        if w is None:
            return None
        return snapped_point(value, w, k)

    def _perturb(self, values: NDArray[np.float64], how: Perturbation) -> NDArray[np.float64]:
        """values + w for ``count`` draws w; hardened, the exact sum snapped to the grid (:mod:`privnoise.snapping`)."""
        from ..snapping import snapped_add, snapped_sum

        if how.harden:
            k = self.default_grid_exponent() if how.grid_exponent is None else how.grid_exponent
            filler = self.grid_filler(how.generator, 0)  # the noise in the units of the values
            if filler is not None:  # drawn, added and snapped chunk by chunk
                fill, width = filler
                return snapped_add(values, fill, k, in_range=how.in_range, out=how.out, width=width)
        w = np.asarray(self._sample(how.count, how.generator), dtype=np.float64).reshape(values.shape)
        if not how.harden:
            return deliver(values + w, how.out)
        return snapped_sum(values, w, k, in_range=how.in_range, out=how.out)

    def grid_filler(self, generator: np.random.Generator, exponent: int) -> tuple[GridFiller, int] | None:
        """``(fill, width)``: ``fill(buffer, start)`` writes draws divided by 2^exponent into ``buffer`` (flat
        positions ``start, …`` of a batch of draws, ``buffer`` holding whole rows of ``width`` values, the period of
        the coordinates' laws), or None when the family has none: the noise of a hardened addition is then drawn
        whole (:func:`privnoise.snapping.snapped_add` chunk by chunk otherwise)."""
        return None

    def grid_draw(self, generator: np.random.Generator, exponent: int) -> float | None:
        """One draw of :meth:`grid_filler`'s noise as a Python float, the same value its ``fill`` writes first
        into a buffer of one value from the same generator state, or None when the family has no such draw
        (a hardened release of one value then goes through the filler)."""
        return None

    def law_at(self, query: Query, x: NDArray[np.float64]) -> Noise:
        return self

    @property
    def declared_sensitivity(self) -> float | None:
        """The sensitivity the noise was built for when it declares one (a hardened release does), else None."""
        return None

    def marginal(self, start: int, stop: int) -> Noise | None:
        """The law of coordinates ``start:stop`` when they are independent of the others, else None."""
        return None

    @property
    def identical_coordinates(self) -> bool:
        """Whether :meth:`marginal` depends on ``stop − start`` only (independent coordinates with one law, the
        same for all), so that a release by blocks may reuse one marginal for blocks of equal length. A family that
        overrides :meth:`marginal` states this for its own marginals."""
        return False

    def _check_values(self, values: ArrayLike, owner: str, *, checked: bool = False) -> NDArray[np.float64]:
        if checked:  # the caller has checked: a float64 array, finite, in range
            return np.asarray(values, dtype=np.float64)
        v = as_finite_array(values, "values", owner)
        k = len(self.shape)
        if k and v.shape[v.ndim - k :] != self.shape:
            raise DimensionError(f"`values` of `{owner}` must end with shape {self.shape}; got shape {v.shape}.")
        return v


#: The protocol's own hardened addition (a family that overrides it has no scalar path: :meth:`Noise.add_one`).
_PROTOCOL_PERTURB = vars(Noise)["_perturb"]
