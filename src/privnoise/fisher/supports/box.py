"""The box ``[lower, upper]``: a rectangle (2-D) or a cuboid (3-D) support, meshed as a tensor grid.

References
----------
F. Farokhi, H. Sandberg, Automatica 99 (2019), Problem 2 (a box support; cos² noise per coordinate).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..._validation import as_finite_array, readonly
from ...exceptions import DimensionError, InvalidParameterError
from .base import FloatArray, IntArray, Support, check_dim

__all__ = ["Box"]


@dataclass(frozen=True, slots=True, eq=False)
class Box(Support):
    """The box ``[lower, upper]`` in 2 or 3 dimensions.

    Examples
    --------
    >>> W = Box([-1, -1], [1, 1])
    >>> W.dim, W.volume()
    (2, 4.0)
    >>> W.contains([[0.0, 0.5], [2.0, 0.0]]).tolist()
    [True, False]
    """

    lower: Any
    upper: Any

    def __post_init__(self) -> None:
        lo = as_finite_array(self.lower, "lower", "Box", ndim=1)
        hi = as_finite_array(self.upper, "upper", "Box", ndim=1)
        if lo.shape != hi.shape:
            raise DimensionError(
                f"`lower` and `upper` of `Box` must have the same length; got {lo.size}, {hi.size}."
            )
        check_dim(lo.size, "Box")
        if np.any(hi <= lo):
            raise InvalidParameterError("`upper` of `Box` must be > `lower` in every coordinate.")
        object.__setattr__(self, "lower", readonly(lo))
        object.__setattr__(self, "upper", readonly(hi))

    @property
    def dim(self) -> int:
        return int(self.lower.size)

    @property
    def widths(self) -> FloatArray:
        return np.asarray(self.upper - self.lower)

    def contains(self, w: ArrayLike, /) -> NDArray[np.bool_]:
        arr = self._points(w, "contains")
        return np.all((arr >= self.lower) & (arr <= self.upper), axis=-1)

    def initial_mesh(self) -> tuple[FloatArray, IntArray]:
        from skfem import MeshTet, MeshTri

        # split the longer sides so that the coarse cells are not long and thin
        ratio = self.widths / self.widths.min()
        axes = [
            np.linspace(lo, hi, 1 + 2 * max(1, round(float(r))))
            for lo, hi, r in zip(self.lower, self.upper, ratio, strict=True)
        ]
        mesh = MeshTri.init_tensor(*axes) if self.dim == 2 else MeshTet.init_tensor(*axes)
        return np.asarray(mesh.p.T, dtype=float), np.asarray(mesh.t.T, dtype=np.int64)

    def volume(self) -> float:
        return float(np.prod(self.widths))

    def describe(self) -> dict[str, Any]:
        return {"support": "box", "lower": self.lower.tolist(), "upper": self.upper.tolist()}
