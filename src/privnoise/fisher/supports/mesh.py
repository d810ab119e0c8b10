"""A user's conforming simplicial mesh (points and cells, 2-D or 3-D) as a support: the union of its cells."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..._validation import as_finite_array, readonly
from ...exceptions import DimensionError, InvalidParameterError
from .base import FloatArray, IntArray, Support, check_dim, simplex_volumes

__all__ = ["MeshSupport"]


@dataclass(frozen=True, slots=True, eq=False)
class MeshSupport(Support):
    """A user's conforming simplicial mesh: ``points`` (N, d) and ``cells`` (E, d + 1), d = 2 or 3.

    The support is the union of the cells; it is used as given (and refined by splitting its cells).

    Examples
    --------
    >>> M = MeshSupport(points=[[0, 0], [1, 0], [0, 1], [1, 1]], cells=[[0, 1, 2], [1, 3, 2]])
    >>> M.volume()
    1.0
    """

    points: Any
    cells: Any

    def __post_init__(self) -> None:
        p = as_finite_array(self.points, "points", "MeshSupport", ndim=2)
        check_dim(p.shape[1], "MeshSupport")
        raw = np.asarray(self.cells)
        if raw.dtype.kind not in "iu" or raw.ndim != 2 or raw.shape[1] != p.shape[1] + 1 or raw.shape[0] == 0:
            raise DimensionError(
                f"`cells` of `MeshSupport` must be a non-empty integer array of shape (E, {p.shape[1] + 1})."
            )
        t = raw.astype(np.int64)
        if t.min() < 0 or t.max() >= p.shape[0]:
            raise InvalidParameterError("`cells` of `MeshSupport` must index rows of `points`.")
        vol = simplex_volumes(p, t)
        if np.any(vol <= 1e-14 * float(np.max(vol))):
            raise InvalidParameterError("`cells` of `MeshSupport` must all have positive volume.")
        object.__setattr__(self, "points", readonly(p))
        object.__setattr__(self, "cells", readonly(t))

    @property
    def dim(self) -> int:
        return int(self.points.shape[1])

    def contains(self, w: ArrayLike, /) -> NDArray[np.bool_]:
        from .._simplices import SimplexLocator

        arr = self._points(w, "contains")
        loc = SimplexLocator(np.asarray(self.points), np.asarray(self.cells))
        return (loc.find(arr.reshape(-1, self.dim))[0] >= 0).reshape(arr.shape[:-1])

    def initial_mesh(self) -> tuple[FloatArray, IntArray]:
        return np.array(self.points), np.array(self.cells)

    def volume(self) -> float:
        return float(np.sum(simplex_volumes(np.asarray(self.points), np.asarray(self.cells))))

    def describe(self) -> dict[str, Any]:
        return {"support": "mesh", "points": len(self.points), "cells": len(self.cells)}
