"""``pn.release`` of a one-column Spark DataFrame, computed on the executors of the cluster that holds it.

:func:`privnoise.release` hands Spark data here after it has validated every parameter. The records are the
DataFrame's rows **in its own order**: partition 0 first, each partition's rows in the order Spark reads them (the
order ``frame.toPandas()`` lists them). The query's n must be their number. Two ways, as on Dask
(:mod:`privnoise.scale.release`), with the same partition functions:

* **Record-level queries** (identity, scaled identity, diagonal) with noise of independent coordinates: each
  partition's task (``mapInArrow``) checks its records (nulls, NaN, inf, declared bounds, the out-of-bounds policy)
  and adds the noise of its coordinates, drawn on the executor from the partition's own stream — AES-128-CTR under a
  128-bit key the driver drew for this partition of this release from its cryptographically strong generator
  (:mod:`privnoise.scale.streams`) — snapped to the release's grid. It returns its block of the release, or, with
  ``out="noisy/"``, publishes it as one Parquet file, exactly once (:mod:`privnoise.scale.publish`). Only the noisy
  values (or the files' names and digests) cross the network.
* **Linear queries with few outputs** (sum, mean, weighted mean, a few linear combinations): each partition's task
  returns its partial sums C[:, block]·x[block] and how many records it clamped; the driver adds them and draws the
  noise once, centrally.

**Where each partition starts** in record order is counted first (one pass that reads the column and returns one
number per partition); the release's pass checks that every partition still holds the records it was counted with.

**Retries.** Spark runs a task again when its executor is lost or the task fails (``spark.task.maxFailures``), and
may run a second copy of a slow task (speculation). A partition's noise is a function of its key and its records
only: a retry replays the stream from its start and computes bit for bit the output of the first attempt, so it
reveals nothing new. Only one output per partition becomes visible: for a returned value, Spark hands the driver the
result of one successful attempt per partition (a failed attempt's result never leaves its executor); with ``out``,
each attempt writes under a staging name and links it to the partition's final name, which the first attempt to
finish takes — a later attempt publishes nothing (:mod:`privnoise.scale.publish`; the directory must be on a POSIX
file system that every executor sees). Were the records to change between two attempts (a source that is not
deterministic), the second, different output would still never be published or returned. The driver checks that
every partition's records came back exactly once.

Queries that need every record in one place (nonlinear queries, data-dependent policies, correlated noise over
records) are refused: bring the column into memory (``frame.toPandas()``) if it fits.

The executors run privnoise's partition functions in Python: they need privnoise, numpy, randomgen and pyarrow in
the Python environment Spark starts its Python workers with (``PYSPARK_PYTHON``; :func:`privnoise.spark.start`
sets it to the driver's Python on a local master).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._optional import require
from ..exceptions import DimensionError, InvalidParameterError
from ..mechanisms import NoiseDesign
from ..queries import Query
from ..random import RNGLike, default_rng
from ..release import Release, accumulate, direct_plan
from ..scale.publish import Published, write_manifest
from ..scale.release import PartitionJob, checked_release, partial_sums, release_partition
from ..scale.shipping import pack
from ..scale.streams import partition_keys
from .types import spark_type

__all__ = ["SCHEMAS", "SparkJob", "count_partitions", "noised", "one_column", "partition_task", "release_on_spark",
           "spark_job"]

_OWNER = "release"
_NUMERIC = ("tinyint", "smallint", "int", "bigint", "float", "double", "decimal")

#: What a partition's task returns, by mode.
SCHEMAS = {
    "values": "partition int, clamped long, value double",
    "sums": "partition int, clamped long, sums array<double>",
    "publish": "partition int, clamped long, file string, first_record long, rows long, sha256 string, "
               "published_here boolean",
}


def one_column(data: Any) -> Any:
    """``data`` as a one-column Spark DataFrame of numbers (refused otherwise, before any job runs)."""
    kind = spark_type(data)
    if kind == "Column":
        raise InvalidParameterError(
            f"`data` of `{_OWNER}` must be a one-column Spark DataFrame, not a column: frame.select('kwh')."
        )
    if kind != "DataFrame":
        raise InvalidParameterError(f"`data` of `{_OWNER}` must be a Spark DataFrame; got {type(data).__name__}.")
    fields = data.schema.fields
    if len(fields) != 1:
        raise InvalidParameterError(
            f"`data` of `{_OWNER}` must be one column; got a Spark DataFrame with {len(fields)} columns (select one: "
            "frame.select('kwh'))."
        )
    name = fields[0].dataType.simpleString()
    if not name.startswith(_NUMERIC):
        raise InvalidParameterError(f"`data` of `{_OWNER}` must hold numbers; the column {fields[0].name!r} is {name}.")
    return data


def _partition_id() -> int:
    from pyspark import TaskContext

    context = TaskContext.get()
    assert context is not None, "run inside a Spark task"
    return int(context.partitionId())


def _counter(batches: Iterator[Any]) -> Iterator[Any]:
    import pyarrow as pa

    rows = sum(batch.num_rows for batch in batches)
    yield pa.RecordBatch.from_pydict({"partition": [_partition_id()], "rows": [rows]},
                                     schema=pa.schema([("partition", pa.int32()), ("rows", pa.int64())]))


def count_partitions(frame: Any) -> dict[int, int]:
    """The number of records of each partition of ``frame`` that holds any (one pass; one row per partition)."""
    counted = frame.mapInArrow(_counter, "partition int, rows long").toArrow()
    rows: dict[int, int] = {}
    for partition, n in zip(counted.column("partition").to_pylist(), counted.column("rows").to_pylist(), strict=True):
        if partition in rows:
            raise RuntimeError(f"partition {partition} was counted twice")
        if n:
            rows[int(partition)] = int(n)
    return rows


@dataclass(frozen=True, slots=True)
class SparkJob:
    """What every partition task of one release on Spark needs: the packed :class:`PartitionJob`, the mode
    (``values``, ``sums`` or ``publish``), and each partition's key, first record and number of records."""

    packed: bytes
    mode: str
    keys: dict[int, tuple[int, int]]
    starts: dict[int, int]
    rows: dict[int, int]


def _values(batches: Iterator[Any]) -> NDArray[np.float64]:
    """A partition's column as float64 (a null as NaN, which the checks refuse)."""
    import pyarrow as pa

    chunks = [batch.column(0) for batch in batches]
    if not chunks:
        return np.empty(0)
    column = pa.chunked_array(chunks).cast(pa.float64())
    return np.asarray(column.to_numpy(), dtype=np.float64)  # nulls become NaN


def partition_task(job: SparkJob) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The function each partition's task runs (``mapInArrow``): check, noise and return or publish its block."""

    def task(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        partition = _partition_id()
        values = _values(batches)
        rows = job.rows.get(partition, 0)
        if values.size != rows:
            raise DimensionError(
                f"`data` of `{_OWNER}`, partition {partition} holds {values.size} records, not the {rows} it was "
                "counted with: the DataFrame's partitions must be the same on every pass (a deterministic source)."
            )
        if not rows:
            return
        start = job.starts[partition]
        if job.mode == "sums":
            sums, clamped = partial_sums(values, partition, start, rows, job.packed)
            yield pa.RecordBatch.from_pydict({"partition": [partition], "clamped": [clamped],
                                              "sums": [np.asarray(sums, dtype=float).ravel().tolist()]},
                                             schema=pa.schema([("partition", pa.int32()), ("clamped", pa.int64()),
                                                               ("sums", pa.list_(pa.float64()))]))
            return
        key = np.array(job.keys[partition], dtype=np.uint64)
        result, clamped = release_partition(values, partition, start, rows, key, job.packed)
        if job.mode == "publish":
            published: Published = result
            yield pa.RecordBatch.from_pydict({
                "partition": pa.array([partition], pa.int32()), "clamped": pa.array([clamped], pa.int64()),
                "file": [published.file], "first_record": pa.array([published.first_record], pa.int64()),
                "rows": pa.array([published.rows], pa.int64()), "sha256": [published.sha256],
                "published_here": [published.published_here]})
            return
        noisy = np.asarray(result, dtype=np.float64)
        clamps = np.zeros(noisy.size, dtype=np.int64)
        clamps[0] = clamped
        yield pa.RecordBatch.from_pydict({"partition": pa.array(np.full(noisy.size, partition, dtype=np.int32)),
                                          "clamped": pa.array(clamps), "value": pa.array(noisy)})

    return task


def spark_job(frame: Any, records: int, packed: bytes, mode: str, generator: np.random.Generator) -> SparkJob:
    """Count the records of each partition (they must be ``records``), number them in partition order, and — for
    a record-level release — draw a fresh key for each partition from ``generator``."""
    rows = count_partitions(frame)
    found = sum(rows.values())
    if found != records:
        raise DimensionError(f"`data` of `{_OWNER}` must have length {records} (the query's n); got {found}.")
    starts, position = {}, 0
    for partition in sorted(rows):
        starts[partition] = position
        position += rows[partition]
    keys: dict[int, tuple[int, int]] = {}
    if mode != "sums":
        drawn = partition_keys(generator, max(rows, default=-1) + 1)  # fresh keys for this release
        keys = {p: (int(drawn[p, 0]), int(drawn[p, 1])) for p in rows}
    return SparkJob(packed, mode, keys, starts, rows)


def noised(frame: Any, job: SparkJob) -> Any:
    """The lazy DataFrame of the partitions' outputs (one row per record, per partition or per published file)."""
    return frame.mapInArrow(partition_task(job), SCHEMAS[job.mode])


_RAISED = re.compile(r"privnoise\.exceptions\.(InvalidParameterError|DimensionError): (.*)")


def _collect(frame: Any) -> Any:
    """``frame.toArrow()``, a privnoise refusal raised on an executor raised again here as itself."""
    try:
        return frame.toArrow()
    except Exception as exc:
        found = _RAISED.findall(str(exc))
        if found:
            kind, message = found[-1]
            raise (InvalidParameterError if kind == "InvalidParameterError" else DimensionError)(message) from None
        raise


def _once(partitions: list[int], expected: dict[int, int], counts: list[int] | None = None) -> None:
    """Every partition that holds records came back exactly once (with its records)."""
    seen = sorted(partitions)
    if seen != sorted(expected) or (counts is not None and any(c != expected[p] for p, c in zip(partitions, counts, strict=True))):
        raise RuntimeError(f"the partitions came back as {seen}, not once each of {sorted(expected)}")


def release_on_spark(data: Any, query: Query, mechanism: NoiseDesign, *, rng: RNGLike, out_of_bounds: str,
                     harden: bool, delta: float | None, out: Any) -> Release:
    """The release of ``query`` on a one-column Spark DataFrame (parameters validated by :func:`privnoise.release`)."""
    require("pyarrow", feature="releases of Spark data")
    generator = default_rng(rng)
    frame = one_column(data)
    mechanism, record_level, directory = checked_release(
        query, mechanism, out, "Spark data", "bring the column into memory (frame.toPandas()) if it fits"
    )
    operator = getattr(query, "operator", None)  # record-level or summable: checked above
    plan = direct_plan(query, mechanism, mechanism, harden=harden, delta=delta)
    packed = pack(PartitionJob(operator, query.bounds, query.m, mechanism, out_of_bounds, plan.reach, plan.exponent,
                               harden, None if directory is None else str(directory), False))
    mode = "sums" if not record_level else "values" if directory is None else "publish"
    job = spark_job(frame, query.n, packed, mode, generator)
    rows = job.rows
    if not record_level:
        table = _collect(noised(frame, job))
        partitions = table.column("partition").to_pylist()
        _once(partitions, rows)
        total = accumulate((np.asarray(s, dtype=float) for s in table.column("sums").to_pylist()), query)
        return plan.execute(total, generator, clamped=int(sum(table.column("clamped").to_pylist())))
    table = _collect(noised(frame, job))
    clamped = int(np.asarray(table.column("clamped")).sum()) if table.num_rows else 0
    if directory is None:
        partition = np.asarray(table.column("partition"), dtype=np.int64)
        order = np.argsort(partition, kind="stable")  # record order: partitions in order, each in its own order
        found, counts = np.unique(partition, return_counts=True)
        _once([int(p) for p in found], rows, [int(c) for c in counts])
        return plan.finished(np.asarray(table.column("value"), dtype=np.float64)[order], clamped=clamped)
    published = [Published(int(p), f, int(first), int(n), sha, bool(here)) for p, f, first, n, sha, here in zip(
        *(table.column(c).to_pylist() for c in ("partition", "file", "first_record", "rows", "sha256",
                                                   "published_here")), strict=True)]
    _once([p.partition for p in published], rows, [p.rows for p in published])
    made = plan.finished(None, clamped=clamped, output=str(directory))
    write_manifest(Path(directory), published, {**made.as_dict(), "records": query.n})
    return made
