"""privnoise on Dask, in one run: scaling from one worker process to two, overhead over bare Dask, peak memory per
worker against the partition size.

Usage::

    python benchmarks/bench_dask.py [--rows 100000000] [--partition-rows 4194304] [--repeat 2] [--json PATH]

The data — ``--rows`` smart-meter readings (kwh rounded to 10 Wh, one of four regions) in Parquet files of 2²³ rows —
is generated here, in a temporary directory deleted afterwards. For one and then two worker processes (a fresh
``LocalCluster`` each, one thread per worker, loopback, no dashboard), the best of ``--repeat`` runs of:

* **group-by mean**: ``pn.Session(frame).group_by("region", keys=...).mean("kwh", bounds=(0, 60))`` — Dask
  aggregates per partition, the session adds the partial aggregates and draws the noise;
* **identity release**: ``pn.release(frame["kwh"], identity(n), Fisher-optimal Gaussian, out=dir)`` — noise added
  per partition on the workers, one Parquet file per partition published exactly once;
* with two workers, the **bare Dask** computations they are compared with: the same group-by sums and counts
  (``groupby().agg``) plus numpy Laplace noise on the client, and ``x + numpy normal noise`` per partition written
  with ``to_parquet`` — the same work without privacy (no clamping check, no hardening, no keyed streams, no
  exactly-once publication).

Printed, never asserted (targets from the Dask issue): scaling time(1 worker)/time(2 workers) ≥ 1.7 for both
computations on 10⁸ rows; overhead time(privnoise)/time(bare Dask) ≤ 1.3; the peak resident memory of each worker
(``ru_maxrss`` read in the worker after the runs) above its resident memory when idle, against the bytes of one
partition of the columns a task reads. The load average is printed before and after: the ratios mean little on a
busy machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
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
FILE_ROWS = 1 << 23


def generate(folder: Path, rows: int) -> float:
    """Write ``rows`` readings into Parquet files of FILE_ROWS rows; seconds taken."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    start = time.perf_counter()
    rng = np.random.default_rng(7)
    dictionary = pa.array(REGIONS)
    for number, first in enumerate(range(0, rows, FILE_ROWS)):
        size = min(FILE_ROWS, rows - first)
        kwh = np.round(rng.gamma(2.0, 0.4, size), 2)
        region = pa.DictionaryArray.from_arrays(pa.array(rng.integers(0, 4, size, dtype=np.int8)), dictionary)
        pq.write_table(pa.table({"kwh": kwh, "region": region}), folder / f"meters-{number:04d}.parquet",
                       row_group_size=1 << 20)
    return time.perf_counter() - start


def best(call: Callable[[], Any], repeat: int, cleanup: Callable[[], None] = lambda: None) -> float:
    """Seconds of the fastest of ``repeat`` calls (the first run warms the workers up and counts)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
        cleanup()
    return min(times)


def _warm() -> None:
    import privnoise.scale.release  # noqa: F401 - imported in every worker before anything is timed


def _peak_rss() -> int:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _current_rss() -> int:
    with open("/proc/self/statm", encoding="ascii") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def run(workers: int, data: Path, out: Path, rows: int, partition_rows: int, repeat: int, bare: bool) -> dict[str, Any]:
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    result: dict[str, Any] = {"workers": workers}
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                      memory_limit=0) as cluster, Client(cluster) as client:
        client.run(_warm)
        idle = client.run(_current_rss)
        frame = pn.io.dask_parquet(str(data), partition_rows=partition_rows)
        result["partitions"] = frame.npartitions

        def group_mean() -> Any:
            session = pn.Session(frame, epsilon=1.0)
            return session.group_by("region", keys=REGIONS).mean("kwh", bounds=BOUNDS, epsilon=1.0)

        q = pn.queries.identity(rows, bounds=BOUNDS)
        noise = pn.fisher.optimal_noise(q, quality_budget=0.01 * rows)
        target = out / "noisy"

        def identity() -> Any:
            return pn.release(frame["kwh"], q, noise, out=target)

        def remove() -> None:
            shutil.rmtree(target, ignore_errors=True)

        result["group_mean_s"] = best(group_mean, repeat)
        result["identity_s"] = best(identity, repeat, remove)
        result["peak_rss"] = list(client.run(_peak_rss).values())
        result["idle_rss"] = list(idle.values())
        if bare:
            clipped = frame.assign(kwh=frame["kwh"].clip(*BOUNDS))

            def bare_group_mean() -> Any:
                sums = clipped.groupby("region", observed=True)["kwh"].agg(["sum", "count"]).compute()
                rng = np.random.default_rng()
                return (sums["sum"] + rng.laplace(scale=120.0, size=len(sums))) / (
                    sums["count"] + rng.laplace(scale=2.0, size=len(sums)))

            def bare_identity() -> Any:
                def add_noise(values: Any) -> Any:
                    return values + np.random.default_rng().normal(scale=0.1, size=len(values))

                noisy = frame["kwh"].map_partitions(add_noise, meta=frame["kwh"]).to_frame("value")
                return dd.to_parquet(noisy, target, write_index=False)

            result["bare_group_mean_s"] = best(bare_group_mean, repeat)
            result["bare_identity_s"] = best(bare_identity, repeat, remove)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10**8)
    parser.add_argument("--partition-rows", type=int, default=1 << 22)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    report: dict[str, Any] = {
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "rows": args.rows,
        "partition_rows": args.partition_rows,
        "load_average": os.getloadavg(),
    }
    print(f"load average {report['load_average']} on {report['cpus']} CPUs")
    with tempfile.TemporaryDirectory(prefix="privnoise-bench-dask-") as tmp:
        data, out = Path(tmp) / "meters", Path(tmp) / "out"
        data.mkdir()
        out.mkdir()
        seconds = generate(data, args.rows)
        size = sum(p.stat().st_size for p in data.iterdir())
        print(f"{args.rows:.0e} rows written in {seconds:.1f} s ({size / 2**20:.0f} MiB of Parquet)")
        one = run(1, data, out, args.rows, args.partition_rows, args.repeat, bare=False)
        two = run(2, data, out, args.rows, args.partition_rows, args.repeat, bare=True)
    report |= {"one_worker": one, "two_workers": two, "load_average_after": os.getloadavg()}
    for name in ("group_mean", "identity"):
        scaling = one[f"{name}_s"] / two[f"{name}_s"]
        overhead = two[f"{name}_s"] / two[f"bare_{name}_s"]
        report[f"{name}_scaling"], report[f"{name}_overhead"] = scaling, overhead
        print(f"{name:11s}: 1 worker {one[f'{name}_s']:7.2f} s, 2 workers {two[f'{name}_s']:7.2f} s, scaling "
              f"{scaling:.2f} (target ≥ 1.7); bare Dask {two[f'bare_{name}_s']:7.2f} s, overhead {overhead:.2f} "
              "(target ≤ 1.3)")
    partition_bytes = args.partition_rows * 9  # the float64 kwh column and the int8 region codes of one partition
    for result in (one, two):
        for peak, idle in zip(result["peak_rss"], result["idle_rss"], strict=True):
            print(f"{result['workers']} worker(s): peak RSS {peak / 2**20:6.0f} MiB, idle {idle / 2**20:5.0f} MiB, "
                  f"growth {(peak - idle) / 2**20:6.0f} MiB = {(peak - idle) / partition_bytes:.1f} × one partition "
                  f"({partition_bytes / 2**20:.0f} MiB; {result['partitions']} partitions)")
    print(f"load average after {report['load_average_after']}")
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
