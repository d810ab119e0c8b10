"""What a group-by estimate carries besides its values: the query record (column, bounds, declared or selected keys,
partition δ), the keys and key columns of every kind, which counts were clamped at 0, sums' intervals cut at 0
where the bounds give the sum a sign, and draws from the session's own generator (a seeded session replays)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import privnoise as pn

REGIONS = ("east", "north", "south", "west")


def _frame(seed: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    unit = np.tile(np.arange(120), 3)
    region = rng.choice(np.array(REGIONS[:3], dtype=object), unit.size)  # no "west" rows
    tariff = rng.choice(np.array(["day", "night"], dtype=object), unit.size)
    return pd.DataFrame({"unit": unit, "region": region, "tariff": tariff, "kwh": rng.uniform(0.0, 5.0, unit.size)})


def _session(epsilon: float = 1e6, seed: int = 1, **kwargs) -> pn.Session:
    return pn.Session(_frame(), privacy_unit="unit", max_contributions=3, epsilon=epsilon, delta=1e-6, rng=seed,
                      **kwargs)


def test_the_query_record_names_the_column_bounds_keys_and_partition_delta() -> None:
    declared = _session().group_by("region", keys=REGIONS).mean("kwh", bounds=(0.0, 5.0), epsilon=1.0)
    assert declared.query["column"] == "kwh" and declared.query["bounds"] == [0.0, 5.0]
    assert declared.query["keys"] == "declared" and declared.query["partition_delta"] == 0.0
    assert declared.query["query"] == "group mean" and declared.query["key"] == "region"
    selected = _session().group_by("region", delta=1e-7).sum("kwh", bounds=(0.0, 5.0), epsilon=1.0)
    assert selected.query["keys"] == "selected" and selected.query["partition_delta"] == pytest.approx(1e-7)
    assert selected.query["bounds"] == [0.0, 5.0] and selected.query["column"] == "kwh"
    counted = _session().group_by("region", keys=REGIONS).count(epsilon=1.0)
    assert counted.query["column"] is None and "bounds" not in counted.query


@pytest.mark.parametrize("kind", ["count", "sum", "mean"])
def test_every_kind_carries_its_keys_and_key_columns(kind: str) -> None:
    frame = _frame()
    expected = sorted(frame.groupby(["region", "tariff"]).size().index)
    grouped = _session().group_by(["region", "tariff"], keys={"region": REGIONS[:3], "tariff": ["day", "night"]})
    est = grouped.count(epsilon=1.0) if kind == "count" else getattr(grouped, kind)("kwh", bounds=(0.0, 5.0),
                                                                                      epsilon=1.0)
    assert [tuple(k) for k in est.keys] == expected
    assert est.key_columns == ("region", "tariff")
    assert list(est.to_frame().columns[:2]) == ["region", "tariff"]
    one = _session().group_by("region", keys=REGIONS)
    single = one.count(epsilon=1.0) if kind == "count" else getattr(one, kind)("kwh", bounds=(0.0, 5.0), epsilon=1.0)
    assert single.keys == list(REGIONS) and single.key_columns == ("region",)  # keys stay plain values
    assert list(single.to_frame().columns[:2]) == ["region", "value"]


def test_counts_are_clamped_at_zero_only_where_the_noisy_count_was_negative() -> None:
    # ε huge: the integer noise is 0, so "west" (no rows) is exactly 0 and not clamped
    exact = _session().group_by("region", keys=REGIONS).count(epsilon=1e6)
    counts = _frame().groupby("region").size()
    assert list(exact.value) == [counts.get(r, 0) for r in REGIONS]
    assert list(exact.clamped) == [False] * 4
    # ε small: "west" is clamped in about half the seeds, always with the value 0
    seen = set()
    for seed in range(12):
        est = _session(seed=seed).group_by("region", keys=REGIONS).count(epsilon=0.05)
        clamped = np.asarray(est.clamped)
        assert clamped.dtype == bool and clamped.shape == (4,)
        assert np.all(np.asarray(est.value)[clamped] == 0.0)
        seen.add(bool(clamped[3]))
    assert seen == {True, False}


def test_group_means_state_which_values_were_clipped() -> None:
    est = _session(epsilon=2.0).group_by("region", keys=REGIONS).mean("kwh", bounds=(0.0, 5.0), epsilon=0.5)
    clamped = np.asarray(est.clamped)
    assert clamped.dtype == bool and clamped.shape == (4,)
    assert clamped[3]  # no rows in "west": its ratio is clipped to the range


@pytest.mark.parametrize(("bounds", "floor", "ceiling"), [
    ((0.0, 5.0), 0.0, None), ((0.5, 5.0), 0.0, None), ((-5.0, 0.0), None, 0.0), ((-5.0, -0.5), None, 0.0),
    ((0.2, 0.9), 0.0, None), ((-1.0, 5.0), None, None),
])
def test_sum_intervals_are_cut_at_zero_where_the_bounds_give_the_sum_a_sign(bounds, floor, ceiling) -> None:
    lows, highs = [], []
    for seed in range(6):
        est = _session(seed=seed).group_by("region", keys=REGIONS).sum("kwh", bounds=bounds, epsilon=0.02)
        low, high = est.confidence_interval(0.95)
        lows.append(np.asarray(low))
        highs.append(np.asarray(high))
    low, high = np.concatenate(lows), np.concatenate(highs)
    if floor is None:
        assert low.min() < 0.0
    else:
        assert low.min() == floor  # the noise is wide: some interval reaches the cut
    if ceiling is None:
        assert high.max() > 0.0
    else:
        assert high.max() == ceiling


def test_a_seeded_session_replays_its_selections_and_counts() -> None:
    runs = [_session(epsilon=3.0, seed=9).group_by("region", delta=1e-7).count(epsilon=1.0) for _ in range(2)]
    assert runs[0].keys == runs[1].keys and list(runs[0].value) == list(runs[1].value)
    other = _session(epsilon=3.0, seed=10).group_by("region", delta=1e-7).count(epsilon=1.0)
    assert list(other.value) != list(runs[0].value)


@pytest.mark.parametrize("kind", ["sum", "mean"])
def test_group_sums_and_means_on_dask_are_the_in_memory_ones(kind: str) -> None:
    # the same seed draws the same bounding and noise: the two backends give the same released values
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe")
    frame = _frame()
    with dask.config.set(scheduler="sync"):
        memory = pn.Session(frame, privacy_unit="unit", max_contributions=3, epsilon=1e6, delta=1e-6, rng=5)
        dist = pn.Session(dd.from_pandas(frame, npartitions=3), privacy_unit="unit", max_contributions=3,
                          epsilon=1e6, delta=1e-6, rng=5)
        a = getattr(memory.group_by("region", keys=REGIONS), kind)("kwh", bounds=(0.0, 5.0), epsilon=1e5)
        b = getattr(dist.group_by("region", keys=REGIONS), kind)("kwh", bounds=(0.0, 5.0), epsilon=1e5)
    reference = frame.groupby("region")["kwh"].agg(kind)
    assert a.keys == b.keys == list(REGIONS)
    np.testing.assert_allclose(np.asarray(b.value)[:3], reference.loc[list(REGIONS[:3])].to_numpy(), rtol=1e-3)
    np.testing.assert_allclose(np.asarray(a.value)[:3], np.asarray(b.value)[:3], rtol=1e-3)


def test_keys_sort_numbers_then_text_then_other_values_then_missing() -> None:
    import datetime

    from privnoise.analysis.grouping import sort_key

    day = datetime.date(2024, 1, 2)
    labels = [None, "b", day, 2.5, "A", datetime.date(2023, 5, 1), -1, "a"]
    expected = [-1, 2.5, "A", "a", "b", datetime.date(2023, 5, 1), day, None]
    assert sorted(labels, key=sort_key) == expected
    # an "other" value whose text sorts before every text key still comes after them, and before a missing one
    early = datetime.date(1999, 1, 1)  # "1999-01-01" < "A" as text
    assert sorted([None, "zz", early, "A"], key=sort_key) == ["A", "zz", early, None]


def test_group_by_reports_its_key_and_partition_delta() -> None:
    s = _session(epsilon=3.0)
    selected = s.group_by("region")
    assert selected.key == "region" and selected.keys is None
    assert selected.delta == pytest.approx(1e-7)  # a tenth of the session's δ by default
    est = selected.count(epsilon=1.0)
    assert est.query["partition_delta"] == pytest.approx(1e-7)
    assert s.remaining().delta == pytest.approx(1e-6 - 1e-7, rel=1e-12)
    declared = s.group_by("region", keys=REGIONS)
    assert declared.delta == 0 and declared.keys == REGIONS and declared.key == "region"


def test_group_sums_and_counts_keep_every_column_of_their_aggregates_in_key_order() -> None:
    from privnoise.analysis.backend import Aggregates
    from privnoise.analysis.grouping import in_key_order

    agg = Aggregates(count=np.array([1.0, 2.0, 3.0]), sum=np.array([10.0, 20.0, 30.0]),
                     sum_squares=np.array([100.0, 200.0, 300.0]), cells=np.array([[1.0], [2.0], [3.0]]),
                     keys=["c", None, "a"])
    out = in_key_order(agg)
    assert out.keys == ["a", "c", None]
    np.testing.assert_array_equal(out.count, [3.0, 1.0, 2.0])
    np.testing.assert_array_equal(out.sum, [30.0, 10.0, 20.0])
    np.testing.assert_array_equal(out.sum_squares, [300.0, 100.0, 200.0])
    np.testing.assert_array_equal(out.cells, [[3.0], [1.0], [2.0]])


def test_no_groups_stay_no_groups() -> None:
    from privnoise.analysis.backend import Aggregates
    from privnoise.analysis.grouping import in_key_order

    out = in_key_order(Aggregates(keys=[], count=np.zeros(0), sum=np.zeros(0), sum_squares=np.zeros(0),
                                  cells=np.zeros((0, 2))))
    assert out.keys == [] and out.count.shape == (0,) and out.cells.shape == (0, 2)
