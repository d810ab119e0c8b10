"""What a session query returns: the noisy value, the guarantee that holds, and its accuracy.

:class:`Estimate` carries

* ``value`` — a number (count, sum, mean, variance), an array (histogram cells, group values, quantiles) or a list of
  selected categories (top-k);
* ``guarantee`` — the privacy of this release alone (:class:`~privnoise.guarantees.DifferentialPrivacyGuarantee`,
  or :class:`~privnoise.guarantees.ConcentratedGuarantee` for ρ-zCDP), with the unit and the cap it is
  stated for;
* ``accuracy(alpha)`` and ``confidence_interval(level)`` — from the law of the noise
  (:mod:`privnoise.analysis.accuracy`); ``meaning`` says what they cover: the noise only, not sampling error;
* ``clamped`` — True where a ratio or count was clipped to its possible range after the noise (post-processing,
  published);
* ``keys`` — group keys, histogram bins or categories, aligned with ``value`` (tuples for a group-by on several
  columns, named by ``key_columns``);
* ``fisher_information`` — for sums and means, the Fisher information the release carries about one row's value:
  any unbiased estimate of that value, even by someone who knows every other row, has variance ≥ 1/𝓘
  (Farokhi & Sandberg, eq. (7)); the value enters the noisy sum with coefficient 1, so 𝓘 is the noise's location
  information (1/b² for Laplace, 1/σ² for Gaussian noise), and the count, the rounding and the ratio only lower it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..exceptions import InvalidParameterError
from ..guarantees import ConcentratedGuarantee, Guarantee, json_number
from .accuracy import check_level

__all__ = ["ConcentratedGuarantee", "Estimate"]

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


@dataclass(frozen=True, slots=True, eq=False)
class Estimate:
    """A session release (module docstring)."""

    value: Any
    guarantee: Guarantee
    query: dict[str, Any]
    interval: Interval | None = None  # level ↦ (low, high, coverage)
    radius: Callable[[float], Any] | None = None  # level ↦ accuracy radius (rank estimates)
    clamped: Any = False
    keys: list[Any] | None = None
    meaning: str = NOISE_ONLY
    noise: list[dict[str, Any]] = field(default_factory=list)
    fisher_information: float | None = None
    key_columns: tuple[str, ...] | None = None  # the key columns of a group-by on several

    def confidence_interval(self, level: float = 0.95) -> tuple[Any, Any]:
        """(low, high) covering the statistic with probability ≥ ``level`` over the noise (see ``meaning``)."""
        lv = check_level(level, "Estimate.confidence_interval")
        if self.interval is None:
            raise InvalidParameterError(
                f"a {self.query.get('query', 'this')} release has no interval in value units: {self.meaning}. "
                "Use `accuracy(alpha)`."
            )
        low, high, _ = self.interval(lv)
        return low, high

    def coverage(self, level: float = 0.95) -> Any:
        """The exact probability (≥ ``level``) that :meth:`confidence_interval` covers, where it is known."""
        lv = check_level(level, "Estimate.coverage")
        if self.interval is None:
            return lv
        return self.interval(lv)[2]

    def accuracy(self, alpha: float = 0.05) -> Any:
        """a with P(error > a) ≤ α: the half-width of the interval at level 1 − α (the rank radius for quantiles)."""
        lv = 1.0 - check_level(alpha, "Estimate.accuracy")
        if self.radius is not None:
            return self.radius(lv)
        assert self.interval is not None
        low, high, _ = self.interval(lv)
        return np.maximum(np.asarray(self.value, dtype=float) - low, high - np.asarray(self.value, dtype=float))

    def as_dict(self, level: float = 0.95) -> dict[str, Any]:
        """JSON-ready: value, guarantee, query, the interval (or accuracy) at ``level`` and its meaning."""
        out: dict[str, Any] = {
            "value": _json(self.value),
            "guarantee": self.guarantee.as_dict(),
            "query": self.query,
            "clamped": _json(self.clamped),
            "noise": self.noise,
        }
        if self.fisher_information is not None:
            out["fisher_information_per_row"] = self.fisher_information
            out["row_error_floor"] = 1.0 / self.fisher_information
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
        """A pandas DataFrame of keys, values and interval limits (vector releases); a group-by on several columns
        has one column per key column, named by it, instead of ``key``."""
        from .._optional import require

        pd = require("pandas", feature="Estimate.to_frame")
        columns: dict[str, Any] = {}
        if self.key_columns is not None:
            keys = self.keys or []
            for i, name in enumerate(self.key_columns):
                columns[name] = [k[i] for k in keys]
        else:
            columns["key"] = self.keys if self.keys is not None else list(range(np.size(self.value)))
        columns["value"] = np.ravel(self.value)
        if self.interval is not None:
            low, high = self.confidence_interval(level)
            columns["low"], columns["high"] = np.ravel(low), np.ravel(high)
        return pd.DataFrame(columns)

    def summary(self, level: float = 0.95) -> str:
        what = self.query.get("query", "release")
        if self.query.get("where"):
            what = f"{what} where {self.query['where']}"
        clipped = " (clamped to its range)" if np.any(self.clamped) else ""
        guarantee = self.guarantee.summary()
        if self.fisher_information is not None:
            guarantee += f"; one row's value: error variance ≥ {1.0 / self.fisher_information:.4g} (Fisher)"
        if self.interval is None:
            return (f"{what}: {_text(self.value)}{clipped}; {level:.0%} rank accuracy "
                    f"±{_text(self.accuracy(1.0 - level))} rows; {guarantee}")
        low, high = self.confidence_interval(level)
        if self.keys is not None and np.ndim(self.value):
            cells = ", ".join(
                f"{key}: {_text(v)} [{_text(lo)}, {_text(hi)}]"
                for key, v, lo, hi in zip(self.keys, np.ravel(self.value), np.ravel(low), np.ravel(high), strict=True)
            )
            return f"{what}: {{{cells}}}{clipped} ({level:.0%} intervals); {guarantee}"
        return f"{what}: {_text(self.value)}{clipped}; {level:.0%} interval [{_text(low)}, {_text(high)}]; {guarantee}"


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
