"""``pn.release`` of a one-column Spark DataFrame: record-level releases noised on the executors with one fresh
keyed stream per partition, published once per partition also when Spark runs a task again, linear queries from
partial sums with the noise drawn centrally, the in-memory guarantee and noise law, and bad input refused.

The shared session runs on ``local[2,3]``: a task that fails is tried again (up to three attempts), which the retry
tests use — a task of one partition fails on its first attempt (``TaskContext.attemptNumber() == 0``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import privnoise as pn
from privnoise.exceptions import DimensionError, InvalidParameterError
from privnoise.release.direct import output_grid
from privnoise.scale import MANIFEST
from privnoise.scale.release import PartitionJob
from privnoise.scale.shipping import pack
from privnoise.spark import release as spark_release

ALPHA = 1e-6
N = 6000
PARTS = 4


@pytest.fixture(scope="module")
def kwh(spark) -> tuple[object, np.ndarray]:
    """A one-column frame of readings in [0, 60] in four partitions, and its records in the frame's order."""
    x = np.random.default_rng(8).uniform(0.0, 60.0, N).round(3)
    frame = spark.createDataFrame(pd.DataFrame({"kwh": x})).repartition(PARTS)
    return frame, frame.toPandas()["kwh"].to_numpy()


def _flaky(marker: Path, partition: int = 1):  # noqa: ANN202 - a mapInArrow function
    """Pass the batches through, except that the first attempt of ``partition``'s task fails (once per stage)."""

    def run(batches):  # noqa: ANN001, ANN202
        from pyspark import TaskContext

        context = TaskContext.get()
        if context.partitionId() == partition and context.attemptNumber() == 0:
            (marker / f"failed-stage-{context.stageId()}").touch()
            raise RuntimeError("simulated loss of the task's executor")
        yield from batches

    return run


def _failing_after(marker: Path, partition: int = 1):  # noqa: ANN202 - a mapInArrow function
    """Consume the batches (so the partition's output is made, and published), then fail the first attempt."""

    def run(batches):  # noqa: ANN001, ANN202
        from pyspark import TaskContext

        made = list(batches)
        context = TaskContext.get()
        if context.partitionId() == partition and context.attemptNumber() == 0:
            (marker / f"failed-after-stage-{context.stageId()}").touch()
            raise RuntimeError("simulated loss of the task's executor after its output was made")
        yield from made

    return run


def test_identity_release_states_the_in_memory_guarantee_and_grid(kwh) -> None:
    frame, x = kwh
    q = pn.queries.identity(N, bounds=(0, 60))
    for mech in (pn.fisher.optimal_noise(q, quality_budget=N * 0.25), pn.dp.laplace_for_epsilon(1.0, sensitivity=60.0,
                                                                                                   dim=N)):
        on_spark, in_memory = pn.release(frame, q, mech), pn.release(x, q, mech)
        assert on_spark.guarantee.as_dict() == in_memory.guarantee.as_dict()
        assert on_spark.grid == in_memory.grid and on_spark.mechanism == in_memory.mechanism
        assert on_spark.query == in_memory.query and on_spark.clamped_records == 0
        assert on_spark.value.shape == (N,)
        assert np.all(on_spark.value / on_spark.grid == np.rint(on_spark.value / on_spark.grid))  # hardened
    scaled = pn.queries.identity(N, bounds=(0, 60), scale=2.0)
    rel = pn.release(frame, scaled, pn.fisher.optimal_noise(scaled, quality_budget=N * 0.01))
    assert np.max(np.abs(rel.value - 2.0 * x)) < 1.0  # in record order


def test_the_noise_law_is_the_in_memory_one(spark) -> None:
    n, scale = 60_000, 2.0
    x = np.random.default_rng(9).uniform(0.0, 10.0, n)
    frame = spark.createDataFrame(pd.DataFrame({"x": x})).repartition(6)
    x = frame.toPandas()["x"].to_numpy()
    q = pn.queries.identity(n, bounds=(0, 10))
    mech = pn.dp.laplace_for_epsilon(10.0 / scale, sensitivity=10.0, dim=n)  # Laplace of scale 2 per record
    on_spark = pn.release(frame, q, mech, rng=101).value - x
    in_memory = pn.release(x, q, mech, rng=202).value - x
    for errors in (on_spark, in_memory):
        assert stats.kstest(errors, stats.laplace(scale=scale).cdf).pvalue > ALPHA
        assert stats.kstest(errors, stats.laplace(scale=1.3 * scale).cdf).pvalue < ALPHA  # power: a wrong scale
    assert stats.ks_2samp(on_spark, in_memory).pvalue > ALPHA
    wider = pn.release(x, q, pn.dp.laplace_for_epsilon(10.0 / (1.3 * scale), sensitivity=10.0, dim=n), rng=303)
    assert stats.ks_2samp(on_spark, wider.value - x).pvalue < ALPHA
    # partitions draw from independent streams: neighbouring records' noise is uncorrelated across partition bounds
    assert abs(np.corrcoef(on_spark[:-1], on_spark[1:])[0, 1]) < 5 / np.sqrt(n)


def test_identity_release_is_published_as_one_file_per_partition(kwh, tmp_path: Path) -> None:
    frame, x = kwh
    q = pn.queries.identity(N, bounds=(0, 60))
    mech = pn.dp.laplace_for_epsilon(1.0, sensitivity=60.0, dim=N)
    out = tmp_path / "noisy"
    rel = pn.release(frame, q, mech, rng=5, out=out)
    assert rel.value is None and rel.output == str(out) and rel.guarantee.epsilon == pytest.approx(1.0, rel=1e-3)
    names = sorted(p.name for p in out.iterdir())
    assert names == [MANIFEST] + [f"part-{i:05d}.parquet" for i in range(PARTS)]  # no staging file left
    manifest = json.loads((out / MANIFEST).read_text())
    assert [p["partition"] for p in manifest["partitions"]] == list(range(PARTS))
    assert sum(p["rows"] for p in manifest["partitions"]) == N and manifest["retried_after_publishing"] == []
    published = np.concatenate([pd.read_parquet(out / n)["value"].to_numpy() for n in names[1:]])
    np.testing.assert_array_equal(published, pn.release(frame, q, mech, rng=5).value)  # the same seed, same noise


def test_a_retried_task_releases_bit_for_bit_what_the_first_attempt_would_have(kwh, tmp_path: Path) -> None:
    frame, _ = kwh
    q = pn.queries.identity(N, bounds=(0, 60))
    mech = pn.dp.laplace_for_epsilon(1.0, sensitivity=60.0, dim=N)
    flaky = frame.mapInArrow(_flaky(tmp_path), frame.schema)
    undisturbed = pn.release(frame, q, mech, rng=17)
    retried = pn.release(flaky, q, mech, rng=17)
    assert len(list(tmp_path.glob("failed-stage-*"))) == 2  # the count and the release each lost partition 1 once
    np.testing.assert_array_equal(retried.value, undisturbed.value)
    out = tmp_path / "out"
    pn.release(flaky, q, mech, rng=17, out=out)
    published = np.concatenate([pd.read_parquet(p)["value"].to_numpy() for p in sorted(out.glob("part-*.parquet"))])
    np.testing.assert_array_equal(published, undisturbed.value)


def test_a_partition_retried_after_publishing_is_published_once(kwh, tmp_path: Path) -> None:
    frame, _ = kwh
    q = pn.queries.identity(N, bounds=(0, 60))
    mech = pn.dp.laplace_for_epsilon(1.0, sensitivity=60.0, dim=N)
    k, reach = output_grid(mech, q, True)
    out = tmp_path / "out"
    out.mkdir()
    packed = pack(PartitionJob(q.operator, q.bounds, q.m, mech, "error", reach, k, True, str(out), False))
    job = spark_release.spark_job(frame, N, packed, "publish", pn.random.default_rng(23))
    rows = spark_release.noised(frame, job).mapInArrow(_failing_after(tmp_path), spark_release.SCHEMAS["publish"])
    reported = rows.toPandas().sort_values("partition")
    assert list(tmp_path.glob("failed-after-stage-*"))  # partition 1 published, then its task failed
    assert reported["partition"].tolist() == list(range(PARTS))  # each partition reported once
    assert reported.set_index("partition")["published_here"].to_dict() == {0: True, 1: False, 2: True, 3: True}
    assert sorted(p.name for p in out.iterdir()) == [f"part-{i:05d}.parquet" for i in range(PARTS)]
    unpublished = pack(PartitionJob(q.operator, q.bounds, q.m, mech, "error", reach, k, True, None, False))
    values = spark_release.noised(frame, spark_release.SparkJob(unpublished, "values", job.keys, job.starts, job.rows))
    same_keys = values.toPandas()
    published = pd.read_parquet(out / "part-00001.parquet")["value"].to_numpy()
    np.testing.assert_array_equal(published, same_keys[same_keys["partition"] == 1]["value"].to_numpy())


def test_keys_are_fresh_for_every_partition_and_every_release(kwh, monkeypatch: pytest.MonkeyPatch) -> None:
    frame, _ = kwh
    drawn: list[np.ndarray] = []
    original = spark_release.partition_keys

    def recording(generator, count):  # noqa: ANN001, ANN202
        keys = original(generator, count)
        drawn.append(keys.copy())
        return keys

    monkeypatch.setattr(spark_release, "partition_keys", recording)
    q = pn.queries.identity(N, bounds=(0, 60))
    mech = pn.dp.laplace_for_epsilon(1.0, sensitivity=60.0, dim=N)
    first, second = pn.release(frame, q, mech), pn.release(frame, q, mech)
    assert len(drawn) == 2 and all(k.shape == (PARTS, 2) for k in drawn)
    every = {(int(a), int(b)) for keys in drawn for a, b in keys}
    assert len(every) == 2 * PARTS  # never shared by two partitions, nor by two releases
    assert not np.array_equal(first.value, second.value)


def test_a_mean_adds_partial_sums_and_draws_the_noise_centrally(kwh) -> None:
    frame, x = kwh
    q = pn.queries.mean(N, bounds=(0, 60))
    dp = pn.dp.laplace_for_epsilon(1.0, sensitivity=q.sensitivity("l1"))
    on_spark = pn.release(frame, q, dp, rng=4)
    in_memory = pn.release(x, q, dp, rng=4)
    assert on_spark.guarantee.as_dict() == in_memory.guarantee.as_dict()
    assert isinstance(on_spark.value, float) and on_spark.value == pytest.approx(in_memory.value, abs=1e-9)
    weights = np.linspace(0.0, 1.0, N)
    wq = pn.queries.weighted_mean(weights, bounds=(0, 60))
    wdp = pn.dp.laplace_for_epsilon(5.0, sensitivity=wq.sensitivity("l1"))
    assert pn.release(frame, wq, wdp, rng=6).value == pytest.approx(pn.release(x, wq, wdp, rng=6).value, abs=1e-9)


def test_bad_input_is_refused(spark, kwh, tmp_path: Path) -> None:
    frame, _ = kwh
    q = pn.queries.identity(N, bounds=(0, 60))
    mech = pn.fisher.optimal_noise(q, quality_budget=N)
    with pytest.raises(InvalidParameterError, match="not a column"):
        pn.release(frame["kwh"], q, mech)
    with pytest.raises(InvalidParameterError, match="one column"):
        pn.release(frame.selectExpr("kwh", "kwh as other"), q, mech)
    with pytest.raises(InvalidParameterError, match="must hold numbers"):
        pn.release(frame.selectExpr("cast(kwh as string) as kwh"), q, mech)
    short = pn.queries.identity(N - 1, bounds=(0, 60))
    with pytest.raises(DimensionError, match=f"length {N - 1}"):
        pn.release(frame, short, pn.fisher.optimal_noise(short, quality_budget=N))
    with pytest.raises(InvalidParameterError, match="outside the declared bounds"):
        pn.release(frame, pn.queries.identity(N, bounds=(0, 30)), mech)
    assert pn.release(frame, pn.queries.identity(N, bounds=(0, 30)), mech, out_of_bounds="clamp").clamped_records > 0
    holes = spark.createDataFrame([(1.0,), (None,), (float("nan"),)], "x double")
    three = pn.queries.identity(3, bounds=(0, 2))
    with pytest.raises(InvalidParameterError, match="only finite numbers"):
        pn.release(holes, three, pn.fisher.optimal_noise(three, quality_budget=3))
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "old.parquet").write_bytes(b"")
    with pytest.raises(InvalidParameterError, match="must be empty"):
        pn.release(frame, q, mech, out=tmp_path / "full")
    mq = pn.queries.mean(N, bounds=(0, 60))
    with pytest.raises(InvalidParameterError, match="record-level"):
        pn.release(frame, mq, pn.dp.laplace_for_epsilon(1.0, sensitivity=mq.sensitivity("l1")), out=tmp_path / "m")
    vq = pn.queries.variance(N, bounds=(0, 60))
    with pytest.raises(InvalidParameterError, match="every record in one place"):
        pn.release(frame, vq, pn.dp.laplace_for_epsilon(1.0, sensitivity=vq.sensitivity("l1")))


def test_a_release_survives_a_dead_python_worker_and_publishes_each_partition_once(kwh, tmp_path: Path) -> None:
    frame, _ = kwh
    q = pn.queries.identity(N, bounds=(0, 60))
    mech = pn.dp.laplace_for_epsilon(1.0, sensitivity=60.0, dim=N)
    seen, marker = str(tmp_path / "counted"), str(tmp_path / "died")

    def dies_once(batches):  # noqa: ANN001, ANN202 - partition 2's worker process ends in the release's pass, once
        import os

        from pyspark import TaskContext

        made = list(batches)
        if TaskContext.get().partitionId() == 2:
            for name in (seen, marker):  # the counting pass makes `seen`; the release's pass, `marker`, and dies
                try:
                    os.close(os.open(name, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                except FileExistsError:
                    continue
                if name == marker:
                    os._exit(1)
                break
        yield from made

    out = tmp_path / "out"
    rel = pn.release(frame.mapInArrow(dies_once, frame.schema), q, mech, rng=29, out=out)
    assert Path(marker).exists() and rel.output == str(out)
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST] + [f"part-{i:05d}.parquet" for i in range(PARTS)]
    published = np.concatenate([pd.read_parquet(p)["value"].to_numpy() for p in sorted(out.glob("part-*.parquet"))])
    np.testing.assert_array_equal(published, pn.release(frame, q, mech, rng=29).value)
