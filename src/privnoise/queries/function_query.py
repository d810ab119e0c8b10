"""Nonlinear queries: a continuously differentiable f: ℝⁿ → ℝᵐ (Farokhi & Sandberg, Assumption 1).

The Jacobian F(x) is the caller's, or central finite differences (error O(h²)); a guarantee that does not depend
on the data needs the owner's declared bound on |∂f_k/∂x_i| over the bounded domain, from which the mean value
theorem gives the sensitivity.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import as_finite_array, check_positive_int, readonly
from ..exceptions import DimensionError, InvalidParameterError
from .base import Bounds, Query

__all__ = ["FunctionQuery"]


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
