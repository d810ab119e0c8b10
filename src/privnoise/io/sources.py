"""Where data comes from: one :class:`Source` for arrays, frames, tables, files and iterators of chunks.

A source knows its length when that needs no data (an array, a frame, a Parquet file's metadata) and yields float64
chunks; file and frame readers have already refused NaN, inf and (by the ``missing`` policy) missing values, while
the chunks of an array or of a user's iterator are checked by whoever consumes them (:func:`privnoise.release`
checks them in the same pass that reads them). A chunked source can be iterated more than once (each pass re-reads).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_positive_int, describe
from ..exceptions import DimensionError, InvalidParameterError
from .columnar import (
    arrow_values,
    frame_column,
    parquet_chunks,
    parquet_rows,
    parquet_text_column,
    series_values,
)
from .csv_files import csv_chunks, csv_text_column
from .limits import check_file
from .missing import Missing, validate_missing

__all__ = ["ArraySource", "ChunkSource", "Source", "as_source", "chunks", "read", "read_text"]

CSV_SUFFIXES = (".csv", ".tsv", ".txt")
PARQUET_SUFFIXES = (".parquet", ".pq")


class Source(ABC):
    """Data as chunks of float64 values (see the module docstring)."""

    __slots__ = ()
    length: int | None
    checked: bool
    label: str

    @abstractmethod
    def chunks(self) -> Iterator[NDArray[np.float64]]:
        """The chunks, in record order (a new pass each call)."""

    def materialize(self) -> NDArray[np.float64]:
        """All values in one array."""
        parts = list(self.chunks())
        return np.concatenate(parts) if parts else np.empty(0)

    def __iter__(self) -> Iterator[NDArray[np.float64]]:
        return self.chunks()

    def __len__(self) -> int:
        if self.length is None:
            raise TypeError(f"the length of {self.label} is not known before it is read")
        return self.length


class ArraySource(Source):
    """A 1-d numeric array in memory: chunks are views (converted to float64 per chunk when needed)."""

    __slots__ = ("array", "checked", "chunk_size", "label", "length")

    def __init__(self, data: Any, *, chunk_size: int = 1 << 20, owner: str = "data") -> None:
        if isinstance(data, str | bytes):
            raise InvalidParameterError(f"`{owner}` must be a numeric array; got {describe(data)}.")
        try:
            array = np.asarray(data)
        except (TypeError, ValueError):
            raise InvalidParameterError(f"`{owner}` must be a numeric array; got {describe(data)}.") from None
        if array.dtype.kind not in "fiu":
            raise InvalidParameterError(
                f"`{owner}` must be a real numeric array; got {describe(array if array.size <= 4 else array.dtype)}."
            )
        if array.ndim != 1:
            raise DimensionError(f"`{owner}` must have 1 dimension(s); got shape {array.shape}.")
        self.array = array
        self.length = int(array.size)
        self.checked = False
        self.chunk_size = chunk_size
        self.label = "the array"

    def chunks(self) -> Iterator[NDArray[np.float64]]:
        step = self.chunk_size
        for start in range(0, self.array.size, step):
            yield self.array[start : start + step].astype(np.float64, copy=False)

    def materialize(self) -> NDArray[np.float64]:
        return self.array.astype(np.float64, copy=False)


class ChunkSource(Source):
    """Chunks produced by ``factory()`` (called once per pass), of known or unknown total length."""

    __slots__ = ("checked", "factory", "label", "length")

    def __init__(
        self, factory: Callable[[], Iterable[Any]], *, length: int | None, checked: bool, label: str
    ) -> None:
        self.factory = factory
        self.length = length
        self.checked = checked
        self.label = label

    def chunks(self) -> Iterator[NDArray[np.float64]]:
        for number, chunk in enumerate(self.factory()):
            array = np.asarray(chunk)
            if array.dtype.kind not in "fiu" or array.ndim != 1:
                raise InvalidParameterError(
                    f"chunk {number} of {self.label} must be a 1-d numeric array; got {describe(array)}."
                )
            yield array.astype(np.float64, copy=False)


def _module(obj: Any) -> str:
    return type(obj).__module__.split(".")[0]


def _is_frame(obj: Any) -> bool:
    return (_module(obj) in ("pandas", "polars") and type(obj).__name__ == "DataFrame") or (
        _module(obj) == "pyarrow" and type(obj).__name__ in ("Table", "RecordBatch")
    )


def _is_series(obj: Any) -> bool:
    return _module(obj) in ("pandas", "polars") and type(obj).__name__ == "Series"


def _is_arrow_array(obj: Any) -> bool:
    return _module(obj) == "pyarrow" and type(obj).__name__.endswith(("Array", "ChunkedArray"))


def as_source(
    data: Any,
    column: str | None = None,
    *,
    chunk_size: int = 1 << 20,
    missing: Missing = "error",
    delimiter: str | None = None,
) -> Source:
    """``data`` as a :class:`Source` of chunks of at most ``chunk_size`` values, for releases in bounded memory
    (also :func:`chunks`): a Source (as is), a CSV or Parquet path, a frame or table (``column``), a Series or Arrow
    array, an array or list, or any iterable of 1-d arrays.

    Examples
    --------
    >>> import numpy as np
    >>> [c.tolist() for c in chunks(np.arange(5.0), chunk_size=2)]
    [[0.0, 1.0], [2.0, 3.0], [4.0]]
    """
    owner = "as_source"
    size = check_positive_int(chunk_size, "chunk_size", owner)
    policy = validate_missing(missing, owner)
    if isinstance(data, Source):
        return data
    if isinstance(data, str | Path):
        path = Path(data)
        suffix = path.suffix.lower()
        if column is None:
            raise InvalidParameterError(f"`column` of `{owner}` is required to read {path}.")
        if suffix in PARQUET_SUFFIXES:
            length = parquet_rows(path) if policy != "drop" else None
            return ChunkSource(
                lambda: parquet_chunks(path, column, rows=size, missing=policy), length=length, checked=True,
                label=str(path),
            )
        if suffix in CSV_SUFFIXES:
            check_file(path)  # absent, a directory, a loop of links: the OSError names the file
            return ChunkSource(
                lambda: csv_chunks(path, column, delimiter=delimiter, rows=size, missing=policy),
                length=None, checked=True, label=str(path),
            )
        raise InvalidParameterError(f"`data` of `{owner}` must be a .csv or .parquet file; got {path.name!r}.")
    if _is_frame(data):
        data = frame_column(data, column, owner)
    if _is_series(data):
        return ArraySource(series_values(data, policy, f"column {getattr(data, 'name', '')!r}"), chunk_size=size)
    if _is_arrow_array(data):
        return ArraySource(arrow_values(data, policy, "the Arrow column"), chunk_size=size)
    if isinstance(data, np.ndarray | list | tuple) or np.isscalar(data) or hasattr(data, "__array__"):
        return ArraySource(data, chunk_size=size)
    if isinstance(data, Iterable):
        items = data
        return ChunkSource(lambda: items, length=None, checked=False, label="the chunks")
    raise InvalidParameterError(f"`data` of `{owner}` must be an array, a frame, a file or chunks; got {describe(data)}.")


def read(
    data: Any, column: str | None = None, *, missing: Missing = "error", delimiter: str | None = None
) -> NDArray[np.float64]:
    """All values of one column as a float64 array (files, frames, tables, Series, arrays).

    Examples
    --------
    >>> import numpy as np
    >>> read([1, 2, 3])
    array([1., 2., 3.])
    """
    source = as_source(data, column, missing=missing, delimiter=delimiter)
    values = source.materialize()
    if not source.checked and values.size and not np.isfinite(values).all():
        raise InvalidParameterError("`data` must contain only finite numbers (NaN and inf are refused).")
    return values


chunks = as_source  # the public name: ``pn.io.chunks(data, column, chunk_size=...)``


def read_text(path: str | Path, column: str, *, delimiter: str | None = None) -> list[str | None]:
    """A text column of a CSV or Parquet file (labels such as a region), read with the same header, byte-order
    mark and delimiter handling as :func:`read`; None where a row holds no value."""
    file = Path(path)
    suffix = file.suffix.lower()
    if suffix in PARQUET_SUFFIXES:
        return parquet_text_column(file, column)
    if suffix in CSV_SUFFIXES:
        return csv_text_column(file, column, delimiter=delimiter)
    raise InvalidParameterError(f"`path` of `read_text` must be a .csv or .parquet file; got {file.name!r}.")
