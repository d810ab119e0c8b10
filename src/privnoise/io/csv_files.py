"""One numeric column of a CSV file, whole or in chunks: byte-order marks, delimiters, missing values and limits
handled once.

* The header is the first line (a UTF-8 byte-order mark is skipped); names are compared without surrounding spaces.
  It has at most ``PRIVNOISE_MAX_COLUMNS`` columns (:mod:`privnoise.io.limits`); the column read must appear once.
* The delimiter is detected among ``, ; \\t |`` from the header line unless given: the one that splits it most
  (outside quotes); on a tie, the one that splits the next line into as many fields; else a comma.
* Every row has as many fields as the header: a longer or shorter row is refused with its line.
* Values are parsed by pyarrow's CSV reader in blocks of ``PRIVNOISE_MAX_LINE_BYTES`` when pyarrow is installed and
  the file is larger than :data:`STRICT_READER_BYTES` (below that, the strict reader alone is faster than importing
  pyarrow: about 3 µs a row, against some 30 ms of import); wherever it stops (a blank line, a ragged row, text, NaN, inf, an empty cell, a line over the limit) the strict
  reader below takes over from the same row. The strict reader is the reference: it reads a line at most
  ``PRIVNOISE_MAX_LINE_BYTES`` at a time, and every refusal names the file, the line, the column and the rule —
  never the value. It also runs alone without pyarrow.
* Missing values (an empty cell) follow ``missing``: "error" (the default), "drop", or a number to impute. NaN and
  infinities are refused whatever the policy. Blank lines are allowed only at the end of the file.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ..exceptions import InvalidParameterError
from .limits import BoundedLines, Limits, check_file, check_text, limits, listing, shown
from .missing import Missing, check_missing

__all__ = [
    "arrow_block_size",
    "count_fields",
    "csv_chunks",
    "csv_text_column",
    "detect_delimiter",
    "locate",
    "number",
    "read_header",
    "strict_rows",
]

DELIMITERS = ",;\t|"


def _ensure_csv_limit(bounds: Limits) -> None:
    """Let the csv module hold any field of a record within the line limit (the limit is checked by us)."""
    if csv.field_size_limit() < bounds.max_line_bytes + 16:
        csv.field_size_limit(bounds.max_line_bytes + 16)


def count_fields(line: str, delimiter: str) -> int:
    """How many fields ``delimiter`` splits ``line`` into, outside double quotes."""
    count, quoted = 1, False
    for ch in line:
        if ch == '"':
            quoted = not quoted
        elif ch == delimiter and not quoted:
            count += 1
    return count


def detect_delimiter(path: Path, bounds: Limits | None = None) -> str:
    """The delimiter of ``path`` among , ; tab | (see the module docstring; a comma when nothing tells)."""
    bounds = bounds or limits()
    check_file(path)
    with open(path, "rb") as handle:
        lines = iter(BoundedLines(handle, str(path), bounds))
        first = next(lines, "")
        counts = {d: count_fields(first, d) for d in DELIMITERS if d in first}
        if not counts:
            return ","
        best = max(counts.values())
        tied = [d for d in DELIMITERS if counts.get(d) == best]
        if len(tied) == 1:
            return tied[0]
        second = next(lines, "")
        consistent = [d for d in tied if count_fields(second, d) == best]
        return consistent[0] if len(consistent) == 1 else ("," if "," in tied else tied[0])


def read_header(path: Path, delimiter: str, bounds: Limits | None = None) -> list[str]:
    """The header names (stripped); refuses an empty file, a blank first line and too many columns."""
    bounds = bounds or limits()
    _ensure_csv_limit(bounds)
    check_file(path)
    with open(path, "rb") as handle:
        lines = BoundedLines(handle, str(path), bounds)
        try:
            header = next(csv.reader(lines, delimiter=delimiter), None)
        except csv.Error as exc:
            raise InvalidParameterError(f"{path}, line {lines.number}: malformed CSV header ({exc}).") from None
    if header is None:
        raise InvalidParameterError(f"{path}: the file is empty; expected a header line naming the columns.")
    if not any(cell.strip() for cell in header):
        raise InvalidParameterError(f"{path}, line 1: blank header; expected the names of the columns.")
    if len(header) > bounds.max_columns:
        raise InvalidParameterError(
            f"{path}, line 1: the header has {len(header):,} columns, more than {bounds.rule('max_columns')}."
        )
    return [cell.strip() for cell in header]


def locate(path: Path | str, names: list[str], column: str) -> int:
    """The index of ``column`` (stripped) in ``names``; refuses a name absent from or repeated in the header."""
    name = column.strip()
    positions = [i for i, n in enumerate(names) if n == name]
    if not positions:
        raise InvalidParameterError(f"{path}: column {shown(name)} is not in the header ({listing(names)}).")
    if len(positions) > 1:
        where = " and ".join(str(i + 1) for i in positions[:2]) + (" …" if len(positions) > 2 else "")
        raise InvalidParameterError(
            f"{path}: column {shown(name)} appears more than once in the header (columns {where})."
        )
    return positions[0]


def strict_rows(
    path: Path, names: list[str], delimiter: str, used: dict[int, str], bounds: Limits
) -> Iterator[tuple[int, list[str]]]:
    """(line, fields) of every data row, checked: line and record lengths, encoding, the field count, the size of
    the fields at ``used`` (index → name). Blank lines are skipped at the end and refused inside the data."""
    _ensure_csv_limit(bounds)
    with open(path, "rb") as handle:
        lines = BoundedLines(handle, str(path), bounds)
        reader = csv.reader(lines, delimiter=delimiter)
        blank_line = 0
        try:
            next(reader, None)
            lines.start_record()
            for row in reader:
                line = lines.number
                lines.start_record()
                if not row:
                    blank_line = blank_line or line
                    continue
                if blank_line:
                    raise InvalidParameterError(f"{path}, line {blank_line}: blank line inside the data.")
                if len(row) != len(names):
                    raise InvalidParameterError(
                        f"{path}, line {line}: {len(row):,} field(s) where the header has {len(names):,}."
                    )
                for index, name in used.items():
                    cell = row[index]
                    if len(cell) * 4 > bounds.max_field_bytes and len(cell.encode()) > bounds.max_field_bytes:
                        raise InvalidParameterError(
                            f"{path}, line {line}, column {shown(name)}: field longer than "
                            f"{bounds.rule('max_field_bytes')}."
                        )
                yield line, row
        except csv.Error as exc:
            raise InvalidParameterError(f"{path}, line {lines.number}: malformed CSV ({exc}).") from None


def number(cell: str, where: str) -> float:
    """A finite number written in ASCII (as pyarrow reads it: no digit-group underscores, no other scripts)."""
    try:
        if not cell.isascii() or "_" in cell:
            raise ValueError
        value = float(cell)
    except ValueError:
        raise InvalidParameterError(f"{where}: not a number.") from None
    if not math.isfinite(value):
        raise InvalidParameterError(f"{where}: not finite (NaN and inf are refused).")
    return value


def _strict_chunks(
    path: Path, names: list[str], index: int, delimiter: str, rows: int, missing: Missing, skip: int, bounds: Limits
) -> Iterator[NDArray[np.float64]]:
    """The reference reader: one row at a time, every refusal with its line; yields chunks of ``rows`` values."""
    name = names[index]
    values: list[float] = []
    seen = 0
    for line, row in strict_rows(path, names, delimiter, {index: name}, bounds):
        seen += 1
        if seen <= skip:  # rows the fast reader has already delivered
            continue
        where = f"{path}, line {line}, column {shown(name)}"
        cell = row[index].strip()
        if not cell:
            value = check_missing(missing, f"{where}: missing value (empty cell)")
            if value is None:
                continue
        else:
            value = number(cell, where)
        values.append(value)
        if len(values) >= rows:
            yield np.asarray(values, dtype=np.float64)
            values = []
    if values:
        yield np.asarray(values, dtype=np.float64)
    elif seen == 0:
        raise InvalidParameterError(f"{path}: the file has no data rows after the header.")


def arrow_block_size(bounds: Limits) -> int:
    """pyarrow's block: one line at most (a longer row straddles two blocks, which pyarrow refuses)."""
    return max(1 << 16, bounds.max_line_bytes + 2)


def _arrow_chunks(
    path: Path, names: list[str], index: int, delimiter: str, rows: int, missing: Missing, done: list[int],
    bounds: Limits,
) -> Iterator[NDArray[np.float64]]:
    """pyarrow's streaming reader; stops (returns) at the first block it cannot take as clean finite numbers."""
    import pyarrow as pa
    from pyarrow import csv as pa_csv

    labels = [f"c{i}" for i in range(len(names))]
    reader = pa_csv.open_csv(
        path,
        read_options=pa_csv.ReadOptions(column_names=labels, skip_rows=1, block_size=arrow_block_size(bounds)),
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


#: Files up to this size are read by the strict reader alone (256 KiB: about 10,000 rows of one number and a label).
STRICT_READER_BYTES = 1 << 18


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
        For a missing or repeated column, an empty file, a ragged row, a line or field over its limit, a bad value
        (with its line) or a missing value under ``missing="error"``.
    OSError
        If the file cannot be read (absent, a directory, no permission), with its name.
    """
    file = Path(path)
    bounds = limits()
    sep = detect_delimiter(file, bounds) if delimiter is None else delimiter
    if len(sep) != 1:
        raise InvalidParameterError(f"`delimiter` of `csv_chunks` must be one character; got {sep!r}.")
    names = read_header(file, sep, bounds)
    index = locate(file, names, column)
    done = [0]
    if file.stat().st_size <= STRICT_READER_BYTES:  # a small file: no import of pyarrow
        yield from _strict_chunks(file, names, index, sep, rows, missing, 0, bounds)
        return
    try:
        import pyarrow
    except ImportError:  # the strict reader checks every line itself
        yield from _strict_chunks(file, names, index, sep, rows, missing, 0, bounds)
        return
    check_text(file, bounds)  # the fast reader reads one column: every byte is checked here
    produced = False
    try:
        for chunk in _arrow_chunks(file, names, index, sep, rows, missing, done, bounds):
            produced = produced or chunk.size > 0
            yield chunk
    except (_Fallback, pyarrow.ArrowException):
        yield from _strict_chunks(file, names, index, sep, rows, missing, done[0], bounds)
        return
    if not produced:
        raise InvalidParameterError(f"{file}: the file has no data rows after the header.")


def csv_text_column(path: str | Path, column: str, *, delimiter: str | None = None) -> list[str | None]:
    """The cells of a text column as they are written, with the same header, byte-order-mark, delimiter, row and
    limit checks as :func:`csv_chunks`; blank lines are skipped."""
    file = Path(path)
    bounds = limits()
    sep = detect_delimiter(file, bounds) if delimiter is None else delimiter
    names = read_header(file, sep, bounds)
    index = locate(file, names, column)
    return [row[index] for _, row in strict_rows(file, names, sep, {index: names[index]}, bounds)]
