"""Per-coordinate parameters of the independent-coordinate families, kept compact when they are constant."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import readonly
from ..exceptions import DimensionError
from ..linalg import DiagonalForm, IsotropicForm, SymmetricForm

__all__ = [
    "LISTED",
    "broadcast_pair",
    "compact",
    "coordinate_form",
    "elementwise",
    "keep_compact",
    "listed",
    "smallest",
    "total",
]

#: Up to this many coordinates a parameter is described entry by entry; beyond, by a summary.
LISTED = 64


def compact(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """A read-only float copy of ``values``, or a read-only broadcast view (O(1) memory) when already one."""
    arr = np.asarray(values, dtype=float)
    if arr.ndim == 1 and arr.size > 1 and arr.strides == (0,):
        return np.broadcast_to(arr[:1].copy(), arr.shape)
    return readonly(arr)


def keep_compact(noise: object, **parameters: NDArray[np.float64]) -> None:
    """Set each named parameter of a frozen noise object to its :func:`compact` form."""
    for name, values in parameters.items():
        object.__setattr__(noise, name, compact(values))


def broadcast_pair(
    first: NDArray[np.float64], second: NDArray[np.float64], names: tuple[str, str], owner: str
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Two per-coordinate parameters broadcast to one shape (a DimensionError names both when they cannot be)."""
    try:
        first_values, second_values = np.broadcast_arrays(first, second)
    except ValueError:
        raise DimensionError(
            f"`{names[0]}` and `{names[1]}` of `{owner}` must have matching shapes; got {first.shape} and "
            f"{second.shape}."
        ) from None
    return first_values, second_values


def coordinate_form(per_coordinate: NDArray[np.float64]) -> SymmetricForm:
    """diag(v) for a vector of per-coordinate values (s·I when they are all equal; 1×1 for a scalar)."""
    v = np.atleast_1d(np.asarray(per_coordinate, dtype=float))
    if v.strides == (0,) or v.size == 1 or np.all(v == v[0]):
        return IsotropicForm(v.size, float(v[0]))
    return DiagonalForm(v)


def elementwise(function: Callable[..., Any], *arrays: NDArray[np.float64]) -> NDArray[np.float64]:
    """``function(*arrays)`` per coordinate, computed once when every array is a broadcast constant (O(1) for 10⁹
    equal scales)."""
    values = [np.asarray(a, dtype=float) for a in arrays]
    if all(v.ndim == 1 and v.size > 1 and v.strides == (0,) for v in values):
        return np.broadcast_to(np.asarray(function(*(v[:1] for v in values)), dtype=float), values[0].shape)
    return np.asarray(function(*values), dtype=float)


def smallest(values: NDArray[np.float64]) -> float:
    """min of the coordinates (O(1) for a broadcast constant)."""
    arr = np.asarray(values, dtype=float)
    if arr.ndim == 1 and arr.size > 1 and arr.strides == (0,):
        return float(arr[0])
    return float(np.min(arr))


def total(values: NDArray[np.float64]) -> float:
    """Σ of the coordinates (O(1) for a broadcast constant)."""
    arr = np.asarray(values, dtype=float)
    if arr.ndim == 1 and arr.size > 1 and arr.strides == (0,):
        return float(arr[0]) * arr.size
    return float(np.sum(arr))


def listed(values: NDArray[np.float64]) -> Any:
    """A JSON-ready parameter: the values themselves up to :data:`LISTED` coordinates, else a summary (the constant,
    or the size and range) so that describing noise over 10⁸ records stays small."""
    arr = np.asarray(values, dtype=float)
    if arr.size <= LISTED:
        return arr.tolist()
    if arr.ndim == 1 and arr.strides == (0,):
        return {"constant": float(arr[0]), "size": int(arr.size)}
    return {"size": int(arr.size), "min": float(np.min(arr)), "max": float(np.max(arr))}
