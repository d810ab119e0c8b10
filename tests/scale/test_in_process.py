"""The Dask paths computed in this process (Dask's synchronous scheduler, no cluster), against computations here.

* Record-level releases: the noise (release − data) of 100,000 records in five partitions passes a KS test at
  α = 1e-6 against Laplace of scale Δ/ε and fails it at a 30 % wrong scale; the partitions' noise blocks are
  independent; the records stay in order whatever tells where a partition starts (known divisions, counted
  partitions, array chunks, an empty chunk); a published release's files, manifest and digests are checked here.
* Linear queries: the partial sums add up to the exact total (the value with the same seed is the in-memory one).
* Session aggregates: counts, sums and squares per group against pandas, with every unit's rows spread over every
  partition and at most k kept per unit in all (the rows move to their unit's partition first); partial aggregates
  combined by group key in order of first appearance.
* Partition streams are AES-128-CTR under the partition's 128-bit key, counter from 0 (randomgen, built here).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import privnoise as pn
from privnoise.analysis.backend import AggregateRequest, Aggregates
from privnoise.exceptions import InvalidParameterError

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
da = pytest.importorskip("dask.array")

N = 100_000
PARTS = 5
EPSILON, BOUND = 10.0, 60.0
SCALE = BOUND / EPSILON  # Laplace scale Δ/ε of a record replaced within [0, 60]


@pytest.fixture(autouse=True)
def synchronous() -> Iterator[None]:
    with dask.config.set(scheduler="sync"):
        yield


@pytest.fixture(scope="module")
def records() -> np.ndarray:
    return np.random.default_rng(5).uniform(0.0, BOUND, N)


def _laplace_check(noise: np.ndarray, assert_ks, scale: float = SCALE) -> None:
    assert_ks(noise, stats.laplace(scale=scale).cdf,
              [stats.laplace(scale=0.7 * scale).cdf, stats.laplace(scale=1.3 * scale).cdf])


def _identity(n: int = N, **kwargs):  # noqa: ANN202 - (query, mechanism)
    q = pn.queries.identity(n, bounds=(0, BOUND), **kwargs)
    return q, pn.dp.laplace_for_epsilon(EPSILON, sensitivity=BOUND * kwargs.get("scale", 1.0), dim=n)


# -- record-level releases --------------------------------------------------------------------------------------
def test_record_noise_is_laplace_of_the_stated_scale_and_independent_across_partitions(records, assert_ks) -> None:
    series = dd.from_pandas(pd.Series(records), npartitions=PARTS)
    assert series.known_divisions  # where each partition starts is read from its divisions
    q, mech = _identity()
    rel = pn.release(series, q, mech)
    assert rel.guarantee.epsilon == pytest.approx(EPSILON, rel=1e-3)
    assert rel.value.shape == (N,) and rel.clamped_records == 0
    noise = rel.value - records
    _laplace_check(noise, assert_ks)
    blocks = noise.reshape(PARTS, -1)
    for i in range(PARTS):
        for j in range(i + 1, PARTS):
            assert abs(np.corrcoef(blocks[i], blocks[j])[0, 1]) < 5 / math.sqrt(blocks.shape[1])


@pytest.mark.parametrize("layout", ["counted", "array", "unknown chunks", "empty chunk"])
def test_records_keep_their_order_however_partitions_are_found(records, layout: str, assert_ks) -> None:
    series = dd.from_pandas(pd.Series(records), npartitions=PARTS)
    data = {
        "counted": lambda: series.clear_divisions(),
        "array": lambda: da.from_array(records, chunks=((17_000, 23_000, 30_000, 30_000),)),
        "unknown chunks": lambda: series.to_dask_array(),
        "empty chunk": lambda: da.from_array(records, chunks=((0, 40_000, 0, 60_000),)),
    }[layout]()
    q, mech = _identity(scale=2.0)
    rel = pn.release(data, q, mech)
    _laplace_check(rel.value - 2.0 * records, assert_ks, scale=2.0 * SCALE)


def test_out_of_bounds_records_are_clamped_and_counted(records) -> None:
    spoiled = records.copy()
    spoiled[[3, 25_000, 99_999]] = [-4.0, 75.0, 1e9]
    q, mech = _identity()
    rel = pn.release(dd.from_pandas(pd.Series(spoiled), npartitions=PARTS), q, mech, out_of_bounds="clamp")
    assert rel.clamped_records == 3
    clamped = np.clip(spoiled, 0.0, BOUND)
    assert np.max(np.abs(rel.value - clamped)) < 40 * SCALE  # P(|Laplace| > 40b) = e^-40 per record


def test_an_index_that_is_not_the_record_number_is_refused(records) -> None:
    series = dd.from_pandas(pd.Series(records), npartitions=PARTS)
    gaps = series.map_partitions(lambda s: s.set_axis(s.index * 2), meta=series)
    q, mech = _identity()
    with pytest.raises(InvalidParameterError, match="indexed by record number"):
        pn.release(gaps, q, mech)
    shifted = dd.from_pandas(pd.Series(records, index=np.arange(N) + 1), npartitions=PARTS)
    assert pn.release(shifted, q, mech).value.size == N  # divisions not from 0: the partitions are counted


def test_a_published_release_is_one_file_per_partition_in_record_order(records, tmp_path: Path, assert_ks) -> None:
    series = dd.from_pandas(pd.Series(records), npartitions=PARTS)
    q, mech = _identity()
    out = tmp_path / "noisy"
    rel = pn.release(series, q, mech, out=out)
    assert rel.value is None and rel.output == str(out)
    manifest = json.loads((out / pn.scale.MANIFEST).read_text())
    files = [f"part-{i:05d}.parquet" for i in range(PARTS)]
    assert sorted(p.name for p in out.iterdir()) == sorted([pn.scale.MANIFEST, *files])
    rows = N // PARTS
    assert [(p["partition"], p["file"], p["first_record"], p["rows"]) for p in manifest["partitions"]] == [
        (i, files[i], i * rows, rows) for i in range(PARTS)
    ]
    for part in manifest["partitions"]:
        assert hashlib.sha256((out / part["file"]).read_bytes()).hexdigest() == part["sha256"]
    assert manifest["retried_after_publishing"] == [] and manifest["records"] == N
    assert manifest["guarantee"] == rel.guarantee.as_dict()
    back = np.concatenate([pd.read_parquet(out / name)["value"].to_numpy() for name in files])
    _laplace_check(back - records, assert_ks)


# -- linear queries: partial sums -------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", ["divisions", "empty chunk"])
def test_partial_sums_add_up_to_the_in_memory_total(records, layout: str) -> None:
    data = (dd.from_pandas(pd.Series(records), npartitions=PARTS) if layout == "divisions"
            else da.from_array(records, chunks=((0, 40_000, 60_000),)))
    weights = np.linspace(0.5, 2.0, N)
    for q in (pn.queries.mean(N, bounds=(0, BOUND)), pn.queries.weighted_mean(weights, bounds=(0, BOUND))):
        noise = pn.dp.laplace_for_epsilon(1.0, sensitivity=q.sensitivity("l1"))
        on_dask, in_memory = pn.release(data, q, noise, rng=3), pn.release(records, q, noise, rng=3)
        assert isinstance(on_dask.value, float)
        assert on_dask.value == pytest.approx(in_memory.value, rel=1e-13)
        assert on_dask.guarantee.as_dict() == in_memory.guarantee.as_dict()
    # the total itself: the noise of the mean is Laplace of scale (60/N)/1, far below the records' spread
    exact = math.fsum(records) / N
    assert abs(pn.release(data, pn.queries.mean(N, bounds=(0, BOUND)), noise, rng=4).value - exact) < 1.0


def test_partial_sums_count_the_clamped_records(records) -> None:
    spoiled = records.copy()
    spoiled[[0, 50_000]] = [-1.0, 61.0]
    q = pn.queries.mean(N, bounds=(0, BOUND))
    noise = pn.dp.laplace_for_epsilon(1.0, sensitivity=q.sensitivity("l1"))
    rel = pn.release(dd.from_pandas(pd.Series(spoiled), npartitions=PARTS), q, noise, out_of_bounds="clamp", rng=1)
    assert rel.clamped_records == 2
    assert rel.value == pytest.approx(pn.release(np.clip(spoiled, 0, BOUND), q, noise, rng=1).value, rel=1e-13)


# -- session aggregates ---------------------------------------------------------------------------------------
UNITS, ROWS, K = 30, 600, 3


@pytest.fixture(scope="module")
def meters() -> pd.DataFrame:
    """Unit u has ROWS/UNITS rows spread over every partition, all in group u mod 3 with value u/3 − 1."""
    unit = np.arange(ROWS) % UNITS
    return pd.DataFrame({
        "household": unit,
        "region": np.array(["north", "south", "east"])[unit % 3],
        "kwh": unit / 3.0 - 1.0,
    })


def _expected(frame: pd.DataFrame, k: int, bounds: tuple[float, float], centre: float) -> dict[str, tuple]:
    per_unit = frame.groupby("household").agg(region=("region", "first"), kwh=("kwh", "first"),
                                              rows=("kwh", "size"))
    per_unit["kept"] = np.minimum(per_unit["rows"], k)
    per_unit["x"] = per_unit["kwh"].clip(*bounds) - centre
    out = {}
    for region, units in per_unit.groupby("region"):
        out[region] = (float(units["kept"].sum()), float((units["kept"] * units["x"]).sum()),
                       float((units["kept"] * units["x"] ** 2).sum()))
    return out


def test_each_unit_contributes_at_most_k_rows_across_partitions(meters: pd.DataFrame) -> None:
    from privnoise.scale import DaskBackend

    frame = dd.from_pandas(meters, npartitions=4)
    assert all(part["household"].nunique() == UNITS for part in (frame.get_partition(i).compute() for i in range(4)))
    request = AggregateRequest("moments", column="kwh", bounds=(0.0, 8.0), unit="household", max_contributions=K,
                               group="region", centre=4.0)
    got = DaskBackend(frame).aggregate(request, np.random.default_rng(0))
    expected = _expected(meters, K, (0.0, 8.0), 4.0)
    assert sorted(got.keys) == sorted(expected)
    for i, key in enumerate(got.keys):
        assert (got.count[i], got.sum[i], got.sum_squares[i]) == pytest.approx(expected[key], rel=1e-12)
    counted = DaskBackend(frame).aggregate(AggregateRequest("moments", unit="household", max_contributions=K),
                                           np.random.default_rng(1))
    assert counted.keys is None and counted.count.tolist() == [UNITS * K]


def test_rows_kept_per_partition_replay_with_the_partition_key(meters: pd.DataFrame) -> None:
    from privnoise.scale.backend import aggregate_partition
    from privnoise.scale.streams import partition_keys

    varied = meters.assign(kwh=np.random.default_rng(2).uniform(0.0, 8.0, ROWS))  # which rows are kept matters
    request = AggregateRequest("moments", column="kwh", bounds=(0.0, 8.0), unit="household", max_contributions=K)
    keys = partition_keys(np.random.default_rng(3), 2)
    first, again = aggregate_partition(varied, request, keys[0]), aggregate_partition(varied, request, keys[0])
    other = aggregate_partition(varied, request, keys[1])
    assert first.count.tolist() == [UNITS * K] and first.sum.tolist() == again.sum.tolist()
    assert first.sum.tolist() != other.sum.tolist()


def test_partials_combine_by_key_in_order_of_first_appearance() -> None:
    from privnoise.scale.backend import combine

    moments = AggregateRequest("moments", column="x", group="g")
    partials = [
        Aggregates(["b", "a"], np.array([1.0, 2.0]), np.array([0.5, 1.5]), np.array([0.25, 2.0])),
        Aggregates([], np.zeros(1), np.zeros(1), np.zeros(1)),  # a partition without rows
        Aggregates(["c", "a"], np.array([4.0, 8.0]), np.array([-1.0, 3.0]), np.array([1.0, 5.0])),
    ]
    got = combine(partials, moments)
    assert got.keys == ["b", "a", "c"]
    assert got.count.tolist() == [1.0, 10.0, 4.0]
    assert got.sum.tolist() == [0.5, 4.5, -1.0] and got.sum_squares.tolist() == [0.25, 7.0, 1.0]

    ungrouped = combine([Aggregates(None, np.array([3.0]), np.array([1.0]), np.array([2.0])),
                         Aggregates(None, np.array([4.0]), np.array([-2.0]), np.array([5.0]))],
                        AggregateRequest("moments", column="x"))
    assert ungrouped.keys is None
    assert (ungrouped.count.tolist(), ungrouped.sum.tolist(), ungrouped.sum_squares.tolist()) == ([7.0], [-1.0], [7.0])
    counts = combine([Aggregates(None, np.array([3.0])), Aggregates(None, np.array([4.0]))], AggregateRequest("moments"))
    assert counts.count.tolist() == [7.0] and counts.sum.tolist() == [0.0]

    cells = combine([Aggregates(["x"], np.array([3.0]), cells=np.array([[1.0, 2.0]])),
                     Aggregates(["y", "x"], np.array([1.0, 4.0]), cells=np.array([[1.0, 0.0], [3.0, 1.0]]))],
                    AggregateRequest("histogram", column="v", group="g", edges=(0.0, 1.0, 2.0)))
    assert cells.keys == ["x", "y"] and cells.count.tolist() == [7.0, 1.0]
    assert cells.cells.tolist() == [[4.0, 3.0], [1.0, 0.0]]

    grid = combine([Aggregates(None, np.array([3.0]), grid_points=np.array([1, 3]), grid_counts=np.array([2.0, 1.0])),
                    Aggregates(None, np.array([5.0]), grid_points=np.array([3, 5]), grid_counts=np.array([4.0, 1.0]))],
                   AggregateRequest("grid", column="v", grid=(0.5, 0, 10)))
    assert grid.grid_points.tolist() == [1, 3, 5] and grid.grid_counts.tolist() == [2.0, 5.0, 1.0]
    assert grid.count.tolist() == [8.0]


def test_sums_that_overflow_only_when_combined_are_refused() -> None:
    from privnoise.scale.backend import combine

    big = 1.2e154  # x² is finite, 2x² is not
    part = Aggregates(None, np.array([1.0]), np.array([big]), np.array([big * big]))
    with np.errstate(over="ignore"), pytest.raises(InvalidParameterError, match="overflow"):
        combine([part, part], AggregateRequest("moments", column="x"))


# -- streams and publication ----------------------------------------------------------------------------------
def test_a_partition_stream_is_aes_ctr_under_its_128_bit_key() -> None:
    from randomgen import AESCounter

    from privnoise.scale import partition_generator, partition_keys

    keys = partition_keys(np.random.default_rng(9), 3)
    assert keys.shape == (3, 2) and keys.dtype == np.uint64
    assert partition_keys(np.random.default_rng(9), 0).shape == (0, 2)
    for high, low in keys:
        expected = np.random.Generator(AESCounter(key=int(high) * 2**64 + int(low)))
        assert partition_generator(np.array([high, low])).bit_generator.random_raw(8).tolist() == \
            expected.bit_generator.random_raw(8).tolist()
    high, low = (int(w) for w in keys[0])
    swapped = partition_generator(np.array([low, high], dtype=np.uint64)).bit_generator.random_raw(2).tolist()
    assert swapped != partition_generator(keys[0]).bit_generator.random_raw(2).tolist()


def test_the_manifest_is_published_once_after_the_staging_files_are_removed(tmp_path: Path) -> None:
    from privnoise.scale.publish import check_directory, publish_partition, write_manifest

    directory = check_directory(tmp_path / "out", "release")
    second = publish_partition(directory, 1, 2, np.array([3.0]), "value")
    first = publish_partition(directory, 0, 0, np.array([1.0, 2.0]), "value")
    again = publish_partition(directory, 1, 2, np.array([7.0]), "value")  # a retry: nothing new
    (directory / ".part-00002-deadbeef.parquet").write_bytes(b"half")  # an attempt killed mid-write
    path = write_manifest(directory, [second, first, again], {"records": 3})
    body = json.loads(path.read_text())
    assert body["records"] == 3 and body["retried_after_publishing"] == [1]
    assert [(p["partition"], p["first_record"], p["rows"]) for p in body["partitions"]] == [(0, 0, 2), (1, 2, 1),
                                                                                           (1, 2, 1)]
    assert all(set(p) == {"partition", "file", "first_record", "rows", "sha256"} for p in body["partitions"])
    assert sorted(p.name for p in directory.iterdir()) == ["_privnoise.json", "part-00000.parquet",
                                                           "part-00001.parquet"]
    with pytest.raises(FileExistsError):
        write_manifest(directory, [first], {"records": 2})
    assert json.loads(path.read_text()) == body
    assert sorted(p.name for p in directory.iterdir())[0] == "_privnoise.json"  # the staging copy is gone


# -- what a release states, and what it refuses ---------------------------------------------------------------
def _same_statement(on_dask, in_memory) -> None:
    assert on_dask.guarantee.as_dict() == in_memory.guarantee.as_dict()
    assert on_dask.grid == in_memory.grid > 0.0
    assert on_dask.query == in_memory.query and on_dask.mechanism == in_memory.mechanism
    assert on_dask.clamped_records == in_memory.clamped_records


def test_every_path_states_the_in_memory_guarantee_grid_and_descriptions(records, tmp_path: Path) -> None:
    series = dd.from_pandas(pd.Series(records), npartitions=PARTS)
    q = pn.queries.identity(N, bounds=(0, BOUND))
    gaussian = pn.fisher.optimal_noise(q, quality_budget=N * 4.0)
    for noise, delta in ((gaussian, 1e-6), (gaussian, None), (_identity()[1], None)):
        on_dask = pn.release(series, q, noise, delta=delta)
        _same_statement(on_dask, pn.release(records, q, noise, delta=delta))
        steps = on_dask.value / on_dask.grid
        assert np.array_equal(steps, np.rint(steps))  # hardened: every output on the release's grid
        published = pn.release(series, q, noise, delta=delta, out=tmp_path / f"out-{len(list(tmp_path.iterdir()))}")
        _same_statement(published, pn.release(records, q, noise, delta=delta))
    for mean in (pn.queries.mean(N, bounds=(0, BOUND)),):
        for noise in (pn.dp.laplace_for_epsilon(1.0, sensitivity=mean.sensitivity("l1")),
                      pn.fisher.optimal_noise(mean, quality_budget=1e-4)):
            on_dask, in_memory = pn.release(series, mean, noise, rng=2), pn.release(records, mean, noise, rng=2)
            _same_statement(on_dask, in_memory)
            assert on_dask.value == pytest.approx(in_memory.value, rel=1e-13)
            assert on_dask.value / on_dask.grid == round(on_dask.value / on_dask.grid)


def test_per_record_weights_follow_each_partition_range(records, assert_ks) -> None:
    weights = np.linspace(1.0, 2.0, N)
    q = pn.queries.diagonal(weights, bounds=(0, BOUND))
    noise = pn.dp.laplace_for_epsilon(EPSILON, sensitivity=2.0 * BOUND, dim=N)
    rel = pn.release(dd.from_pandas(pd.Series(records), npartitions=PARTS), q, noise)
    _laplace_check(rel.value - weights * records, assert_ks, scale=2.0 * SCALE)


def test_a_query_of_several_outputs_adds_partial_sums_per_output(records) -> None:
    matrix = np.vstack([np.ones(N) / N, np.linspace(0.0, 1.0, N) / N])
    q = pn.queries.linear(matrix, bounds=(0, BOUND))
    noise = pn.dp.laplace_for_epsilon(1.0, sensitivity=q.sensitivity("l1"), dim=2)
    data = da.from_array(records, chunks=((0, 30_000, 70_000),))
    on_dask, in_memory = pn.release(data, q, noise, rng=6), pn.release(records, q, noise, rng=6)
    assert isinstance(on_dask.value, np.ndarray) and on_dask.value.shape == (2,)
    np.testing.assert_allclose(on_dask.value, in_memory.value, rtol=1e-13)
    _same_statement(on_dask, in_memory)


def test_one_column_frames_float_indexes_and_bad_records(records) -> None:
    q, mech = _identity()
    frame = dd.from_pandas(pd.DataFrame({"kwh": records}), npartitions=PARTS)
    assert pn.release(frame, q, mech).value.size == N
    with pytest.raises(InvalidParameterError, match="one column"):
        pn.release(frame.assign(other=frame["kwh"]), q, mech)
    halves = dd.from_pandas(pd.Series(records, index=np.arange(N) * 0.5), npartitions=PARTS)
    assert halves.known_divisions
    assert np.max(np.abs(pn.release(halves, q, mech).value - records)) < 40 * SCALE  # counted, in order
    series = dd.from_pandas(pd.Series(records), npartitions=PARTS)
    repeated = series.map_partitions(lambda s: s.set_axis(np.r_[s.index[0], s.index[:-1]]), meta=series)
    mean = pn.queries.mean(N, bounds=(0, BOUND))
    for query, noise in ((q, mech), (mean, pn.dp.laplace_for_epsilon(1.0, sensitivity=mean.sensitivity("l1")))):
        with pytest.raises(InvalidParameterError, match="indexed by record number"):
            pn.release(repeated, query, noise)
        missing = records.copy()
        missing[60_000] = np.nan
        with pytest.raises(InvalidParameterError, match="missing"):
            pn.release(dd.from_pandas(pd.Series(missing), npartitions=PARTS), query, noise)
        outside = records.copy()
        outside[70_000] = 61.0
        with pytest.raises(InvalidParameterError, match="outside the declared bounds"):
            pn.release(dd.from_pandas(pd.Series(outside), npartitions=PARTS), query, noise)
    empty = da.from_array(records, chunks=((0, 50_000, 0, 50_000),))
    assert pn.release(empty, q, mech, out_of_bounds="clamp").clamped_records == 0
    assert pn.release(empty, mean, pn.dp.laplace_for_epsilon(1.0, sensitivity=mean.sensitivity("l1")),
                      out_of_bounds="clamp").clamped_records == 0
    variance = pn.queries.variance(N, bounds=(0, BOUND))
    with pytest.raises(InvalidParameterError, match="every record in one place"):
        pn.release(series, variance, pn.dp.laplace_for_epsilon(1.0, sensitivity=variance.sensitivity("l1")))


def test_a_release_directory_must_be_new_or_empty(records, tmp_path: Path) -> None:
    from privnoise.scale.publish import check_directory

    for name in ("noisy.parquet", "noisy.PARQUET", "noisy.npy", "noisy.csv"):
        with pytest.raises(InvalidParameterError, match="must be a directory"):
            check_directory(tmp_path / name, "release")
    (tmp_path / "file").write_text("x")
    with pytest.raises(InvalidParameterError, match="not a directory"):
        check_directory(tmp_path / "file", "release")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "old.parquet").write_bytes(b"")
    with pytest.raises(InvalidParameterError, match="must be empty"):
        check_directory(tmp_path / "full", "release")
    (tmp_path / "empty").mkdir()
    assert check_directory(tmp_path / "empty", "release") == tmp_path / "empty"
    assert check_directory(tmp_path / "new.parquet.d", "release").is_dir()


def test_counts_combine_by_key_and_a_single_partition_is_its_own_total() -> None:
    from privnoise.scale import DaskBackend
    from privnoise.scale.backend import combine

    counts = combine([Aggregates(["a"], np.array([2.0])), Aggregates(["b", "a"], np.array([1.0, 1.0]))],
                     AggregateRequest("moments", group="g"))
    assert counts.keys == ["a", "b"] and counts.count.tolist() == [3.0, 1.0]
    alone = combine([Aggregates(["a"], np.array([2.0]), cells=np.array([[1.0, 1.0]]))],
                    AggregateRequest("histogram", column="v", group="g", edges=(0.0, 1.0, 2.0)))
    assert alone.cells.tolist() == [[1.0, 1.0]]
    one_column = dd.from_pandas(pd.DataFrame({"kwh": np.arange(10.0)}), npartitions=3)
    assert DaskBackend(one_column).aggregate(AggregateRequest("moments"), np.random.default_rng(0)).count.tolist() == [
        10.0
    ]


def test_an_unhardened_release_states_no_grid(records) -> None:
    series = dd.from_pandas(pd.Series(records), npartitions=PARTS)
    q, mech = _identity()
    mean = pn.queries.mean(N, bounds=(0, BOUND))
    laplace = pn.dp.laplace_for_epsilon(1.0, sensitivity=mean.sensitivity("l1"))
    for query, noise in ((q, mech), (mean, laplace)):
        on_dask, in_memory = pn.release(series, query, noise, harden=False), pn.release(records, query, noise, harden=False)
        assert on_dask.grid == in_memory.grid == 0.0
        assert on_dask.guarantee.as_dict() == in_memory.guarantee.as_dict()
        assert on_dask.query == in_memory.query and on_dask.mechanism == in_memory.mechanism
