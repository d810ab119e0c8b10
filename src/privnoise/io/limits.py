"""Bounds on what a reader accepts from a file, enforced while it reads; file checks; names safe to show.

=============================  ==========  ======================================================================
environment variable           default     what it bounds
=============================  ==========  ======================================================================
``PRIVNOISE_MAX_LINE_BYTES``   4 MiB       one line of a CSV file, a readings stream or a matrix file (and one
                                           CSV record, when quoted fields span lines)
``PRIVNOISE_MAX_FIELD_BYTES``  1 MiB       one field of a column a reader uses
``PRIVNOISE_MAX_COLUMNS``      10,000      the columns of a CSV header or a Parquet schema, the fields of a line
``PRIVNOISE_MAX_FILE_BYTES``   16 MiB      a file read whole: a TOML model or configuration
=============================  ==========  ======================================================================

A line is read at most ``PRIVNOISE_MAX_LINE_BYTES`` + 1 bytes at a time, so a 50 MiB line is refused after 4 MiB,
never held whole. The variables take a whole number of bytes (or columns), at most 1 GiB; raise one for a file
that legitimately needs it.

Error messages name the file, the line and the rule, never a value of the data: a column name is shown only as it
comes from the header, with control characters escaped and at most :data:`NAME_CHARS` characters
(:func:`shown`).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ..exceptions import InvalidParameterError

__all__ = [
    "Limits",
    "BoundedLines",
    "check_file",
    "check_text",
    "describe_size",
    "limits",
    "listing",
    "read_text_file",
    "shown",
]

#: The longest column name a message shows (longer ones are cut, with "…").
NAME_CHARS = 40
#: How many column names a message lists at most.
LISTED_NAMES = 8
#: The largest value an environment variable may set.
_CEILING = 1 << 30

_VARIABLES = {
    "max_line_bytes": "PRIVNOISE_MAX_LINE_BYTES",
    "max_field_bytes": "PRIVNOISE_MAX_FIELD_BYTES",
    "max_columns": "PRIVNOISE_MAX_COLUMNS",
    "max_file_bytes": "PRIVNOISE_MAX_FILE_BYTES",
}


@dataclass(frozen=True, slots=True)
class Limits:
    """What a reader accepts (see the module docstring); :func:`limits` reads them from the environment."""

    max_line_bytes: int = 4 << 20
    max_field_bytes: int = 1 << 20
    max_columns: int = 10_000
    max_file_bytes: int = 16 << 20

    def variable(self, name: str) -> str:
        """The environment variable that raises the limit ``name``."""
        return _VARIABLES[name]

    def rule(self, name: str) -> str:
        """The limit ``name`` with the variable that raises it: "the limit of 4 MiB (PRIVNOISE_MAX_LINE_BYTES)"."""
        value = getattr(self, name)
        amount = f"{value:,}" if name == "max_columns" else describe_size(value)
        return f"the limit of {amount} ({_VARIABLES[name]})"


def limits() -> Limits:
    """The limits in force: the defaults, each overridden by its environment variable when set.

    Examples
    --------
    >>> limits().max_columns
    10000
    """
    values: dict[str, int] = {}
    for field, variable in _VARIABLES.items():
        text = os.environ.get(variable, "").strip()
        if not text:
            continue
        try:
            value = int(text.replace("_", ""))
        except ValueError:
            value = 0
        if not 1 <= value <= _CEILING:
            raise InvalidParameterError(
                f"{variable} must be a whole number from 1 to {_CEILING:,}; got {text[:20]!r}."
            )
        values[field] = value
    return Limits(**values)


def describe_size(size: int) -> str:
    """``4194304`` → ``"4 MiB"`` (bytes in the largest whole binary unit, else in bytes).

    >>> describe_size(4 << 20), describe_size(1536), describe_size(1 << 10)
    ('4 MiB', '1536 bytes', '1 KiB')
    """
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift} {unit}"
    return f"{size} bytes"


def shown(name: object) -> str:
    """A column name as a message may show it: quoted, control characters escaped, cut at :data:`NAME_CHARS`.

    >>> shown("kwh"), shown("a\\nb"), shown("x" * 50)[-3:]
    ("'kwh'", "'a\\\\nb'", "x…'")
    """
    text = str(name)
    cut = len(text) > NAME_CHARS
    text = text[:NAME_CHARS]
    out = []
    for ch in text:
        if ch.isprintable() and ch not in "\\'":
            out.append(ch)
        elif ch in "\\'":
            out.append("\\" + ch)
        else:
            escaped = repr(ch)[1:-1]
            out.append(escaped if escaped != ch else f"\\x{ord(ch):02x}")
    return "'" + "".join(out) + ("…" if cut else "") + "'"


def listing(names: Sequence[object]) -> str:
    """``"columns: 'a', 'b' and 12 more"``: at most :data:`LISTED_NAMES` names, each :func:`shown`.

    >>> listing(["a", "b"]), listing([str(i) for i in range(10)])
    ("columns: 'a', 'b'", "columns: '0', '1', '2', '3', '4', '5', '6', '7' and 2 more")
    """
    if not names:
        return "no columns"
    head = ", ".join(shown(n) for n in names[:LISTED_NAMES])
    more = len(names) - LISTED_NAMES
    return f"columns: {head}" + (f" and {more} more" if more > 0 else "")


def check_file(path: Path, *, regular: bool = True) -> None:
    """Raise the OSError of a path that cannot be read as a file (absent, a directory, a loop of symbolic links,
    no permission), or an :class:`InvalidParameterError` for a FIFO or device when ``regular``.

    OS errors keep their file name and reason (``exc.filename``, ``exc.strerror``): the command line prints them
    as "PATH: Is a directory".
    """
    try:
        info = os.stat(path)
    except OSError as exc:
        raise type(exc)(exc.errno, exc.strerror or "cannot be read", str(path)) from None
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory, not a file", str(path))
    if regular and not stat.S_ISREG(info.st_mode):
        raise InvalidParameterError(f"{path}: not a regular file (a pipe or a device cannot be read twice).")
    if not os.access(path, os.R_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))


_UTF16 = (b"\xff\xfe", b"\xfe\xff")
_BOM = b"\xef\xbb\xbf"


def _decode(raw: bytes, where: str, line: int) -> str:
    """One line of UTF-8 (a NUL byte or an invalid byte is an error naming the line)."""
    if b"\x00" in raw:
        if line == 1 and raw.startswith(_UTF16):
            raise InvalidParameterError(f"{where}, line 1: UTF-16 text (byte-order mark); save the file as UTF-8.")
        raise InvalidParameterError(f"{where}, line {line}: NUL byte (a binary file, not text).")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidParameterError(
            f"{where}, line {line}: not UTF-8 text (invalid byte at position {exc.start + 1} of the line)."
        ) from None


class BoundedLines:
    """The lines of a binary stream as text, each at most ``limits.max_line_bytes`` bytes, read that much at a time.

    A UTF-8 byte-order mark at the start is dropped; a NUL byte or invalid UTF-8 is an error naming the line.
    ``record`` counts the bytes since :meth:`start_record`: a consumer that joins lines into records (quoted CSV
    fields spanning lines) calls it per record, and a record beyond the line limit is refused too.
    ``number`` is the number of the last line read (1-based).
    """

    def __init__(self, handle: IO[bytes], where: str, bounds: Limits, *, first_line: int = 1) -> None:
        self.handle = handle
        self.where = where
        self.bounds = bounds
        self.number = first_line - 1
        self.record = 0
        self._first = first_line == 1

    def start_record(self) -> None:
        self.record = 0

    def _too_long(self, what: str) -> InvalidParameterError:
        return InvalidParameterError(
            f"{self.where}, line {self.number}: {what} longer than {self.bounds.rule('max_line_bytes')}."
        )

    def __iter__(self) -> Iterator[str]:
        limit = self.bounds.max_line_bytes
        while True:
            raw = self.handle.readline(limit + 1)
            if not raw:
                return
            self.number += 1
            if self._first:
                self._first = False
                raw = raw.removeprefix(_BOM)
            body = len(raw) - raw.endswith(b"\n")  # the bytes before the newline
            if body > limit:
                raise self._too_long("the line is")
            self.record += len(raw)
            if self.record > limit + 2:
                raise self._too_long("the record (quoted fields over several lines) is")
            yield _decode(raw, self.where, self.number)


def check_text(path: Path, bounds: Limits, *, block: int = 1 << 20) -> None:
    """Check the bytes of a whole text file fast (a block at a time): UTF-8 without NUL bytes, no line longer
    than the limit. A problem is reported by reading the file again with :class:`BoundedLines`, which names its
    line; a fast reader that reads only some columns runs this first, so every byte is checked alike."""
    import codecs

    import numpy as np

    decoder = codecs.getincrementaldecoder("utf-8")()
    limit = bounds.max_line_bytes  # the bytes before each newline, as BoundedLines counts them
    run = 0
    with open(path, "rb") as handle:
        chunk = handle.read(block)
        bad = chunk.startswith(_UTF16)
        chunk = chunk.removeprefix(_BOM)
        while chunk and not bad:
            ends = np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == 10)
            if ends.size:
                longest = max(run + int(ends[0]), int(np.diff(ends).max(initial=0)) - 1)
                run = len(chunk) - int(ends[-1]) - 1
            else:
                longest = run = run + len(chunk)
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError:
                bad = True
            bad = bad or longest > limit or run > limit or b"\x00" in chunk
            chunk = handle.read(block)
        if not bad:
            try:
                decoder.decode(b"", final=True)
                return
            except UnicodeDecodeError:
                pass
        handle.seek(0)
        for _ in BoundedLines(handle, str(path), bounds):  # raises, naming the line
            pass
    raise InvalidParameterError(f"{path}: not UTF-8 text.")  # pragma: no cover - BoundedLines raised


def read_text_file(path: Path, what: str, bounds: Limits | None = None) -> str:
    """The whole of a small UTF-8 text file (a TOML model or configuration), checked and bounded first.

    Raises
    ------
    InvalidParameterError
        Larger than ``PRIVNOISE_MAX_FILE_BYTES``, or not UTF-8 text (the line of the first bad byte).
    OSError
        Absent, a directory, unreadable.
    """
    bounds = bounds or limits()
    check_file(path, regular=False)
    with open(path, "rb") as handle:
        raw = handle.read(bounds.max_file_bytes + 1)
    if len(raw) > bounds.max_file_bytes:
        raise InvalidParameterError(f"{path}: {what} larger than {bounds.rule('max_file_bytes')}.")
    if raw.startswith(_UTF16):
        raise InvalidParameterError(f"{path}, line 1: UTF-16 text (byte-order mark); save the file as UTF-8.")
    raw = raw.removeprefix(_BOM)
    nul = raw.find(b"\x00")
    if nul >= 0:
        line = raw.count(b"\n", 0, nul) + 1
        raise InvalidParameterError(f"{path}, line {line}: NUL byte (a binary file, not text).")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InvalidParameterError(f"{path}, line {line}: not UTF-8 text (a binary file?).") from None
