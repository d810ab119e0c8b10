"""The adjacency norms of Lipschitz privacy and their duals (Koufogiannis, Han & Pappas, eq. (4) and constraint (5)).

=========  ===============================  ==============================
``norm``   adjacency ‖u − u′‖               dual norm of the score z
=========  ===============================  ==============================
"l1"       Σ|dᵢ|                            max|zᵢ|
"l2"       √Σdᵢ²                            √Σzᵢ²
"linf"     max|dᵢ|                          Σ|zᵢ|
"l1-l2"    Σ_users ‖d_i‖₂ (blocks, eq. (4))  max_users ‖z_i‖₂ (constraint (5))
=========  ===============================  ==============================
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_positive_int
from ..exceptions import DimensionError, InvalidParameterError

__all__ = ["NORMS", "Norm", "check_norm", "dual_norm"]

Norm = Literal["l1", "l2", "linf", "l1-l2"]
NORMS = ("l1", "l2", "linf", "l1-l2")


def check_norm(norm: Any, block: Any, dim: int, owner: str) -> int | None:
    """``norm`` checked, and its block size for "l1-l2" (None for the others)."""
    if norm not in NORMS:
        raise InvalidParameterError(f"`norm` of `{owner}` must be one of {', '.join(NORMS)}; got {norm!r}.")
    if norm != "l1-l2":
        if block is not None:
            raise InvalidParameterError(
                f"`block` of `{owner}` is only used with norm 'l1-l2'; got {block!r}."
            )
        return None
    if block is None:
        raise InvalidParameterError(f"`block` of `{owner}` is required with norm 'l1-l2'; got None.")
    b = check_positive_int(block, "block", owner)
    if dim % b:
        raise DimensionError(f"`block` of `{owner}` must divide the dimension {dim}; got {b}.")
    return b


def dual_norm(z: ArrayLike, norm: Norm = "l2", *, block: int | None = None) -> Any:
    """Dual norm ‖z‖_* over the last axis of ``z`` (see the module table).

    Examples
    --------
    >>> dual_norm([3.0, -4.0], "l1"), dual_norm([3.0, -4.0], "l2"), dual_norm([3.0, -4.0], "linf")
    (4.0, 5.0, 7.0)
    >>> dual_norm([3.0, 4.0, 0.0, 1.0], "l1-l2", block=2)
    5.0
    """
    arr = np.atleast_1d(np.asarray(z, dtype=float))
    b = check_norm(norm, block, arr.shape[-1], "dual_norm")
    if norm == "l1":
        out = np.max(np.abs(arr), axis=-1)
    elif norm == "l2":
        out = np.sqrt(np.sum(arr * arr, axis=-1))
    elif norm == "linf":
        out = np.sum(np.abs(arr), axis=-1)
    else:
        assert b is not None
        blocks = arr.reshape(arr.shape[:-1] + (arr.shape[-1] // b, b))
        out = np.max(np.sqrt(np.sum(blocks * blocks, axis=-1)), axis=-1)
    return float(out) if np.ndim(out) == 0 else out
