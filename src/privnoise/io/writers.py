"""Writing a released vector chunk by chunk: ``.npy`` (no extra needed), Parquet or CSV.

The output goes to ``<name>.partial`` first and is renamed into place only when every chunk is written, so a failed
release never leaves a partial output behind, and a published file is complete.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._optional import require
from ..exceptions import InvalidParameterError

__all__ = ["OUTPUT_SUFFIXES", "Writer", "check_output", "open_writer"]

OUTPUT_SUFFIXES = (".npy", ".parquet", ".csv")
_BUFFER_ROWS = 1 << 20


def check_output(path: Any, owner: str) -> Path:
    """``path`` as a Path with a supported suffix, in an existing directory (checked before any data is read)."""
    if not isinstance(path, str | os.PathLike):
        raise InvalidParameterError(f"`out` of `{owner}` must be a path; got {type(path).__name__}.")
    out = Path(path)
    if out.suffix.lower() not in OUTPUT_SUFFIXES:
        raise InvalidParameterError(
            f"`out` of `{owner}` must end with {', '.join(OUTPUT_SUFFIXES)}; got {out.name!r}."
        )
    if not out.parent.is_dir():
        raise InvalidParameterError(f"`out` of `{owner}`: the directory {out.parent} does not exist.")
    if out.suffix.lower() == ".parquet":
        require("pyarrow.parquet", feature="writing Parquet")
    return out


class Writer:
    """Appends blocks of values to ``path`` through a temporary file; ``commit()`` publishes, ``abort()`` drops."""

    def __init__(self, path: Path, length: int, column: str) -> None:
        self.path = path
        self.partial = path.with_name(path.name + ".partial")
        self.length = length
        self.column = column
        self.written = 0
        self.suffix = path.suffix.lower()
        self._buffer: list[NDArray[np.float64]] = []
        self._buffered = 0
        self._handle: Any = None
        if self.suffix == ".npy":
            self._handle = np.lib.format.open_memmap(self.partial, mode="w+", dtype=np.float64, shape=(length,))
        elif self.suffix == ".parquet":
            pa = require("pyarrow", feature="writing Parquet")
            pq = require("pyarrow.parquet", feature="writing Parquet")
            self._handle = pq.ParquetWriter(self.partial, pa.schema([(column, pa.float64())]))
        else:
            self._handle = self.partial.open("w", encoding="utf-8", newline="")
            self._handle.write(f"{column}\n")

    def write(self, block: NDArray[np.float64]) -> None:
        if self.suffix == ".npy":
            self._handle[self.written : self.written + block.size] = block
        else:
            self._buffer.append(np.array(block, copy=True))
            self._buffered += block.size
            if self._buffered >= _BUFFER_ROWS:
                self._flush()
        self.written += block.size

    def _flush(self) -> None:
        if not self._buffer:
            return
        values = np.concatenate(self._buffer)
        self._buffer, self._buffered = [], 0
        if self.suffix == ".parquet":
            pa = require("pyarrow", feature="writing Parquet")
            self._handle.write_table(pa.table({self.column: values}))
        else:
            np.savetxt(self._handle, values, fmt="%.17g")  # 17 significant digits: every double round-trips

    def commit(self) -> Path:
        self._flush()
        if self.suffix == ".npy":
            self._handle.flush()
            del self._handle
        else:
            self._handle.close()
        os.replace(self.partial, self.path)
        return self.path

    def abort(self) -> None:
        try:
            if self.suffix == ".npy":
                del self._handle
            elif self._handle is not None:
                self._handle.close()
        finally:
            self.partial.unlink(missing_ok=True)


def open_writer(path: Path, length: int, *, column: str = "value") -> Writer:
    """A :class:`Writer` for ``length`` values to ``path`` (.npy, .parquet or .csv)."""
    return Writer(path, length, column)
