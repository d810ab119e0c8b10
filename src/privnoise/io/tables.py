"""The columns a query uses, from a CSV or Parquet file, as one checked table (for :class:`privnoise.Session`).

:func:`table` reads only the columns named, each checked before anything is computed from it:

* ``numeric`` columns hold finite numbers (float64; an empty CSV cell or a null is a missing value, refused under
  ``missing="error"``, else left null for the session's policy); NaN and inf are refused;
* ``text`` columns (privacy units, group keys, categories) keep pyarrow's inferred type; no value is longer than
  ``PRIVNOISE_MAX_FIELD_BYTES``.

CSV files go through pyarrow's reader in blocks of one line at most; wherever it stops, the strict reader of
:mod:`privnoise.io.csv_files` finds the line and the rule. Errors never quote a value of the file. A CSV file of at
most :data:`~privnoise.io.csv_files.STRICT_READER_BYTES` whose columns read are all numeric, under
``missing="error"``, is read by the strict reader alone into a mapping of float64 numpy columns: the same values and
the same refusals without importing pyarrow, which costs more than reading such a file. (Text columns keep pyarrow's
inferred types, so a file with one goes through pyarrow whatever its size.)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._optional import require
from ..exceptions import InvalidParameterError
from . import csv_files
from .arrow_numbers import arrow_floats
from .columnar import open_parquet, parquet_column, parquet_error
from .csv_files import (
    arrow_block_size,
    detect_delimiter,
    locate,
    number,
    read_header,
    strict_rows,
)
from .limits import Limits, check_text, limits, shown
from .missing import Missing, check_missing

__all__ = ["CSV_SUFFIXES", "PARQUET_SUFFIXES", "table"]

CSV_SUFFIXES = (".csv", ".tsv", ".txt")
PARQUET_SUFFIXES = (".parquet", ".pq")


def table(
    path: str | Path, *, numeric: Sequence[str] = (), text: Sequence[str] = (), missing: Missing = "error"
) -> Any:
    """The ``numeric`` and ``text`` columns of a CSV or Parquet file as a pyarrow Table, or for a small CSV file of
    numeric columns a mapping of numpy columns with the same values (module docstring)."""
    file = Path(path)
    suffix = file.suffix.lower()
    wanted = list(dict.fromkeys([*numeric, *text]))
    numbers = set(numeric)
    if suffix in PARQUET_SUFFIXES:
        return _parquet(file, wanted, numbers, missing)
    if suffix in CSV_SUFFIXES:
        numbers_only = bool(wanted) and numbers.issuperset(wanted)
        if numbers_only and isinstance(missing, str) and missing == "error" and (
            _size(file) <= csv_files.STRICT_READER_BYTES
        ):
            return _small_csv(file, wanted)
        return _csv(file, wanted, numbers, missing)
    raise InvalidParameterError(
        f"{file}: must be a CSV ({', '.join(CSV_SUFFIXES)}) or Parquet ({', '.join(PARQUET_SUFFIXES)}) file; the "
        "extension says which reader to use."
    )


def _nulls(chunk: Any) -> np.ndarray:
    """The null mask of one Arrow array (its validity bitmap; NaN is a value, not a null)."""
    validity = chunk.buffers()[0]
    if validity is None or chunk.null_count == 0:
        return np.zeros(len(chunk), dtype=bool)
    bits = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")
    return ~bits[chunk.offset:chunk.offset + len(chunk)].astype(bool)


def _check(result: Any, path: Path, names: list[str], numbers: set[str], missing: Missing, bounds: Limits) -> str:
    """The first problem of a table read by pyarrow ("" if none): a type, a missing or non-finite value, a long
    field. Row numbers count data rows from 0 (Parquet has no lines)."""
    pa = require("pyarrow", feature="reading data files")
    if result.num_rows == 0:
        return f"{path}: the file has no data rows."
    for name, column in zip(names, result.columns, strict=True):
        kind = column.type
        where = f"{path}, column {shown(name)}"
        if name in numbers:
            if not (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind)):
                return f"{where}: holds {kind}, not numbers."
            parts = [arrow_floats(chunk) for chunk in column.chunks]
            values = np.concatenate([v for _, v in parts]) if parts else np.zeros(0)
            nulls = np.concatenate([_nulls(chunk) for chunk in column.chunks]) if parts else np.zeros(0, bool)
            bad = ~np.isfinite(values) & ~nulls
            if bad.any():
                return f"{where}: row {int(np.argmax(bad))} is not finite (NaN and inf are refused)."
            if nulls.any() and missing == "error":
                try:
                    check_missing(missing, f"{where}: row {int(np.argmax(nulls))} is missing")
                except InvalidParameterError as exc:
                    return str(exc)
        elif pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind):
            pc = require("pyarrow.compute", feature="reading data files")
            longest = pc.max(pc.binary_length(column)).as_py()
            if longest is not None and longest > bounds.max_field_bytes:
                return f"{where}: a value longer than {bounds.rule('max_field_bytes')}."
    return ""


def _parquet(file: Path, wanted: list[str], numbers: set[str], missing: Missing) -> Any:
    bounds = limits()
    parquet = open_parquet(file, bounds)
    for name in wanted:
        parquet_column(parquet, file, name)
    errors = (require("pyarrow", feature="reading Parquet").ArrowException, OSError)
    try:
        result = parquet.read(columns=wanted)
    except errors as exc:
        raise parquet_error(file, exc) from None
    problem = _check(result, file, wanted, numbers, missing, bounds)
    if problem:
        raise InvalidParameterError(problem)
    return result


def _csv(file: Path, wanted: list[str], numbers: set[str], missing: Missing) -> Any:
    pa = require("pyarrow", feature="reading CSV files into a session")
    pa_csv = require("pyarrow.csv", feature="reading CSV files into a session")
    bounds = limits()
    sep = detect_delimiter(file, bounds)
    names = read_header(file, sep, bounds)
    index = {name: locate(file, names, name) for name in wanted}
    labels = [f"c{i}" for i in range(len(names))]
    check_text(file, bounds)  # pyarrow reads some columns only: every byte is checked here

    def read(ignore_empty_lines: bool) -> Any:
        return pa_csv.read_csv(
            file,
            read_options=pa_csv.ReadOptions(column_names=labels, skip_rows=1, block_size=arrow_block_size(bounds)),
            parse_options=pa_csv.ParseOptions(delimiter=sep, ignore_empty_lines=ignore_empty_lines),
            convert_options=pa_csv.ConvertOptions(
                include_columns=[labels[index[name]] for name in wanted],
                column_types={labels[index[name]]: pa.float64() for name in wanted if name in numbers},
                null_values=[""],
                quoted_strings_can_be_null=False,
            ),
        )

    try:
        result = read(ignore_empty_lines=False)
    except pa.ArrowException:
        result = None
    if result is None or _check(result, file, wanted, numbers, missing, bounds):
        _strict_check(file, names, sep, index, numbers, missing, bounds)  # raises with the line, or passes
        try:  # only blank lines at the end stopped the fast reader (or nothing did)
            result = read(ignore_empty_lines=True)
        except pa.ArrowException:
            raise InvalidParameterError(f"{file}: the CSV file could not be read (malformed).") from None
        problem = _check(result, file, wanted, numbers, missing, bounds)
        if problem:
            raise InvalidParameterError(problem)
    return result.rename_columns(wanted)


def _strict_check(
    file: Path, names: list[str], sep: str, index: dict[str, int], numbers: set[str], missing: Missing,
    bounds: Limits,
) -> None:
    """Read every row with the strict reader; the first problem raises with its line."""
    used = {i: name for name, i in index.items()}
    rows = 0
    for line, row in strict_rows(file, names, sep, used, bounds):
        rows += 1
        for name in numbers:
            cell = row[index[name]].strip()
            where = f"{file}, line {line}, column {shown(name)}"
            if not cell:
                check_missing(missing, f"{where}: missing value (empty cell)")
            else:
                number(cell, where)
    if rows == 0:
        raise InvalidParameterError(f"{file}: the file has no data rows after the header.")


def _size(file: Path) -> float:
    """The size of ``file`` in bytes, infinite when it cannot be read (the reader then names the problem)."""
    try:
        return file.stat().st_size
    except OSError:
        return float("inf")


def _small_csv(file: Path, wanted: list[str]) -> dict[str, np.ndarray]:
    """The numeric columns ``wanted`` of a small CSV file, by the strict reader alone (``missing="error"``)."""
    bounds = limits()
    sep = detect_delimiter(file, bounds)
    names = read_header(file, sep, bounds)
    index = {name: locate(file, names, name) for name in wanted}
    check_text(file, bounds)
    cells: dict[str, list[float]] = {name: [] for name in wanted}
    for line, row in strict_rows(file, names, sep, {i: name for name, i in index.items()}, bounds):
        for name in wanted:
            value = row[index[name]].strip()
            where = f"{file}, line {line}, column {shown(name)}"
            if not value:
                check_missing("error", f"{where}: missing value (empty cell)")
            cells[name].append(number(value, where))
    if not cells[wanted[0]]:
        raise InvalidParameterError(f"{file}: the file has no data rows after the header.")
    return {name: np.array(values, dtype=np.float64) for name, values in cells.items()}
