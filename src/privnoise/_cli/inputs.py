"""Every file a command reads, checked the same way: one line naming the file, the line and the rule, exit status 2.

The readers of :mod:`privnoise.io` (CSV, Parquet, small text files) already refuse hostile files that way, within the
limits of :mod:`privnoise.io.limits` (``PRIVNOISE_MAX_LINE_BYTES``, ``PRIVNOISE_MAX_FIELD_BYTES``,
``PRIVNOISE_MAX_COLUMNS``, ``PRIVNOISE_MAX_FILE_BYTES``). Commands that hand a file to another reader (a readings
stream, the Adult data, the owner's configuration) do it inside :func:`reading`, which

* turns the errors of file readers (encoding, csv, pyarrow, TOML, a loop of symbolic links) into one line naming
  the file, without the reader's own text where that may quote the file;
* removes from privnoise's messages the values some readers quote (:func:`redact`): a message names the line, the
  column and the rule, never a value of the data.

This module imports no numpy.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from ..exceptions import PrivnoiseError
from .errors import CliInputError

__all__ = ["DATA_SUFFIXES", "bounded_lines", "column_kinds", "columns_read", "data_file", "dp_table", "header", "reading",
           "redact", "scan_text"]

DATA_SUFFIXES = (".csv", ".tsv", ".txt", ".parquet", ".pq")

_LITERAL = r"""(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""
#: The values some readers quote, and the rule left in their place (the location and the rule are kept).
_ECHOES = (
    (re.compile(r"(: not a number): .*$"), r"\1."),
    (re.compile(r"(unbalanced double quote): .*$"), r"\1."),
    (re.compile(r"(; got \d+): .*$"), r"\1."),
    (re.compile(r"; got (?!\d+\.?$).*$"), "."),
    (re.compile(r"(unknown category) .*$"), r"\1."),
    (re.compile(r": " + _LITERAL + r" is not finite"), ": not finite"),
    (re.compile(r"(\(no header\) has \d+ field\(s\)): .*$"), r"\1."),
)


def redact(message: str) -> str:
    """``message`` without the values that readers outside :mod:`privnoise.io` quote (see the module docstring).

    Examples
    --------
    >>> redact("in.csv, line 5, column 'co2' (index 1): not a number: 'n/a'.")
    "in.csv, line 5, column 'co2' (index 1): not a number."
    >>> redact("adult.data: line 3, column 'age' must be a finite number; got 'x'.")
    "adult.data: line 3, column 'age' must be a finite number."
    >>> redact("in.csv, line 2: expected 2 field(s) per line; got 3: '1,2,3'.")
    'in.csv, line 2: expected 2 field(s) per line; got 3.'
    """
    for pattern, replacement in _ECHOES:
        message = pattern.sub(replacement, message)
    return message


@contextmanager
def reading(path: Path | str, *, quoted_values: bool = False) -> Iterator[None]:
    """Errors raised while a reader reads ``path`` as one line naming the file (see the module docstring).

    ``quoted_values``: the reader's privnoise errors may quote values of the file; they are :func:`redact`-ed.
    """
    try:
        yield
    except PrivnoiseError as exc:
        if not quoted_values:
            raise
        try:
            redacted = type(exc)(redact(str(exc)))
        except TypeError:  # an error class whose constructor takes more than a message
            redacted = CliInputError(redact(str(exc)))
        raise redacted from None
    except UnicodeError:
        raise CliInputError(f"{path}: not UTF-8 text.") from None
    except RecursionError:
        raise CliInputError(f"{path}: nested too deeply to be read.") from None
    except RuntimeError as exc:  # Path.resolve on a loop of symbolic links (Python < 3.13)
        if "loop" not in str(exc).lower():
            raise
        raise CliInputError(f"{path}: a loop of symbolic links.") from None
    except Exception as exc:
        module = type(exc).__module__.split(".")[0]
        if module in ("_csv", "csv"):  # the csv module's messages state the rule, never the content
            raise CliInputError(f"{path}: malformed CSV ({exc}).") from None
        if module in ("pyarrow", "tomllib", "json"):
            raise CliInputError(f"{path}: could not be read ({type(exc).__name__}).") from None
        raise


def data_file(path: Path) -> Path:
    """``path`` when it is a CSV or Parquet file that can be read; else the one-line error (checked before any
    option that needs the data is acted upon)."""
    from ..io.limits import check_file

    if path.suffix.lower() not in DATA_SUFFIXES:
        raise CliInputError(
            f"{path}: DATA must be a CSV (.csv, .tsv, .txt) or Parquet (.parquet, .pq) file; the extension says "
            "which reader to use."
        )
    check_file(path)
    return path


def bounded_lines(handle: IO[Any], name: str) -> Iterator[str]:
    """The lines of a readings stream (a file or stdin), each within ``PRIVNOISE_MAX_LINE_BYTES`` and with at most
    ``PRIVNOISE_MAX_COLUMNS`` fields, decoded as UTF-8; an error names the line and the rule."""
    from ..io.csv_files import count_fields
    from ..io.limits import BoundedLines, limits

    bounds = limits()
    binary = handle if "b" in getattr(handle, "mode", "") else getattr(handle, "buffer", None)
    if binary is None:  # a text stream without bytes underneath (tests): bounded all the same
        lines: Any = _text_lines(handle, name, bounds.max_line_bytes)
    else:
        lines = BoundedLines(binary, name, bounds)
    number = 0
    for line in lines:
        number += 1
        if line.count(",") >= bounds.max_columns and count_fields(line, ",") > bounds.max_columns:
            raise CliInputError(f"{name}, line {number}: more fields than {bounds.rule('max_columns')}.")
        yield line


def _text_lines(handle: IO[str], name: str, limit: int) -> Iterator[str]:
    number = 0
    while line := handle.readline(limit + 1):
        number += 1
        if len(line.rstrip("\r\n")) > limit:
            raise CliInputError(f"{name}, line {number}: longer than the limit of {limit} characters.")
        if "\x00" in line:
            raise CliInputError(f"{name}, line {number}: NUL byte (a binary file, not text).")
        yield line


def scan_text(path: Path) -> None:
    """Read ``path`` once, line by line within the limits (line length, NUL bytes, UTF-8), before a reader that
    takes whole lines without bounds reads it."""
    from ..io.limits import BoundedLines, check_file, limits

    check_file(path)
    with open(path, "rb") as handle:
        for _ in BoundedLines(handle, str(path), limits()):
            pass


def columns_read(
    *,
    query: str,
    column: str,
    unit: str | None,
    group_by: str | None,
    categories: bool,
    conditions: tuple[Any, ...] = (),
) -> tuple[list[str], list[str]]:
    """(numeric, text): the columns a DP release of ``query`` reads, as numbers or as text. The columns of
    ``conditions`` (``--where``) are read as numbers where they are compared with a number, else as text."""
    values_of_column = query in ("count", "sum", "mean", "variance", "quantile", "median", "clamped-count") or (
        query == "histogram" and not categories
    )
    numeric = [column] if values_of_column else []
    keys = [] if group_by is None else [name.strip() for name in group_by.split(",")]
    text = [name for name in ([] if values_of_column or query == "count-distinct" else [column]) + [unit, *keys]
            if name is not None]
    from ..core.predicates import InList, IsNull, Like, atoms_of

    atoms = atoms_of(conditions)
    for atom in sorted(atoms, key=lambda a: isinstance(a, IsNull)):  # a column's comparisons tell its kind first
        if atom.column in numeric or atom.column in text:
            continue
        literal = atom.pattern if isinstance(atom, Like) else None if isinstance(atom, IsNull) else (
            atom.values[0] if isinstance(atom, InList) else atom.value)
        (numeric if isinstance(literal, float | int) else text).append(atom.column)
    return numeric, text


def dp_table(data: Path, *, missing: Any, **question: Any) -> Any:
    """The columns a DP release reads (:func:`columns_read` of ``question``), as one checked pyarrow Table
    (:func:`privnoise.io.tables.table`): every value the session will use is read and checked here, before the
    ledger is charged."""
    from ..io.tables import table

    numeric, text = columns_read(**question)
    return table(data_file(data), numeric=numeric, text=text, missing=missing)


def header(data: Path) -> list[str]:
    """The names of the columns of a CSV or Parquet file, from its header or its schema: no value is read."""
    from ..io.columnar import open_parquet
    from ..io.csv_files import detect_delimiter, read_header

    data_file(data)
    if data.suffix.lower() in (".parquet", ".pq"):
        return list(open_parquet(data).schema_arrow.names)
    return read_header(data, detect_delimiter(data))


def column_kinds(data: Path, numeric: list[str], text: list[str]) -> dict[str, str]:
    """The kinds ("number" or "text") of the columns a query reads, each checked against the file's header
    (no value is read: a dry run)."""
    names = header(data)
    for name in [*numeric, *text]:
        if name not in names:
            shown = ", ".join(repr(n) for n in names[:20]) + (", ..." if len(names) > 20 else "")
            raise CliInputError(f"{data}: no column {name!r} ({shown}).")
    return {**{name: "text" for name in text}, **{name: "number" for name in numeric}}
