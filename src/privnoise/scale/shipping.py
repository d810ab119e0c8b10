"""Sending queries and noise to the workers in the size they have in memory.

privnoise keeps per-record parameters that are all equal as broadcast views — the loc of an isotropic Gaussian over
10⁸ records, the weights of a mean, the scales of identical Laplace noise — in O(1) memory. Pickle would write
such a view out element by element (800 MB for 10⁸ doubles). :func:`pack` pickles an object with every zero-stride
array written as its one distinct slice and rebuilt as a broadcast view, so a task carries a few hundred bytes;
:func:`unpack` restores it on the worker.

>>> import numpy as np
>>> view = np.broadcast_to(np.float64(0.5), (10**8,))
>>> packed = pack({"weights": view})
>>> len(packed) < 1000, unpack(packed)["weights"].shape
(True, (100000000,))
"""

from __future__ import annotations

import io
import pickle
from typing import Any

import numpy as np

__all__ = ["pack", "unpack"]


def _broadcast(base: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    return np.broadcast_to(base, shape)


class _CompactPickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, np.ndarray) and obj.size > 1 and 0 in obj.strides:
            corner = tuple(slice(0, 1) if stride == 0 else slice(None) for stride in obj.strides)
            return _broadcast, (np.ascontiguousarray(obj[corner]), obj.shape)
        return NotImplemented


def pack(obj: Any) -> bytes:
    """``obj`` pickled with broadcast views kept as views (module docstring)."""
    buffer = io.BytesIO()
    _CompactPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return buffer.getvalue()


def unpack(data: bytes) -> Any:
    """The object :func:`pack` wrote."""
    return pickle.loads(data)
