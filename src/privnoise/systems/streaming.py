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
the line and the column; no reading is ever skipped. The CSV text itself (parsing, column selection, writing back,
and :func:`iter_csv_chunks`) is read and written by :mod:`privnoise.systems.csv_readings`.

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
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_positive_int
from ..exceptions import InvalidParameterError
from ..mechanisms import Noise
from ..random import RNGLike, default_rng
from ..snapping import snapped_sum
from .csv_readings import (
    check_columns,
    format_block,
    header_name,
    is_number,
    iter_csv_chunks,
    line_blocks,
    parse_block,
    resolve_layout,
    split_fields,
)

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
    tokens = check_columns(columns, q)
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
        for _ in line_blocks(rest, first_line=line_no, chunk_lines=chunk_lines, source=source_name):
            raise AssertionError("unreachable")  # pragma: no cover
        return 0
    row = first.rstrip("\r\n")
    cells = split_fields(row)
    if cells is None:
        raise InvalidParameterError(f"{source_name}, line {line_no}: unbalanced double quote: {row[:80]!r}.")
    is_header = header if header is not None else not any(is_number(c) for c in cells)
    names = tuple(header_name(c) for c in cells) if is_header else None
    layout = resolve_layout(tokens, cells, names, q, source_name, line_no)
    sink.write(preamble + "".join(comments))
    if is_header:
        sink.write(row + "\n")
        line_no += 1
        rest = lines
    else:
        rest = itertools.chain([first], lines)
    for rows, start in line_blocks(rest, first_line=line_no, chunk_lines=chunk_lines, source=source_name):
        values, fields = parse_block(rows, start, layout, source_name)
        sink.write(format_block(sanitizer.process(values).reshape(-1, q), fields, layout))
        if progress is not None:
            progress(len(rows))
    return sanitizer.state.count
