"""Synthetic smart-meter data for examples, tests and the ``privnoise demo`` command, and a strict CSV reader.

The smart-meter setting is Farokhi & Sandberg's Example 1: a trusted server holds the energy consumption of
the households of a neighbourhood and answers aggregate queries with additive noise. No real data ship with
privnoise; :func:`smart_meter_data` draws a realistic stand-in from the model below, and
:func:`load_csv_column` reads one numeric column of a CSV file for ``privnoise release`` without ever
dropping a value silently.

The model
---------
Readings are half-hourly energies in kWh, 48 per day, for ``households`` households over ``days`` days from
Monday 8 January 2024. Reading ``k`` of a day covers the half hour starting at ``k/2`` hours; its profile is
evaluated at the midpoint ``h = k/2 + 1/4``.

* **Daily load profile** (kWh per half hour of a reference household)::

      p(h) = base + a_m·φ(h; μ_m, s_m) + a_e·φ(h; μ_e, s_e) + a_d·plateau(h; d₀, d₁)

  with φ(h; μ, s) = exp(−(h − μ)²/(2s²)) (circular in h) and a smooth daytime plateau (logistic edges).
  The night base load is 0.12 kWh (fridge, standby); the morning peak is at 07:15 on weekdays, later and
  broader (09:30) at weekends; the evening peak (cooking, lighting, heating) at 18:45 / 18:30 is the largest;
  the daytime plateau is low on weekdays (0.04, people at work) and higher at weekends (0.12). The reference
  household uses 10.3 kWh on a weekday and 12.2 kWh on a weekend day.
* **Households differ** in scale and routine: household ``i`` has a multiplicative scale
  ``s_i ~ LogNormal(0, 0.45)`` (median 1) and a routine shift ``τ_i ~ N(0, 0.5)`` hours: its profile is
  ``p(h − τ_i)``.
* **Regions**: each household is labelled north, south, east or west with equal probability; the region scales
  consumption by a climate factor (north 1.15, south 0.90, east 1.00, west 1.05: more heating in the north).
* **Reading noise**: each reading is multiplied by ``exp(σZ − σ²/2)`` (mean 1, σ = 0.3) and, with probability
  0.04, an appliance event of ``Exponential(mean 0.5 kWh)`` is added (kettle, oven, washing machine).
* **Bounds**: readings are non-negative by construction and capped at the declared meter bound
  :data:`KWH_BOUNDS` = [0, 5] kWh per half hour (10 kW); they are rounded to whole Wh (0.001 kWh), the
  resolution of a real meter. A household's mean daily consumption has the owner-declared bound
  :data:`DAILY_KWH_BOUNDS` = [0, 60] kWh/day, used by the demo. The model's 99.9th percentile is about
  47 kWh/day and about 1 household in 10 000 exceeds 60; such records are clamped at release (and counted),
  never dropped.

Generation is vectorised over households and readings (no Python loop per reading).

Examples
--------
>>> from privnoise.sample_data import smart_meter_data
>>> data = smart_meter_data(households=20, days=2, rng=1)
>>> data.kwh.shape
(20, 96)
>>> bool((data.kwh >= 0).all() and (data.kwh <= 5).all())
True
>>> data.daily_means().shape
(20,)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from ._validation import check_positive_int, readonly
from .exceptions import InvalidParameterError
from .random import RNGLike, default_rng

__all__ = [
    "DAILY_KWH_BOUNDS",
    "KWH_BOUNDS",
    "REGIONS",
    "SLOTS_PER_DAY",
    "SmartMeterData",
    "load_csv_column",
    "smart_meter_data",
]

SLOTS_PER_DAY = 48
KWH_BOUNDS: tuple[float, float] = (0.0, 5.0)
"""Declared bounds of one half-hourly reading in kWh (a 10 kW meter rating)."""
DAILY_KWH_BOUNDS: tuple[float, float] = (0.0, 60.0)
"""Owner-declared bounds of a household's mean daily consumption in kWh/day (used by the demo)."""
REGIONS: tuple[str, ...] = ("north", "south", "east", "west")
_REGION_FACTOR = np.array([1.15, 0.90, 1.00, 1.05])
_START = np.datetime64("2024-01-08T00:00", "m")  # a Monday

# base, morning (amplitude, centre, width), evening (amplitude, centre, width), daytime (level, start, end)
_WEEKDAY = (0.12, 0.20, 7.25, 0.9, 0.38, 18.75, 1.6, 0.04, 9.0, 16.0)
_WEEKEND = (0.12, 0.22, 9.5, 1.5, 0.34, 18.5, 1.8, 0.12, 10.0, 17.0)
_SCALE_SIGMA = 0.45
_SHIFT_SD_HOURS = 0.5
_READING_SIGMA = 0.3
_EVENT_PROBABILITY = 0.04
_EVENT_MEAN_KWH = 0.5


def _profile(hours: NDArray[np.float64], params: tuple[float, ...]) -> NDArray[np.float64]:
    """The reference load profile (kWh per half hour) at clock times ``hours`` (any shape)."""
    base, am, mm, sm, ae, me, se, ad, d0, d1 = params
    h = np.mod(hours, 24.0)

    def bump(centre: float, width: float) -> NDArray[np.float64]:
        d = (h - centre + 12.0) % 24.0 - 12.0  # circular distance, so a shifted routine wraps round midnight
        return np.exp(-0.5 * (d / width) ** 2)

    edge = 0.25
    plateau = 1.0 / (1.0 + np.exp(-(h - d0) / edge)) - 1.0 / (1.0 + np.exp(-(h - d1) / edge))
    return base + am * bump(mm, sm) + ae * bump(me, se) + ad * plateau


@dataclass(frozen=True, slots=True, eq=False)
class SmartMeterData:
    """Half-hourly smart-meter readings of a neighbourhood (wide arrays, no pandas).

    Attributes
    ----------
    kwh : numpy.ndarray, shape (households, days · 48)
        Readings in kWh per half hour (read-only), household by household in time order.
    regions : numpy.ndarray of str, shape (households,)
        Region label of each household (one of :data:`REGIONS`).
    timestamps : numpy.ndarray of datetime64[m], shape (days · 48,)
        Start of each half hour.
    household_ids : numpy.ndarray of int, shape (households,)
        Identifiers 1 … households.

    The long (one row per reading) form has the columns ``household, region, timestamp, kwh`` (see
    :meth:`column` and :meth:`to_csv`).
    """

    kwh: NDArray[np.float64]
    regions: NDArray[np.str_]
    timestamps: NDArray[np.datetime64]
    household_ids: NDArray[np.int64]
    columns: ClassVar[tuple[str, ...]] = ("household", "region", "timestamp", "kwh")
    bounds: ClassVar[tuple[float, float]] = KWH_BOUNDS
    daily_bounds: ClassVar[tuple[float, float]] = DAILY_KWH_BOUNDS
    _weekend: NDArray[np.bool_] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        day = self.timestamps.astype("datetime64[D]").astype(np.int64)
        object.__setattr__(self, "_weekend", readonly((day + 3) % 7 >= 5))  # 1970-01-01 was a Thursday

    @property
    def households(self) -> int:
        return int(self.kwh.shape[0])

    @property
    def days(self) -> int:
        return int(self.kwh.shape[1] // SLOTS_PER_DAY)

    def __len__(self) -> int:
        """Number of readings (rows of the long form)."""
        return int(self.kwh.size)

    def daily_means(self) -> NDArray[np.float64]:
        """Mean daily consumption of each household in kWh/day: the database x of the demo's queries."""
        return self.kwh.sum(axis=1) / self.days

    def daily_profile(self, *, weekend: bool | None = None) -> NDArray[np.float64]:
        """Mean reading per half-hour slot (48 values), over households and weekdays/weekend days/all days."""
        days = self.kwh.reshape(self.households, self.days, SLOTS_PER_DAY)
        is_weekend = self._weekend.reshape(self.days, SLOTS_PER_DAY)[:, 0]
        keep = np.ones(self.days, bool) if weekend is None else is_weekend == weekend
        if not keep.any():
            kind = "weekend" if weekend else "week"
            raise InvalidParameterError(f"`weekend` of `daily_profile`: the data have no {kind} days.")
        return days[:, keep, :].mean(axis=(0, 1))

    def region_matrix(self) -> NDArray[np.float64]:
        """The 4 × households matrix whose rows average each region's households (rows as in :data:`REGIONS`).

        Region labels are treated as public metadata: the query matrix is built from them, the readings stay
        private. A region without households gives a zero row.
        """
        member = self.regions[None, :] == np.asarray(REGIONS)[:, None]
        counts = member.sum(axis=1, keepdims=True)
        return member / np.maximum(counts, 1)

    def column(self, name: str) -> NDArray[Any]:
        """One column of the long form (one row per reading, household by household in time order)."""
        per = self.kwh.shape[1]
        if name == "household":
            return np.repeat(self.household_ids, per)
        if name == "region":
            return np.repeat(self.regions, per)
        if name == "timestamp":
            return np.tile(self.timestamps, self.households)
        if name == "kwh":
            return self.kwh.ravel()
        raise InvalidParameterError(
            f"`name` of `SmartMeterData.column` must be one of {', '.join(self.columns)}; got {name!r}."
        )

    def to_csv(self, path: str | PathLike[str]) -> Path:
        """Write the long form with the header ``household,region,timestamp,kwh``; returns the path.

        Readings are written with 3 decimals (whole Wh, the resolution they are generated with), so reading
        the file back gives exactly :attr:`kwh`.
        """
        out = Path(path)
        stamps = np.datetime_as_string(self.timestamps, unit="m").tolist()
        per = len(stamps)
        kwh = [f"{v:.3f}" for v in self.kwh.ravel().tolist()]
        with out.open("w", newline="", encoding="utf-8") as handle:
            handle.write(",".join(self.columns) + "\n")
            for i in range(self.households):  # one block per household; labels and numbers never need quoting
                prefix = f"{self.household_ids[i]},{self.regions[i]},"
                block = kwh[i * per : (i + 1) * per]
                handle.write("".join(f"{prefix}{t},{v}\n" for t, v in zip(stamps, block, strict=True)))
        return out


def smart_meter_data(households: int = 500, days: int = 7, *, rng: RNGLike = None) -> SmartMeterData:
    """Draw a synthetic smart-meter dataset from the model described in :mod:`privnoise.sample_data`.

    Parameters
    ----------
    households : int
        Number of households (>= 1).
    days : int
        Number of days (>= 1) from Monday 8 January 2024.
    rng : None, int or numpy.random.Generator
        Randomness (:func:`privnoise.random.default_rng`). An int seed makes the synthetic data reproducible;
        this is data generation, not privacy noise, so seeding it is harmless.

    Returns
    -------
    SmartMeterData
    """
    n = check_positive_int(households, "households", "smart_meter_data")
    d = check_positive_int(days, "days", "smart_meter_data")
    g = default_rng(rng)
    slots = d * SLOTS_PER_DAY
    timestamps = _START + np.arange(slots) * np.timedelta64(30, "m")
    day_index = np.arange(slots) // SLOTS_PER_DAY
    weekend = (day_index % 7) >= 5  # the calendar starts on a Monday
    clock = (np.arange(slots) % SLOTS_PER_DAY) / 2.0 + 0.25

    scale = g.lognormal(0.0, _SCALE_SIGMA, size=n)
    shift = g.normal(0.0, _SHIFT_SD_HOURS, size=n)
    region_index = g.integers(0, len(REGIONS), size=n)

    hours = clock[None, :] - shift[:, None]
    profile = np.where(weekend[None, :], _profile(hours, _WEEKEND), _profile(hours, _WEEKDAY))
    factor = scale * _REGION_FACTOR[region_index]
    noise = np.exp(_READING_SIGMA * g.standard_normal((n, slots)) - _READING_SIGMA**2 / 2.0)
    events = (g.random((n, slots)) < _EVENT_PROBABILITY) * g.exponential(_EVENT_MEAN_KWH, size=(n, slots))
    kwh = factor[:, None] * profile * noise + events
    kwh = np.round(np.clip(kwh, *KWH_BOUNDS), 3)
    return SmartMeterData(
        kwh=readonly(kwh),
        regions=readonly(np.asarray(REGIONS)[region_index]),
        timestamps=readonly(timestamps),
        household_ids=readonly(np.arange(1, n + 1, dtype=np.int64)),
    )


# -- reading a CSV column ---------------------------------------------------------------------------------


def load_csv_column(path: str | PathLike[str], column: str) -> NDArray[np.float64]:
    """Read the numeric column ``column`` of the CSV file at ``path`` (first line: the header).

    Every data row must hold a finite number in that column. Nothing is skipped or imputed: an empty cell, a
    short row, text, NaN or an infinity raises an error that names the file, the line and the column. Blank
    lines are allowed only at the end of the file.

    Parameters
    ----------
    path : str or path-like
        A UTF-8 CSV file (a leading byte-order mark is accepted; the delimiter is detected among , ; tab |). Read by
        :mod:`privnoise.io`, the reader the library, the command line and the server share.
    column : str
        Name of the column, as in the header (surrounding spaces ignored).

    Returns
    -------
    numpy.ndarray of float64, shape (rows,)

    Raises
    ------
    InvalidParameterError
        For a missing column, an empty file or a bad value.
    OSError
        If the file cannot be read.

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     p = os.path.join(tmp, "d.csv")
    ...     _ = open(p, "w").write("id,kwh\\n1,0.5\\n2,1.5\\n")
    ...     load_csv_column(p, "kwh").tolist()
    [0.5, 1.5]
    """
    from .io.csv_files import csv_chunks

    parts = list(csv_chunks(Path(path), column))
    return np.concatenate(parts) if parts else np.empty(0)
