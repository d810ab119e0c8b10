"""Executor JVMs killed during a release and during a server answer, on ``local-cluster[2,1,1024]``: a master, two
workers and two executor JVMs of their own (``CoarseGrainedExecutorBackend`` processes), as Spark's own tests use.

One process holds one SparkContext, and the other Spark tests hold theirs (``local[2,3]``) for the whole run, so
``test_executor_loss.py`` runs this module in a process of its own::

    python -m tests.spark._executor_loss DIRECTORY

It writes ``DIRECTORY/facts.json`` — what happened, for the tests to check — and the releases' files under
``DIRECTORY``. If the cluster cannot start, ``facts.json`` holds ``{"cannot_start": "<the error>"}``.

A partition's task kills the executor JVM it runs in: its Python worker walks up its parent processes to the one
whose command line holds ``CoarseGrainedExecutorBackend``, records that process id, sends it SIGKILL, waits for it
to end and ends itself. Marker files created with ``O_EXCL`` make each kill happen once.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path
from typing import Any

MASTER = "local-cluster[2,1,1024]"
EXECUTOR = "CoarseGrainedExecutorBackend"
N, PARTS = 6000, 4


def executor_pid() -> int | None:
    """The process id of the executor JVM this Python worker runs under (None outside an executor JVM)."""
    import psutil

    for process in psutil.Process().parents():
        try:
            if any(EXECUTOR in part for part in process.cmdline()):
                return int(process.pid)
        except psutil.Error:
            continue
    return None


def _create(path: str) -> bool:
    """Create ``path`` if it does not exist yet (atomically): whether this call created it."""
    import os

    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


def kill_own_executor(record: str) -> None:
    """Record this task's executor JVM and stage in ``record``, SIGKILL the JVM, wait until it has ended, and end
    this worker."""
    import os
    import signal

    import psutil
    from pyspark import TaskContext

    pid = executor_pid()
    context = TaskContext.get()
    Path(record).write_text(json.dumps({"executor": pid, "stage": None if context is None else context.stageId()}))
    if pid is not None:
        os.kill(pid, signal.SIGKILL)
        try:
            psutil.Process(pid).wait(timeout=120)
        except psutil.Error:
            pass
    os._exit(1)


def _note_run(root: str, partition: int) -> None:
    """Note the executor JVM and attempt of one run of ``partition``'s task (``ran-<partition>-<attempt>.json``)."""
    from pyspark import TaskContext

    context = TaskContext.get()
    if context is not None and context.partitionId() == partition:
        Path(root, f"ran-{partition}-{context.attemptNumber()}-{context.stageId()}.json").write_text(
            json.dumps({"executor": executor_pid(), "stage": context.stageId()}))


def dies_in_release(root: str, partition: int = 2):  # noqa: ANN201 - a mapInArrow function
    """Pass the batches through; ``partition``'s task kills its executor JVM on its second pass (the release's, after
    the counting pass), once."""

    def run(batches):  # noqa: ANN001, ANN202
        from pyspark import TaskContext

        made = list(batches)
        if TaskContext.get().partitionId() == partition:
            _note_run(root, partition)
            if not _create(f"{root}/counted") and _create(f"{root}/killed"):
                kill_own_executor(f"{root}/killed-executor.json")
        yield from made

    return run


def dies_once(root: str, partition: int = 1):  # noqa: ANN201 - a mapInArrow function
    """Consume the partition's published row (its file is published by then), then kill the executor JVM, once."""

    def run(batches):  # noqa: ANN001, ANN202
        from pyspark import TaskContext

        made = list(batches)
        if TaskContext.get().partitionId() == partition:
            _note_run(root, partition)
            if _create(f"{root}/killed"):
                kill_own_executor(f"{root}/killed-executor.json")
        yield from made

    return run


def _runs(root: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) | {"name": p.name} for p in sorted(root.glob("ran-*.json"))]


def _killed(root: Path) -> Any:
    path = root / "killed-executor.json"
    return json.loads(path.read_text()) if path.exists() else None


def parquet_frame(spark: Any, root: Path) -> Any:
    """Four Parquet files of readings in [0, 60], one partition each (``spark.sql.files.openCostInBytes`` as large as
    a partition: Spark packs no two files into one)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    x = np.random.default_rng(8).uniform(0.0, 60.0, N).round(3)
    (root / "data").mkdir()
    for i, chunk in enumerate(np.array_split(x, PARTS)):
        pq.write_table(pa.table({"kwh": chunk}), root / "data" / f"part-{i}.parquet")
    return spark.read.parquet(str(root / "data"))


def release_scenario(spark: Any, root: Path) -> dict[str, Any]:
    """``pn.release(..., out=)`` of an identity query whose partition 2's executor is killed in the release's pass."""
    import numpy as np

    import privnoise as pn
    from privnoise.spark import release as spark_release

    root.mkdir()
    frame = parquet_frame(spark, root)
    q = pn.queries.identity(N, bounds=(0, 60))
    mech = pn.dp.laplace_for_epsilon(1.0, sensitivity=60.0, dim=N)
    keys: list[list[list[int]]] = []
    original = spark_release.partition_keys

    def recording(generator, count):  # noqa: ANN001, ANN202
        drawn = original(generator, count)
        keys.append(drawn.tolist())
        return drawn

    spark_release.partition_keys = recording
    try:
        rel = pn.release(frame.mapInArrow(dies_in_release(str(root)), frame.schema), q, mech, rng=29,
                         out=root / "out")
        undisturbed = pn.release(frame, q, mech, rng=29)
    finally:
        spark_release.partition_keys = original
    np.save(root / "undisturbed.npy", undisturbed.value)
    return {"partitions": frame.rdd.getNumPartitions(), "output": rel.output, "keys": keys,
            "killed_executor": _killed(root), "runs": _runs(root), "epsilon": rel.guarantee.epsilon}


def publish_scenario(spark: Any, root: Path) -> dict[str, Any]:
    """The release's publishing tasks, partition 1's executor killed after its file is published."""
    import numpy as np

    import privnoise as pn
    from privnoise.release.direct import output_grid
    from privnoise.scale.release import PartitionJob
    from privnoise.scale.shipping import pack
    from privnoise.spark import release as spark_release

    root.mkdir()
    frame = parquet_frame(spark, root)
    q = pn.queries.identity(N, bounds=(0, 60))
    mech = pn.dp.laplace_for_epsilon(1.0, sensitivity=60.0, dim=N)
    k, reach = output_grid(mech, q, True)
    out = root / "out"
    out.mkdir()
    packed = pack(PartitionJob(q.operator, q.bounds, q.m, mech, "error", reach, k, True, str(out), False))
    job = spark_release.spark_job(frame, N, packed, "publish", pn.random.default_rng(23))
    rows = spark_release.noised(frame, job).mapInArrow(dies_once(str(root)), spark_release.SCHEMAS["publish"])
    reported = rows.toPandas().sort_values("partition")
    unpublished = pack(PartitionJob(q.operator, q.bounds, q.m, mech, "error", reach, k, True, None, False))
    values = spark_release.noised(frame, spark_release.SparkJob(unpublished, "values", job.keys, job.starts, job.rows))
    same_keys = values.toPandas()
    np.save(root / "same_keys.npy", same_keys[same_keys["partition"] == 1]["value"].to_numpy())
    return {"reported": reported[["partition", "published_here", "file"]].to_dict("list"),
            "killed_executor": _killed(root), "runs": _runs(root)}


def server_scenario(spark: Any, root: Path, text: str) -> dict[str, Any]:
    """A server answer on a Spark dataset whose partition 1's executor is killed during the answer's job."""
    import numpy as np

    from tests.scale._server import TwinLab, twin_dataset, twin_rows
    from tests.server._lab import NoiseSpy

    root.mkdir()
    with TwinLab(root / "lab", [twin_dataset("meters", twin_rows(300))], MASTER, engine="spark",
                 files=3) as server:  # the server's configuration names this cluster, whose session runs here
        server.add_querier("ana", epsilon="10")
        datasets = server.app.state.service.spark
        frame = datasets.frames["meters_spark"]
        datasets.frames["meters_spark"] = frame.mapInArrow(dies_once(str(root)), frame.schema)
        with NoiseSpy().installed() as spy:
            response = server.post("ana", {"query": text, "dataset": "meters_spark"})
            draws = [true.tolist() for _, true in spy.take()]
        answer = response.json()
        ledger = server.get("admin", "/v1/admin/ledger", limit=5).json()["ledger"]
        budget = server.get("ana", "/v1/budget").json()["datasets"]["meters_spark"]
        truth = np.clip([r["x"] for r in server.datasets["meters"].rows], 10.0, 60.0).tolist()
        north = float(sum(x for x, r in zip(truth, server.datasets["meters"].rows, strict=True)
                          if r["region"] == "north"))
        return {"partitions": frame.rdd.getNumPartitions(), "status": response.status_code, "answer": answer,
                "ledger": [{k: row[k] for k in ("status", "epsilon", "repeats")} for row in ledger],
                "spent": budget["epsilon"]["spent"], "truth": truth, "north_sum": north, "server_draws": draws,
                "killed_executor": _killed(root), "runs": _runs(root)}


def main(directory: str) -> None:
    root = Path(directory)
    facts: dict[str, Any] = {}
    try:
        from privnoise.spark import start

        spark = start(MASTER, app_name="privnoise-executor-loss", config={
            "spark.sql.session.timeZone": "UTC",
            "spark.sql.files.openCostInBytes": str(128 << 20),  # a small file is a partition of its own
        })
        spark.sparkContext.setLogLevel("ERROR")
        assert spark.range(4).count() == 4  # the executors have registered and run a job
    except Exception as exc:
        facts["cannot_start"] = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        (root / "facts.json").write_text(json.dumps(facts))
        return
    try:
        facts["master"] = spark.sparkContext.master
        facts["release"] = release_scenario(spark, root / "release")
        facts["publish"] = publish_scenario(spark, root / "publish")
        facts["server_identity"] = server_scenario(spark, root / "server_identity", "identity(x)")
        facts["server_sum"] = server_scenario(spark, root / "server_sum", "sum(x) where region = 'north'")
    finally:
        (root / "facts.json").write_text(json.dumps(facts))
        spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
