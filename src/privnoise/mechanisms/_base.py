"""The noise protocol every noise object implements, and the two sibling bases of noise distributions.

:class:`NoiseDesign`
    What :func:`privnoise.release` needs of anything that adds noise: ``shape``, ``guarantee_for(query)`` (the
    guarantee the noise gives for a release of that query), ``law_at(query, x)`` (the noise law at the data;
    itself for data-independent noise) and ``as_dict()``. Data-dependent policies
    (:class:`privnoise.fisher.Policy`) are designs without a ``sample`` of their own.
:class:`Noise`
    A design whose law does not depend on the data: adds ``sample(size, *, rng)``, ``marginal(start, stop)`` (the law
    of a block of independent coordinates, for releases computed chunk by chunk) and ``add_to(values, *, rng)``
    (values + noise, snapped to a 2^k grid by default so that no low-order bit leaks).
:class:`Mechanism`
    Noise with a density: ``pdf``, ``logpdf``, ``score``, ``mean``, ``covariance``, ``fisher_information``, … — the
    continuous families (Gaussian, Laplace, raised cosine, ℓ2/multi-user Laplace, tabulated).
:class:`LatticeMechanism`
    The sibling for noise on a lattice Λℤ (discrete Laplace and Gaussian): ``pmf``, ``logpmf``, ``mean``,
    ``covariance``; no density and no location Fisher information, so none of those methods exists on it.
"""

from __future__ import annotations

import dataclasses
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_finite_array, check_positive_int, describe
from ..exceptions import DimensionError, InvalidParameterError
from ..linalg import DenseForm, SymmetricForm
from ..random import RNGLike

if TYPE_CHECKING:
    from ..guarantees import Guarantee
    from ..queries import Query

__all__ = ["LatticeMechanism", "Mechanism", "Noise", "NoiseDesign", "Perturbation", "deliver", "sample_shape"]


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


def _as_output(draws: NDArray[np.float64]) -> Any:
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
        return _as_output(np.asarray(draws).reshape(leading + self.shape))

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

    def _perturb(self, values: NDArray[np.float64], how: Perturbation) -> NDArray[np.float64]:
        """values + w for ``count`` draws w; hardened, the exact sum snapped to the grid (:mod:`privnoise.snapping`)."""
        from ..snapping import snapped_sum

        w = np.asarray(self._sample(how.count, how.generator), dtype=np.float64).reshape(values.shape)
        if not how.harden:
            return deliver(values + w, how.out)
        k = self.default_grid_exponent() if how.grid_exponent is None else how.grid_exponent
        return snapped_sum(values, w, k, in_range=how.in_range, out=how.out)

    def law_at(self, query: Query, x: NDArray[np.float64]) -> Noise:
        return self

    @property
    def declared_sensitivity(self) -> float | None:
        """The sensitivity the noise was built for when it declares one (a hardened release does), else None."""
        return None

    def marginal(self, start: int, stop: int) -> Noise | None:
        """The law of coordinates ``start:stop`` when they are independent of the others, else None."""
        return None

    def _check_values(self, values: ArrayLike, owner: str, *, checked: bool = False) -> NDArray[np.float64]:
        if checked:  # the caller has checked: a float64 array, finite, in range
            return np.asarray(values, dtype=np.float64)
        v = as_finite_array(values, "values", owner)
        k = len(self.shape)
        if k and v.shape[v.ndim - k :] != self.shape:
            raise DimensionError(f"`values` of `{owner}` must end with shape {self.shape}; got shape {v.shape}.")
        return v


class Mechanism(Noise):
    """Additive noise with a density: ``release = f(x) + w`` with ``w`` drawn from the mechanism.

    Subclasses are frozen dataclasses. ``shape`` is ``()`` for a scalar mechanism and ``(m,)`` for a vector one;
    ``sample(size)`` returns an array of shape ``size + shape``. Scalar mechanisms return floats from
    ``covariance()`` and ``fisher_information()``; vector ones return ``(m, m)`` read-only matrices, and
    ``covariance_form()`` / ``information_form()`` keep them structured (s·I for isotropic noise, whatever m).
    """

    __slots__ = ()

    # -- to be provided by each family ------------------------------------------------------------
    @abstractmethod
    def _logpdf(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """Log density of points ``x`` of shape ``(..., ) + shape``."""

    @abstractmethod
    def _score(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """Gradient of the log density with respect to the point, same shape as ``x``."""

    @abstractmethod
    def mean(self) -> Any:
        """Mean of the noise (float for a scalar mechanism, read-only vector otherwise)."""

    @abstractmethod
    def covariance(self) -> Any:
        """Covariance of the noise (variance for a scalar mechanism)."""

    @abstractmethod
    def fisher_information(self) -> Any:
        """Location Fisher information E[∇log g(w) ∇log g(w)ᵀ] of the noise density g."""

    @abstractmethod
    def entropy(self) -> float:
        """Differential entropy in nats."""

    def support(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Lower and upper ends of the support, per coordinate (``±inf`` when unbounded)."""
        lower = np.full(self.shape, -np.inf)
        return lower, -lower

    # -- structured forms (overridden where a family knows its structure) ---------------------------------------
    def covariance_form(self) -> SymmetricForm:
        """The covariance as a :class:`~privnoise.linalg.SymmetricForm` (1×1 for a scalar mechanism)."""
        return DenseForm(np.atleast_2d(np.asarray(self.covariance(), dtype=float)))

    def information_form(self) -> SymmetricForm:
        """The location Fisher information as a :class:`~privnoise.linalg.SymmetricForm`.

        Raises
        ------
        CalibrationError
            When the information is infinite (a density with a jump): the noise then gives no Fisher-information
            privacy at all.
        """
        from ..exceptions import CalibrationError

        matrix = self.fisher_information_matrix()
        if not np.all(np.isfinite(matrix)):
            raise CalibrationError(
                f"{self.name} has infinite Fisher information (its density jumps or rises linearly from zero): "
                "it gives no Fisher-information privacy."
            )
        return DenseForm(matrix)

    def noise_scale(self) -> float:
        """The scale that sets the default grid: √λ_min of the covariance."""
        return math.sqrt(max(self.covariance_form().eigenvalue_range()[0], 0.0))

    # -- shared behaviour ----------------------------------------------------------------------------
    def default_grid_exponent(self) -> int:
        from ..snapping import grid_exponent_for

        return grid_exponent_for(self.noise_scale())

    def guarantee_for(
        self, query: Query, x: ArrayLike | None = None, *, delta: float | None = None, grid: float = 0.0
    ) -> Guarantee:
        """Fisher information always (Farokhi & Sandberg); (ε, δ) too where the family has a privacy profile and
        the query declares the bounds that give its sensitivity (:mod:`privnoise.dp.profile`), through the rules registered in :mod:`.statements`."""
        from ..guarantees import combine
        from .statements import DIFFERENTIAL_PRIVACY, FISHER_INFORMATION, statement

        fisher = statement(FISHER_INFORMATION)(query, self, x, grid=grid)
        guarantee = combine(fisher, statement(DIFFERENTIAL_PRIVACY)(self, query, delta=delta))
        assert guarantee is not None
        return guarantee

    def _points(self, x: ArrayLike, method: str) -> NDArray[np.float64]:
        return points(self, x, method)

    def logpdf(self, x: ArrayLike, /) -> Any:
        """Log density at ``x`` (``-inf`` outside the support); shape ``x.shape[:-len(shape)]``."""
        return _as_output(np.asarray(self._logpdf(self._points(x, "logpdf"))))

    def pdf(self, x: ArrayLike, /) -> Any:
        """Density at ``x`` (0 outside the support)."""
        return _as_output(np.exp(self._logpdf(self._points(x, "pdf"))))

    def score(self, x: ArrayLike, /) -> Any:
        """∇_w log g(w): the score of the location family, 0 where the density vanishes."""
        return _as_output(np.asarray(self._score(self._points(x, "score"))))

    def second_moment(self) -> float:
        """Quality Q = E‖w‖² of the noise (Farokhi & Sandberg, Section 2)."""
        cov = np.atleast_2d(np.asarray(self.covariance(), dtype=float))
        mu = np.atleast_1d(np.asarray(self.mean(), dtype=float))
        return float(np.trace(cov) + mu @ mu)

    def fisher_information_matrix(self) -> NDArray[np.float64]:
        """The Fisher information as an ``(m, m)`` array, also for scalar mechanisms."""
        return np.atleast_2d(np.asarray(self.fisher_information(), dtype=float))


class LatticeMechanism(Noise):
    """Noise on the lattice Λℤ, Λ = 2^grid_exponent (per coordinate): exact multiples of ``grid``.

    Added to a value rounded to the same lattice, the output is an exact lattice point computed in integer-valued
    double arithmetic; the rounding of the value moves it by at most Λ/2 per coordinate, which the guarantee adds to
    the sensitivity (:func:`privnoise.dp.lattice.lattice_sensitivity`).
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

    def _sample(self, n: int, generator: np.random.Generator) -> NDArray[np.float64]:
        return np.ldexp(self._units(n, generator), self.grid_exponent)

    def sample_units(self, n: int, *, rng: RNGLike = None) -> NDArray[np.float64]:
        """``n`` draws in lattice units (integer-valued doubles), shape ``(n,) + shape``."""
        from ..random import default_rng

        return self._units(check_positive_int(n, "n", f"{self.name}.sample_units", minimum=0), default_rng(rng))

    def _perturb(self, values: NDArray[np.float64], how: Perturbation) -> NDArray[np.float64]:
        """Λ·(rint(v/Λ) + K) with K the lattice noise in units: always on the lattice (``harden`` cannot be
        turned off for lattice noise, and ``grid_exponent`` must be the lattice's own or None)."""
        from ..snapping import lattice_sum

        if how.grid_exponent is not None and how.grid_exponent != self.grid_exponent:
            raise InvalidParameterError(
                f"`grid_exponent` of `{self.name}.add_to` must be the lattice's own ({self.grid_exponent}); "
                f"got {how.grid_exponent}."
            )
        units = self._units(how.count, how.generator).reshape(values.shape)
        return deliver(lattice_sum(values, units, self.grid_exponent), how.out)

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
        return _as_output(np.asarray(per.sum(axis=-1) if self.shape else per))

    def pmf(self, x: ArrayLike, /) -> Any:
        """Probability of the lattice point(s) ``x`` (0 off the lattice)."""
        return _as_output(np.exp(np.asarray(self.logpmf(x))))

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


def vector_or_scalar(value: ArrayLike, name: str, owner: str) -> NDArray[np.float64]:
    """A finite 0-d or 1-d parameter array."""
    arr = as_finite_array(value, name, owner, ndim=(0, 1))
    if arr.ndim == 1 and arr.size == 0:
        raise DimensionError(f"`{name}` of `{owner}` must not be empty.")
    return arr
