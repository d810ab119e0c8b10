"""The scalable core against numpy, in one run: identity and mean releases, structured design, chunked releases.

Usage::

    python benchmarks/bench_core.py [--repeat 5] [--mean-records 1000000000] [--identity-records 100000000]
                                    [--skip-files] [--json PATH]

Printed, never asserted (targets from the core issue):

* identity release with Fisher-optimal Gaussian noise, hardened, at n = 10⁶ and 10⁷ (medians of interleaved rounds):
  time / numpy's ``x + rng.normal(size=n)`` (PCG64) ≤ 1.1, and time / the CSPRNG floor (the default generator's
  ``x + standard_normal(n)``, unhardened) ≤ 1.2;
* mean release at n = 10⁷ with Laplace noise: time / numpy's ``x.mean()`` plus one draw plus a bounds check
  (``x.min() >= lo and x.max() <= hi``) ≤ 2;
* ``optimal_noise(identity(10⁸), quality_budget=…)``: time < 10 ms, memory O(1) (tracemalloc peak);
* a 10⁹-record mean and a 10⁸-record identity release from Parquet files read in chunks (the identity written to
  a Parquet file chunk by chunk): peak RSS ≤ 1 GiB, measured in a fresh subprocess (``ru_maxrss``). The files are
  generated here, chunk by chunk, in a temporary directory that is deleted afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import privnoise as pn

BOUNDS = (0.0, 60.0)


def best_time(call: Callable[[], Any], repeat: int) -> float:
    """Seconds of the fastest of ``repeat`` calls (after one warm-up call)."""
    call()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


def identity_release(n: int, repeat: int) -> dict[str, float]:
    """Interleaved rounds (numpy, the CSPRNG floor, privnoise once per round), medians."""
    x = np.random.default_rng(0).uniform(*BOUNDS, n)
    q = pn.queries.identity(n, bounds=BOUNDS)
    noise = pn.fisher.optimal_noise(q, quality_budget=float(n))  # σ = 1 per household
    reference = np.random.default_rng(1)
    csprng = pn.random.default_rng()
    calls = {
        "numpy": lambda: x + reference.normal(size=n),
        "csprng": lambda: x + csprng.standard_normal(n),  # the floor: the same noise source, unhardened
        "privnoise": lambda: pn.release(x, q, noise),
    }
    for call in calls.values():
        call()
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(max(repeat, 1)):
        for name, call in calls.items():
            start = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - start)
    numpy_time, floor, ours = (statistics.median(times[name]) for name in ("numpy", "csprng", "privnoise"))
    return {
        "records": n, "numpy_s": numpy_time, "csprng_floor_s": floor, "privnoise_s": ours,
        "ratio": ours / numpy_time, "ratio_csprng_floor": ours / floor,
    }


def mean_release(n: int, repeat: int) -> dict[str, float]:
    x = np.random.default_rng(2).uniform(*BOUNDS, n)
    q = pn.queries.mean(n, bounds=BOUNDS)
    noise = pn.dp.laplace_for_epsilon(1.0, sensitivity=q.sensitivity("l1"))
    reference = np.random.default_rng(3)
    lo, hi = BOUNDS

    def numpy_mean() -> float:
        if not (x.min() >= lo and x.max() <= hi):
            raise ValueError("out of bounds")
        return float(x.mean() + reference.laplace(scale=float(noise.scale)))

    numpy_time = best_time(numpy_mean, repeat)
    ours = best_time(lambda: pn.release(x, q, noise), repeat)
    return {"records": n, "numpy_s": numpy_time, "privnoise_s": ours, "ratio": ours / numpy_time}


def structured_design(n: int, repeat: int) -> dict[str, float]:
    def design() -> Any:
        q = pn.queries.identity(n, bounds=BOUNDS)
        return pn.fisher.optimal_noise(q, quality_budget=float(n))

    seconds = best_time(design, repeat)
    tracemalloc.start()
    noise = design()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"records": n, "seconds": seconds, "peak_bytes": peak, "covariance": repr(noise.covariance_form())}


_WRITE = """
import sys, numpy as np, pyarrow as pa, pyarrow.parquet as pq
path, rows, chunk = sys.argv[1], int(sys.argv[2]), 1 << 22
rng = np.random.default_rng(7)
with pq.ParquetWriter(path, pa.schema([("kwh", pa.float64())]), compression="zstd") as writer:
    for start in range(0, rows, chunk):
        size = min(chunk, rows - start)
        values = np.round(rng.uniform(0.0, 60.0, size), 2)  # readings to 10 Wh, as meters report them
        writer.write_table(pa.table({"kwh": values}), row_group_size=1 << 20)
"""

_RELEASE = """
import resource, sys, time, json
import privnoise as pn
kind, path, rows, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
source = pn.io.chunks(path, "kwh", chunk_size=1 << 20)
start = time.perf_counter()
if kind == "mean":
    q = pn.queries.mean(rows, bounds=(0.0, 60.0))
    rel = pn.release(source, q, pn.dp.laplace_for_epsilon(1.0, sensitivity=q.sensitivity("l1")))
else:
    q = pn.queries.identity(rows, bounds=(0.0, 60.0))
    rel = pn.release(source, q, pn.fisher.optimal_noise(q, quality_budget=float(rows)), out=out)
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                  "guarantee": rel.guarantee.summary()}))
"""


def chunked_release(kind: str, rows: int, directory: Path) -> dict[str, Any]:
    data = directory / f"{kind}.parquet"
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", _WRITE, str(data), str(rows)], check=True)
    written = time.perf_counter() - start
    out = directory / f"{kind}-noisy.parquet"
    result = subprocess.run(
        [sys.executable, "-c", _RELEASE, kind, str(data), str(rows), str(out)],
        check=True, capture_output=True, text=True,
    )
    figures = json.loads(result.stdout)
    figures |= {"records": rows, "file_bytes": data.stat().st_size, "generate_s": written}
    data.unlink()
    out.unlink(missing_ok=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--mean-records", type=int, default=10**9)
    parser.add_argument("--identity-records", type=int, default=10**8)
    parser.add_argument("--skip-files", action="store_true", help="skip the chunked Parquet releases")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    report: dict[str, Any] = {
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "machine": platform.machine(),
        "load_average": os.getloadavg(),
    }
    for n in (10**6, 10**7):
        row = identity_release(n, args.repeat)
        report[f"identity_{n}"] = row
        print(f"identity release n = {n:.0e}: {row['privnoise_s'] * 1e3:8.1f} ms, numpy x + normal "
              f"{row['numpy_s'] * 1e3:8.1f} ms, ratio {row['ratio']:.2f} (target ≤ 1.1); CSPRNG normal + add "
              f"{row['csprng_floor_s'] * 1e3:8.1f} ms, ratio {row['ratio_csprng_floor']:.2f} (target ≤ 1.2)")
    row = mean_release(10**7, args.repeat)
    report["mean_10000000"] = row
    print(f"mean release n = 1e+07:     {row['privnoise_s'] * 1e3:8.1f} ms, numpy mean + draw + bounds "
          f"{row['numpy_s'] * 1e3:8.1f} ms, ratio {row['ratio']:.2f} (target ≤ 2)")
    row = structured_design(10**8, args.repeat)
    report["design_identity_1e8"] = row
    print(f"optimal_noise(identity(1e8)): {row['seconds'] * 1e3:.3f} ms (target < 10 ms), peak allocation "
          f"{row['peak_bytes'] / 1024:.1f} KiB: {row['covariance']}")
    if not args.skip_files:
        with tempfile.TemporaryDirectory(prefix="privnoise-bench-") as tmp:
            for kind, rows in (("mean", args.mean_records), ("identity", args.identity_records)):
                row = chunked_release(kind, rows, Path(tmp))
                report[f"chunked_{kind}"] = row
                print(f"chunked {kind} release of {rows:.0e} Parquet records: {row['seconds']:.1f} s, peak RSS "
                      f"{row['peak_rss_bytes'] / 2**20:.0f} MiB (target ≤ 1024 MiB); file "
                      f"{row['file_bytes'] / 2**30:.2f} GiB written in {row['generate_s']:.1f} s")
    report["load_average_after"] = os.getloadavg()
    print(f"load average before {report['load_average']}, after {report['load_average_after']}")
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
