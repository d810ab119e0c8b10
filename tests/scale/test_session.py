"""``pn.Session`` over a Dask frame: the Dask backend computes the in-memory aggregates exactly (every query kind,
missing values, declared and unknown keys), bounds contributions across partitions (every unit's rows are
gathered by the shuffle, at most k of them kept), and the session states the in-memory guarantees."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import privnoise as pn
from privnoise.analysis import AggregateRequest, InMemoryBackend
from privnoise.analysis.table import Table
from privnoise.exceptions import InvalidParameterError
from privnoise.random import default_rng
from privnoise.scale import DaskBackend
from tests.scale.conftest import write_meters


@pytest.fixture(scope="module")
def meters(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_meters(tmp_path_factory.mktemp("meters"), households=150)


@pytest.fixture(scope="module")
def frames(cluster: object, meters: Path) -> tuple[object, pd.DataFrame]:
    frame = pn.io.dask_parquet(str(meters / "*.parquet"), partition_rows=1500)
    return frame, frame.compute()


REQUESTS = [
    AggregateRequest("moments", "kwh", (0.0, 60.0), "drop", None, 1, "region", None, 30.0),
    AggregateRequest("moments", "kwh", (0.0, 60.0), 5.0, None, 1, "region", ("north", "south", "west"), 30.0),
    AggregateRequest("moments", "kwh", (-1.0, 50.0), "drop"),
    AggregateRequest("moments", None, group="region"),
    AggregateRequest("histogram", "kwh", (0.0, 60.0), "drop", edges=(0.0, 10.0, 30.0, 60.0)),
    AggregateRequest("histogram", "kwh", (0.0, 60.0), "drop", group="region", edges=(0.0, 20.0, 60.0)),
    AggregateRequest("categories", "region", categories=("north", "east")),
    AggregateRequest("grid", "kwh", (0.0, 60.0), "drop", grid=(0.25, 0, 240)),
]


@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: f"{r.kind}-{r.group}-{r.keys}")
def test_dask_aggregates_equal_the_in_memory_ones(frames, request_: AggregateRequest) -> None:
    frame, whole = frames
    on_dask = DaskBackend(frame).aggregate(request_, default_rng())
    in_memory = InMemoryBackend(Table(whole)).aggregate(request_, default_rng())
    assert on_dask.keys == in_memory.keys  # keys in order of first appearance, missing keys as None
    for field in ("count", "sum", "sum_squares", "cells", "grid_counts"):
        np.testing.assert_allclose(getattr(on_dask, field), getattr(in_memory, field), rtol=1e-12, atol=1e-9)
    np.testing.assert_array_equal(on_dask.grid_points, in_memory.grid_points)


def test_contributions_are_bounded_across_partitions(frames) -> None:
    frame, whole = frames
    k = 3
    request = AggregateRequest("moments", "kwh", (0.0, 60.0), "drop", "household", k, "region", None, 30.0)
    bounded = DaskBackend(frame).aggregate(request, default_rng())
    eligible = whole.dropna(subset=["kwh"])
    per_unit = eligible.groupby("household").size()
    assert per_unit.min() > k and frame.npartitions > 1  # every unit has rows in several partitions to drop
    # A unit split over two partitions would keep up to k rows in each: the total would exceed Σ min(k, n_u).
    assert bounded.count.sum() == float(np.minimum(per_unit, k).sum())
    assert bounded.keys is not None and set(bounded.keys) <= {"north", "south", "east", None}


def test_a_session_on_dask_states_the_in_memory_guarantees(frames) -> None:
    frame, whole = frames
    opts = dict(privacy_unit="household", max_contributions=4, epsilon=3.0, delta=1e-6, missing="drop")
    on_dask, in_memory = pn.Session(frame, **opts), pn.Session(whole, **opts)
    queries = [
        lambda s: s.mean("kwh", bounds=(0, 60), epsilon=0.3),
        lambda s: s.count(epsilon=0.2),
        lambda s: s.variance("kwh", bounds=(0, 60), epsilon=0.3),
        lambda s: s.histogram("kwh", bins=[0, 10, 30, 60], epsilon=0.2),
        lambda s: s.quantile("kwh", [0.5, 0.9], bounds=(0, 60), epsilon=0.4),
        lambda s: s.group_by("region").mean("kwh", bounds=(0, 60), epsilon=0.4),
        lambda s: s.group_by("region", keys=["north", "south"]).count(epsilon=0.2),
        lambda s: s.top_k("region", candidates=["north", "south", "east"], epsilon=0.2),
    ]
    for query in queries:
        a, b = query(on_dask), query(in_memory)
        assert a.guarantee.as_dict() == b.guarantee.as_dict()
        assert a.noise == b.noise and a.query == b.query and a.meaning == b.meaning
        assert np.shape(a.value) == np.shape(b.value) or a.keys != b.keys  # selected keys may differ
    assert on_dask.remaining() == in_memory.remaining()
    mean = pn.Session(frame, epsilon=1.0, missing="drop").mean("kwh", bounds=(0, 60), epsilon=1.0)
    assert abs(mean.value - whole["kwh"].dropna().clip(0, 60).mean()) < 0.1


def test_bad_columns_and_missing_values_are_refused_before_the_charge(frames) -> None:
    frame, _ = frames
    with pytest.raises(InvalidParameterError, match="`privacy_unit` of `Session` must be a column"):
        pn.Session(frame, privacy_unit="person", max_contributions=2, epsilon=1.0)
    s = pn.Session(frame, epsilon=1.0)  # missing="error" and kwh has missing values
    with pytest.raises(InvalidParameterError, match="missing values"):
        s.mean("kwh", bounds=(0, 60), epsilon=0.5)
    assert s.remaining().epsilon == 1.0
    with pytest.raises(InvalidParameterError, match="must be a Dask DataFrame"):
        DaskBackend(frame["kwh"])
