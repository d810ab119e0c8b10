"""Shared parameter checks with uniform error messages.

Each check raises :class:`~privnoise.exceptions.InvalidParameterError` (or ``DimensionError``) with a message of
the form "`name` of `owner` must be <rule>; got <value>." and returns the cleaned value.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .exceptions import DimensionError, InvalidParameterError

__all__ = [
    "as_finite_array",
    "as_matrix",
    "check_finite",
    "check_in_range",
    "check_positive",
    "check_positive_int",
    "check_probability",
    "describe",
    "readonly",
]


def describe(value: Any) -> str:
    """A short, bounded description of ``value`` for an error message (never a whole data array)."""
    if isinstance(value, np.ndarray):
        if value.size <= 4:
            return np.array2string(value, precision=6)
        return f"an array of shape {value.shape}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _fail(name: str, owner: str, rule: str, value: Any) -> InvalidParameterError:
    return InvalidParameterError(f"`{name}` of `{owner}` must be {rule}; got {describe(value)}.")


def _as_real(value: Any, name: str, owner: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real | np.floating | np.integer):
        if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "fiu":
            return float(value)
        raise _fail(name, owner, "a real number", value)
    return float(value)


def check_finite(value: Any, name: str, owner: str) -> float:
    """Return ``value`` as a finite float."""
    x = _as_real(value, name, owner)
    if not np.isfinite(x):
        raise _fail(name, owner, "finite", value)
    return x


def check_positive(value: Any, name: str, owner: str, *, allow_zero: bool = False) -> float:
    """Return ``value`` as a finite float that is > 0 (or >= 0 with ``allow_zero``)."""
    x = check_finite(value, name, owner)
    if x < 0 or (x == 0 and not allow_zero):
        raise _fail(name, owner, ">= 0" if allow_zero else "> 0", value)
    return x


def check_in_range(
    value: Any,
    name: str,
    owner: str,
    *,
    low: float,
    high: float,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Return ``value`` as a float in the interval between ``low`` and ``high`` (open or closed ends)."""
    x = check_finite(value, name, owner)
    below = x <= low if low_open else x < low
    above = x >= high if high_open else x > high
    if below or above:
        interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        raise _fail(name, owner, f"in {interval}", value)
    return x


def check_probability(value: Any, name: str, owner: str, *, open_right: bool = True) -> float:
    """Return ``value`` as a probability in [0, 1) (or [0, 1] with ``open_right=False``)."""
    return check_in_range(value, name, owner, low=0.0, high=1.0, high_open=open_right)


def check_positive_int(value: Any, name: str, owner: str, *, minimum: int = 1) -> int:
    """Return ``value`` as an int >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral | np.integer):
        raise _fail(name, owner, f"an integer >= {minimum}", value)
    if int(value) < minimum:
        raise _fail(name, owner, f"an integer >= {minimum}", value)
    return int(value)


def as_finite_array(
    value: ArrayLike, name: str, owner: str, *, ndim: int | tuple[int, ...] | None = None
) -> NDArray[np.float64]:
    """Return ``value`` as a float array whose entries are all finite (no NaN, no inf)."""
    if type(value) is float and ndim in (None, 0) and math.isfinite(value):  # one number: no array checks needed
        return np.array(value)
    if isinstance(value, str | bytes):
        raise _fail(name, owner, "a numeric array", value)
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError):
        raise _fail(name, owner, "a numeric array", value) from None
    if raw.dtype.kind not in "fiu":
        # booleans, complex numbers, strings and objects are not real data
        raise _fail(name, owner, "a real numeric array", value if raw.size <= 4 else raw)
    arr = raw.astype(np.float64, copy=False)
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else ndim
        if arr.ndim not in allowed:
            dims = " or ".join(str(d) for d in allowed)
            raise DimensionError(
                f"`{name}` of `{owner}` must have {dims} dimension(s); got shape {arr.shape}."
            )
    distinct = arr[tuple(slice(0, 1) if stride == 0 else slice(None) for stride in arr.strides)]
    if not np.all(np.isfinite(distinct)):  # a broadcast array is checked on its distinct entries only
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise InvalidParameterError(
            f"`{name}` of `{owner}` must contain only finite numbers; got {bad} NaN or infinite entr"
            f"{'y' if bad == 1 else 'ies'}."
        )
    return arr


def as_matrix(
    value: ArrayLike,
    name: str,
    owner: str,
    *,
    square: bool = False,
    symmetric: bool = False,
    positive_definite: bool = False,
) -> NDArray[np.float64]:
    """Return ``value`` as a finite 2-D float array, checking squareness, symmetry, positive definiteness."""
    arr = as_finite_array(value, name, owner, ndim=2)
    if arr.size == 0:
        raise DimensionError(f"`{name}` of `{owner}` must not be empty; got shape {arr.shape}.")
    if (square or symmetric or positive_definite) and arr.shape[0] != arr.shape[1]:
        raise DimensionError(f"`{name}` of `{owner}` must be square; got shape {arr.shape}.")
    if symmetric or positive_definite:
        scale = max(1.0, float(np.max(np.abs(arr))))
        if not np.allclose(arr, arr.T, rtol=0.0, atol=1e-12 * scale):
            raise _fail(name, owner, "symmetric", arr)
        arr = (arr + arr.T) / 2.0
    if positive_definite:
        try:
            np.linalg.cholesky(arr)
        except np.linalg.LinAlgError:
            raise _fail(name, owner, "positive definite", arr) from None
    return arr


def readonly(arr: NDArray[Any]) -> NDArray[Any]:
    """Return a read-only copy of ``arr`` that no caller can make writable again (it owns its memory)."""
    owned = np.array(arr, copy=True)
    owned.flags.writeable = False
    return owned
