"""One numeric column of a CSV file, whole or in chunks: byte-order marks, delimiters and missing values handled once.

* The header is the first line (a UTF-8 byte-order mark is skipped); names are compared without surrounding spaces.
* The delimiter is detected among ``, ; \\t |`` from the first 64 KiB unless given.
* Values are parsed by pyarrow's CSV reader in large blocks when pyarrow is installed; wherever it stops (a blank
  line, a short row, text, NaN, inf, an empty cell) the strict reader below takes over from the same row. The strict
  reader is the reference: every refusal names the file, the line and the column. It also runs alone without pyarrow.
* Missing values (an empty cell, a short row) follow ``missing``: "error" (the default), "drop", or a number to impute.
  NaN and infinities are refused whatever the policy. Blank lines are allowed only at the end of the file.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..exceptions import InvalidParameterError
from .missing import Missing, check_missing

__all__ = ["csv_chunks", "csv_text_column", "detect_delimiter", "read_header"]

DELIMITERS = ",;\t|"


def _open(path: Path) -> Any:
    return path.open(newline="", encoding="utf-8-sig")


def _decode_error(path: Path, exc: UnicodeDecodeError) -> InvalidParameterError:
    return InvalidParameterError(f"{path}: not a UTF-8 text file ({exc.reason} at byte {exc.start}).")


def detect_delimiter(path: Path) -> str:
    """The delimiter of ``path`` among , ; tab | (a comma when the sample is ambiguous)."""
    try:
        with _open(path) as handle:
            sample = handle.read(1 << 16)
    except UnicodeDecodeError as exc:
        raise _decode_error(path, exc) from None
    first = sample.split("\n", 1)[0]
    counts = {d: first.count(d) for d in DELIMITERS}
    best = max(counts, key=lambda d: counts[d])
    if counts[best] == 0:
        return ","
    try:
        return csv.Sniffer().sniff(sample, delimiters=DELIMITERS).delimiter
    except csv.Error:
        return best


def read_header(path: Path, column: str, delimiter: str) -> tuple[list[str], int]:
    """The header names (stripped) and the index of ``column``; refuses an empty file, a missing or repeated name."""
    try:
        with _open(path) as handle:
            header = next(csv.reader(handle, delimiter=delimiter), None)
    except UnicodeDecodeError as exc:
        raise _decode_error(path, exc) from None
    if header is None or not any(cell.strip() for cell in header):
        raise InvalidParameterError(f"{path}: the file is empty; expected a header line naming the columns.")
    names = [cell.strip() for cell in header]
    name = column.strip()
    if names.count(name) != 1:
        problem = "appears more than once in" if name in names else "is not in"
        raise InvalidParameterError(
            f"{path}: column {name!r} {problem} the header (columns: {', '.join(map(repr, names))})."
        )
    return names, names.index(name)


def _strict_chunks(
    path: Path, name: str, index: int, delimiter: str, rows: int, missing: Missing, skip: int
) -> Iterator[NDArray[np.float64]]:
    """The reference reader: one row at a time, every refusal with its line; yields chunks of ``rows`` values."""
    values: list[float] = []
    seen = 0
    try:
        with _open(path) as handle:
            reader = csv.reader(handle, delimiter=delimiter)
            next(reader, None)
            blank_line = 0
            try:
                for row in reader:
                    line = reader.line_num
                    if not row:
                        blank_line = blank_line or line
                        continue
                    if blank_line:
                        raise InvalidParameterError(f"{path}, line {blank_line}: blank line inside the data.")
                    seen += 1
                    if seen <= skip:  # rows the fast reader has already delivered
                        continue
                    where = f"{path}, line {line}, column {name!r}"
                    cell = row[index].strip() if index < len(row) else ""
                    if not cell:
                        reason = (
                            f"the row has only {len(row)} field(s)" if index >= len(row) else "empty cell"
                        )
                        value = check_missing(missing, f"{where}: missing value ({reason})")
                        if value is None:
                            continue
                    else:
                        try:
                            value = float(cell)
                        except ValueError:
                            raise InvalidParameterError(f"{where}: not a number: {cell[:40]!r}.") from None
                        if not math.isfinite(value):
                            raise InvalidParameterError(
                                f"{where}: {cell[:40]!r} is not finite (NaN and inf are refused)."
                            )
                    values.append(value)
                    if len(values) >= rows:
                        yield np.asarray(values, dtype=np.float64)
                        values = []
            except csv.Error as exc:
                raise InvalidParameterError(f"{path}, line {reader.line_num}: malformed CSV ({exc}).") from None
    except UnicodeDecodeError as exc:
        raise _decode_error(path, exc) from None
    if values:
        yield np.asarray(values, dtype=np.float64)
    elif seen == 0:
        raise InvalidParameterError(f"{path}: column {name!r} has no data rows.")


def _arrow_chunks(
    path: Path, names: list[str], index: int, delimiter: str, rows: int, missing: Missing, done: list[int]
) -> Iterator[NDArray[np.float64]]:
    """pyarrow's streaming reader; stops (returns) at the first block it cannot take as clean finite numbers."""
    import pyarrow as pa
    from pyarrow import csv as pa_csv

    labels = [f"c{i}" for i in range(len(names))]
    reader = pa_csv.open_csv(
        path,
        read_options=pa_csv.ReadOptions(
            column_names=labels, skip_rows=1, block_size=max(1 << 16, min(rows * 24, 1 << 26))
        ),
        parse_options=pa_csv.ParseOptions(delimiter=delimiter, ignore_empty_lines=False),
        convert_options=pa_csv.ConvertOptions(
            include_columns=[labels[index]],
            column_types={labels[index]: pa.float64()},
            null_values=[""],
            strings_can_be_null=True,
            quoted_strings_can_be_null=True,
        ),
    )
    while True:
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            return
        column = batch.column(0)
        if column.null_count:
            if missing == "error":
                raise _Fallback
            column = column.drop_null() if missing == "drop" else column.fill_null(float(missing))
        values = column.to_numpy(zero_copy_only=False)
        if values.size and not np.isfinite(values).all():
            raise _Fallback
        done[0] += batch.num_rows
        for start in range(0, values.size, rows):
            yield values[start : start + rows]


class _Fallback(Exception):
    """The fast reader met something only the strict reader reports (or accepts) exactly."""


def csv_chunks(
    path: str | Path,
    column: str,
    *,
    delimiter: str | None = None,
    rows: int = 1 << 20,
    missing: Missing = "error",
) -> Iterator[NDArray[np.float64]]:
    """Chunks of at most ``rows`` finite float64 values of ``column`` (see the module docstring).

    Raises
    ------
    InvalidParameterError
        For a missing or repeated column, an empty file, a bad value (with its line) or a missing value under
        ``missing="error"``.
    OSError
        If the file cannot be read.
    """
    file = Path(path)
    sep = detect_delimiter(file) if delimiter is None else delimiter
    if len(sep) != 1:
        raise InvalidParameterError(f"`delimiter` of `csv_chunks` must be one character; got {sep!r}.")
    names, index = read_header(file, column, sep)
    name = names[index]
    done = [0]
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        yield from _strict_chunks(file, name, index, sep, rows, missing, 0)
        return
    produced = False
    try:
        for chunk in _arrow_chunks(file, names, index, sep, rows, missing, done):
            produced = produced or chunk.size > 0
            yield chunk
    except (_Fallback, pyarrow.ArrowInvalid):
        yield from _strict_chunks(file, name, index, sep, rows, missing, done[0])
        return
    if not produced:
        raise InvalidParameterError(f"{file}: column {name!r} has no data rows.")


def csv_text_column(path: str | Path, column: str, *, delimiter: str | None = None) -> list[str | None]:
    """The cells of a text column as they are written (None for a row too short to hold one), with the same
    header, byte-order-mark and delimiter handling as :func:`csv_chunks`; blank lines are skipped."""
    file = Path(path)
    sep = detect_delimiter(file) if delimiter is None else delimiter
    _, index = read_header(file, column, sep)
    out: list[str | None] = []
    try:
        with _open(file) as handle:
            reader = csv.reader(handle, delimiter=sep)
            next(reader, None)
            try:
                out = [(row[index] if index < len(row) else None) for row in reader if row]
            except csv.Error as exc:
                raise InvalidParameterError(f"{file}, line {reader.line_num}: malformed CSV ({exc}).") from None
    except UnicodeDecodeError as exc:
        raise _decode_error(file, exc) from None
    return out
