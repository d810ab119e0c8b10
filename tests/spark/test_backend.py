"""The Spark backend computes the in-memory aggregates exactly: every request kind, the missing-value policy (null
and NaN alike), clamping and centring, declared keys and categories (matched by value, whatever their Python type),
filters with three-valued logic (compound predicates, NaN, null, LIKE's wildcards), and contribution bounding in
Spark (at most k rows per unit, a uniform choice among them, reproducible from a research seed)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from privnoise.analysis import AggregateRequest, Aggregates, InMemoryBackend
from privnoise.analysis.grouping import in_key_order
from privnoise.analysis.table import Table
from privnoise.core.conditions import Condition, parse_conditions
from privnoise.core.predicates import AllOf, AnyOf, InList, IsNull, Like, Not
from privnoise.exceptions import InvalidParameterError
from privnoise.random import default_rng
from privnoise.spark import SparkBackend

ROWS = 4000
CODES = ["a_b", "a%b", "a\\b", "axb", "b"]


@pytest.fixture(scope="module")
def frames(spark) -> tuple[object, pd.DataFrame]:
    """The same readings in Spark (NaN and null kept apart) and in pandas (both NaN): kwh in [−5, 70], a region
    (some missing), a float rate key (some NaN), a text code with LIKE's special characters, households."""
    rng = np.random.default_rng(3)
    kwh = rng.uniform(-5.0, 70.0, ROWS).round(1)
    nan, null = rng.random(ROWS) < 0.03, rng.random(ROWS) < 0.02
    region = rng.choice(np.array(["north", "south", "east"], dtype=object), ROWS)
    region[rng.random(ROWS) < 0.02] = None
    rate = rng.choice([0.5, 1.5, np.nan], ROWS)
    code = rng.choice(np.array(CODES, dtype=object), ROWS)
    household = rng.integers(0, 150, ROWS)
    tier = rng.integers(0, 3, ROWS)
    rows = [(None if null[i] else float("nan") if nan[i] else float(kwh[i]), region[i], float(rate[i]), code[i],
             int(household[i]), int(tier[i])) for i in range(ROWS)]
    frame = spark.createDataFrame(rows, "kwh double, region string, rate double, code string, household long, "
                                        "tier int").repartition(3)
    whole = pd.DataFrame({"kwh": np.where(nan | null, np.nan, kwh), "region": region, "rate": rate, "code": code,
                          "household": household, "tier": tier})
    return frame, whole


def present(found: Aggregates) -> Aggregates:
    """In-memory aggregates of a group-by without declared keys, as Spark returns them: sorted keys, only those with
    rows (the session releases only those)."""
    found = in_key_order(found)
    keep = found.count > 0

    def rows(values: np.ndarray) -> np.ndarray:
        return values[keep] if values.shape[0] == keep.size else values

    return dataclasses.replace(found, keys=[k for k, p in zip(found.keys or [], keep, strict=True) if p],
                               count=rows(found.count), sum=rows(found.sum), sum_squares=rows(found.sum_squares),
                               cells=rows(found.cells))


def assert_same(on_spark: Aggregates, in_memory: Aggregates) -> None:
    assert on_spark.keys == in_memory.keys
    for field in ("count", "sum", "sum_squares", "cells", "grid_counts"):
        np.testing.assert_allclose(getattr(on_spark, field), getattr(in_memory, field), rtol=1e-11, atol=1e-8)
    np.testing.assert_array_equal(on_spark.grid_points, in_memory.grid_points)


COMPOUND = (AnyOf((Condition("kwh", ">", 30.0), IsNull("region"))), Not(InList("region", ("east",))))
REQUESTS = [
    AggregateRequest("moments", "kwh", (0.0, 60.0), "drop", None, 1, "region", None, 30.0),
    AggregateRequest("moments", "kwh", (0.0, 60.0), 5.0, None, 1, "region", ("north", "south", "west", None), 30.0),
    AggregateRequest("moments", "kwh", (-1.0, 50.0), "drop"),
    AggregateRequest("moments", "kwh", None, "drop"),
    AggregateRequest("moments", None, group="rate"),
    AggregateRequest("moments", None, group=("region", "tier")),
    AggregateRequest("moments", "kwh", (0.0, 60.0), "drop", group=("region", "tier"),
                     keys=(("north", 1), ("south", 2.0), ("west", 1), (None, 0), ("east", "2"))),
    AggregateRequest("moments", None, group="tier", keys=(2, 0.0, 1.5, "1")),
    AggregateRequest("histogram", "kwh", (0.0, 60.0), "drop", edges=(0.0, 10.0, 30.0, 60.0)),
    AggregateRequest("histogram", "kwh", (0.0, 60.0), 70.0, group="region", edges=(0.0, 20.0, 25.0, 40.0, 55.0, 60.0)),
    AggregateRequest("categories", "region", categories=("north", "east", None)),
    AggregateRequest("categories", "rate", categories=(1.5, 2, None)),
    AggregateRequest("grid", "kwh", (0.0, 60.0), "drop", grid=(0.25, 0, 240)),
    AggregateRequest("grid", "kwh", (-3.0, 10.0), 1.0, grid=(2.0 ** -6, -192, 640)),
    AggregateRequest("moments", "kwh", (0.0, 60.0), "drop", None, 1, "region", None, 30.0, where=COMPOUND),
    AggregateRequest("moments", None, where=(Not(Condition("kwh", "<=", 20.0)),)),
    AggregateRequest("moments", None, where=(AllOf((IsNull("kwh"), Not(IsNull("region")))),)),
    AggregateRequest("moments", None, where=(InList("kwh", (10.5, 20.0, 30.1)),)),
    AggregateRequest("moments", None, where=parse_conditions("region >= 'north' and kwh < 10")),
    AggregateRequest("categories", "code", categories=tuple(CODES), where=(Like("code", "a\\b"),)),
    AggregateRequest("categories", "code", categories=tuple(CODES), where=(Like("code", "a_b"),)),
    AggregateRequest("categories", "code", categories=tuple(CODES), where=(Not(Like("code", "a%")),)),
    AggregateRequest("moments", None, where=(Not(InList("rate", (0.5,))), IsNull("rate", negated=True))),
]


@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: f"{r.kind}-{r.group}-{r.keys}-{r.where}")
def test_spark_aggregates_equal_the_in_memory_ones(frames, request_: AggregateRequest) -> None:
    frame, whole = frames
    on_spark = SparkBackend(frame).aggregate(request_, default_rng())
    in_memory = InMemoryBackend(Table(whole)).aggregate(request_, default_rng())
    if request_.group is not None and request_.keys is None:
        in_memory = present(in_memory)
    assert_same(on_spark, in_memory)


def test_missing_values_are_counted_among_the_filtered_rows(frames) -> None:
    frame, whole = frames
    on_spark, in_memory = SparkBackend(frame), InMemoryBackend(Table(whole))
    assert on_spark.count_missing("kwh") == in_memory.count_missing("kwh") > 0
    for where in [COMPOUND, (Like("code", "a%"),), (Not(Condition("rate", ">", 1.0)),)]:
        assert on_spark.count_missing_where("kwh", where) == in_memory.count_missing_where("kwh", where)
    assert [on_spark.column_kind(c) for c in ("kwh", "region", "tier")] == ["number", "text", "number"]
    with pytest.raises(InvalidParameterError, match="column 'kwh' has missing values"):
        on_spark.aggregate(AggregateRequest("moments", "kwh", (0.0, 1.0), "error"), default_rng())
    with pytest.raises(InvalidParameterError, match="must hold numbers; it holds string"):
        on_spark.aggregate(AggregateRequest("moments", "region", (0.0, 1.0), "drop"), default_rng())


def test_infinite_values_and_overflowing_sums_are_refused(spark) -> None:
    # as in memory, an infinite value anywhere in the column is refused, whatever the filter
    frame = spark.createDataFrame([(1.0, 1e300), (math.inf, 1e300)], "x double, big double")
    backend = SparkBackend(frame)
    with pytest.raises(InvalidParameterError, match="infinite value"):  # in a row the filter drops, too
        backend.aggregate(AggregateRequest("moments", "x", (0.0, 1.0), "drop", where=parse_conditions("x < 2")),
                          default_rng())
    with pytest.raises(InvalidParameterError, match="infinite value"):
        backend.aggregate(AggregateRequest("grid", "x", (0.0, 1.0), "drop", grid=(0.5, 0, 2)), default_rng())
    with pytest.raises(InvalidParameterError, match="infinite value"):
        backend.count_missing("x")
    with pytest.raises(InvalidParameterError, match="the sums overflow"):
        backend.aggregate(AggregateRequest("moments", "big", None, "drop"), default_rng())


def test_contributions_are_bounded_in_spark(frames) -> None:
    frame, whole = frames
    k = 3
    request = AggregateRequest("moments", "kwh", (0.0, 60.0), "drop", "household", k, "region", None, 30.0)
    bounded = SparkBackend(frame).aggregate(request, default_rng())
    per_unit = whole.dropna(subset=["kwh"]).groupby("household").size()
    assert per_unit.min() > k  # every unit loses rows
    assert bounded.count.sum() == float(np.minimum(per_unit, k).sum()) == k * per_unit.size
    again = [SparkBackend(frame).aggregate(request, np.random.default_rng(seed)) for seed in (5, 5, 6)]
    assert np.array_equal(again[0].sum, again[1].sum) and not np.array_equal(again[0].sum, again[2].sum)
    with pytest.raises(InvalidParameterError, match="needs a privacy unit"):
        SparkBackend(frame).aggregate(AggregateRequest("moments", None, max_contributions=2), default_rng())


def test_the_rows_kept_are_a_uniform_choice_among_a_units_rows(spark) -> None:
    # 6,000 units of five rows valued 0 … 4, and 6,000 of three rows {7, 7, 8}: with k = 2, each of the five values
    # is kept with probability 2/5; with k = 1, the 8 with probability 1/3 (duplicate rows are distinct rows).
    units = 6000
    five = [(u, float(v)) for u in range(units) for v in range(5)]
    three = [(units + u, v) for u in range(units) for v in (7.0, 7.0, 8.0)]
    frame = spark.createDataFrame(five + three, "unit long, x double").repartition(4)
    backend = SparkBackend(frame)
    cells = backend.aggregate(AggregateRequest("categories", "x", unit="unit", max_contributions=2,
                                               categories=(0.0, 1.0, 2.0, 3.0, 4.0, 7.0, 8.0)), default_rng()).cells[0]
    assert cells[:5].sum() == 2 * units
    z = (cells[:5] - 0.4 * units) / math.sqrt(units * 0.4 * 0.6)
    assert np.all(np.abs(z) < 5), z
    assert stats.chisquare(cells[:5]).pvalue > 1e-6
    ones = backend.aggregate(AggregateRequest("categories", "x", unit="unit", max_contributions=1,
                                              categories=(7.0, 8.0)), default_rng()).cells[0]
    assert ones.sum() == units
    assert stats.binomtest(int(ones[1]), units, 1 / 3).pvalue > 1e-6
    assert stats.binomtest(int(ones[1]), units, 1 / 2).pvalue < 1e-6  # a choice among distinct values would fail


def test_a_spark_backend_needs_a_data_frame(frames) -> None:
    frame, _ = frames
    with pytest.raises(InvalidParameterError, match="must be a Spark DataFrame"):
        SparkBackend(frame["kwh"])
    backend = SparkBackend(frame)
    assert backend.columns == ["kwh", "region", "rate", "code", "household", "tier"]
    with pytest.raises(InvalidParameterError, match="`key` of `Session` must be a column"):
        backend.check_column("nope", "key")
