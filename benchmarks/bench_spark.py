"""privnoise on Spark, in one run: scaling from one executor thread to two, and the overhead over bare Spark.

Usage::

    python benchmarks/bench_spark.py [--rows 10000000] [--repeat 2] [--data DIR] [--json PATH] [--pin]

With ``--pin``, each master runs in its own process restricted to as many CPUs as it has executor threads
(``local[1]`` on one CPU, ``local[2]`` on two): Spark's JVM does work besides its task threads (garbage
collection, compression, the shuffle's sort and spill), so that unpinned ``local[1]`` uses more than one core, and
the scaling it gives understates what a second core brings.

The data — ``--rows`` smart-meter readings (kwh rounded to 10 Wh, one of four regions, a household id among
rows/50) in Parquet files of 2²² rows — is generated here, in a temporary directory deleted afterwards, or in
``--data DIR``, kept for the next run (a directory that already holds ``--rows`` rows of it is read as it is). For a local
master of one and then two executor threads (``local[1]``, ``local[2]``: a fresh Spark session each, no web UI,
input splits of 8 MiB so that both threads have tasks), the best of ``--repeat`` runs of:

* **group-by mean**: ``pn.Session(frame, missing="drop").group_by("region", keys=...).mean("kwh", bounds=(0, 60))``
  — a fresh session each time, so its first read of kwh (the pass that refuses infinite values) is counted;
* **bounded group-by mean**: the same with ``privacy_unit="household", max_contributions=20`` — contribution
  bounding in Spark (a window ranking each household's rows by a keyed hash);
* with two threads, the **bare Spark** computations they are compared with: the same clamped sums and counts
  (``groupBy().agg``), with the bounding done the usual way (``row_number()`` over a window ordered by ``rand()``)
  for the bounded one, plus numpy Laplace noise on the driver — the same work without privacy (no infinity check,
  no declared-key join, no CSPRNG).

Printed, never asserted (the targets of the Spark issue are for 10⁸ rows): scaling time(local[1])/time(local[2])
≥ 1.7; overhead time(privnoise)/time(bare Spark) ≤ 1.3. The load average is printed before and after: the ratios
mean little on a busy machine. Spark starts once per master (not timed).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import privnoise as pn

BOUNDS = (0.0, 60.0)
REGIONS = ["north", "south", "east", "west"]
FILE_ROWS = 1 << 22
K = 20


def generate(folder: Path, rows: int) -> float:
    """Write ``rows`` readings into Parquet files of FILE_ROWS rows; seconds taken."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    start = time.perf_counter()
    rng = np.random.default_rng(7)
    households = max(rows // 50, 1)
    for number, first in enumerate(range(0, rows, FILE_ROWS)):
        size = min(FILE_ROWS, rows - first)
        table = pa.table({
            "kwh": np.round(rng.gamma(2.0, 0.4, size), 2),
            "region": pa.array(np.array(REGIONS)[rng.integers(0, 4, size)]),
            "household": rng.integers(0, households, size),
        })
        pq.write_table(table, folder / f"meters-{number:04d}.parquet", row_group_size=1 << 20)
    return time.perf_counter() - start


def written(folder: Path) -> int:
    """The number of rows of the readings' files in ``folder`` (0 if none)."""
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(p).metadata.num_rows for p in folder.glob("meters-*.parquet"))


def best(call: Callable[[], Any], repeat: int) -> float:
    """Seconds of the fastest of ``repeat`` calls."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def run(threads: int, data: Path, repeat: int, bare: bool) -> dict[str, Any]:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from privnoise.spark import start

    spark = start(f"local[{threads}]", app_name="privnoise-bench",
                  config={"spark.driver.memory": "4g", "spark.sql.files.maxPartitionBytes": "8m"})
    spark.sparkContext.setLogLevel("ERROR")
    result: dict[str, Any] = {"threads": threads}
    try:
        frame = spark.read.parquet(str(data))
        frame.select(F.sum("kwh")).collect()  # the files' metadata and the JVM warmed up before anything is timed
        result["partitions"] = frame.rdd.getNumPartitions()

        def group_mean(unit: str | None) -> Any:
            session = pn.Session(frame, privacy_unit=unit, max_contributions=K if unit else 1, epsilon=1.0,
                                 missing="drop")
            return session.group_by("region", keys=REGIONS).mean("kwh", bounds=BOUNDS, epsilon=1.0)

        result["group_mean_s"] = best(lambda: group_mean(None), repeat)
        result["bounded_group_mean_s"] = best(lambda: group_mean("household"), repeat)
        if bare:
            clipped = F.least(F.greatest(F.col("kwh"), F.lit(BOUNDS[0])), F.lit(BOUNDS[1]))

            def noisy(rows: Any) -> Any:
                rng = np.random.default_rng()
                sums = np.array([r["s"] for r in rows]) - 30.0 * np.array([r["n"] for r in rows])
                counts = np.array([r["n"] for r in rows], dtype=float)
                return (sums + rng.laplace(scale=120.0, size=len(rows))) / (counts + rng.laplace(scale=2.0,
                                                                                                   size=len(rows)))

            def bare_group_mean(bounded: bool) -> Any:
                source = frame.where(F.col("kwh").isNotNull())
                if bounded:
                    order = Window.partitionBy("household").orderBy(F.rand())
                    source = source.withColumn("r", F.row_number().over(order)).where(F.col("r") <= K)
                rows = source.groupBy("region").agg(F.sum(clipped).alias("s"), F.count(F.lit(1)).alias("n"))
                return noisy(rows.collect())

            result["bare_group_mean_s"] = best(lambda: bare_group_mean(False), repeat)
            result["bare_bounded_group_mean_s"] = best(lambda: bare_group_mean(True), repeat)
    finally:
        spark.stop()  # the next run builds its own session on its own master
    return result


def run_pinned(threads: int, data: Path, repeat: int, bare: bool) -> dict[str, Any]:
    """:func:`run` in a new Python process whose CPUs (inherited by Spark's JVM and its workers) are the first
    ``threads`` of this one's: one executor thread on one core, two on two."""
    cpus = set(sorted(os.sched_getaffinity(0))[:threads])
    command = [sys.executable, __file__, "--one", str(threads), "--data", str(data), "--repeat", str(repeat)]
    done = subprocess.run(command + (["--bare"] if bare else []), stdout=subprocess.PIPE, text=True, check=True,
                          preexec_fn=lambda: os.sched_setaffinity(0, cpus))
    return json.loads(done.stdout.strip().splitlines()[-1]) | {"cpus": sorted(cpus)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10**7)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--data", type=Path, default=None, help="keep the generated Parquet files here")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--pin", action="store_true",
                        help="run each master in its own process on as many CPUs as executor threads")
    parser.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)  # run_pinned's child
    parser.add_argument("--bare", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(run(args.one, args.data, args.repeat, bare=args.bare)))
        return
    report: dict[str, Any] = {
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "rows": args.rows,
        "load_average": os.getloadavg(),
    }
    print(f"load average {report['load_average']} on {report['cpus']} CPUs")
    with tempfile.TemporaryDirectory(prefix="privnoise-bench-spark-") as tmp:
        data = args.data if args.data is not None else Path(tmp) / "meters"
        data.mkdir(parents=True, exist_ok=True)
        if written(data) != args.rows:
            for old in data.glob("meters-*.parquet"):
                old.unlink()
            seconds = generate(data, args.rows)
            print(f"{args.rows:.0e} rows written in {seconds:.1f} s", end=" ")
        size = sum(p.stat().st_size for p in data.iterdir())
        print(f"({args.rows:.0e} rows, {size / 2**20:.0f} MiB of Parquet)")
        measure = run_pinned if args.pin else run
        one = measure(1, data, args.repeat, bare=False)
        two = measure(2, data, args.repeat, bare=True)
    report |= {"local_1": one, "local_2": two, "load_average_after": os.getloadavg()}
    for name in ("group_mean", "bounded_group_mean"):
        scaling = one[f"{name}_s"] / two[f"{name}_s"]
        overhead = two[f"{name}_s"] / two[f"bare_{name}_s"]
        report[f"{name}_scaling"], report[f"{name}_overhead"] = scaling, overhead
        print(f"{name:18s}: local[1] {one[f'{name}_s']:7.2f} s, local[2] {two[f'{name}_s']:7.2f} s, scaling "
              f"{scaling:.2f} (target ≥ 1.7); bare Spark {two[f'bare_{name}_s']:7.2f} s, overhead {overhead:.2f} "
              "(target ≤ 1.3)")
    pinned = f"; local[1] on CPU {one['cpus']}, local[2] on CPUs {two['cpus']}" if args.pin else ""
    print(f"{two['partitions']} input partitions; load average after {report['load_average_after']}{pinned}")
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
