"""Boxes {x : lower ≤ x ≤ upper} (infinite ends allowed): the projection clips coordinate by coordinate."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize

from ..._validation import readonly
from ...exceptions import DimensionError, InvalidParameterError
from .base import Constraint, RecessionCone, checked_vector

__all__ = ["Box"]


@dataclass(frozen=True, slots=True, eq=False)
class Box(Constraint):
    """The box {x : lower ≤ x ≤ upper}; ends may be ±inf.

    Parameters
    ----------
    lower, upper : array_like, shape (n,)
        Coordinate bounds with lower ≤ upper (a scalar is broadcast to the other's length).
    """

    lower: Any
    upper: Any

    def __post_init__(self) -> None:
        owner = "Box"
        lo = np.atleast_1d(np.asarray(self.lower, dtype=float)) if np.ndim(self.lower) == 0 else None
        hi = np.atleast_1d(np.asarray(self.upper, dtype=float)) if np.ndim(self.upper) == 0 else None
        lo = checked_vector(self.lower, "lower", owner, allow_inf=True) if lo is None else lo
        hi = checked_vector(self.upper, "upper", owner, allow_inf=True) if hi is None else hi
        if np.isnan(lo).any() or np.isnan(hi).any():
            raise InvalidParameterError(f"`lower` and `upper` of `{owner}` must not contain NaN.")
        if lo.size != hi.size and lo.size != 1 and hi.size != 1:
            raise DimensionError(
                f"`lower` and `upper` of `{owner}` differ in length: {lo.size} and {hi.size}."
            )
        lo, hi = np.broadcast_arrays(lo, hi)
        if np.any(lo == np.inf) or np.any(hi == -np.inf):
            raise InvalidParameterError(f"`lower` of `{owner}` must be < inf and `upper` > -inf.")
        if np.any(lo > hi):
            i = int(np.argmax(lo > hi))
            raise InvalidParameterError(
                f"`lower` of `{owner}` must be <= `upper` (the box is empty, so infeasible); "
                f"got lower[{i}] = {lo[i]:g} > upper[{i}] = {hi[i]:g}."
            )
        object.__setattr__(self, "lower", readonly(lo))
        object.__setattr__(self, "upper", readonly(hi))

    @property
    def dim(self) -> int:
        return int(self.lower.size)

    def project(self, x: ArrayLike, /) -> NDArray[np.float64]:
        return np.clip(self._points(x, "Box.project"), self.lower, self.upper)

    def contains(self, x: ArrayLike, /, *, atol: float = 1e-9) -> bool:
        p = self._points(x, "Box.contains")
        return bool(np.all(p >= self.lower - atol) and np.all(p <= self.upper + atol))

    def recession_cone(self) -> RecessionCone | None:
        upper, lower = np.isfinite(self.upper), np.isfinite(self.lower)
        if np.all(lower) and np.all(upper):
            return None
        eye = np.eye(self.dim)  # once, not once per coordinate
        rows = np.vstack([eye[upper], -eye[lower]])  # d_i ≤ 0 where bounded above, d_i ≥ 0 where bounded below
        return RecessionCone(rows if rows.size else None, None)

    def scipy_constraints(self) -> tuple[optimize.Bounds | None, list[Any]]:
        return optimize.Bounds(self.lower, self.upper), []
