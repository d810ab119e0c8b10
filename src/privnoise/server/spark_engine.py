"""Datasets with ``engine = "spark"``: Parquet files the server answers from on a Spark cluster, after the charge.

A dataset declared ::

    [datasets.big]
    source = "meters/"             # Parquet (a file, a directory, a glob) or a Delta table, seen by every executor
    engine = "spark"
    master = "local[2]"            # or "spark://host:7077", "k8s://https://host:443", "yarn"

is not imported into the database, as with ``engine = "dask"`` (:mod:`.dask_engine`): its values are checked once
when it is first declared (or re-imported), its records are counted from the files at start-up, and a query is
answered in the same three steps (:mod:`.service`): plan (no data read), charge durably, and only then compute on
Spark. A server has one Spark session (one per process): every Spark dataset names the same master.

**Record order** is the files' order (their paths sorted, as the Dask engine and an import read them) and, within a
file, its rows' order: each row's record number is its file's first record plus its position in the file (Spark's
``_metadata.row_index``), whatever partitions Spark cuts the files into.

**Aggregates.** Each partition's task (``mapInArrow``) evaluates the plan's components with the Dask engine's own
function (:func:`.dask_engine.evaluate_partition`: clamping, a missing value as the lower bound, the ``where`` with
SQL's three-valued logic, Σ weight·term for every term) on every batch of records Spark hands it, and returns one
row per batch: the partial sums and the number of records. **Constant work**, as on Dask: every expression is
evaluated for every record and multiplied by the weight; no record is skipped, no partition is filtered, the job
has the same tasks and returns as many rows whatever a filter selects (SECURITY.md, requirement 16). The driver adds
the partial sums (an exactly rounded sum per component) and draws the noise from the server's generator.

**Identity answers** are noised on the executors: each partition's task clamps its records and adds the noise of
their coordinates, drawn from the partition's own stream (:mod:`privnoise.scale.streams`; keys drawn for this query
from the server's generator), its records taken in record order (a vector noise's law of each run of consecutive
records). The driver puts the records in order and checks that every record came back exactly once. If an executor
is lost or a task fails, Spark runs the task again; the retry replays its partition's stream over the same records,
so its answer is the one the first attempt would have given, the driver receives one attempt's result per
partition, and the charge, committed before the job started, is recorded once.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._optional import require
from ..exceptions import InvalidParameterError
from ..random import default_rng
from ..scale.shipping import pack, unpack
from ..scale.streams import partition_generator, partition_keys
from ..spark.delta import read_parquet
from .config import DatasetSpec, ServerConfig
from .dask_engine import clamped_values, evaluate_partition, identity_column, plan_evaluation, summed_partials
from .planner import Plan

__all__ = ["FILE", "ROW", "SparkDatasets", "check_files", "file_starts", "read_files", "spark_session"]

#: The columns that carry each row's file and position in it.
FILE, ROW = "__pn_file", "__pn_row"


def spark_session(master: str) -> tuple[Any, bool]:
    """The process's Spark session — the one already running, untouched, or a new one on ``master`` — and whether
    this call started it."""
    sql = require("pyspark.sql", feature="Spark datasets")
    from ..spark import start

    active = sql.SparkSession.getActiveSession()
    return (active, False) if active is not None else (start(master), True)


def read_files(spark: Any, spec: DatasetSpec) -> Any:
    """The dataset's declared columns, with each row's file and position in it (:data:`FILE`, :data:`ROW`)."""
    functions = require("pyspark.sql.functions", feature="Spark datasets")
    assert spec.source is not None
    frame = read_parquet(spark, spec.source)
    return frame.select(*[functions.col(f"`{c}`") for c in spec.columns],
                        functions.col("_metadata.file_path").alias(FILE),
                        functions.col("_metadata.row_index").alias(ROW))


def file_starts(frame: Any) -> dict[str, int]:
    """The first record of each file (files in sorted order), and the number of records under the key ``""``."""
    counts = sorted((str(r[0]), int(r[1])) for r in frame.groupBy(FILE).count().collect())
    starts: dict[str, int] = {}
    position = 0
    for name, rows in counts:
        starts[name] = position
        position += rows
    starts[""] = position
    return starts


def check_files(spec: DatasetSpec) -> int:
    """Read every value of a Spark dataset once, as an import would check it, and return the number of records.

    Missing, NaN and infinite numbers are refused, and so are values outside the declared bounds when the column's
    ``out_of_bounds`` is "reject"; the first offending record (in record order) is named.
    """
    functions = require("pyspark.sql.functions", feature="Spark datasets")
    from .datafiles import DataImportError

    assert spec.source is not None and spec.master is not None
    spark, _ = spark_session(spec.master)
    try:
        raw = read_parquet(spark, spec.source)
    except InvalidParameterError as exc:  # a Delta table whose files alone are not its rows
        raise DataImportError(f"{spec.source}: {exc}") from None
    except Exception as exc:  # a missing location, files that are not Parquet
        raise DataImportError(f"{spec.source}: Spark cannot read it as Parquet ({type(exc).__name__}).") from None
    missing = [c for c in spec.columns if c not in raw.columns]
    if missing:
        raise DataImportError(f"{spec.source}: declared column {missing[0]!r} is not in the files.")
    frame = read_files(spark, spec)
    starts = file_starts(frame)
    F = functions
    reasons = []
    for name, col in spec.columns.items():
        if col.type != "number":
            continue
        x = F.col(f"`{name}`").cast("double")
        bad = x.isNull() | F.isnan(x) | (F.abs(x) == F.lit(math.inf))
        reason = F.when(bad, F.concat(F.lit(f"column {name!r}: "), F.coalesce(x.cast("string"), F.lit("null")),
                                      F.lit(" is not a finite number")))
        if col.out_of_bounds == "reject":
            assert col.bounds is not None
            low, high = col.bounds
            reason = reason.when((x < low) | (x > high), F.concat(
                F.lit(f"column {name!r}: "), x.cast("string"),
                F.lit(f" is outside the declared bounds [{low:g}, {high:g}] (out_of_bounds = 'reject')")))
        reasons.append(reason)
    if not reasons:
        return starts[""]
    why = F.coalesce(*reasons)
    found = frame.select(FILE, ROW, why.alias("why")).where(F.col("why").isNotNull())
    first = found.groupBy(FILE).agg(F.min(F.struct(ROW, "why")).alias("first")).collect()
    if first:
        record, reason = min((starts[str(r[0])] + int(r[1][0]), str(r[1][1])) for r in first)
        reason = reason.replace(": NaN ", ": nan ")
        raise DataImportError(f"{spec.source}: record {record}, {reason}; NaN, inf and missing numbers are rejected.")
    return starts[""]


def _evaluator(packed: bytes, names: list[str]) -> Callable[[Iterator[Any]], Iterator[Any]]:
    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        for batch in batches:
            part = pa.Table.from_batches([batch]).select(names).to_pandas()
            yield pa.RecordBatch.from_pydict({"sums": [evaluate_partition(part, packed).tolist()]},
                                             schema=pa.schema([("sums", pa.list_(pa.float64()))]))

    return run


def _noiser(column: str, low: float, high: float, law: bytes, keys: dict[int, tuple[int, int]],
            starts: dict[str, int]) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """Each partition's task of an identity answer: its records in record order, clamped, plus their noise."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        from pyspark import TaskContext

        context = TaskContext.get()
        assert context is not None
        partition = int(context.partitionId())
        received = [batch for batch in batches if batch.num_rows]
        if not received:  # an empty partition
            return
        table = pa.Table.from_batches(received)
        files = table.column(FILE).to_pylist()
        rows = np.asarray(table.column(ROW), dtype=np.int64)
        records = np.fromiter((starts[f] for f in files), dtype=np.int64, count=len(files)) + rows
        order = np.argsort(records, kind="stable")
        records = records[order]
        values = clamped_values(table.column(column).to_pandas(), low, high)[order]
        noise = unpack(law)
        rng = partition_generator(np.array(keys[partition], dtype=np.uint64))
        if not noise.shape:  # a scalar noise is drawn per record
            noisy = np.asarray(noise.add_to(values, rng=rng), dtype=np.float64)
        else:  # each run of consecutive records with its coordinates' law, in record order
            cuts = np.flatnonzero(np.diff(records) != 1) + 1
            pieces = []
            for run_records, run_values in zip(np.split(records, cuts), np.split(values, cuts), strict=True):
                first, stop = int(run_records[0]), int(run_records[-1]) + 1
                marginal = dataclasses.replace(noise, mechanism=noise.mechanism.marginal(first, stop),
                                               bound=noise.bound[first:stop])
                pieces.append(np.asarray(marginal.add_to(run_values, rng=rng), dtype=np.float64))
            noisy = np.concatenate(pieces)
        yield pa.RecordBatch.from_pydict({"record": pa.array(records), "value": pa.array(noisy)})

    return run


class SparkDatasets:
    """The Spark datasets of a server: the Spark session, and per dataset its lazy frame and its files' first
    records (module docstring)."""

    def __init__(self, config: ServerConfig) -> None:
        self.specs = {n: s for n, s in config.datasets.items() if s.engine == "spark"}
        masters = {s.master for s in self.specs.values()}
        assert len(masters) == 1, "one master for every Spark dataset (checked with the configuration)"
        self.spark, self._started = spark_session(next(iter(masters)) or "local[2]")
        self.frames: dict[str, Any] = {}
        self.starts: dict[str, dict[str, int]] = {}
        try:
            for name, spec in self.specs.items():
                self.frames[name] = read_files(self.spark, spec)
                self.starts[name] = file_starts(self.frames[name])
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self._started:
            self._started = False
            self.spark.stop()

    def records(self, name: str) -> int:
        return self.starts[name][""]

    def evaluate(self, plan: Plan) -> tuple[list[float], int]:
        """The true value of each component of ``plan`` and the number of records (constant work)."""
        spec = plan.spec
        job = plan_evaluation(plan)
        names = list(spec.columns)
        table = self.frames[spec.name].mapInArrow(_evaluator(pack(job), names), "sums array<double>").toArrow()
        partials = np.array(table.column("sums").to_pylist(), dtype=float).reshape(table.num_rows, len(job.terms) + 1)
        return summed_partials(partials)

    def release_identity(self, plan: Plan) -> tuple[NDArray[np.float64], int]:
        """The noisy records of an identity query, noised on the executors, in record order, and their number."""
        spec = plan.spec
        column, bounds = identity_column(plan)
        frame = self.frames[spec.name].select(f"`{column}`", FILE, ROW)
        partitions = frame.rdd.getNumPartitions() if hasattr(frame, "rdd") else None
        if partitions is None:  # pragma: no cover - Spark Connect: no partition count before the job
            raise ValueError("identity answers of Spark datasets need classic Spark (a partition count)")
        drawn = partition_keys(default_rng(), partitions)  # fresh keys for this answer, one per partition
        keys = {p: (int(drawn[p, 0]), int(drawn[p, 1])) for p in range(partitions)}
        run = _noiser(column, bounds[0], bounds[1], pack(plan.components[0].noise), keys, self.starts[spec.name])
        table = frame.mapInArrow(run, "record long, value double").toArrow()
        records = np.asarray(table.column("record"), dtype=np.int64)
        order = np.argsort(records, kind="stable")
        if not np.array_equal(records[order], np.arange(records.size)) or records.size != self.records(spec.name):
            raise ValueError("the records of the identity answer did not come back exactly once each")
        values = np.asarray(table.column("value"), dtype=np.float64)[order]
        return values, int(values.size)
