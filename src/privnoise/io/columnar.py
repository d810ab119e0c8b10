"""Columns of pyarrow tables, Parquet files, pandas and polars frames as float64 arrays, whole or in chunks.

Nulls (and, in pandas and polars, NaN, which those libraries use for a missing value) follow the ``missing`` policy;
infinities and NaN elsewhere are refused. Conversions avoid copies where the column is already float64 without nulls.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._optional import require
from ..exceptions import InvalidParameterError
from .limits import Limits, check_file, limits, listing, shown
from .missing import Missing, check_missing

__all__ = [
    "arrow_values",
    "frame_column",
    "open_parquet",
    "parquet_chunks",
    "parquet_column",
    "parquet_error",
    "parquet_rows",
    "parquet_text_column",
    "series_values",
]


def _finite(values: NDArray[np.float64], where: str, offset: int = 0) -> NDArray[np.float64]:
    if values.size and not np.isfinite(values).all():
        row = int(np.flatnonzero(~np.isfinite(values))[0]) + offset
        raise InvalidParameterError(f"{where}: row {row} is not finite (NaN and inf are refused).")
    return values


_MAGIC = b"PAR1"


def open_parquet(path: str | Path, bounds: Limits | None = None) -> Any:
    """A ``pyarrow.parquet.ParquetFile`` once the file is known to be Parquet: magic bytes at both ends, metadata
    within ``PRIVNOISE_MAX_FILE_BYTES``, a schema of at most ``PRIVNOISE_MAX_COLUMNS`` columns. Errors name the
    file and the rule (a CSV file named ``.parquet`` is "not a Parquet file")."""
    pa = require("pyarrow", feature="reading Parquet")
    pq = require("pyarrow.parquet", feature="reading Parquet")
    bounds = bounds or limits()
    file = Path(path)
    check_file(file)
    size = file.stat().st_size
    with open(file, "rb") as handle:
        head = handle.read(4)
        handle.seek(max(size - 8, 0))
        tail = handle.read(8)
    if size < 12 or head != _MAGIC or tail[4:] != _MAGIC:
        raise InvalidParameterError(f"{file}: not a Parquet file (no Parquet magic bytes at its start and end).")
    footer = int.from_bytes(tail[:4], "little")
    if footer > size - 12:
        raise InvalidParameterError(f"{file}: not a readable Parquet file (its footer is cut off).")
    if footer > bounds.max_file_bytes:
        raise InvalidParameterError(f"{file}: Parquet metadata larger than {bounds.rule('max_file_bytes')}.")
    try:
        parquet = pq.ParquetFile(file, pre_buffer=False, buffer_size=1 << 20)
        names = parquet.schema_arrow.names
    except (pa.ArrowException, OSError) as exc:
        raise InvalidParameterError(f"{file}: not a readable Parquet file ({_kind(exc)} in its metadata).") from None
    if len(names) > bounds.max_columns:
        raise InvalidParameterError(
            f"{file}: the schema has {len(names):,} columns, more than {bounds.rule('max_columns')}."
        )
    return parquet


def _kind(exc: BaseException) -> str:
    """What went wrong, without the library's message (which may quote the file's content)."""
    return {"ArrowInvalid": "invalid data", "ArrowNotImplementedError": "an unsupported feature"}.get(
        type(exc).__name__, "corrupt data"
    )


def parquet_column(parquet: Any, path: str | Path, column: str) -> str:
    """``column`` when the Parquet file has it once; an error listing (some of) its columns otherwise."""
    names = parquet.schema_arrow.names
    count = names.count(column)
    if count != 1:
        problem = "is not in the file" if count == 0 else "appears more than once in the file"
        raise InvalidParameterError(f"{path}: column {shown(column)} {problem} ({listing(names)}).")
    return column


def _arrow_errors() -> type[BaseException]:
    return require("pyarrow", feature="reading Parquet").ArrowException


def parquet_error(path: str | Path, exc: BaseException) -> InvalidParameterError:
    """The one-line error of a Parquet file that fails while its data are read."""
    return InvalidParameterError(f"{path}: not a readable Parquet file ({_kind(exc)} in its data).")


def arrow_values(column: Any, missing: Missing, where: str, offset: int = 0) -> NDArray[np.float64]:
    """A pyarrow Array or ChunkedArray of numbers as float64 (nulls by the ``missing`` policy)."""
    pa = require("pyarrow", feature="reading Arrow data")
    pc = require("pyarrow.compute", feature="reading Arrow data")
    if not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type) or pa.types.is_decimal(column.type)):
        raise InvalidParameterError(f"{where}: the column holds {column.type}, not numbers.")
    if column.null_count:
        valid = pc.is_valid(column)
        first = int(pc.index(valid, False).as_py()) + offset
        replacement = check_missing(missing, f"{where}: row {first} is missing (null)")
        column = pc.drop_null(column) if replacement is None else pc.fill_null(column, replacement)
    values = np.asarray(column.to_numpy() if hasattr(column, "to_numpy") else column, dtype=np.float64)
    return _finite(values, where, offset)


def parquet_rows(path: str | Path) -> int:
    """The number of rows of a Parquet file, from its metadata (no data read)."""
    return int(open_parquet(path).metadata.num_rows)


def parquet_chunks(
    path: str | Path, column: str, *, rows: int = 1 << 20, missing: Missing = "error"
) -> Iterator[NDArray[np.float64]]:
    """Chunks of at most ``rows`` values of ``column`` of a Parquet file, read batch by batch (bounded memory)."""
    # No pre-buffering: pyarrow would otherwise keep every column chunk it has read (memory grows with the file);
    # a buffered stream reads each row group's column in 1 MiB pieces.
    file = open_parquet(path)
    parquet_column(file, path, column)
    offset = 0
    batches = file.iter_batches(batch_size=rows, columns=[column])
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except (_arrow_errors(), OSError) as exc:
            raise parquet_error(path, exc) from None
        yield arrow_values(batch.column(0), missing, f"{path}, column {shown(column)}", offset)
        offset += batch.num_rows


def parquet_text_column(path: str | Path, column: str) -> list[str | None]:
    """The values of a column of a Parquet file as text (None for null)."""
    file = open_parquet(path)
    parquet_column(file, path, column)
    try:
        values = file.read(columns=[column]).column(0).to_pylist()
    except (_arrow_errors(), OSError) as exc:
        raise parquet_error(path, exc) from None
    return [None if v is None else str(v) for v in values]


def series_values(series: Any, missing: Missing, where: str) -> NDArray[np.float64]:
    """A pandas or polars Series as float64: None, NA and NaN are missing values."""
    module = type(series).__module__.split(".")[0]
    if module == "polars":
        if not series.dtype.is_numeric():
            raise InvalidParameterError(f"{where}: the column holds {series.dtype}, not numbers.")
        series = series.cast(float).fill_nan(None)
        nulls = int(series.null_count())
        if nulls:
            first = int(series.is_null().arg_max())
            replacement = check_missing(missing, f"{where}: row {first} is missing")
            series = series.drop_nulls() if replacement is None else series.fill_null(replacement)
        return _finite(series.to_numpy().astype(np.float64, copy=False), where)
    pd = require("pandas", feature="reading pandas data")
    if not pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_bool_dtype(series.dtype):
        raise InvalidParameterError(f"{where}: the column holds {series.dtype}, not numbers.")
    absent = series.isna()
    if absent.any():
        first = int(np.flatnonzero(absent.to_numpy())[0])
        replacement = check_missing(missing, f"{where}: row {first} is missing")
        series = series[~absent] if replacement is None else series.fillna(replacement)
    return _finite(series.to_numpy(dtype=np.float64), where)


def frame_column(frame: Any, column: str | None, where: str) -> Any:
    """The column ``column`` of a pandas/polars DataFrame or pyarrow Table (the only one when ``column`` is None)."""
    names = list(frame.column_names if hasattr(frame, "column_names") else frame.columns)
    if column is None:
        if len(names) != 1:
            raise InvalidParameterError(f"`column` of `{where}` is required: the table has {len(names)} columns.")
        column = str(names[0])
    if column not in names:
        raise InvalidParameterError(
            f"`column` of `{where}`: {column!r} is not a column (columns: {', '.join(map(repr, names))})."
        )
    return frame.column(column) if hasattr(frame, "column_names") else frame[column]
