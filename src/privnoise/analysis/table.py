"""The columns a session reads: numeric values with their missing entries, and keys (unit ids, group keys) as codes.

A :class:`Table` wraps what the analyst passes — a mapping of column names to arrays, a pandas or polars DataFrame,
a pyarrow Table, or a CSV or Parquet path (read through pyarrow, as ``privnoise.io`` reads them) — and extracts
one column at a time, on first use, cached:

* :meth:`Table.numeric` — float64 values and a mask of missing entries (null, None, NaN). Infinities are refused:
  no bound can be declared around them.
* :meth:`Table.codes` — integer codes 0 … m − 1 and the m distinct labels (strings, numbers or None), for group
  keys and filters;
* :meth:`Table.unit_codes` — the codes alone, for the privacy unit (whose labels are never needed: a unit id is
  never released), without building a Python label per unit.

Nothing here derives a bound or a count that is released; the session decides what to do with missing values
(the missing-value policy) before any noise is drawn.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._optional import require
from .._validation import describe
from ..exceptions import InvalidParameterError
from ..io.arrow_numbers import arrow_floats

__all__ = ["KeyColumn", "NumericColumn", "Table", "tuple_codes"]

_OWNER = "Session"


@dataclass(frozen=True, slots=True)
class NumericColumn:
    """A numeric column: values (missing entries hold NaN) and the mask of missing entries."""

    values: NDArray[np.float64]
    missing: NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class KeyColumn:
    """A key column as codes into ``labels`` (a missing key is the label None)."""

    codes: NDArray[np.int64]
    labels: list[Any]


def _module(obj: Any) -> str:
    return type(obj).__module__.split(".")[0]


def _label(value: Any) -> Any:
    """A plain Python label (numpy scalars unwrapped; NaN is a missing key)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value != value:
        return None
    return value


def _numeric_array(raw: Any, name: str) -> NumericColumn:
    array = np.asarray(raw)
    if array.dtype == object:
        missing = np.array([v is None or (isinstance(v, float) and v != v) for v in array], dtype=bool)
        try:
            values = np.where(missing, np.nan, array).astype(np.float64)
        except (TypeError, ValueError):
            raise InvalidParameterError(f"column {name!r} of `{_OWNER}` must hold numbers; got {describe(array)}.") from None
    elif array.dtype.kind in "fiub":
        if array.dtype.kind == "b":
            raise InvalidParameterError(f"column {name!r} of `{_OWNER}` must hold numbers; it holds booleans.")
        values = array.astype(np.float64, copy=False)
        missing = np.isnan(values)
    else:
        raise InvalidParameterError(f"column {name!r} of `{_OWNER}` must hold numbers; it holds {array.dtype}.")
    if values.ndim != 1:
        raise InvalidParameterError(f"column {name!r} of `{_OWNER}` must be one-dimensional; got shape {values.shape}.")
    if np.isinf(values).any():
        raise InvalidParameterError(f"column {name!r} of `{_OWNER}` holds an infinite value; infinities are refused.")
    return NumericColumn(values, missing)


def _arrow_numeric(column: Any, name: str) -> NumericColumn:
    pa = require("pyarrow", feature="reading Arrow data")
    kind = column.type
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind)):
        raise InvalidParameterError(f"column {name!r} of `{_OWNER}` must hold numbers; it holds {kind}.")
    chunks = column.chunks if hasattr(column, "chunks") else [column]
    parts = [arrow_floats(chunk) for chunk in chunks]
    missing = np.concatenate([m for m, _ in parts]) if parts else np.zeros(0, dtype=bool)
    values = np.concatenate([v for _, v in parts]) if parts else np.zeros(0, dtype=np.float64)
    if np.isinf(values).any():
        raise InvalidParameterError(f"column {name!r} of `{_OWNER}` holds an infinite value; infinities are refused.")
    return NumericColumn(values, missing)


def _arrow_codes(column: Any) -> KeyColumn:
    pa = require("pyarrow", feature="reading Arrow data")
    pc = require("pyarrow.compute", feature="reading Arrow data")
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    encoded = pc.dictionary_encode(column, null_encoding="encode")
    labels = [_label(v) for v in encoded.dictionary.to_pylist()]
    codes = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    return KeyColumn(codes, labels)


def _numpy_codes(raw: Any) -> KeyColumn:
    array = np.asarray(raw)
    if array.dtype == object:
        labels_seen: dict[Any, int] = {}
        codes = np.empty(array.size, dtype=np.int64)
        for i, value in enumerate(array.tolist()):  # object keys: one dictionary pass (no ordering needed)
            codes[i] = labels_seen.setdefault(_label(value), len(labels_seen))
        return KeyColumn(codes, list(labels_seen))
    uniques, inverse = np.unique(array, return_inverse=True)
    return KeyColumn(inverse.astype(np.int64, copy=False).reshape(-1), [_label(v) for v in uniques])


def tuple_codes(columns: list[KeyColumn], rows: int) -> KeyColumn:
    """The codes of the key tuples of several key columns (labels: tuples of their labels)."""
    if rows == 0:
        return KeyColumn(np.zeros(0, dtype=np.int64), [])
    stacked = np.stack([c.codes for c in columns], axis=1)
    unique, inverse = np.unique(stacked, axis=0, return_inverse=True)
    labels = [tuple(c.labels[int(j)] for c, j in zip(columns, row, strict=True)) for row in unique]
    return KeyColumn(inverse.reshape(-1).astype(np.int64, copy=False), labels)


class Table:
    """The analyst's data, read one column at a time (see the module docstring)."""

    def __init__(self, data: Any, *, delimiter: str | None = None) -> None:
        self._numeric: dict[str, NumericColumn] = {}
        self._codes: dict[str, KeyColumn] = {}
        self._unit_codes: dict[str, NDArray[np.int64]] = {}
        self._kind, self._data, self._names = self._open(data, delimiter)
        lengths = {self._length(name) for name in self._names[:1]}
        self.rows = lengths.pop() if lengths else 0

    # -- opening -------------------------------------------------------------------------------------------------
    @staticmethod
    def _open(data: Any, delimiter: str | None) -> tuple[str, Any, list[str]]:
        if isinstance(data, str | Path):
            path = Path(data)
            suffix = path.suffix.lower()
            if not path.is_file():
                raise InvalidParameterError(f"`data` of `{_OWNER}`: {path} is not a file.")
            if suffix in (".parquet", ".pq"):
                pq = require("pyarrow.parquet", feature="reading Parquet files")
                file = pq.ParquetFile(path)
                return "parquet", path, list(file.schema_arrow.names)
            if suffix in (".csv", ".tsv", ".txt"):
                from ..io.csv_files import detect_delimiter

                csv = require("pyarrow.csv", feature="reading CSV files into a session")
                sep = delimiter or detect_delimiter(path)
                table = csv.read_csv(path, parse_options=csv.ParseOptions(delimiter=sep))
                table = table.rename_columns([name.strip() for name in table.column_names])
                return "arrow", table, list(table.column_names)
            raise InvalidParameterError(f"`data` of `{_OWNER}` must be a .csv or .parquet file; got {path.name!r}.")
        module = _module(data)
        name = type(data).__name__
        if module == "pandas" and name == "DataFrame":
            return "pandas", data, [str(c) for c in data.columns]
        if module == "polars" and name == "DataFrame":
            return "polars", data, list(data.columns)
        if module == "pyarrow" and name in ("Table", "RecordBatch"):
            return "arrow", data, list(data.column_names)
        if module == "dask":
            raise InvalidParameterError(
                f"`data` of `{_OWNER}`: a Dask data frame is aggregated on its cluster, not read into a table "
                "(pass it to Session: privnoise.scale.DaskBackend)."
            )
        if isinstance(data, Mapping):
            columns = {str(k): v for k, v in data.items()}
            sizes = {len(np.asarray(v)) if np.ndim(v) else -1 for v in columns.values()}
            if len(sizes) > 1 or -1 in sizes:
                raise InvalidParameterError(f"`data` of `{_OWNER}` must map names to columns of one length.")
            return "mapping", columns, list(columns)
        raise InvalidParameterError(
            f"`data` of `{_OWNER}` must be a pandas or polars DataFrame, a pyarrow Table, a mapping of columns or a "
            f"CSV/Parquet path; got {describe(data)}."
        )

    def _length(self, name: str) -> int:
        if self._kind == "parquet":
            pq = require("pyarrow.parquet", feature="reading Parquet files")
            return int(pq.ParquetFile(self._data).metadata.num_rows)
        if self._kind in ("arrow", "polars"):
            return int(self._data.num_rows if self._kind == "arrow" else self._data.height)
        return int(len(self._data[name]))

    # -- columns ---------------------------------------------------------------------------------------------
    @property
    def columns(self) -> list[str]:
        return list(self._names)

    def check(self, name: Any, role: str) -> str:
        """``name`` when it is a column of the table; a clear error naming the role otherwise."""
        if not isinstance(name, str) or name not in self._names:
            raise InvalidParameterError(
                f"`{role}` of `{_OWNER}` must be a column of the data ({', '.join(map(repr, self._names))}); "
                f"got {describe(name)}."
            )
        return name

    def kind(self, name: str) -> str:
        """What ``name`` holds: "number", "text", or a description of another type (booleans, dates, a mix);
        read from the column's type, and from its values only for a column of Python objects."""
        raw = self._raw(name)
        if self._kind in ("arrow", "parquet", "polars"):
            pa = require("pyarrow", feature="reading Arrow data")
            kind = (raw.to_arrow() if self._kind == "polars" else raw).type
            if pa.types.is_dictionary(kind):
                kind = kind.value_type
            if pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind):
                return "number"
            if pa.types.is_string(kind) or pa.types.is_large_string(kind):
                return "text"
            return "booleans" if pa.types.is_boolean(kind) else f"values of type {kind}"
        if self._kind == "pandas":
            pd = require("pandas", feature="reading pandas data")
            if pd.api.types.is_bool_dtype(raw.dtype):
                return "booleans"
            if pd.api.types.is_numeric_dtype(raw.dtype):
                return "number"
            if not (pd.api.types.is_object_dtype(raw.dtype) or pd.api.types.is_string_dtype(raw.dtype)
                    or isinstance(raw.dtype, pd.CategoricalDtype)):
                return f"values of type {raw.dtype}"
            raw = raw.to_numpy(dtype=object, na_value=None)
        array = np.asarray(raw)
        if array.dtype.kind in "fiu":
            return "number"
        if array.dtype.kind in "US":
            return "text"
        if array.dtype.kind == "b":
            return "booleans"
        if array.dtype != object:
            return f"values of type {array.dtype}"
        present = [v for v in array.tolist() if _label(v) is not None]
        if all(isinstance(v, str) for v in present):
            return "text"
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
            return "number"
        return "a mix of types"

    def _raw(self, name: str) -> Any:
        if self._kind == "parquet":
            pq = require("pyarrow.parquet", feature="reading Parquet files")
            return pq.read_table(self._data, columns=[name]).column(0)
        if self._kind == "arrow":
            return self._data.column(name)
        return self._data[name]

    def numeric(self, name: str) -> NumericColumn:
        """The column ``name`` as numbers with its missing mask (cached)."""
        if name not in self._numeric:
            raw = self._raw(name)
            if self._kind in ("arrow", "parquet"):
                column = _arrow_numeric(raw, name)
            elif self._kind == "polars":
                if not raw.dtype.is_numeric():
                    raise InvalidParameterError(f"column {name!r} of `{_OWNER}` must hold numbers; it holds {raw.dtype}.")
                series = raw.cast(float)
                column = _numeric_array(series.fill_null(float("nan")).to_numpy(), name)
            elif self._kind == "pandas":
                pd = require("pandas", feature="reading pandas data")
                if not pd.api.types.is_numeric_dtype(raw.dtype) or pd.api.types.is_bool_dtype(raw.dtype):
                    raise InvalidParameterError(f"column {name!r} of `{_OWNER}` must hold numbers; it holds {raw.dtype}.")
                column = _numeric_array(raw.to_numpy(dtype=np.float64, na_value=np.nan), name)
            else:
                column = _numeric_array(raw, name)
            self._numeric[name] = column
        return self._numeric[name]

    def codes(self, name: str) -> KeyColumn:
        """The column ``name`` as integer codes and labels (cached)."""
        if name not in self._codes:
            raw = self._raw(name)
            if self._kind in ("arrow", "parquet"):
                column = _arrow_codes(raw)
            elif self._kind == "pandas":
                pd = require("pandas", feature="reading pandas data")
                codes, uniques = pd.factorize(raw, use_na_sentinel=True)
                codes = np.asarray(codes, dtype=np.int64)
                labels = [_label(v) for v in np.asarray(uniques, dtype=object)]
                if (codes < 0).any():
                    codes = np.where(codes < 0, len(labels), codes)
                    labels.append(None)
                column = KeyColumn(codes, labels)
            elif self._kind == "polars":
                try:
                    column = _arrow_codes(raw.to_arrow())
                except ImportError:
                    column = _numpy_codes(raw.to_numpy())
            else:
                column = _numpy_codes(raw)
            if column.codes.size != self.rows:
                raise InvalidParameterError(f"column {name!r} of `{_OWNER}` has {column.codes.size} rows, not {self.rows}.")
            self._codes[name] = column
        return self._codes[name]

    def unit_codes(self, name: str) -> NDArray[np.int64]:
        """The column ``name`` as integer codes only, one per distinct value (a missing value is one more code), for
        the privacy unit (cached; the codes of :meth:`codes` when those are already read)."""
        if name in self._codes:
            return self._codes[name].codes
        if name not in self._unit_codes:
            raw = self._raw(name)
            if self._kind == "pandas":
                pd = require("pandas", feature="reading pandas data")
                codes = np.asarray(pd.factorize(raw, use_na_sentinel=True)[0], dtype=np.int64)
                if codes.size and codes.min() < 0:
                    codes = np.where(codes < 0, codes.max() + 1, codes)
            elif self._kind in ("arrow", "parquet", "polars"):
                try:
                    pc = require("pyarrow.compute", feature="reading Arrow data")
                except ImportError:  # polars without pyarrow: the codes of its labels
                    return self.codes(name).codes
                column = raw.to_arrow() if self._kind == "polars" else raw
                if hasattr(column, "combine_chunks"):
                    column = column.combine_chunks()
                encoded = pc.dictionary_encode(column, null_encoding="encode")
                codes = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
            else:
                array = np.asarray(raw)
                if array.dtype == object:
                    return self.codes(name).codes
                codes = np.unique(array, return_inverse=True)[1].astype(np.int64, copy=False).reshape(-1)
            if codes.size != self.rows:
                raise InvalidParameterError(f"column {name!r} of `{_OWNER}` has {codes.size} rows, not {self.rows}.")
            self._unit_codes[name] = codes
        return self._unit_codes[name]
