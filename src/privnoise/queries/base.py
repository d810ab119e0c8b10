"""The query interface: f: ℝⁿ → ℝᵐ with its Jacobian, its declared per-record bounds and its sensitivity.

A :class:`Query` evaluates ``f(x)`` for a validated database ``x ∈ ℝⁿ`` (finite, of length n), gives the
Jacobian ``F(x)`` the Fisher information needs (Farokhi & Sandberg, Theorem 2) and, from the owner's declared
:class:`Bounds` on each record (never inferred from the data, SECURITY.md requirement 6), the largest change of
f(x) when one record moves: its sensitivity. :class:`~privnoise.queries.LinearQuery` and
:class:`~privnoise.queries.FunctionQuery` implement it.

Examples
--------
>>> b = Bounds.coerce((0.0, 60.0))
>>> b.width
60.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_finite_array, check_finite
from ..exceptions import DimensionError, InvalidParameterError
from ..linalg import DenseMatrix, LinearOperator

__all__ = ["Bounds", "Query", "SensitivityNorm"]


#: The norms a sensitivity is measured in: ℓ1, ℓ2, or Σ over output blocks of their ℓ2 norms (multi-user).
SensitivityNorm = Literal["l1", "l2", "l1-l2"]


@dataclass(frozen=True, slots=True, eq=False)
class Bounds:
    """Declared per-record bounds ``lower ≤ x_i ≤ upper`` (from the data owner, never from the data)."""

    lower: float
    upper: float

    def __post_init__(self) -> None:
        lo = check_finite(self.lower, "lower", "Bounds")
        hi = check_finite(self.upper, "upper", "Bounds")
        if hi <= lo:
            raise InvalidParameterError(f"`upper` of `Bounds` must be > `lower`; got [{lo:g}, {hi:g}].")
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)

    @property
    def width(self) -> float:
        return self.upper - self.lower

    @classmethod
    def coerce(cls, value: Bounds | tuple[float, float] | None) -> Bounds | None:
        if value is None or isinstance(value, Bounds):
            return value
        try:
            lo, hi = value
        except (TypeError, ValueError):
            raise InvalidParameterError(f"`bounds` must be a (lower, upper) pair; got {value!r}.") from None
        return cls(lo, hi)


class Query:
    """A query f: ℝⁿ → ℝᵐ (``output_shape`` is ``()`` for a scalar query)."""

    __slots__ = ()

    n: int
    bounds: Bounds | None
    name: str

    @property
    def output_shape(self) -> tuple[int, ...]:
        raise NotImplementedError

    @property
    def m(self) -> int:
        return int(math.prod(self.output_shape))

    @property
    def is_linear(self) -> bool:
        return False

    def _evaluate(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        raise NotImplementedError

    def _jacobian(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        raise NotImplementedError

    def check_data(self, x: ArrayLike, *, owner: str = "Query") -> NDArray[np.float64]:
        """Validate a database: a finite 1-d array of length ``n`` (NaN and inf are rejected)."""
        arr = as_finite_array(x, "x", owner, ndim=1)
        if arr.shape[0] != self.n:
            raise DimensionError(
                f"`x` of `{owner}` must have length {self.n} (the query's n); got {arr.shape[0]}."
            )
        return arr

    def evaluate(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """f(x) for an already validated database; a value that overflows is refused, never returned."""
        with np.errstate(over="ignore", invalid="ignore"):
            out = self._evaluate(x)
        if not np.all(np.isfinite(out)):
            raise InvalidParameterError(
                f"the value of query `{self.name}` is not finite (overflow); rescale the data."
            )
        return out

    def __call__(self, x: ArrayLike) -> Any:
        """Evaluate f(x) (a float for a scalar query); a value that overflows is refused, never returned."""
        out = self.evaluate(self.check_data(x, owner=self.name))
        return float(out) if out.ndim == 0 else out

    def jacobian_at(self, x: ArrayLike) -> NDArray[np.float64]:
        """The m × n Jacobian F(x) (a 1 × n row for a scalar query)."""
        return np.atleast_2d(self._jacobian(self.check_data(x, owner=self.name)))

    def jacobian_operator(self, x: ArrayLike | None = None) -> LinearOperator:
        """F(x) as a structured operator (a linear query's own C, whatever x)."""
        if x is None:
            raise InvalidParameterError(f"`x` is required for the Jacobian of the nonlinear query `{self.name}`.")
        return DenseMatrix(self.jacobian_at(x))

    def sup_jacobian(self) -> NDArray[np.float64] | None:
        """Declared sup over the data domain of |∂f_k/∂x_i| (m × n), or None when not declared.

        For a linear query it is |C|. It lets a release state a Fisher guarantee that holds for every database in
        the declared domain instead of one computed at the true data.
        """
        return None

    def sup_jacobian_operator(self) -> LinearOperator | None:
        """:meth:`sup_jacobian` as a structured operator."""
        bound = self.sup_jacobian()
        return None if bound is None else DenseMatrix(bound)

    def sensitivity(self, norm: SensitivityNorm = "l1", *, block: int | None = None) -> float:
        """Largest change of f(x) when one record moves across its declared bounds.

        ``norm`` is "l1", "l2" or "l1-l2" (the sum over output blocks of ``block`` coordinates of their ℓ2
        norms: the multi-user adjacency). For a nonlinear query the declared Jacobian bound B gives, by the mean
        value theorem, ‖f(x) − f(x′)‖ ≤ (b − a)·max_i ‖B e_i‖.

        Raises
        ------
        InvalidParameterError
            Without declared bounds (and, for a nonlinear query, without a declared Jacobian bound).
        """
        if self.bounds is None:
            raise InvalidParameterError(
                f"`bounds` of `{self.name}` must be declared to compute a sensitivity."
            )
        operator = self.sup_jacobian_operator()
        if operator is None:
            raise InvalidParameterError(
                f"`jacobian_bound` of `{self.name}` must be declared to compute the sensitivity of a nonlinear "
                "query."
            )
        return float(self.bounds.width * operator.max_column_norm(norm, block))

    def changed_outputs(self) -> int:
        """How many outputs one record can move (all m for a nonlinear query): the coordinates a rounding of the
        output to a lattice adds to the sensitivity."""
        return self.m

    def output_bound(self) -> float | None:
        """A bound on max_k |f_k(x)| over the declared domain (None without declared bounds or for a nonlinear
        query): used to keep hardened arithmetic exact, never derived from the data."""
        return None

    def describe(self) -> dict[str, Any]:
        raise NotImplementedError

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready description (never the data)."""
        return self.describe()
