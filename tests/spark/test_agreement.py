"""A session over a Spark DataFrame and a session over the same data in memory release the same thing.

* Without a privacy unit nothing is drawn for bounding, so the same research seed gives the same noise: every query
  kind (count, sum, mean, variance, histogram, quantile, top-k, filters with a compound predicate, group-bys of one
  and two key columns with declared keys and with partition selection, ``Session.sql``) releases the same values,
  keys, guarantee and noise description on both paths.
* With a privacy unit the paths draw differently (a hash key on Spark, a random order in memory), so the law is
  checked: over 100,000 groups, the released errors of each path pass a KS test at α = 1e-6 against the stated
  noise law and fail it at a 30 % wrong scale, and a two-sample test finds no difference between the paths while it
  does find a 30 % wider noise.
* Contribution bounding: the count is at most k × units, and a unit with many rows contributes exactly k.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from scipy import stats

import privnoise as pn
from privnoise.exceptions import InvalidParameterError

ALPHA = 1e-6
ROWS = 3000


@pytest.fixture(scope="module")
def meters(spark) -> tuple[object, dict[str, np.ndarray]]:
    """Readings with missing kwh (NaN and null on Spark, NaN in memory), regions, tiers and households."""
    rng = np.random.default_rng(21)
    kwh = rng.uniform(-5.0, 70.0, ROWS).round(2)
    nan, null = rng.random(ROWS) < 0.02, rng.random(ROWS) < 0.02
    region = rng.choice(np.array(["east", "north", "south"]), ROWS)
    tier = rng.integers(0, 3, ROWS)
    household = rng.integers(0, 400, ROWS)
    rows = [(None if null[i] else math.nan if nan[i] else float(kwh[i]), str(region[i]), int(tier[i]),
             int(household[i])) for i in range(ROWS)]
    frame = spark.createDataFrame(rows, "kwh double, region string, tier long, household long").repartition(3)
    return frame, {"kwh": np.where(nan | null, np.nan, kwh), "region": region, "tier": tier, "household": household}


def same(a: pn.Estimate, b: pn.Estimate) -> None:
    assert a.guarantee.as_dict() == b.guarantee.as_dict()
    assert a.noise == b.noise and a.query == b.query and a.meaning == b.meaning
    assert a.keys == b.keys
    if isinstance(a.value, list):
        assert a.value == b.value
    else:
        np.testing.assert_allclose(np.asarray(a.value, dtype=float), np.asarray(b.value, dtype=float),
                                   rtol=1e-9, atol=1e-9)
    if a.interval is None:  # a selection (quantile, top-k): its accuracy in rows
        np.testing.assert_array_equal(a.accuracy(0.1), b.accuracy(0.1))
    else:
        np.testing.assert_allclose(np.asarray(a.confidence_interval(0.9), dtype=float),
                                   np.asarray(b.confidence_interval(0.9), dtype=float), rtol=1e-9, atol=1e-9)


COMPOUND = "(kwh > 30 or region like 'n%') and not tier in (0)"
QUERIES = {
    "count": lambda s: s.count(epsilon=0.2),
    "count of a column": lambda s: s.count("kwh", epsilon=0.2),
    "sum": lambda s: s.sum("kwh", bounds=(0, 60), epsilon=0.2),
    "mean": lambda s: s.mean("kwh", bounds=(0, 60), epsilon=0.3),
    "variance": lambda s: s.variance("kwh", bounds=(0, 60), epsilon=0.3),
    "histogram": lambda s: s.histogram("kwh", bins=[0, 10, 30, 45, 60], epsilon=0.2),
    "categories": lambda s: s.histogram("region", categories=["north", "south", "west"], epsilon=0.2),
    "quantile": lambda s: s.quantile("kwh", [0.5, 0.9], bounds=(0, 60), epsilon=0.4),
    "top_k": lambda s: s.top_k("region", candidates=["north", "south", "east"], k=2, epsilon=0.2),
    "filtered mean": lambda s: s.where(COMPOUND).mean("kwh", bounds=(0, 60), epsilon=0.3),
    "filtered histogram": lambda s: s.where("kwh is null or kwh < 5").histogram("tier", categories=[0, 1, 2],
                                                                                epsilon=0.2),
    "group mean": lambda s: s.group_by("region", keys=["north", "south", "west"]).mean("kwh", bounds=(0, 60),
                                                                                          epsilon=0.4),
    "group count, two keys": lambda s: s.group_by(["region", "tier"], keys={"region": ["east", "north"],
                                                                            "tier": [0, 1, 2, 7]}).count(epsilon=0.2),
    "selected group sum": lambda s: s.group_by("region").sum("kwh", bounds=(-10, 60), epsilon=0.5),
    "selected group count, two keys": lambda s: s.where("kwh > 10").group_by(["tier", "region"]).count(epsilon=0.5),
}


@pytest.mark.parametrize("name", list(QUERIES))
def test_without_a_unit_the_same_seed_releases_the_same_values(meters, name: str) -> None:
    frame, columns = meters
    options = dict(epsilon=10.0, delta=1e-6, missing="drop", rng=7)
    on_spark, in_memory = pn.Session(frame, **options), pn.Session(columns, **options)
    same(QUERIES[name](on_spark), QUERIES[name](in_memory))
    assert on_spark.remaining() == in_memory.remaining()


def test_session_sql_on_spark_answers_as_in_memory(meters) -> None:
    frame, columns = meters
    statements = [
        ("SELECT region, COUNT(*) AS n, AVG(kwh) AS mean_kwh FROM meters WHERE kwh > 1 AND (tier = 1 OR region "
         "LIKE 'n%') GROUP BY region ORDER BY region", {"keys": ["east", "north", "south"]}),
        ("SELECT COUNT(*) AS n, SUM(kwh) AS total, VAR_POP(kwh) AS v, MEDIAN(kwh) AS m FROM meters "
         "WHERE kwh IS NOT NULL", {}),
    ]
    for statement, options in statements:
        answers = [pn.Session(data, epsilon=5.0, delta=1e-6, missing="drop", rng=11).sql(
            statement, epsilon=2.0, bounds={"kwh": (0, 60)}, **options) for data in (frame, columns)]
        assert answers[0].guarantee == answers[1].guarantee
        spark_rows, memory_rows = answers[0].rows(), answers[1].rows()
        assert len(spark_rows) == len(memory_rows) > 0
        for a, b in zip(spark_rows, memory_rows, strict=True):
            assert a.keys() == b.keys()
            for field in a:
                if isinstance(a[field], str):
                    assert a[field] == b[field]
                else:
                    assert a[field] == pytest.approx(b[field], rel=1e-9, abs=1e-9)


def test_contribution_bounding_keeps_at_most_k_rows_per_unit(spark) -> None:
    # 500 units of one row and one unit of 1,000 rows, k = 5; ε is large enough that the noise is 0 here.
    units = np.r_[np.arange(500), np.full(1000, 10_000)]
    kwh = np.linspace(0.0, 1.0, units.size)
    frame = spark.createDataFrame([(int(u), float(x)) for u, x in zip(units, kwh, strict=True)],
                                  "household long, kwh double").repartition(4)
    for data in (frame, {"household": units, "kwh": kwh}):
        s = pn.Session(data, privacy_unit="household", max_contributions=5, epsilon=2000.0, rng=3)
        count = s.count(epsilon=1000.0)
        assert count.value == 500 + 5 <= 5 * 501
        assert s.count_distinct(epsilon=1000.0).value == 501
    with pytest.raises(InvalidParameterError, match="needs `privacy_unit`"):
        pn.Session(frame, max_contributions=5, epsilon=1.0)


# --- the noise law over 100,000 groups, with a privacy unit ----------------------------------------------------------

GROUPS, PER_GROUP = 100_000, 10


@pytest.fixture(scope="module")
def grid_data(spark) -> tuple[object, dict[str, np.ndarray]]:
    """10⁶ rows generated by Spark (and the same in memory): key columns a (400 values) and b (250 values), each
    (a, b) holding 10 rows; households of two rows; x = 0."""
    F = pytest.importorskip("pyspark.sql.functions")
    n = GROUPS * PER_GROUP
    frame = spark.range(n).select((F.col("id") % 400).alias("a"), ((F.col("id") / 400).cast("long") % 250).alias("b"),
                                  (F.col("id") / 2).cast("long").alias("household"), F.lit(0.0).alias("x"))
    i = np.arange(n)
    return frame, {"a": i % 400, "b": (i // 400) % 250, "household": i // 2, "x": np.zeros(n)}


def integer_ks_pvalue(samples: np.ndarray, cdf: Callable[[np.ndarray], np.ndarray]) -> float:
    """The KS test of integer samples against an integer law: sup |F_n − F| over the integers (both are steps there;
    scipy's kstest compares F with the empirical left limit, which ties make wrong), p from the continuous KS law
    (conservative for a discrete one)."""
    assert samples.size >= 0.99 * GROUPS and np.array_equal(samples, np.round(samples))
    grid = np.arange(samples.min() - 1, samples.max() + 1)
    empirical = np.searchsorted(np.sort(samples), grid, side="right") / samples.size
    distance = max(float(np.max(np.abs(empirical - cdf(grid)))), 1.0 - float(cdf(grid[-1:])[0]))
    return float(stats.kstwo.sf(distance, samples.size))


def check_law(spark_errors: np.ndarray, memory_errors: np.ndarray, law: Any, wider: list[Any], assert_ks,
              integers: bool = False) -> None:
    """Each path's errors pass KS against ``law`` and fail it against each of ``wider``; the paths do not differ,
    and a 30 % wider noise is told apart from them."""
    for errors in (spark_errors, memory_errors):
        if integers:
            assert integer_ks_pvalue(errors, law.cdf) > ALPHA
            assert all(integer_ks_pvalue(errors, w.cdf) < ALPHA for w in wider)
        else:
            assert_ks(errors, law.cdf, [w.cdf for w in wider])
    assert stats.ks_2samp(spark_errors, memory_errors).pvalue > ALPHA
    assert stats.ks_2samp(spark_errors, 1.3 * memory_errors).pvalue < ALPHA


def test_group_sums_release_the_noise_law_on_both_paths(grid_data, assert_ks) -> None:
    frame, columns = grid_data
    keys = list(range(GROUPS + 400))  # keys 400 … 100,399 hold no row: their released sum is noise alone
    releases = [pn.Session(data, privacy_unit="household", max_contributions=2, epsilon=1.0, rng=5)
                .group_by("a", keys=keys).sum("x", bounds=(-1, 1), epsilon=1.0) for data in (frame, columns)]
    assert releases[0].guarantee.as_dict() == releases[1].guarantee.as_dict() and releases[0].noise == releases[1].noise
    (noise,) = releases[0].noise
    b = noise["b"]
    errors = [np.asarray(r.value)[400:] for r in releases]
    check_law(errors[0], errors[1], stats.laplace(scale=b), [stats.laplace(scale=s * b) for s in (0.7, 1.3)],
              assert_ks)


def test_group_counts_of_two_keys_release_the_noise_law_on_both_paths(grid_data, assert_ks) -> None:
    frame, columns = grid_data
    declared = {"a": list(range(400)), "b": list(range(250))}
    releases = [pn.Session(data, privacy_unit="household", max_contributions=2, epsilon=2.0, rng=6)
                .group_by(["a", "b"], keys=declared).count(epsilon=2.0) for data in (frame, columns)]
    assert releases[0].guarantee.as_dict() == releases[1].guarantee.as_dict() and releases[0].noise == releases[1].noise
    assert releases[0].keys == releases[1].keys and len(releases[0].keys) == GROUPS
    (noise,) = releases[0].noise
    t = noise["t"]
    errors = [np.asarray(r.value) - PER_GROUP for r in releases]
    check_law(errors[0], errors[1], stats.dlaplace(1 / t), [stats.dlaplace(1 / (s * t)) for s in (0.7, 1.3)],
              assert_ks, integers=True)


@dataclass(frozen=True)
class RoundedLaplace:
    """Laplace noise of scale ``b`` rounded to the integers (a count's noise on the grid 1)."""

    b: float

    def cdf(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(stats.laplace(scale=self.b).cdf(np.floor(x) + 0.5))


def test_partition_selection_agrees_and_releases_the_noise_law(grid_data, assert_ks) -> None:
    frame, columns = grid_data
    releases = [pn.Session(data, privacy_unit="household", max_contributions=2, epsilon=8.0, delta=1e-6, rng=8)
                .group_by(["a", "b"]).count(epsilon=8.0) for data in (frame, columns)]
    assert releases[0].guarantee.as_dict() == releases[1].guarantee.as_dict() and releases[0].noise == releases[1].noise
    assert releases[0].query == releases[1].query and releases[0].query["threshold"] < PER_GROUP
    assert min(len(r.keys) for r in releases) > 0.999 * GROUPS  # every group holds 10 rows, above the threshold
    (noise,) = releases[0].noise
    b = noise["b"]
    errors = [np.asarray(r.value) - PER_GROUP for r in releases]
    check_law(errors[0], errors[1], RoundedLaplace(b), [RoundedLaplace(s * b) for s in (0.7, 1.3)], assert_ks,
              integers=True)


def test_a_key_of_one_unit_is_selected_by_neither_path(spark) -> None:
    keys = np.r_[np.repeat(["common", "usual"], 600), ["rare"]]
    units = np.arange(keys.size)
    frame = spark.createDataFrame([(str(k), int(u)) for k, u in zip(keys, units, strict=True)],
                                  "key string, household long")
    for data in (frame, {"key": keys, "household": units}):
        selected = [pn.Session(data, privacy_unit="household", max_contributions=1, epsilon=1.0, delta=1e-6, rng=seed)
                    .group_by("key").count(epsilon=1.0).keys for seed in range(3)]
        assert all(found == ["common", "usual"] for found in selected)
