"""Sensor readings as CSV text: blocks of lines parsed into readings, column selection, and the lines written back.

The readings a stream sanitizer noises come from text with one reading per line. :func:`iter_csv_chunks` yields
blocks of q-vectors from lines of q comma-separated numbers. For a real sensor CSV (``time,co2``) the q noised
columns are chosen by header name or 0-based index (:func:`check_columns` before anything is read,
:func:`resolve_layout` once the first line is known); :func:`parse_block` reads a block of lines with vectorised
fast paths, and :func:`format_block` writes the noisy values back as round-trip (``repr``) floats with every other
field unchanged and in place. Blank lines are allowed only at the end (:func:`line_blocks`); a malformed line raises
an error naming the source, the line and the column, and no reading is ever skipped or imputed.

Examples
--------
>>> import io
>>> [block.tolist() for block in iter_csv_chunks(io.StringIO("1.5\\n2\\n"), chunk_lines=1)]
[[[1.5]], [[2.0]]]
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from .._validation import check_positive_int
from ..exceptions import InvalidParameterError

__all__ = [
    "Layout",
    "check_columns",
    "format_block",
    "header_name",
    "is_number",
    "iter_csv_chunks",
    "line_blocks",
    "parse_block",
    "resolve_layout",
    "split_fields",
]


_FIELD = re.compile(r'(?:"[^"]*"|[^,"])*')


def split_fields(line: str) -> list[str] | None:
    """Fields of a line with double-quoted fields (commas inside quotes kept); raw text kept; None if unbalanced."""
    fields: list[str] = []
    pos, end = 0, len(line)
    while True:
        match = _FIELD.match(line, pos)
        assert match is not None  # the pattern matches the empty string
        fields.append(match.group())
        pos = match.end()
        if pos >= end:
            return fields
        if line[pos] != ",":
            return None
        pos += 1


def _cells(rows: list[str]) -> list[list[str] | None]:
    if any('"' in row for row in rows):
        return [split_fields(row) if '"' in row else row.split(",") for row in rows]
    return list(map(str.split, rows, itertools.repeat(",")))


def header_name(cell: str) -> str:
    cell = cell.strip()
    if len(cell) >= 2 and cell[0] == cell[-1] == '"':
        cell = cell[1:-1].replace('""', '"')
    return cell


def is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class Layout:
    """Fields per line, the selected (noised) field indices in model-output order, and the header names."""

    fields: int
    selected: tuple[int, ...]
    names: tuple[str, ...] | None = None

    @property
    def identity(self) -> bool:
        return self.selected == tuple(range(self.fields))

    def column(self, j: int) -> str:
        if self.names is not None:
            return f"column {self.names[j]!r} (index {j})"
        return f"column index {j}"


def check_columns(columns: Any, q: int) -> list[str | int] | None:
    """Syntactic check of ``columns`` (before any data is read)."""
    if columns is None:
        return None
    if isinstance(columns, str):
        tokens: list[Any] = [c.strip() for c in columns.split(",")]
    elif isinstance(columns, int | np.integer) and not isinstance(columns, bool):
        tokens = [columns]
    else:
        try:
            tokens = list(columns)
        except TypeError:
            raise InvalidParameterError(
                f"`columns` (--columns) of `stream_csv` must be header names or 0-based indices; got {columns!r}."
            ) from None
    for token in tokens:
        if isinstance(token, bool) or not isinstance(token, str | int | np.integer):
            raise InvalidParameterError(
                f"`columns` (--columns) of `stream_csv` must be header names or 0-based indices; got {token!r}."
            )
        if isinstance(token, str) and not token:
            raise InvalidParameterError(
                f"`columns` (--columns) of `stream_csv` has an empty name; got {columns!r}."
            )
        if not isinstance(token, str) and token < 0:
            raise InvalidParameterError(
                f"`columns` (--columns) of `stream_csv`: indices are 0-based, >= 0; got {token}."
            )
    if len(tokens) != q:
        raise InvalidParameterError(
            f"`columns` (--columns) of `stream_csv` must select q = {q} column(s) (one per sensor output of the model); "
            f"got {len(tokens)}: {columns!r}."
        )
    return [t if isinstance(t, str) else int(t) for t in tokens]


def _listing(names: tuple[str, ...] | None, cells: list[str]) -> str:
    if names is None:
        return f"the first line (no header) has {len(cells)} field(s): {','.join(cells)[:200]!r}"
    return "the header columns are " + ", ".join(f"{j} {name!r}" for j, name in enumerate(names))


def resolve_layout(
    tokens: list[str | int] | None,
    cells: list[str],
    names: tuple[str, ...] | None,
    q: int,
    source: str,
    line: int,
) -> Layout:
    n = len(cells)
    where = f"{source}, line {line}"
    if tokens is None:
        if n != q:
            raise InvalidParameterError(
                f"{where}: {n} field(s) per line but the model has q = {q} sensor output(s); choose the {q} "
                f"column(s) to noise with --columns (`columns`: header names or 0-based indices); "
                f"{_listing(names, cells)}."
            )
        return Layout(n, tuple(range(n)), names)
    selected: list[int] = []
    for token in tokens:
        if isinstance(token, str) and names is not None and token in names:
            if names.count(token) > 1:
                raise InvalidParameterError(
                    f"{where}: the header has several columns named {token!r}; select by 0-based index; "
                    f"{_listing(names, cells)}."
                )
            j = names.index(token)
        elif isinstance(token, int) or token.isdecimal():
            j = int(token)
            if j >= n:
                raise InvalidParameterError(
                    f"{where}: column index {j} is out of range (0..{n - 1}); {_listing(names, cells)}."
                )
        elif names is None:
            raise InvalidParameterError(
                f"{where}: column {token!r} is a name, but the input has no header line; give 0-based indices "
                f"(or --header / `header=True` if the first line is one); {_listing(names, cells)}."
            )
        else:
            raise InvalidParameterError(f"{where}: no column named {token!r}; {_listing(names, cells)}.")
        if j in selected:
            raise InvalidParameterError(
                f"{where}: column {token!r} is selected twice in `columns` / --columns."
            )
        selected.append(j)
    return Layout(n, tuple(selected), names)


def _parse_slow(
    rows: list[str], first: int, layout: Layout, source: str
) -> tuple[NDArray[np.float64], list[list[str]]]:
    """Line-by-line parse: the readings and the fields, or an error naming the first bad line and column."""
    q = len(layout.selected)
    out = np.empty((len(rows), q))
    fields: list[list[str]] = []
    for i, row in enumerate(rows):
        where = f"{source}, line {first + i}"
        if not row.strip():
            raise InvalidParameterError(f"{where}: missing value (blank line).")
        cells = split_fields(row)
        if cells is None:
            raise InvalidParameterError(f"{where}: unbalanced double quote: {row[:80]!r}.")
        if len(cells) != layout.fields:
            raise InvalidParameterError(
                f"{where}: expected {layout.fields} field(s) per line; got {len(cells)}: {row[:80]!r}."
            )
        for k, j in enumerate(layout.selected):
            cell = cells[j].strip()
            if not cell:
                raise InvalidParameterError(f"{where}, {layout.column(j)}: missing value (empty field).")
            try:
                value = float(cell)
            except ValueError:
                raise InvalidParameterError(
                    f"{where}, {layout.column(j)}: not a number: {cell[:40]!r}."
                ) from None
            if not math.isfinite(value):
                raise InvalidParameterError(
                    f"{where}, {layout.column(j)}: {cell[:40]!r} is not finite (NaN and inf are refused)."
                )
            out[i, k] = value
        fields.append(cells)
    return out, fields


# The fields of a parsed block, for writing it back: None (every field is noised), the fields of each line, or
# for one noised column at the edge of the line, ("last", text before it) / ("first", text after it) per line.
_Fields = list[list[str]] | tuple[str, list[str]] | None


def _parse_edge(rows: list[str], layout: Layout) -> tuple[NDArray[np.float64], _Fields] | None:
    """Fast path for one noised column that is the first or the last: partition at one comma per line."""
    n, j = layout.fields, layout.selected[0]
    if not 0 < j == n - 1 and not (j == 0 < n - 1):
        return None
    if any('"' in row for row in rows) or set(map(str.count, rows, itertools.repeat(","))) != {n - 1}:
        return None
    if j == 0:
        parts = list(map(str.partition, rows, itertools.repeat(",")))
        values, kept, kind = [p[0] for p in parts], [p[2] for p in parts], "first"
    else:
        parts = list(map(str.rpartition, rows, itertools.repeat(",")))
        values, kept, kind = [p[2] for p in parts], [p[0] for p in parts], "last"
    return np.array(values, dtype=np.float64).reshape(-1, 1), (kind, kept)


def parse_block(rows: list[str], first: int, layout: Layout, source: str) -> tuple[NDArray[np.float64], _Fields]:
    """Readings of a block of lines (terminators removed) and the fields to write them back with.

    Vectorised fast paths; the slow path names the first bad line and column.
    """
    q, n, sel = len(layout.selected), layout.fields, layout.selected
    fields: _Fields = None
    try:
        edge = None if layout.identity or q > 1 else _parse_edge(rows, layout)
        if edge is not None:
            arr, fields = edge
        elif layout.identity and q == 1:
            arr = np.array(rows, dtype=np.float64).reshape(-1, 1)
        else:
            split = _cells(rows)
            if None not in split and set(map(len, split)) == {n}:  # type: ignore[arg-type]
                cells = cast(list[list[str]], split)
                fields = None if layout.identity else cells
                if layout.identity:
                    arr = np.array(cells, dtype=np.float64)
                elif q == 1:
                    arr = np.array([c[sel[0]] for c in cells], dtype=np.float64).reshape(-1, 1)
                else:
                    arr = np.array([[c[j] for j in sel] for c in cells], dtype=np.float64)
            else:
                arr = np.empty((0, q))
        if arr.shape == (len(rows), q) and np.isfinite(arr).all():
            return arr, fields
    except ValueError:
        pass
    arr, cells = _parse_slow(rows, first, layout, source)  # raises on the first bad line
    return arr, None if layout.identity else cells


_BLANK = re.compile(r"(?:^|\n)[^\S\n]*(?:\n|$)")  # a line that str.strip() empties


def line_blocks(
    handle: Iterable[str], *, first_line: int, chunk_lines: int, source: str
) -> Iterator[tuple[list[str], int]]:
    """Blocks of non-blank lines (terminators removed) with the number of their first line.

    Blank lines are allowed only at the end; a blank line followed by data is an error naming its line.
    """
    check_positive_int(chunk_lines, "chunk_lines", "stream_csv")
    lines = iter(handle)
    line_no = first_line
    trailing_blank = 0
    while raw := list(itertools.islice(lines, chunk_lines)):
        text = "".join(raw)
        if "\r" in text:
            text = text.replace("\r\n", "\n")
        rows = text.split("\n")
        if rows[-1] == "":
            rows.pop()
        if len(rows) == len(raw):  # every line but the last ended with a newline (as from a file)
            has_blank = _BLANK.search(text, 0, len(text) - text.endswith("\n")) is not None
        else:
            rows = [line.rstrip("\r\n") for line in raw]
            has_blank = not all(map(str.strip, rows))
        first_blank = next(i for i, row in enumerate(rows) if not row.strip()) if has_blank else len(rows)
        later_data = has_blank and any(map(str.strip, rows[first_blank:]))
        if trailing_blank and (first_blank or later_data):
            raise InvalidParameterError(
                f"{source}, line {trailing_blank}: missing value (blank line inside the data)."
            )
        if later_data:
            raise InvalidParameterError(
                f"{source}, line {line_no + first_blank}: missing value (blank line inside the data)."
            )
        if has_blank and not trailing_blank:
            trailing_blank = line_no + first_blank
        rows = rows[:first_blank]
        if rows:
            yield rows, line_no
        line_no += len(raw)


def iter_csv_chunks(
    handle: Iterable[str],
    *,
    q: int = 1,
    first_line: int = 1,
    chunk_lines: int = 65_536,
    source: str = "<stdin>",
) -> Iterator[NDArray[np.float64]]:
    """Blocks of readings from a text stream, one reading (q comma-separated numbers) per line.

    Every line must hold a finite reading; an error names the source, the line and the column. Blank lines are
    allowed only at the end. Nothing is skipped or imputed. (Headers and pass-through columns: :func:`stream_csv`.)
    """
    layout = Layout(q, tuple(range(q)))
    for rows, first in line_blocks(handle, first_line=first_line, chunk_lines=chunk_lines, source=source):
        yield parse_block(rows, first, layout, source)[0]


def format_block(noisy: NDArray[np.float64], fields: _Fields, layout: Layout) -> str:
    """Output lines: the noisy values as repr (round-trip) floats, other fields unchanged and in place."""
    if fields is None:  # every field is noised
        if noisy.shape[1] == 1:
            return "\n".join(map(repr, noisy[:, 0].tolist())) + "\n"
        return "\n".join(",".join(map(repr, row)) for row in noisy.tolist()) + "\n"
    if isinstance(fields, tuple):
        kind, kept = fields
        values = map(repr, noisy[:, 0].tolist())
        pairs = zip(kept, values, strict=True) if kind == "last" else zip(values, kept, strict=True)
        return "\n".join(map(",".join, pairs)) + "\n"
    if len(layout.selected) == 1:
        j = layout.selected[0]
        for c, value in zip(fields, map(repr, noisy[:, 0].tolist()), strict=True):
            c[j] = value
    else:
        for c, row in zip(fields, noisy.tolist(), strict=True):
            for j, value in zip(layout.selected, row, strict=True):
                c[j] = repr(value)
    return "\n".join(map(",".join, fields)) + "\n"
