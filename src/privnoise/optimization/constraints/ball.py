"""Euclidean balls {x : ‖x − c‖₂ ≤ r}: the projection scales radially, c + (x − c)·min(1, r/‖x − c‖)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize

from ..._validation import check_positive, readonly
from .base import Constraint, RecessionCone, checked_vector

__all__ = ["Ball"]


@dataclass(frozen=True, slots=True, eq=False)
class Ball(Constraint):
    """The Euclidean ball {x : ‖x − center‖₂ ≤ radius}.

    Parameters
    ----------
    center : array_like, shape (n,)
    radius : float
        ≥ 0 (0 gives the single point ``center``).
    """

    center: Any
    radius: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "center", readonly(checked_vector(self.center, "center", "Ball")))
        object.__setattr__(self, "radius", check_positive(self.radius, "radius", "Ball", allow_zero=True))

    @property
    def dim(self) -> int:
        return int(self.center.size)

    def project(self, x: ArrayLike, /) -> NDArray[np.float64]:
        d = self._points(x, "Ball.project") - self.center
        norm = np.linalg.norm(d, axis=-1, keepdims=True)
        with np.errstate(divide="ignore", over="ignore"):
            scale = np.where(norm > self.radius, self.radius / np.where(norm > 0, norm, 1.0), 1.0)
        return self.center + d * scale

    def contains(self, x: ArrayLike, /, *, atol: float = 1e-9) -> bool:
        d = self._points(x, "Ball.contains") - self.center
        return bool(np.all(np.linalg.norm(d, axis=-1) <= self.radius + atol))

    def recession_cone(self) -> RecessionCone | None:
        return None

    def scipy_constraints(self) -> tuple[optimize.Bounds | None, list[Any]]:
        c, r = self.center, self.radius
        con = {
            "type": "ineq",
            "fun": lambda x: np.array([r * r - float((x - c) @ (x - c))]),
            "jac": lambda x: (-2.0 * (x - c))[None, :],
        }
        return None, [con]
