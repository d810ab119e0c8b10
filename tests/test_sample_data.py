"""Synthetic smart-meter data (shapes, bounds, load profile, reproducibility) and the strict CSV reader."""

from __future__ import annotations

import numpy as np
import pytest

from privnoise.exceptions import InvalidParameterError
from privnoise.sample_data import (
    DAILY_KWH_BOUNDS,
    KWH_BOUNDS,
    REGIONS,
    SLOTS_PER_DAY,
    SmartMeterData,
    load_csv_column,
    smart_meter_data,
)


@pytest.fixture(scope="module")
def week() -> SmartMeterData:
    return smart_meter_data(households=300, days=7, rng=11)


def test_shapes_and_columns(week):
    assert week.kwh.shape == (300, 7 * SLOTS_PER_DAY)
    assert week.households == 300 and week.days == 7 and len(week) == 300 * 7 * 48
    assert week.regions.shape == (300,) and set(week.regions) <= set(REGIONS)
    assert week.timestamps.shape == (7 * 48,)
    assert str(week.timestamps[0]) == "2024-01-08T00:00" and str(week.timestamps[-1]) == "2024-01-14T23:30"
    assert week.household_ids.tolist() == list(range(1, 301))
    assert week.columns == ("household", "region", "timestamp", "kwh")
    for name in week.columns:
        assert week.column(name).shape == (len(week),)
    assert week.column("household")[48 * 7] == 2  # household-major order
    with pytest.raises(InvalidParameterError, match="`name`"):
        week.column("watts")


def test_arrays_are_read_only(week):
    with pytest.raises(ValueError):
        week.kwh[0, 0] = 1.0


def test_non_negative_and_within_declared_bounds(week):
    lo, hi = KWH_BOUNDS
    assert np.isfinite(week.kwh).all()
    assert (week.kwh >= lo).all() and (week.kwh <= hi).all()
    assert week.bounds == KWH_BOUNDS
    x = week.daily_means()
    assert x.shape == (300,)
    assert np.allclose(x, week.kwh.sum(axis=1) / 7)
    assert (x >= DAILY_KWH_BOUNDS[0]).all()
    # realistic magnitude: a median household uses roughly 8-16 kWh a day
    assert 8.0 < np.median(x) < 16.0


def test_readings_are_whole_watt_hours(week):
    assert np.allclose(week.kwh * 1000, np.round(week.kwh * 1000), atol=1e-6)


def test_daily_profile_has_evening_peak_above_night_base(week):
    for weekend in (False, True, None):
        profile = week.daily_profile(weekend=weekend)
        assert profile.shape == (SLOTS_PER_DAY,)
        night = profile[2 * 2 : 2 * 5].mean()  # 02:00-05:00
        evening = profile[2 * 17 : 2 * 21].mean()  # 17:00-21:00
        assert evening > 2.0 * night
    weekday = week.daily_profile(weekend=False)
    assert weekday[2 * 7 : 2 * 9].mean() > weekday[2 * 2 : 2 * 5].mean()  # a morning peak
    # weekends use more energy during the day than weekdays
    weekend = week.daily_profile(weekend=True)
    assert weekend[2 * 11 : 2 * 16].mean() > weekday[2 * 11 : 2 * 16].mean()


def test_daily_profile_without_weekend_days():
    data = smart_meter_data(households=5, days=3, rng=1)  # Monday to Wednesday
    with pytest.raises(InvalidParameterError, match="weekend"):
        data.daily_profile(weekend=True)


def test_households_differ_in_scale_and_regions(week):
    x = week.daily_means()
    assert x.std() / x.mean() > 0.25
    assert set(week.regions) == set(REGIONS)
    north = x[week.regions == "north"].mean()
    south = x[week.regions == "south"].mean()
    assert north > south  # climate factors 1.15 vs 0.90


def test_region_matrix_averages_each_region(week):
    c = week.region_matrix()
    assert c.shape == (4, 300)
    assert np.allclose(c.sum(axis=1), 1.0)
    x = week.daily_means()
    for row, region in zip(c, REGIONS, strict=True):
        assert row @ x == pytest.approx(x[week.regions == region].mean())


def test_reproducible_with_a_seed():
    a = smart_meter_data(households=20, days=2, rng=5)
    b = smart_meter_data(households=20, days=2, rng=5)
    c = smart_meter_data(households=20, days=2, rng=6)
    assert np.array_equal(a.kwh, b.kwh) and np.array_equal(a.regions, b.regions)
    assert not np.array_equal(a.kwh, c.kwh)


def test_unseeded_data_differ():
    assert not np.array_equal(smart_meter_data(5, 1).kwh, smart_meter_data(5, 1).kwh)


@pytest.mark.parametrize("kwargs", [{"households": 0}, {"households": -3}, {"days": 0}, {"households": 2.5}])
def test_bad_sizes_are_rejected(kwargs):
    with pytest.raises(InvalidParameterError):
        smart_meter_data(**kwargs)


def test_csv_round_trip(tmp_path):
    data = smart_meter_data(households=12, days=2, rng=3)
    path = data.to_csv(tmp_path / "meter.csv")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "household,region,timestamp,kwh"
    assert len(lines) == 1 + len(data)
    assert lines[1].startswith(f"1,{data.regions[0]},2024-01-08T00:00,")
    assert np.array_equal(load_csv_column(path, "kwh"), data.kwh.ravel())
    assert np.array_equal(load_csv_column(path, "household"), data.column("household").astype(float))


# -- load_csv_column ---------------------------------------------------------------------------------------


def _write(tmp_path, text, name="d.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_load_column_basic(tmp_path):
    path = _write(tmp_path, "id, kwh ,note\n1, 0.5,a\n2,1e-3,b\n3,-2,\n")
    assert load_csv_column(path, "kwh").tolist() == [0.5, 0.001, -2.0]
    assert load_csv_column(str(path), " kwh").dtype == np.float64


def test_load_column_accepts_bom_quotes_and_trailing_blank_lines(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes('\ufeffkwh,"label, quoted"\n"1.5","a, b"\n2,c\n\n\n'.encode())
    assert load_csv_column(path, "kwh").tolist() == [1.5, 2.0]


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("id,kwh\n1,0.5\n2,abc\n", r"line 3, column 'kwh': not a number\.$"),
        ("id,kwh\n1,0.5\n2,nan\n", r"line 3, column 'kwh': not finite"),
        ("id,kwh\n1,NaN\n", r"line 2, column 'kwh': not finite"),
        ("id,kwh\n1,inf\n", r"line 2, column 'kwh': not finite"),
        ("id,kwh\n1,-Infinity\n", r"line 2, column 'kwh': not finite"),
        ("id,kwh\n1,0.5\n2,\n", r"line 3, column 'kwh': missing value \(empty cell\)"),
        ("id,kwh\n1,0.5\n2\n", r"line 3: 1 field\(s\) where the header has 2"),
        ("id,kwh\n1,0.5\n\n2,0.7\n", r"line 3: blank line inside the data"),
        ("id,kwh\n", r"has no data rows"),
        ("", r"the file is empty"),
        ("id,watts\n1,2\n", r"column 'kwh' is not in the header \(columns: 'id', 'watts'\)"),
        ("kwh,kwh\n1,2\n", r"column 'kwh' appears more than once"),
    ],
)
def test_load_column_errors_name_file_line_and_column(tmp_path, text, pattern):
    path = _write(tmp_path, text)
    with pytest.raises(InvalidParameterError, match=pattern) as info:
        load_csv_column(path, "kwh")
    assert str(path) in str(info.value)


def test_load_column_line_numbers_count_quoted_newlines(tmp_path):
    path = _write(tmp_path, 'note,kwh\n"two\nlines",1\nx,bad\n')
    with pytest.raises(InvalidParameterError, match="line 4, column 'kwh'"):
        load_csv_column(path, "kwh")


def test_load_column_binary_and_missing_files(tmp_path):
    path = tmp_path / "bin.csv"
    path.write_bytes(b"kwh\n\xff\xfe\x00\x81\n")
    with pytest.raises(InvalidParameterError, match="line 2: NUL byte"):
        load_csv_column(path, "kwh")
    with pytest.raises(FileNotFoundError):
        load_csv_column(tmp_path / "absent.csv", "kwh")
