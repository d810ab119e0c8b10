"""Window-by-window noise for sensor time series, in bounded memory.

A stream of readings y(0), y(1), … (each a q-vector) is cut into windows of t+1 consecutive readings; each window
receives one draw of the designed noise (V_t of Liu, Kawano & Cao, or w_T = Ψ_T z of Farokhi & Sandberg,
Section 4). Noise is drawn for all windows a chunk touches in one vectorised call (no Python loop per reading).
A final partial window receives the marginal of the window noise on its readings (post-processing of a full window,
so the same guarantee holds). :class:`StreamState` records how many readings were processed and where the current
window stands, so a stream can be resumed.

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

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_positive_int
from ..exceptions import InvalidParameterError
from ..random import RNGLike, default_rng
from .initial_state import InitialStateNoise
from .statistical_input import StatisticalInputNoise

__all__ = ["StreamSanitizer", "StreamState", "iter_csv_chunks", "sanitize_stream", "stream_csv"]


@dataclass(frozen=True, slots=True)
class StreamState:
    """Resumable position of a stream: ``count`` readings processed, ``position`` readings into the current window."""

    count: int = 0
    position: int = 0


def _window(noise: Any) -> tuple[int, int]:
    if isinstance(noise, StatisticalInputNoise | InitialStateNoise):
        return noise.horizon + 1, noise.system.q
    raise InvalidParameterError(
        f"`noise` of `StreamSanitizer` must be a StatisticalInputNoise or an InitialStateNoise; got {type(noise).__name__}."
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
    """

    def __init__(self, noise: Any, *, rng: RNGLike = None, state: StreamState | None = None) -> None:
        self.noise = noise
        self.window, self.q = _window(noise)
        self._rng = default_rng(rng)
        st = state or StreamState()
        check_positive_int(st.count, "count", "StreamState", minimum=0)
        if not 0 <= st.position < self.window:
            raise InvalidParameterError(
                f"`position` of `StreamState` must be in [0, {self.window}); got {st.position}."
            )
        if st.position and isinstance(noise, InitialStateNoise):
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
        out = y + noise[:k]
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


def _parse_slow(lines: list[str], first: int, q: int, source: str) -> NDArray[np.float64]:
    out = np.empty((len(lines), q))
    for i, line in enumerate(lines):
        where = f"{source}, line {first + i}"
        text = line.strip()
        if not text:
            raise InvalidParameterError(f"{where}: missing value (blank line).")
        cells = [c.strip() for c in text.split(",")]
        if len(cells) != q:
            raise InvalidParameterError(f"{where}: expected {q} value(s) per line; got {len(cells)}.")
        for j, cell in enumerate(cells):
            if not cell:
                raise InvalidParameterError(f"{where}: missing value (empty field {j + 1}).")
            try:
                value = float(cell)
            except ValueError:
                raise InvalidParameterError(f"{where}: not a number: {cell[:40]!r}.") from None
            if not math.isfinite(value):
                raise InvalidParameterError(
                    f"{where}: {cell[:40]!r} is not finite (NaN and inf are refused)."
                )
            out[i, j] = value
    return out


def _parse(lines: list[str], first: int, q: int, source: str) -> NDArray[np.float64]:
    """Parse a block of lines (vectorised fast path; the slow path names the first bad line)."""
    try:
        if q == 1:
            arr = np.array(lines, dtype=np.float64).reshape(-1, 1)
        else:
            arr = np.array([line.split(",") for line in lines], dtype=np.float64)
        if arr.shape == (len(lines), q) and np.isfinite(arr).all():
            return arr
    except ValueError:
        pass
    return _parse_slow(lines, first, q, source)


def iter_csv_chunks(
    handle: Iterable[str],
    *,
    q: int = 1,
    first_line: int = 1,
    chunk_lines: int = 65_536,
    source: str = "<stdin>",
) -> Iterator[NDArray[np.float64]]:
    """Blocks of readings from a text stream, one reading (q comma-separated numbers) per line.

    Every line must hold a finite reading; an error names the source and the line. Blank lines are allowed only at
    the end. Nothing is skipped or imputed.
    """
    line_no = first_line
    block: list[str] = []
    trailing_blank = 0
    for line in handle:
        if not line.strip():
            trailing_blank = trailing_blank or line_no
            line_no += 1
            continue
        if trailing_blank:
            raise InvalidParameterError(
                f"{source}, line {trailing_blank}: missing value (blank line inside the data)."
            )
        block.append(line)
        line_no += 1
        if len(block) == chunk_lines:
            yield _parse(block, line_no - len(block), q, source)
            block = []
    if block:
        yield _parse(block, line_no - len(block), q, source)


def _format(arr: NDArray[np.float64]) -> str:
    if arr.shape[1] == 1:
        return "\n".join(map(repr, arr[:, 0].tolist())) + "\n"
    return "\n".join(",".join(map(repr, row)) for row in arr.tolist()) + "\n"


def stream_csv(
    source: Iterable[str],
    sink: IO[str],
    noise: Any,
    *,
    rng: RNGLike = None,
    first_line: int = 1,
    source_name: str = "<stdin>",
    chunk_lines: int = 65_536,
    progress: Any = None,
) -> int:
    """Read readings from ``source``, write the noisy readings to ``sink``; returns the number of readings.

    ``progress`` (optional) is called with the number of readings of each processed block.
    """
    sanitizer = StreamSanitizer(noise, rng=rng)
    q = sanitizer.q
    for block in iter_csv_chunks(
        source, q=q, first_line=first_line, chunk_lines=chunk_lines, source=source_name
    ):
        sink.write(_format(sanitizer.process(block).reshape(-1, q)))
        if progress is not None:
            progress(len(block))
    return sanitizer.state.count
