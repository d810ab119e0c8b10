"""Window-by-window noise for sensor time series, in bounded memory.

A stream of readings y(0), y(1), … (each a q-vector) is cut into windows of t+1 consecutive readings; each window
receives one draw of the designed noise (V_t of Liu, Kawano & Cao, or w_T = Ψ_T z of Farokhi & Sandberg,
Section 4). Noise is drawn for all windows a chunk touches in one vectorised call (no Python loop per reading).
A final partial window receives the marginal of the window noise on its readings (post-processing of a full window,
so the same guarantee holds). :class:`StreamState` records how many readings were processed and where the current
window stands, so a stream can be resumed.

:func:`stream_csv` (behind ``privnoise stream``) copies a real sensor CSV such as ``time,co2`` block by block
(memory bounded by ``chunk_lines``): ``columns`` selects the q sensor columns that receive noise (header names or
0-based indices); every other column (timestamps, ids) and the header line are copied unchanged and in place, and
the noisy values are written as round-trip (``repr``) floats. A malformed line raises an error naming the source,
the line and the column; no reading is ever skipped.

Examples
--------
>>> import numpy as np
>>> from privnoise.systems import StateSpace, GaussianInput, statistical_input_noise
>>> sys = StateSpace(A=[[0.9]], B=[[1.0]], C=[[1.0]])
>>> noise = statistical_input_noise(sys, horizon=2, c=2.02, delta=0.1, x0_public=GaussianInput(mean=[90], cov=[[10]]))
>>> s = StreamSanitizer(noise, rng=0)
>>> s.process(np.ones(4)).shape, s.process(np.ones(3)).shape, s.state
((4,), (3,), StreamState(count=7, position=1))
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_positive_int
from ..exceptions import InvalidParameterError
from ..mechanisms import Noise
from ..random import RNGLike, default_rng
from ..snapping import snapped_sum

__all__ = ["StreamSanitizer", "StreamState", "iter_csv_chunks", "sanitize_stream", "stream_csv"]


@dataclass(frozen=True, slots=True)
class StreamState:
    """Resumable position of a stream: ``count`` readings processed, ``position`` readings into the current window."""

    count: int = 0
    position: int = 0


def _window(noise: Any) -> tuple[int, int]:
    """(readings per window, outputs per reading) of window noise of shape (t+1, q)."""
    if isinstance(noise, Noise) and len(noise.shape) == 2:
        window, q = noise.shape
        return window, q
    raise InvalidParameterError(
        "`noise` of `StreamSanitizer` must be window noise of shape (t+1, q), such as a StatisticalInputNoise or "
        f"an InitialStateNoise; got {type(noise).__name__}."
    )


class StreamSanitizer:
    """Adds the designed window noise to successive chunks of readings.

    Parameters
    ----------
    noise : StatisticalInputNoise or InitialStateNoise
    rng : seed, Generator or None (keyword-only)
    state : StreamState, optional
        Resume from a saved state. Mid-window resumption is refused for time-correlated noise (Theorem 4), whose
        remaining coordinates would have to be drawn conditionally on coordinates already used.
    harden : bool, default True
        Snap every noisy reading to the noise's 2^k grid (:mod:`privnoise.snapping`), so that no low-order bit of
        the output depends on the reading; ``False`` for research only.
    """

    def __init__(
        self, noise: Any, *, rng: RNGLike = None, state: StreamState | None = None, harden: bool = True
    ) -> None:
        self.noise = noise
        self.window, self.q = _window(noise)
        if not isinstance(harden, bool):
            raise InvalidParameterError(f"`harden` of `StreamSanitizer` must be True or False; got {harden!r}.")
        self._grid = noise.default_grid_exponent() if harden else None
        self._rng = default_rng(rng)
        st = state or StreamState()
        check_positive_int(st.count, "count", "StreamState", minimum=0)
        if not 0 <= st.position < self.window:
            raise InvalidParameterError(
                f"`position` of `StreamState` must be in [0, {self.window}); got {st.position}."
            )
        if st.position and noise.marginal(0, 1) is None:
            raise InvalidParameterError(
                "`state` of `StreamSanitizer`: cannot resume time-correlated noise (Theorem 4) mid-window; "
                f"restart at a window boundary (position 0), got position {st.position}."
            )
        self._count = st.count
        self._pending = np.empty((0, self.q))
        if st.position:  # independent coordinates: the rest of the window is a fresh draw of its marginal
            self._pending = self._draw(1)[st.position :]

    @property
    def state(self) -> StreamState:
        return StreamState(self._count, (self.window - len(self._pending)) % self.window)

    def _draw(self, windows: int) -> NDArray[np.float64]:
        return np.asarray(self.noise.sample(windows, rng=self._rng)).reshape(windows * self.window, self.q)

    def process(self, readings: ArrayLike) -> NDArray[np.float64]:
        """Noisy copy of ``readings``: shape (k,) when q = 1, or (k, q)."""
        y = np.asarray(readings, dtype=float)
        shape = y.shape
        y = y.reshape(-1, self.q) if (self.q > 1 or y.ndim > 1) else y.reshape(-1, 1)
        if y.shape[1] != self.q:
            raise InvalidParameterError(
                f"`readings` of `StreamSanitizer.process` must have {self.q} column(s); got shape {shape}."
            )
        if not np.all(np.isfinite(y)):
            bad = int(np.flatnonzero(~np.isfinite(y).all(axis=1))[0])
            raise InvalidParameterError(
                f"`readings` of `StreamSanitizer.process`: reading {self._count + bad} is not finite."
            )
        k = y.shape[0]
        need = k - len(self._pending)
        if need > 0:
            fresh = self._draw(math.ceil(need / self.window))
            noise = np.concatenate([self._pending, fresh])
        else:
            noise = self._pending
        drawn = noise[:k]
        # zero noise (a design certified by the public x₀ law alone) adds nothing and has no grid to snap to
        out = y + drawn if self._grid is None or not drawn.any() else snapped_sum(y, drawn.copy(), self._grid)
        self._pending = noise[k:]
        self._count += k
        return out.reshape(shape)


def sanitize_stream(
    chunks: Iterable[ArrayLike], noise: Any, *, rng: RNGLike = None, state: StreamState | None = None
) -> Iterator[NDArray[np.float64]]:
    """Generator: the noisy version of each chunk of readings, window noise carried across chunks."""
    sanitizer = StreamSanitizer(noise, rng=rng, state=state)
    for chunk in chunks:
        yield sanitizer.process(chunk)


_FIELD = re.compile(r'(?:"[^"]*"|[^,"])*')


def _split(line: str) -> list[str] | None:
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
        return [_split(row) if '"' in row else row.split(",") for row in rows]
    return list(map(str.split, rows, itertools.repeat(",")))


def _name(cell: str) -> str:
    cell = cell.strip()
    if len(cell) >= 2 and cell[0] == cell[-1] == '"':
        cell = cell[1:-1].replace('""', '"')
    return cell


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class _Layout:
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


def _check_columns(columns: Any, q: int) -> list[str | int] | None:
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


def _layout(
    tokens: list[str | int] | None,
    cells: list[str],
    names: tuple[str, ...] | None,
    q: int,
    source: str,
    line: int,
) -> _Layout:
    n = len(cells)
    where = f"{source}, line {line}"
    if tokens is None:
        if n != q:
            raise InvalidParameterError(
                f"{where}: {n} field(s) per line but the model has q = {q} sensor output(s); choose the {q} "
                f"column(s) to noise with --columns (`columns`: header names or 0-based indices); "
                f"{_listing(names, cells)}."
            )
        return _Layout(n, tuple(range(n)), names)
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
    return _Layout(n, tuple(selected), names)


def _parse_slow(
    rows: list[str], first: int, layout: _Layout, source: str
) -> tuple[NDArray[np.float64], list[list[str]]]:
    """Line-by-line parse: the readings and the fields, or an error naming the first bad line and column."""
    q = len(layout.selected)
    out = np.empty((len(rows), q))
    fields: list[list[str]] = []
    for i, row in enumerate(rows):
        where = f"{source}, line {first + i}"
        if not row.strip():
            raise InvalidParameterError(f"{where}: missing value (blank line).")
        cells = _split(row)
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


def _parse_edge(rows: list[str], layout: _Layout) -> tuple[NDArray[np.float64], _Fields] | None:
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


def _parse(rows: list[str], first: int, layout: _Layout, source: str) -> tuple[NDArray[np.float64], _Fields]:
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


def _blocks(
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
    layout = _Layout(q, tuple(range(q)))
    for rows, first in _blocks(handle, first_line=first_line, chunk_lines=chunk_lines, source=source):
        yield _parse(rows, first, layout, source)[0]


def _format(noisy: NDArray[np.float64], fields: _Fields, layout: _Layout) -> str:
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


def stream_csv(
    source: Iterable[str],
    sink: IO[str],
    noise: Any,
    *,
    rng: RNGLike = None,
    columns: str | int | Sequence[str | int] | None = None,
    header: bool | None = None,
    preamble: str = "",
    first_line: int = 1,
    source_name: str = "<stdin>",
    chunk_lines: int = 65_536,
    progress: Any = None,
) -> int:
    """Copy a CSV from ``source`` to ``sink`` with designed noise added to its sensor columns.

    Returns the number of readings (data lines); every one of them is written, none is skipped or imputed.

    Parameters
    ----------
    source : iterable of str
        Lines of text (a file or ``sys.stdin``). Fields are separated by commas; a double-quoted field may hold
        commas. Leading lines starting with ``#`` are copied unchanged; then comes an optional header line, then
        one reading per line. Blank lines are allowed only at the end (they are dropped).
    sink : writable text stream
    noise : StatisticalInputNoise or InitialStateNoise
        The window noise; its q (rows of C) is the number of sensor columns.
    rng : seed, Generator or None (keyword-only)
    columns : str, int, sequence of str or int, or None
        The q sensor columns that receive noise, in the order of the model's outputs: header names or 0-based
        indices (a string is split at commas; a name present in the header wins over an index of the same
        spelling). Default: every column, which requires exactly q fields per line. Every other column
        (timestamps, ids) is copied unchanged and in place.
    header : bool or None
        Whether the first line after the ``#`` lines is a header of column names (copied unchanged). None
        (default) detects it: the line is a header when none of its fields is a number.
    preamble : str
        Text written to ``sink`` first (e.g. a ``#`` guarantee line), once the columns have been resolved.
    first_line : int
        Number of the first line of ``source`` in error messages.
    source_name : str
        Name of the source in error messages.
    chunk_lines : int
        Lines per block: noise for a block is drawn in one vectorised call; memory is bounded by the block.
    progress : callable, optional
        Called with the number of readings of each processed block.

    Returns
    -------
    int
        Readings written.

    Raises
    ------
    InvalidParameterError
        Invalid ``columns`` (before anything is read); a column name not in the header, an index out of range,
        or a field count other than q without ``columns`` (before anything is written; the message lists the
        header); a malformed line (message: source, line number and column). Lines before it have been written.

    Notes
    -----
    Noisy values are written as ``repr`` of the float (shortest string that round-trips); the other fields keep
    their exact text. Output lines end with ``\\n``.

    Examples
    --------
    >>> import io
    >>> from privnoise.systems import StateSpace, GaussianInput, statistical_input_noise
    >>> sys = StateSpace(A=[[0.9]], B=[[1.0]], C=[[1.0]])
    >>> noise = statistical_input_noise(sys, horizon=2, c=2.02, delta=0.1, x0_public=GaussianInput(mean=[90], cov=[[10]]))
    >>> sink = io.StringIO()
    >>> stream_csv(io.StringIO("time,co2\\n0,410\\n1,412\\n"), sink, noise, columns="co2", rng=0)
    2
    >>> [line.split(",")[0] for line in sink.getvalue().splitlines()]
    ['time', '0', '1']
    """
    sanitizer = StreamSanitizer(noise, rng=rng)
    q = sanitizer.q
    tokens = _check_columns(columns, q)
    if header is not None and not isinstance(header, bool):
        raise InvalidParameterError(f"`header` of `stream_csv` must be True, False or None; got {header!r}.")
    check_positive_int(chunk_lines, "chunk_lines", "stream_csv")
    lines = iter(source)
    line_no = first_line
    comments: list[str] = []
    first: str | None = None
    for line in lines:
        if line_no == first_line:
            line = line.removeprefix("\ufeff")  # a byte-order mark is not part of the text
        if line.startswith("#"):
            comments.append(line.rstrip("\r\n") + "\n")
            line_no += 1
            continue
        first = line
        break
    if first is None or not first.strip():  # no data (or a blank line: an error if data follows)
        sink.write(preamble + "".join(comments))
        rest = itertools.chain([first], lines) if first is not None else lines
        for _ in _blocks(rest, first_line=line_no, chunk_lines=chunk_lines, source=source_name):
            raise AssertionError("unreachable")  # pragma: no cover
        return 0
    row = first.rstrip("\r\n")
    cells = _split(row)
    if cells is None:
        raise InvalidParameterError(f"{source_name}, line {line_no}: unbalanced double quote: {row[:80]!r}.")
    is_header = header if header is not None else not any(_is_number(c) for c in cells)
    names = tuple(_name(c) for c in cells) if is_header else None
    layout = _layout(tokens, cells, names, q, source_name, line_no)
    sink.write(preamble + "".join(comments))
    if is_header:
        sink.write(row + "\n")
        line_no += 1
        rest = lines
    else:
        rest = itertools.chain([first], lines)
    for rows, start in _blocks(rest, first_line=line_no, chunk_lines=chunk_lines, source=source_name):
        values, fields = _parse(rows, start, layout, source_name)
        sink.write(_format(sanitizer.process(values).reshape(-1, q), fields, layout))
        if progress is not None:
            progress(len(rows))
    return sanitizer.state.count
