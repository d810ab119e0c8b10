"""Affine subspaces {x : A x = b}: the projection x − A⁺(A x − b), through a point of the set and null(A).

:func:`solve_equalities` gives that point and an orthonormal basis of null(A) (and refuses an empty set); the
polyhedra of :mod:`privnoise.optimization.constraints.polyhedron` eliminate their equalities with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import linalg, optimize

from ..._validation import readonly
from ...exceptions import InvalidParameterError
from .base import Constraint, RecessionCone, checked_system

__all__ = ["Affine", "EqualitySolution", "solve_equalities"]


def solve_equalities(a: NDArray[np.float64], b: NDArray[np.float64], owner: str) -> tuple[Any, Any]:
    """A point of {A x = b} and an orthonormal basis of null(A); InvalidParameterError when inconsistent."""
    x0, *_ = linalg.lstsq(a, b)
    scale = max(1.0, float(np.max(np.abs(b))), float(np.max(np.abs(a))) * float(np.max(np.abs(x0))))
    if np.max(np.abs(a @ x0 - b)) > 1e-9 * scale:
        raise InvalidParameterError(
            f"`offset` of `{owner}` must lie in the range of `matrix` (A x = b has no solution, the set is "
            f"empty); got a residual of {float(np.max(np.abs(a @ x0 - b))):.3g}."
        )
    return x0, linalg.null_space(a)


@dataclass(frozen=True, slots=True, eq=False)
class EqualitySolution(Constraint):
    """The base of the sets with equalities A x = b (:class:`Affine`, the polyhedra): a point x₀ of
    {A x = b} and an orthonormal basis N of null(A) (:func:`solve_equalities`); the solutions are x₀ + N t."""

    _point: NDArray[np.float64] = field(init=False, repr=False)
    _null: NDArray[np.float64] = field(init=False, repr=False)

    def _keep_equalities(self, point: NDArray[np.float64], null: NDArray[np.float64]) -> None:
        object.__setattr__(self, "_point", readonly(point))
        object.__setattr__(self, "_null", readonly(null))


@dataclass(frozen=True, slots=True, eq=False)
class Affine(EqualitySolution):
    """The affine subspace {x : A x = b}.

    Parameters
    ----------
    matrix : array_like, shape (p, n)
        A (any rank).
    offset : array_like, shape (p,)
        b, in the range of A (otherwise the set is empty and construction fails).

    Notes
    -----
    P[x] = x₀ + N Nᵀ(x − x₀) with x₀ a point of the set and N an orthonormal basis of null(A), which equals
    x − A⁺(A x − b).
    """

    matrix: Any
    offset: Any

    def __post_init__(self) -> None:
        owner = "Affine"
        a, b = checked_system(self.matrix, self.offset, ("matrix", "offset"), owner)
        x0, null = solve_equalities(a, b, owner)
        object.__setattr__(self, "matrix", readonly(a))
        object.__setattr__(self, "offset", readonly(b))
        self._keep_equalities(x0, null)

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def project(self, x: ArrayLike, /) -> NDArray[np.float64]:
        d = self._points(x, "Affine.project") - self._point
        return self._point + (d @ self._null) @ self._null.T

    def contains(self, x: ArrayLike, /, *, atol: float = 1e-9) -> bool:
        p = self._points(x, "Affine.contains")
        return bool(np.all(np.abs(p @ self.matrix.T - self.offset) <= atol))

    def recession_cone(self) -> RecessionCone | None:
        if self._null.shape[1] == 0:
            return None
        return RecessionCone(None, self.matrix)

    def scipy_constraints(self) -> tuple[optimize.Bounds | None, list[Any]]:
        return None, [optimize.LinearConstraint(self.matrix, self.offset, self.offset)]
