"""The usual queries by name: sums, means, weighted means, identity and diagonal releases, any matrix, variance.

Each factory builds a :class:`~privnoise.queries.LinearQuery` (kept structured: a constant row or an identity is
O(1) memory whatever n) or, for the sample variance (Farokhi & Sandberg, Example 3), a
:class:`~privnoise.queries.FunctionQuery` with its exact Jacobian and declared Jacobian bound.

Examples
--------
>>> q = mean(4, bounds=(0.0, 1.0))
>>> q.sensitivity("l1")
0.25
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import as_finite_array, check_positive_int
from ..exceptions import InvalidParameterError
from ..linalg import Diagonal, Identity, Row
from .base import Bounds
from .function_query import FunctionQuery
from .linear_query import LinearQuery

__all__ = [
    "BoundsLike",
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
