"""Numbers out of Arrow arrays without pandas: (missing, float64 values) of one Arrow array.

pyarrow's ``to_numpy`` imports pandas and its compute functions build their docstrings on first use; reading a
numeric column through the Arrow memory layout (validity bitmap, values buffer) needs neither, so that a
command-line release of a small CSV file starts and ends in a fraction of a second.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._optional import require

__all__ = ["arrow_floats"]

#: Arrow's primitive numeric types (by their name) and the numpy type of their values buffer.
_ARROW_PRIMITIVES: dict[str, np.dtype[Any]] = {
    **{f"int{b}": np.dtype(f"int{b}") for b in (8, 16, 32, 64)},
    **{f"uint{b}": np.dtype(f"uint{b}") for b in (8, 16, 32, 64)},
    "float": np.dtype(np.float32),
    "double": np.dtype(np.float64),
}
_EXACT_INTEGERS = 2.0**53


def arrow_floats(chunk: Any) -> tuple[NDArray[np.bool_], NDArray[np.float64]]:
    """One Arrow array as (missing, float64 values with NaN where missing).

    Integers and floats are read from the Arrow memory layout itself (validity bitmap and values buffer), which
    needs neither ``pyarrow.compute`` nor ``to_numpy`` — the latter imports pandas —: a command-line release of a
    CSV file pays for neither. Other types (decimals), and integers beyond 2⁵³, which Arrow's safe cast refuses,
    go through Arrow's own cast.
    """
    dtype = _ARROW_PRIMITIVES.get(str(chunk.type))
    n, offset = len(chunk), chunk.offset
    buffers = chunk.buffers()
    if dtype is not None and n > 0:
        raw = np.frombuffer(buffers[1], dtype=dtype, count=offset + n)[offset:]
        if dtype.kind == "f" or not np.any(np.abs(raw.astype(np.float64)) > _EXACT_INTEGERS):
            values = raw.astype(np.float64)
            missing = np.isnan(values)
            if buffers[0] is not None:
                bits = np.unpackbits(np.frombuffer(buffers[0], dtype=np.uint8), bitorder="little")
                missing |= ~bits[offset:offset + n].astype(bool)
            values[missing] = np.nan
            return missing, values
    pa = require("pyarrow", feature="reading Arrow data")
    missing = np.from_dlpack(chunk.is_null(nan_is_null=True).cast(pa.uint8())).astype(bool)
    floats = chunk.cast(pa.float64())
    if floats.null_count == 0:
        return missing, np.array(np.from_dlpack(floats), dtype=np.float64)  # a float64 copy
    data = np.frombuffer(floats.buffers()[1], dtype=np.float64, count=floats.offset + len(floats))
    return missing, np.where(missing, np.nan, data[floats.offset:])
