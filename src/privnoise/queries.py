"""Queries a trusted server answers: f(x) with its Jacobian F(x) and the bounds the data owner declares.

A query knows nothing of mechanisms. It evaluates ``f(x)`` for a database ``x ∈ ℝⁿ``, gives the Jacobian
``F(x)`` the Fisher information needs (Farokhi & Sandberg, Theorem 2), and carries the owner's declared bounds on
each record, which are never inferred from the data (SECURITY.md, requirement 6).

Examples
--------
>>> import numpy as np
>>> from privnoise import queries
>>> q = queries.mean(4)
>>> q(np.array([1.0, 2.0, 3.0, 4.0]))
2.5
>>> v = queries.variance(3, bounds=(0.0, 1.0))
>>> round(v(np.array([0.0, 0.5, 1.0])), 12)
0.25
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import as_finite_array, as_matrix, check_finite, check_positive_int, readonly
from .exceptions import DimensionError, InvalidParameterError
from .linalg import DenseMatrix, Diagonal, Identity, LinearOperator, Row, SparseMatrix, SymmetricForm

__all__ = [
    "Bounds",
    "FunctionQuery",
    "LinearQuery",
    "Query",
    "diagonal",
    "identity",
    "linear",
    "mean",
    "sum",
    "sum_query",
    "variance",
    "weighted_mean",
    "weighted_sum",
]


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


def _frozen(self: Any, name: str, value: Any) -> None:
    raise AttributeError(f"`{type(self).__name__}` is immutable; build a new query instead of setting {name!r}.")


class LinearQuery(Query):
    """A linear query f(x) = Cx with C of shape (m, n); a 1-d C (or a :class:`~privnoise.linalg.Row`) gives a
    scalar query.

    Parameters
    ----------
    matrix : array_like, scipy.sparse matrix or LinearOperator
        C: an (m, n) matrix, a length-n vector for a scalar query, a sparse matrix, or a structured operator from
        :mod:`privnoise.linalg` (identity, diagonal, row, Kronecker, block diagonal) which is never expanded.
    bounds : (lower, upper), optional
        Declared bounds on every record.
    name : str, optional
        A label for reports.

    Examples
    --------
    >>> from privnoise.linalg import Identity
    >>> q = LinearQuery(Identity(10**9), bounds=(0.0, 60.0), name="identity")
    >>> q.n, q.sensitivity("l2"), q.gram_form()
    (1000000000, 60.0, IsotropicForm(size=1000000000, value=1.0))
    """

    __slots__ = ("_scalar", "bounds", "n", "name", "operator")
    operator: LinearOperator
    _scalar: bool

    def __init__(self, matrix: Any, bounds: Any = None, name: str = "linear") -> None:
        owner = "LinearQuery"
        scalar = False
        if isinstance(matrix, LinearOperator):
            operator = matrix
            scalar = isinstance(operator, Row)
        else:
            from scipy import sparse

            if sparse.issparse(matrix):
                operator = SparseMatrix(matrix)
            elif np.ndim(matrix) == 1 and not isinstance(matrix, str | bytes):
                c = as_finite_array(matrix, "matrix", owner, ndim=1)
                if c.size == 0:
                    raise DimensionError(f"`matrix` of `{owner}` must not be empty.")
                operator, scalar = Row(c), True
            else:
                operator = DenseMatrix(as_matrix(matrix, "matrix", owner))
        if operator.is_zero():
            raise InvalidParameterError(f"`matrix` of `{owner}` must have a non-zero entry.")
        set_ = object.__setattr__
        set_(self, "operator", operator)
        set_(self, "_scalar", scalar)
        set_(self, "n", int(operator.n))
        set_(self, "bounds", Bounds.coerce(bounds))
        set_(self, "name", str(name))

    __setattr__ = _frozen
    __delattr__ = _frozen  # type: ignore[assignment]

    @property
    def matrix(self) -> NDArray[np.float64]:
        """C as a dense array (1-d for a scalar query); refused for structured operators too large to expand."""
        dense = np.asarray(self.operator.dense(), dtype=float)
        return readonly(dense.ravel()) if self._scalar else dense

    @property
    def output_shape(self) -> tuple[int, ...]:
        return () if self._scalar else (self.operator.m,)

    @property
    def is_linear(self) -> bool:
        return True

    @property
    def matrix_2d(self) -> NDArray[np.float64]:
        """C as an (m, n) array."""
        return np.atleast_2d(self.matrix)

    def gram(self) -> NDArray[np.float64]:
        """CCᵀ (m × m) as a dense array; :meth:`gram_form` keeps its structure."""
        return np.array(self.operator.gram().dense())

    def gram_form(self) -> SymmetricForm:
        """CCᵀ in structured form (s·I for an identity query, whatever n)."""
        return self.operator.gram()

    def _evaluate(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        out = self.operator.apply(x)
        return out.reshape(()) if self._scalar else out

    def _jacobian(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.matrix_2d

    def jacobian_operator(self, x: ArrayLike | None = None) -> LinearOperator:
        return self.operator

    def sup_jacobian(self) -> NDArray[np.float64]:
        return np.abs(self.matrix_2d)

    def sup_jacobian_operator(self) -> LinearOperator:
        return self.operator.absolute()

    def sensitivity(self, norm: SensitivityNorm = "l1", *, block: int | None = None) -> float:
        """Largest change of Cx when one record moves across its declared bounds (ℓ1, ℓ2 or per-user ℓ2 norm)."""
        if norm not in ("l1", "l2", "l1-l2"):
            raise InvalidParameterError(
                f"`norm` of `sensitivity` must be 'l1', 'l2' or 'l1-l2'; got {norm!r}."
            )
        if self.bounds is None:
            raise InvalidParameterError(
                f"`bounds` of `{self.name}` must be declared to compute a sensitivity."
            )
        return float(self.bounds.width * self.operator.max_column_norm(norm, block))

    def changed_outputs(self) -> int:
        return self.operator.max_column_support()

    def output_bound(self) -> float | None:
        if self.bounds is None:
            return None
        reach = max(abs(self.bounds.lower), abs(self.bounds.upper))
        return float(self.operator.max_abs_row_sum() * reach)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "linear", "name": self.name, "n": self.n, "m": self.m}
        if self.bounds is not None:
            out["bounds"] = [self.bounds.lower, self.bounds.upper]
        return out

    def __repr__(self) -> str:
        return f"LinearQuery({self.operator!r}, bounds={self.bounds!r}, name={self.name!r})"


def _finite_difference_jacobian(
    f: Callable[[NDArray[np.float64]], Any], x: NDArray[np.float64], m: int
) -> NDArray[np.float64]:
    """Central-difference Jacobian with a step scaled to each coordinate (error O(h²))."""
    n = x.size
    jac = np.empty((m, n))
    steps = np.cbrt(np.finfo(float).eps) * np.maximum(1.0, np.abs(x))
    for i in range(n):  # one pair of evaluations per coordinate of the query's input, not per noise sample
        e = np.zeros(n)
        e[i] = steps[i]
        jac[:, i] = (np.atleast_1d(f(x + e)) - np.atleast_1d(f(x - e))) / (2.0 * steps[i])
    return jac


@dataclass(frozen=True, slots=True, eq=False)
class FunctionQuery(Query):
    """A (possibly nonlinear) continuously differentiable query f: ℝⁿ → ℝᵐ (Assumption 1).

    Parameters
    ----------
    function : callable
        ``function(x) -> float or array of shape (m,)``.
    n : int
        Number of records.
    jacobian : callable, optional
        ``jacobian(x) -> array (m, n)`` (or length n for a scalar query); central finite differences otherwise.
    bounds : (lower, upper), optional
        Declared per-record bounds.
    jacobian_bound : array_like, optional
        Declared sup of |∂f_k/∂x_i| over the bounded domain (m × n, or a scalar for all entries). Needed for a
        guarantee that does not depend on the data.
    name : str
        A label for reports.
    """

    function: Callable[[NDArray[np.float64]], Any]
    n: int
    jacobian: Callable[[NDArray[np.float64]], Any] | None = None
    bounds: Any = None
    jacobian_bound: Any = None
    name: str = "function"
    _output_shape: tuple[int, ...] = field(init=False, default=())

    def __post_init__(self) -> None:
        owner = "FunctionQuery"
        if not callable(self.function):
            raise InvalidParameterError(f"`function` of `{owner}` must be callable.")
        if self.jacobian is not None and not callable(self.jacobian):
            raise InvalidParameterError(f"`jacobian` of `{owner}` must be callable or None.")
        object.__setattr__(self, "n", check_positive_int(self.n, "n", owner))
        object.__setattr__(self, "bounds", Bounds.coerce(self.bounds))
        probe = (
            np.zeros(self.n)
            if self.bounds is None
            else np.full(self.n, (self.bounds.lower + self.bounds.upper) / 2)
        )
        with np.errstate(all="ignore"):  # the probe only fixes the output shape
            value = np.asarray(self.function(probe), dtype=float)
        if value.ndim > 1:
            raise DimensionError(
                f"`function` of `{owner}` must return a float or a 1-d array; got {value.shape}."
            )
        object.__setattr__(self, "_output_shape", tuple(value.shape))
        if self.jacobian_bound is not None:
            bound = as_finite_array(self.jacobian_bound, "jacobian_bound", owner, ndim=(0, 1, 2))
            if np.any(bound < 0):
                raise InvalidParameterError(f"`jacobian_bound` of `{owner}` must be >= 0.")
            full = np.broadcast_to(bound, (max(self.m, 1), self.n)) if bound.ndim < 2 else bound
            if full.shape != (self.m, self.n):
                raise DimensionError(f"`jacobian_bound` of `{owner}` must have shape {(self.m, self.n)}.")
            object.__setattr__(self, "jacobian_bound", readonly(np.array(full, dtype=float)))

    @property
    def output_shape(self) -> tuple[int, ...]:
        return self._output_shape

    def _evaluate(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        with np.errstate(all="ignore"):  # a non-finite result is refused just below, with a clear message
            out = np.asarray(self.function(x), dtype=float)
        if out.shape != self._output_shape:
            raise DimensionError(
                f"`function` of `{self.name}` returned shape {out.shape}; expected {self._output_shape}."
            )
        if not np.all(np.isfinite(out)):
            raise InvalidParameterError(f"`function` of `{self.name}` returned a NaN or infinite value.")
        return out

    def _jacobian(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        if self.jacobian is None:
            jac = _finite_difference_jacobian(self._evaluate, x, self.m)
        else:
            jac = np.atleast_2d(np.asarray(self.jacobian(x), dtype=float))
        if jac.shape != (self.m, self.n):
            raise DimensionError(
                f"`jacobian` of `{self.name}` must have shape {(self.m, self.n)}; got {jac.shape}."
            )
        if not np.all(np.isfinite(jac)):
            raise InvalidParameterError(f"`jacobian` of `{self.name}` returned a NaN or infinite value.")
        return jac

    def sup_jacobian(self) -> NDArray[np.float64] | None:
        return None if self.jacobian_bound is None else np.asarray(self.jacobian_bound)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "function", "name": self.name, "n": self.n, "m": self.m}
        if self.bounds is not None:
            out["bounds"] = [self.bounds.lower, self.bounds.upper]
        return out


# -- factories ------------------------------------------------------------------------------------------


BoundsLike = Bounds | tuple[float, float] | None


def sum_query(n: int, *, bounds: BoundsLike = None) -> LinearQuery:
    """Σ x_i as the linear query C = 1ᵀ (kept as a constant row: O(1) memory whatever n)."""
    n = check_positive_int(n, "n", "sum_query")
    return LinearQuery(Row.constant(n, 1.0), bounds=bounds, name="sum")


def mean(n: int, *, bounds: BoundsLike = None) -> LinearQuery:
    """The average (1/n) Σ x_i as the linear query C = 1ᵀ/n (a constant row: O(1) memory whatever n)."""
    n = check_positive_int(n, "n", "mean")
    return LinearQuery(Row.constant(n, 1.0 / n), bounds=bounds, name="mean")


def weighted_mean(weights: ArrayLike, *, bounds: BoundsLike = None) -> LinearQuery:
    """Σ c_i x_i with c = weights / Σ weights, so that C1 = 1 (Farokhi & Sandberg, Example 2)."""
    w = as_finite_array(weights, "weights", "weighted_mean", ndim=1)
    total = float(w.sum())
    if w.size == 0 or total == 0.0:
        raise InvalidParameterError("`weights` of `weighted_mean` must be non-empty with a non-zero sum.")
    return LinearQuery(Row(w / total), bounds=bounds, name="weighted_mean")


def weighted_sum(weights: ArrayLike, *, bounds: BoundsLike = None) -> LinearQuery:
    """Σ w_i x_i, a row of weights."""
    return LinearQuery(Row(weights), bounds=bounds, name="weighted_sum")


def identity(n: int, *, bounds: BoundsLike = None, scale: float = 1.0) -> LinearQuery:
    """The identity release f(x) = x, or s·x (Farokhi & Sandberg, Example 1 and Corollary 1); O(1) memory."""
    n = check_positive_int(n, "n", "identity")
    return LinearQuery(Identity(n, scale), bounds=bounds, name="identity")


def diagonal(weights: ArrayLike, *, bounds: BoundsLike = None) -> LinearQuery:
    """f(x)_i = w_i x_i: one weighted output per record."""
    return LinearQuery(Diagonal(weights), bounds=bounds, name="diagonal")


def linear(matrix: Any, *, bounds: BoundsLike = None, name: str = "linear") -> LinearQuery:
    """f(x) = Cx for a dense array, a ``scipy.sparse`` matrix or a :mod:`privnoise.linalg` operator."""
    return LinearQuery(matrix, bounds=bounds, name=name)


def variance(n: int, *, bounds: BoundsLike = None) -> FunctionQuery:
    """The sample variance (1/(n−1)) Σ (x_i − x̄)² (Farokhi & Sandberg, Example 3), with its exact Jacobian.

    ∂f/∂x_i = 2(x_i − x̄)/(n − 1). With declared bounds [a, b], |x_i − x̄| ≤ (b − a)(1 − 1/n), which gives the
    declared Jacobian bound 2(b − a)(1 − 1/n)/(n − 1) used for data-independent guarantees.
    """
    n = check_positive_int(n, "n", "variance", minimum=2)
    b = Bounds.coerce(bounds)

    def f(x: NDArray[np.float64]) -> float:
        return float(np.var(x, ddof=1))

    def jac(x: NDArray[np.float64]) -> NDArray[np.float64]:
        return 2.0 * (x - x.mean()) / (n - 1)

    jb = None if b is None else 2.0 * b.width * (1.0 - 1.0 / n) / (n - 1)
    return FunctionQuery(f, n, jacobian=jac, bounds=b, jacobian_bound=jb, name="variance")


sum = sum_query  # noqa: A001 - ``queries.sum`` mirrors mean/variance; the builtin is not used below
