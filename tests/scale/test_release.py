"""``pn.release`` of Dask data: record-level releases noised on the workers (written as partitioned Parquet,
each partition published exactly once), linear queries from partial sums with the noise drawn centrally, the same
guarantees as in memory, and bad input refused before anything is computed (SECURITY.md, requirements 5, 7, 17)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import privnoise as pn
from privnoise.exceptions import DimensionError, InvalidParameterError
from privnoise.random import default_rng, is_cryptographic
from privnoise.scale import MANIFEST, partition_generator, partition_keys
from privnoise.scale.publish import check_directory, publish_partition
from tests.scale.conftest import write_meters

N = 12_000


@pytest.fixture(scope="module")
def meters(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_meters(tmp_path_factory.mktemp("meters"))


@pytest.fixture(scope="module")
def kwh(meters: Path) -> np.ndarray:
    """The kwh column filled and clamped into [0, 60] (what the release tests use), as a plain array."""
    frame = pn.io.dask_parquet(str(meters / "*.parquet")).compute(scheduler="sync")
    return np.clip(frame["kwh"].fillna(30.0).to_numpy(), 0.0, 60.0)


@pytest.fixture(scope="module")
def series(cluster: object, meters: Path, kwh: np.ndarray):  # noqa: ANN201 - a Dask Series
    frame = pn.io.dask_parquet(str(meters / "*.parquet"), partition_rows=1500)
    return frame["kwh"].fillna(30.0).clip(0.0, 60.0)


def test_dask_parquet_keeps_record_order_and_knows_where_partitions_start(meters: Path, kwh: np.ndarray) -> None:
    frame = pn.io.dask_parquet(str(meters / "*.parquet"), partition_rows=1500)
    assert frame.npartitions == 12  # row groups of 1000 rows: two would exceed 1500, so one per partition
    starts = frame.divisions[:-1]
    assert starts[0] == 0 and frame.divisions[-1] == N - 1
    whole = frame.compute(scheduler="sync")
    assert list(whole.index) == list(range(N))
    np.testing.assert_array_equal(np.clip(whole["kwh"].fillna(30.0).to_numpy(), 0, 60), kwh)
    assert set(pn.io.dask_parquet(str(meters)).columns) == {"kwh", "region", "household"}
    with pytest.raises(InvalidParameterError, match="no Parquet file"):
        pn.io.dask_parquet(str(meters / "*.csv"))
    with pytest.raises(InvalidParameterError, match="'watts' is not a column"):
        pn.io.dask_parquet(str(meters), columns=["watts"])


def test_identity_release_states_the_in_memory_guarantee_and_grid(series, kwh: np.ndarray) -> None:
    q = pn.queries.identity(N, bounds=(0, 60))
    mech = pn.fisher.optimal_noise(q, quality_budget=N * 0.25)
    on_dask = pn.release(series, q, mech)
    in_memory = pn.release(kwh, q, mech)
    assert on_dask.guarantee.as_dict() == in_memory.guarantee.as_dict()
    assert on_dask.grid == in_memory.grid and on_dask.mechanism == in_memory.mechanism
    assert on_dask.value.shape == (N,)
    assert np.all(on_dask.value / on_dask.grid == np.rint(on_dask.value / on_dask.grid))  # hardened
    noise = on_dask.value - kwh
    assert abs(noise.mean()) < 5 * 0.5 / np.sqrt(N) and abs(noise.std() - 0.5) < 0.05


def test_identity_release_is_published_as_one_file_per_partition(series, kwh: np.ndarray, tmp_path: Path) -> None:
    q = pn.queries.identity(N, bounds=(0, 60))
    mech = pn.dp.laplace_for_epsilon(1.0, sensitivity=60.0, dim=N)
    out = tmp_path / "noisy"
    rel = pn.release(series, q, mech, out=out)
    assert rel.value is None and rel.output == str(out) and rel.guarantee.epsilon == pytest.approx(1.0, rel=1e-3)
    manifest = json.loads((out / MANIFEST).read_text())
    names = sorted(p.name for p in out.iterdir())
    assert names == [MANIFEST] + [f"part-{i:05d}.parquet" for i in range(12)]  # no staging file left
    for part in manifest["partitions"]:
        assert hashlib.sha256((out / part["file"]).read_bytes()).hexdigest() == part["sha256"]
    assert manifest["retried_after_publishing"] == [] and manifest["guarantee"] == rel.guarantee.as_dict()
    back = pn.io.dask_parquet(str(out)).compute(scheduler="sync")["value"].to_numpy()
    assert back.size == N and np.all(np.abs(back - kwh) < 60 * 30)  # Laplace(60) noise, record order kept
    assert abs(np.median(back - kwh)) < 5.0


def test_a_dask_array_is_released_like_a_series(series, kwh: np.ndarray) -> None:
    q = pn.queries.identity(N, bounds=(0, 60), scale=2.0)
    mech = pn.fisher.optimal_noise(q, quality_budget=N * 0.01)
    rel = pn.release(series.to_dask_array(lengths=True), q, mech)
    assert rel.guarantee.as_dict() == pn.release(kwh, q, mech).guarantee.as_dict()
    assert np.max(np.abs(rel.value - 2.0 * kwh)) < 1.0


def test_a_mean_adds_partial_sums_and_draws_the_noise_centrally(series, kwh: np.ndarray) -> None:
    q = pn.queries.mean(N, bounds=(0, 60))
    dp = pn.dp.laplace_for_epsilon(1.0, sensitivity=q.sensitivity("l1"))
    on_dask = pn.release(series, q, dp)
    assert on_dask.guarantee.as_dict() == pn.release(kwh, q, dp).guarantee.as_dict()
    assert isinstance(on_dask.value, float) and abs(on_dask.value - kwh.mean()) < 40 * 60 / N / 1.0
    weights = np.linspace(0.0, 1.0, N)
    wq = pn.queries.weighted_mean(weights, bounds=(0, 60))
    wdp = pn.dp.laplace_for_epsilon(5.0, sensitivity=wq.sensitivity("l1"))
    assert abs(pn.release(series, wq, wdp).value - np.dot(weights, kwh) / weights.sum()) < 0.5


def test_bad_input_is_refused_before_any_noise(cluster: object, meters: Path, series, tmp_path: Path) -> None:
    raw = pn.io.dask_parquet(str(meters / "*.parquet"))["kwh"]
    q = pn.queries.identity(N, bounds=(-10, 80))
    mech = pn.fisher.optimal_noise(q, quality_budget=N)
    with pytest.raises(InvalidParameterError, match="partition .* is missing"):
        pn.release(raw, q, mech)  # NaN in the data
    short = pn.queries.identity(N - 1, bounds=(0, 60))
    with pytest.raises(DimensionError, match="length 11999"):
        pn.release(series, short, pn.fisher.optimal_noise(short, quality_budget=N))
    with pytest.raises(InvalidParameterError, match="outside the declared bounds"):
        pn.release(raw.fillna(0.0), pn.queries.identity(N, bounds=(0, 60)), mech)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "old.parquet").write_bytes(b"")
    with pytest.raises(InvalidParameterError, match="must be empty"):
        pn.release(series, q, mech, out=tmp_path / "full")
    mq = pn.queries.mean(N, bounds=(0, 60))
    with pytest.raises(InvalidParameterError, match="record-level"):
        pn.release(series, mq, pn.dp.laplace_for_epsilon(1.0, sensitivity=mq.sensitivity("l1")), out=tmp_path / "m")
    vq = pn.queries.variance(N, bounds=(0, 60))
    with pytest.raises(InvalidParameterError, match="every record in one place"):
        pn.release(series, vq, pn.dp.laplace_for_epsilon(1.0, sensitivity=vq.sensitivity("l1")))
    with pytest.raises(InvalidParameterError, match="one column"):
        pn.release(pn.io.dask_parquet(str(meters)), q, mech)


def test_known_divisions_must_be_record_numbers(series) -> None:
    shifted = series.map_partitions(lambda s: s.set_axis(s.index * 2), meta=series)
    q = pn.queries.identity(N, bounds=(0, 60))
    with pytest.raises(InvalidParameterError, match="indexed by record number"):
        pn.release(shifted, q, pn.fisher.optimal_noise(q, quality_budget=N))
    assert pn.release(shifted.clear_divisions(), q, pn.fisher.optimal_noise(q, quality_budget=N)).value.size == N


# -- streams and exactly-once publication (no cluster needed) -------------------------------------------------


def test_partition_streams_are_keyed_by_fresh_csprng_keys_and_replayed_on_retry() -> None:
    keys = partition_keys(default_rng(), 64)
    assert len({(int(a), int(b)) for a, b in keys}) == 64  # 128-bit keys: all distinct
    assert not np.array_equal(partition_keys(default_rng(), 64), keys)  # a new computation, new keys
    first = [partition_generator(k).bit_generator.random_raw(4).tolist() for k in keys]
    assert len({tuple(w) for w in first}) == 64  # no two partitions share a stream
    again = partition_generator(keys[5])
    assert again.bit_generator.random_raw(4).tolist() == first[5]  # a retry replays its partition's stream
    assert is_cryptographic(again)


def test_a_retried_partition_never_publishes_a_second_version(tmp_path: Path) -> None:
    directory = check_directory(tmp_path / "out", "release")
    first = publish_partition(directory, 3, 3000, np.array([1.0, 2.0, 3.0]), "value")
    # A later attempt with other values (the records changed between the attempts): nothing new is published.
    second = publish_partition(directory, 3, 3000, np.array([9.0, 9.0, 9.0]), "value")
    assert first.published_here and not second.published_here
    assert first.sha256 == second.sha256 == hashlib.sha256((directory / first.file).read_bytes()).hexdigest()
    assert pd.read_parquet(directory / first.file)["value"].tolist() == [1.0, 2.0, 3.0]
    assert sorted(p.name for p in directory.iterdir()) == ["part-00003.parquet"]  # no staging file left


def test_a_retried_task_recomputes_the_same_noisy_partition(tmp_path: Path) -> None:
    from privnoise.scale.release import PartitionJob, release_partition
    from privnoise.scale.shipping import pack

    q = pn.queries.identity(10, bounds=(0, 1))
    mech = pn.fisher.optimal_noise(q, quality_budget=1.0)
    job = pack(PartitionJob(q.operator, q.bounds, q.m, mech, "error", 1e9, -10, True, None, False))
    key = partition_keys(default_rng(), 1)[0]
    part = np.linspace(0.0, 1.0, 4)
    a, _ = release_partition(part, 1, 4, 4, key, job)
    b, _ = release_partition(part, 1, 4, 4, key, job)
    c, _ = release_partition(part, 1, 4, 4, partition_keys(default_rng(), 1)[0], job)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
