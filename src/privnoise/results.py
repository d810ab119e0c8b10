"""The one result type of every release: the noisy value, the guarantee that holds for it, and its accuracy.

:class:`Release` is what :func:`privnoise.release` and every :class:`~privnoise.analysis.Session` query return
(``privnoise.analysis.Estimate`` is the same class under its earlier name). It carries

* ``value`` — a number (count, sum, mean, variance), an array (records, histogram cells, group values, quantiles),
  a list of selected categories (top-k), or None when the values were written to ``output``;
* ``guarantee`` — the privacy notion(s) and the numbers that hold for this release alone: Fisher information,
  (ε, δ)-DP (:class:`~privnoise.guarantees.DifferentialPrivacyGuarantee`), ρ-zCDP
  (:class:`~privnoise.guarantees.ConcentratedGuarantee`), both, or the notion of the noise (statistical inputs,
  MMSE), with the adjacency it is stated for;
* ``query`` and ``mechanism`` (or ``noise``, one description per noisy component) — what was asked and the noise
  it was answered with, never the true value;
* ``accuracy(alpha)`` and ``confidence_interval(level)`` — from the law of the noise
  (:mod:`privnoise.planning.accuracy`) where the release states one; ``meaning`` says what they cover: the noise
  only, not sampling error;
* ``clamped`` — True where a ratio or count was clipped to its possible range after the noise (post-processing,
  published); ``clamped_records`` — for the data owner only, how many records a direct release clamped to the
  declared bounds (it depends on the data and is never published by :meth:`Release.as_dict`);
* ``keys`` — group keys, histogram bins or categories, aligned with ``value`` (tuples for a group-by on several
  columns); ``key_columns`` names the group-by's key columns (one or several); :meth:`Release.to_frame` puts each
  in a column of its own;
* ``empty`` — for means, True where the noisy count was ≤ 0: no estimate (the value is the centre of the bounds
  and the interval their whole range);
* ``fisher_information`` — for sums and means, the Fisher information the release carries about one row's value:
  any unbiased estimate of that value, even by someone who knows every other row, has variance ≥ 1/𝓘
  (Farokhi & Sandberg, eq. (7)); the value enters the noisy sum with coefficient 1, so 𝓘 is the noise's location
  information (1/b² for Laplace, 1/σ² for Gaussian noise), and the count, the rounding and the ratio only lower it.
  A differential-privacy answer states it only when asked (``summary(fisher=True)``, ``as_dict(fisher=True)``),
  with its meaning in the unit of the data;
* ``grid`` — the grid Λ = 2^k every output of a direct release is an exact multiple of (0 for an unhardened
  research release), and ``output``, the file its values were written to.

The values of a bounded column are clamped to the declared bounds before anything is summed or ranked: the interval
covers the statistic of the clamped values, which differs from that of the raw values when some lie outside the
bounds. The summary says so; :meth:`~privnoise.analysis.Session.clamped_count` counts the values outside the bounds
privately, at a cost, when the analyst asks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._optional import require
from ._validation import check_in_range
from .exceptions import InvalidParameterError
from .guarantees import Guarantee, json_number

__all__ = ["NOISE_ONLY", "RANK", "Release"]

NOISE_ONLY = (
    "noise only: with this probability over the noise the interval covers the exact statistic of the "
    "contribution-bounded, clamped data; sampling error, and what bounding and clamping removed, are not included"
)
RANK = (
    "noise only: with this probability over the mechanism, the number of bounded rows below the released value "
    "differs from q·n by at most this many rows (beyond the best the candidate grid allows); no interval in value "
    "units follows without the data"
)


Interval = Callable[[float], tuple[Any, Any, Any]]


def _level(level: Any, owner: str) -> float:
    """A confidence level in (0, 1)."""
    return check_in_range(level, "level", owner, low=0.0, high=1.0, low_open=True, high_open=True)


@dataclass(frozen=True, slots=True, eq=False)
class Release:
    """A noisy answer, what it guarantees and how accurate it is (module docstring)."""

    value: Any
    guarantee: Guarantee
    query: dict[str, Any]
    mechanism: dict[str, Any] | None = None  # the noise of a direct release (pn.release)
    clamped_records: int = 0  # owner-only: records a direct release clamped to the declared bounds
    grid: float = 0.0  # Λ: every output of a direct release is an exact multiple of it (0: unhardened)
    output: str | None = None  # the file the values were written to (value None)
    interval: Interval | None = None  # level ↦ (low, high, coverage)
    radius: Callable[[float], Any] | None = None  # level ↦ accuracy radius (rank estimates)
    clamped: Any = False
    keys: list[Any] | None = None
    meaning: str = NOISE_ONLY
    noise: list[dict[str, Any]] = field(default_factory=list)
    fisher_information: float | None = None
    key_columns: tuple[str, ...] | None = None  # the key column(s) of a group-by
    empty: Any = False  # means: True where the noisy count was ≤ 0 (no estimate)

    def confidence_interval(self, level: float = 0.95) -> tuple[Any, Any]:
        """(low, high) covering the statistic with probability ≥ ``level`` over the noise (see ``meaning``).

        Raises
        ------
        InvalidParameterError
            For a quantile or a top-k selection, which have no interval in value units: a quantile's accuracy is a
            rank (rows below the released value), and turning ranks into values needs the data's distribution near
            the quantile, which is private. Use :meth:`accuracy` (in rows); for a range of values, release the
            quantiles at q ± accuracy/n as well (n from a noisy count), at their own cost.
        """
        lv = _level(level, "Release.confidence_interval")
        if self.interval is None:
            raise InvalidParameterError(self._no_interval())
        low, high, _ = self.interval(lv)
        return low, high

    @property
    def stated_accuracy(self) -> bool:
        """Whether the release states an accuracy (an interval, or a radius in rows)."""
        return self.interval is not None or self.radius is not None

    def _no_interval(self) -> str:
        label = self.query.get("query", "this")
        if not self.stated_accuracy:
            return (f"this {label} release states no accuracy: its noise has no error law the release could state "
                    "an interval from.")
        if self.meaning != RANK:
            return (f"a {label} release selects categories and has no interval; `accuracy(alpha)` bounds, in rows, how "
                    "far each selected category's count may be below the largest remaining one.")
        return ("a quantile has no confidence interval in value units: its accuracy is a rank — with probability "
                "≥ level the number of rows below the released value is within `accuracy(1 − level)` rows of q·n — "
                "and turning rows into values needs the data's distribution near the quantile, which is private. "
                "Use `accuracy(alpha)` (in rows); for a range of values, release the quantiles at q ± accuracy/n "
                "as well (n from a noisy count), at their own cost.")

    def coverage(self, level: float = 0.95) -> Any:
        """The exact probability (≥ ``level``) that :meth:`confidence_interval` covers, where it is known."""
        lv = _level(level, "Release.coverage")
        if self.interval is None:
            return lv
        return self.interval(lv)[2]

    def accuracy(self, alpha: float = 0.05) -> Any:
        """a with P(error > a) ≤ α: the half-width of the interval at level 1 − α (the rank radius for quantiles)."""
        lv = 1.0 - _level(alpha, "Release.accuracy")
        if self.radius is not None:
            return self.radius(lv)
        if self.interval is None:
            raise InvalidParameterError(self._no_interval())
        low, high, _ = self.interval(lv)
        return np.maximum(np.asarray(self.value, dtype=float) - low, high - np.asarray(self.value, dtype=float))

    def notes(self) -> list[str]:
        """What the reader should know beside the numbers: the clamping of the values to the declared bounds."""
        bounds = self.query.get("bounds")
        if bounds is None or self.query.get("query") not in _CLAMPING:
            return []
        covered = "the interval covers" if self.interval is not None else "the accuracy is about"
        return [f"values clamped to the declared bounds [{bounds[0]:g}, {bounds[1]:g}]: {covered} the statistic of "
                "the clamped values, not of the raw ones (Session.clamped_count counts the values outside the bounds "
                "privately, at a cost)"]

    def fisher_line(self) -> str | None:
        """The Fisher bound on one row's value in the unit of the data (None: the release has none)."""
        if self.fisher_information is None:
            return None
        column = self.query.get("column") or "the column"
        return (f"Fisher: from this release, any unbiased estimate of one row's value of {column}, even by someone "
                f"who knows every other row, has a standard deviation ≥ {self.fisher_information ** -0.5:.4g} (in "
                f"the unit of {column}; variance ≥ {1.0 / self.fisher_information:.4g})")

    def as_dict(self, level: float = 0.95, *, fisher: bool = False) -> dict[str, Any]:
        """JSON-ready: value, guarantee, query, the interval (or accuracy) at ``level``, its meaning and the notes;
        with ``fisher``, the Fisher information about one row's value and the error floor it gives. A direct
        release (:func:`privnoise.release`) gives its mechanism, grid and file instead of the notes; the number of
        clamped records depends on the data and is left out (it stays on ``clamped_records`` for the owner).
        Infinite numbers are written as the string "inf"."""
        out: dict[str, Any]
        if self.mechanism is not None:  # a direct release: its noise, grid and file; the clamped count stays here
            out = {"value": _flat(self.value), "guarantee": self.guarantee.as_dict(), "query": self.query,
                   "mechanism": self.mechanism, "grid": self.grid}
            if self.output is not None:
                out["output"] = self.output
            if self.stated_accuracy:
                out["accuracy"] = {"level": level, "radius": _json(self.accuracy(1.0 - level)),
                                   "meaning": self.meaning}
            return out
        out = {
            "value": _json(self.value),
            "guarantee": self.guarantee.as_dict(),
            "query": self.query,
            "clamped": _json(self.clamped),
            "noise": self.noise,
            "notes": self.notes(),
        }
        if np.any(self.empty):
            out["empty"] = _json(self.empty)
        if fisher and self.fisher_information is not None:
            out["fisher_information_per_row"] = self.fisher_information
            out["row_error_floor"] = 1.0 / self.fisher_information
            out["fisher"] = self.fisher_line()
        if self.keys is not None:
            out["keys"] = [_json_key(k) for k in self.keys]
            if self.key_columns is not None:
                out["key_columns"] = list(self.key_columns)
        if self.interval is not None:
            low, high = self.confidence_interval(level)
            out["confidence_interval"] = {"level": level, "low": _json(low), "high": _json(high),
                                          "coverage": _json(self.coverage(level)), "meaning": self.meaning}
        else:
            out["accuracy"] = {"level": level, "radius": _json(self.accuracy(1.0 - level)), "meaning": self.meaning}
        return out

    def to_frame(self, level: float = 0.95) -> Any:
        """A pandas DataFrame of keys, values and interval limits (vector releases): the keys of a group-by in one
        column per key column, named by it; other keys (histogram bins, categories, selected categories) in
        ``key``."""
        pd = require("pandas", feature="Release.to_frame")
        columns: dict[str, Any] = {}
        keys: list[Any] = self.keys if self.keys is not None else list(range(np.size(self.value)))
        if self.key_columns is not None and len(self.key_columns) > 1:
            for i, name in enumerate(self.key_columns):
                columns[name] = [k[i] for k in keys]
        else:
            columns["key" if self.key_columns is None else self.key_columns[0]] = keys
        columns["value"] = np.ravel(self.value)
        if self.interval is not None:
            low, high = self.confidence_interval(level)
            columns["low"], columns["high"] = np.ravel(low), np.ravel(high)
        return pd.DataFrame(columns)

    def cells(self, level: float = 0.95) -> list[tuple[Any, str]]:
        """(key, "value [low, high]") of each cell of a release with keys and intervals; a mean whose noisy count
        was ≤ 0 reads "no estimate (noisy count ≤ 0)", a value that post-processing moved says so."""
        low, high = self.confidence_interval(level)
        shape = np.shape(self.value)
        what = str(self.query.get("query", ""))
        out = []
        for key, v, lo, hi, clamped, empty in zip(self.keys or [], np.ravel(self.value), np.ravel(low), np.ravel(high),
                                                  np.ravel(np.broadcast_to(self.clamped, shape)),
                                                  np.ravel(np.broadcast_to(self.empty, shape)), strict=True):
            flag = _flag(clamped, empty, what)
            out.append((key, "no estimate (noisy count ≤ 0)" if flag == _EMPTY
                        else f"{_text(v)}{flag} [{_text(lo)}, {_text(hi)}]"))
        return out

    def summary(self, level: float = 0.95, *, fisher: bool = False) -> str:
        """One line: the value(s) with the interval (or rank accuracy) at ``level``, the guarantee and the notes;
        with ``fisher``, the Fisher bound on one row's value (:meth:`fisher_line`)."""
        what = self.query.get("query", "release")
        if self.query.get("where"):
            what = f"{what} where {self.query['where']}"
        tail = "; ".join([self.guarantee.summary(), *self.notes()]
                         + ([line] if fisher and (line := self.fisher_line()) else []))
        if not self.stated_accuracy:
            return f"{what}: {_text(self.value)}; {tail}"
        if self.interval is None:
            radius = self.accuracy(1.0 - level)
            if np.ndim(self.value) and self.query.get("q") is not None:
                cells = ", ".join(f"q = {q:g}: {_text(v)} (±{_text(r)} rows)" for q, v, r in
                                  zip(self.query["q"], np.ravel(self.value), np.ravel(radius), strict=True))
                return f"{what}: {cells} ({level:.0%} rank accuracy); {tail}"
            return f"{what}: {_text(self.value)}; {level:.0%} rank accuracy ±{_text(radius)} rows; {tail}"
        low, high = self.confidence_interval(level)
        if self.keys == [] and self.query.get("keys") == "selected":
            return (f"{what}: no key selected (no noisy count reached the threshold "
                    f"{self.query.get('threshold')}); {tail}")
        if self.keys is not None and np.ndim(self.value):
            cells = ", ".join(f"{key}: {text}" for key, text in self.cells(level))
            return f"{what}: {{{cells}}} ({level:.0%} intervals); {tail}"
        if np.any(self.empty):
            return f"{what}: no estimate (noisy count ≤ 0: {_text(self.value)} is a placeholder); {tail}"
        flag = _flag(bool(np.any(self.clamped)), False, what)
        return f"{what}: {_text(self.value)}{flag}; {level:.0%} interval [{_text(low)}, {_text(high)}]; {tail}"


_EMPTY = "empty"
#: The queries whose values are clamped to declared bounds before they are aggregated.
_CLAMPING = ("sum", "mean", "variance", "quantile", "group sum", "group mean")


def _flag(clamped: Any, empty: Any, what: str) -> str:
    """The mark of a value that post-processing moved: an empty mean, a mean or variance clipped to its possible
    range, a noisy count (or sum) below its sign shown at 0."""
    if empty:
        return _EMPTY
    if not clamped:
        return ""
    if "mean" in what or "variance" in what:
        return " (clipped to its possible range)"
    if "count" in what or "histogram" in what:
        return " (noisy count below 0, shown as 0)"
    return " (noisy sum of the sign the bounds exclude, shown as 0)"


def _flat(value: Any) -> Any:
    """The value of a direct release in JSON: a number, the flattened array, or None (written to a file)."""
    if value is None:
        return None
    if np.ndim(value) == 0:
        return json_number(float(value))
    return [json_number(float(v)) for v in np.ravel(value)]


def _json(value: Any) -> Any:
    if isinstance(value, list):
        return [_json(v) for v in value]
    if isinstance(value, np.ndarray):
        return [_json(v) for v in value.tolist()]
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return json_number(float(value))
    return value


def _json_key(key: Any) -> Any:
    if isinstance(key, tuple):
        return [_json_key(k) for k in key]
    return key if isinstance(key, str | int | float | type(None)) else str(key)


def _text(value: Any) -> str:
    if isinstance(value, np.ndarray | list):
        return "[" + ", ".join(_text(v) for v in np.ravel(np.asarray(value, dtype=object))) + "]"
    if isinstance(value, float | np.floating):
        return f"{float(value):.6g}"
    return str(value)
