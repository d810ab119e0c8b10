"""privnoise on Spark side by side with Tumult Analytics and PipelineDP on the same data, the same ε and the same
local Spark master: time and error of the same counts, means and group-by means, in one run.

Usage::

    python benchmarks/bench_spark_peers.py --setup .peers          # once: the peers' own environment
    python benchmarks/bench_spark_peers.py --peers .peers [--rows 2000000] [--trials 5] [--json PATH]
        [--libraries privnoise,tumult,pipelinedp]

Each time is printed on stderr as soon as it is measured (``progress: …``), so that a long run at 10⁸ rows shows
its figures before the table.

The peers pin other versions of what privnoise uses (Tumult Analytics 0.21 wants numpy 1.26, pandas 1.5 and
pyspark 3.5; privnoise runs on numpy 2 and pyspark 4), so they live in an environment of their own, created by
``--setup DIR`` (``python -m venv DIR`` and ``pip install tmlt.analytics pipeline-dp``), never in the project's.
Their part runs as a subprocess of that environment's Python (the script below, :data:`PEERS`) and reports JSON.

The data: ``--rows`` readings (kWh rounded to 10 Wh) of households with about 30 readings each, every household
in one of four regions, in Parquet, generated here in a temporary directory. The privacy unit is the household,
each contributing at most K = 20 rows (chosen at random by each library its own way), all releases at ε = 1 (pure
DP, Laplace-type noise), values clamped to [0, 5] kWh:

* **count**: the number of (bounded) readings;
* **mean**: the mean kWh;
* **group-by mean**: the mean kWh per region, the four regions declared (public keys).

For each library, query and trial: the wall time of the call that returns the answer (a fresh session or engine
per trial, created before the clock starts for Tumult and privnoise, the engine's set-up included for PipelineDP,
whose pipeline runs at once), and the absolute error against the exact answer: for the count, the number of rows
that bounding keeps (Σ min(rows of the household, K), whichever rows are chosen); for the means, the mean of all
the data (the bias of bounding plus the noise). Printed: the median time and the mean absolute error over ``--trials``. Never asserted; the load
average is printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

BOUNDS = (0.0, 5.0)
REGIONS = ["north", "south", "east", "west"]
K = 20
EPSILON = 1.0
MASTER = "local[2]"

#: The peers' part, run by the peers' own Python: argv = data folder, trials; prints one JSON object.
PEERS = r'''
import json, sys, time
import numpy as np
from pyspark.sql import SparkSession, functions as F

data, trials, wanted = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(",")
BOUNDS, REGIONS, K, EPS = (0.0, 5.0), ["north", "south", "east", "west"], 20, 1.0
spark = (SparkSession.builder.master("local[2]").appName("peers").config("spark.ui.enabled", "false")
         .config("spark.driver.memory", "4g").config("spark.sql.shuffle.partitions", "4").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
frame = spark.read.parquet(data).cache()
frame.count()
out = {"versions": {}}

def timed(call, label):
    start = time.perf_counter()
    value = call()
    seconds = time.perf_counter() - start
    shown = value if not isinstance(value, list) else [tuple(r) for r in value]
    print(f"progress: {label} {seconds:.2f} s, answer {str(shown)[:300]}", file=sys.stderr, flush=True)
    return seconds, value

try:
    if "tumult" not in wanted:
        raise LookupError("not requested")
    import tmlt.analytics as ta
    from tmlt.analytics import (AddRowsWithID, KeySet, MaxRowsPerID, PureDPBudget, QueryBuilder, Session)
    out["versions"]["tumult"] = getattr(ta, "__version__", "")
    rows = {"count": [], "mean": [], "group_mean": []}
    for _ in range(trials):
        session = Session.from_dataframe(PureDPBudget(3 * EPS), "meters", frame, AddRowsWithID("household"))
        t, df = timed(lambda: session.evaluate(QueryBuilder("meters").enforce(MaxRowsPerID(K)).count(),
                                               PureDPBudget(EPS)).collect(), "tumult count")
        rows["count"].append((t, [float(df[0][0])]))
        t, df = timed(lambda: session.evaluate(
            QueryBuilder("meters").enforce(MaxRowsPerID(K)).average("kwh", *BOUNDS), PureDPBudget(EPS)).collect(),
            "tumult mean")
        rows["mean"].append((t, [float(df[0][0])]))
        keys = KeySet.from_dict({"region": REGIONS})
        t, df = timed(lambda: session.evaluate(
            QueryBuilder("meters").enforce(MaxRowsPerID(K)).groupby(keys).average("kwh", *BOUNDS),
            PureDPBudget(EPS)).collect(), "tumult group_mean")
        by = {r[0]: float(r[1]) for r in df}
        rows["group_mean"].append((t, [by[k] for k in REGIONS]))
    out["tumult"] = rows
except Exception as exc:
    out["tumult_error"] = f"{type(exc).__name__}: {exc}"

try:
    if "pipelinedp" not in wanted:
        raise LookupError("not requested")
    import pipeline_dp
    out["versions"]["pipelinedp"] = getattr(pipeline_dp, "__version__", "")
    rdd = frame.select("household", "region", "kwh").rdd.map(tuple).cache()
    rdd.count()

    def run(metric, partitions, by_region):
        accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=EPS, total_delta=0)
        engine = pipeline_dp.DPEngine(accountant, pipeline_dp.SparkRDDBackend(spark.sparkContext))
        params = pipeline_dp.AggregateParams(
            noise_kind=pipeline_dp.NoiseKind.LAPLACE, metrics=[metric], max_partitions_contributed=1,
            max_contributions_per_partition=K, min_value=BOUNDS[0], max_value=BOUNDS[1])
        extractors = pipeline_dp.DataExtractors(
            privacy_id_extractor=lambda r: r[0],
            partition_extractor=(lambda r: r[1]) if by_region else (lambda r: "all"),
            value_extractor=lambda r: r[2])
        result = engine.aggregate(rdd, params, extractors, public_partitions=partitions)
        accountant.compute_budgets()
        return dict(result.collect())

    rows = {"count": [], "mean": [], "group_mean": []}
    M = pipeline_dp.Metrics
    for _ in range(trials):
        t, r = timed(lambda: run(M.COUNT, ["all"], False), "pipelinedp count")
        rows["count"].append((t, [float(r["all"].count)]))
        t, r = timed(lambda: run(M.MEAN, ["all"], False), "pipelinedp mean")
        rows["mean"].append((t, [float(r["all"].mean)]))
        t, r = timed(lambda: run(M.MEAN, REGIONS, True), "pipelinedp group_mean")
        rows["group_mean"].append((t, [float(r[k].mean) for k in REGIONS]))
    out["pipelinedp"] = rows
except Exception as exc:
    out["pipelinedp_error"] = f"{type(exc).__name__}: {exc}"
spark.stop()
print(json.dumps(out))
'''


def generate(folder: Path, rows: int) -> dict[str, list[float]]:
    """Write the readings as Parquet; the exact answers on all the data (unbounded, clamped to BOUNDS)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(11)
    households = max(rows // 30, 1)
    region_of = rng.integers(0, 4, households)
    household = rng.integers(0, households, rows)
    kwh = np.round(rng.gamma(2.0, 0.4 * (1.0 + 0.1 * region_of[household])), 2)
    step = 1 << 21
    for number, first in enumerate(range(0, rows, step)):
        part = slice(first, min(first + step, rows))
        pq.write_table(pa.table({"household": household[part], "region": np.array(REGIONS)[region_of[household[part]]],
                                 "kwh": kwh[part]}), folder / f"meters-{number:04d}.parquet")
    clipped = np.clip(kwh, *BOUNDS)
    regions = region_of[household]
    return {
        "count": [float(np.minimum(np.bincount(household), K).sum())],  # the bounded count: Σ min(rows, K)
        "mean": [float(clipped.mean())],
        "group_mean": [float(clipped[regions == r].mean()) for r in range(4)],
    }


def _progress(label: str, start: float) -> float:
    """Seconds since ``start``, also printed at once on stderr (a long run shows each figure as it comes)."""
    seconds = time.perf_counter() - start
    print(f"progress: {label} {seconds:.2f} s", file=sys.stderr, flush=True)
    return seconds


def privnoise_part(data: Path, trials: int) -> dict[str, Any]:
    """The same three queries with privnoise on Spark (a fresh session per trial)."""
    import privnoise as pn
    from privnoise.spark import start

    spark = start(MASTER, app_name="privnoise-peers", shuffle_partitions=4, config={"spark.driver.memory": "4g"})
    spark.sparkContext.setLogLevel("ERROR")
    frame = spark.read.parquet(str(data)).cache()
    frame.count()
    rows: dict[str, list[Any]] = {"count": [], "mean": [], "group_mean": []}
    try:
        for _ in range(trials):
            session = pn.Session(frame, privacy_unit="household", max_contributions=K, epsilon=3 * EPSILON)
            start_time = time.perf_counter()
            count = session.count(epsilon=EPSILON)
            rows["count"].append((_progress("privnoise count", start_time), [float(count.value)]))
            start_time = time.perf_counter()
            mean = session.mean("kwh", bounds=BOUNDS, epsilon=EPSILON)
            rows["mean"].append((_progress("privnoise mean", start_time), [float(mean.value)]))
            start_time = time.perf_counter()
            grouped = session.group_by("region", keys=REGIONS).mean("kwh", bounds=BOUNDS, epsilon=EPSILON)
            values = dict(zip(grouped.keys, np.atleast_1d(grouped.value), strict=True))
            rows["group_mean"].append((_progress("privnoise group_mean", start_time),
                                       [float(values[k]) for k in REGIONS]))
    finally:
        spark.stop()
    return {"privnoise": rows, "versions": {"privnoise": pn.__version__}}


def setup(folder: Path) -> None:
    """The peers' own environment: a virtual environment with Tumult Analytics and PipelineDP."""
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    subprocess.run([str(folder / "bin" / "python"), "-m", "pip", "install", "-q", "tmlt.analytics", "pipeline-dp"],
                   check=True)
    print(f"peers installed in {folder}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--setup", type=Path, help="create the peers' environment in this folder and stop")
    parser.add_argument("--peers", type=Path, help="the peers' environment (made by --setup)")
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--libraries", default="privnoise,tumult,pipelinedp",
                        help="which libraries to run, comma-separated (default privnoise,tumult,pipelinedp)")
    args = parser.parse_args()
    if args.setup:
        setup(args.setup)
        return
    print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}; {args.rows} rows, {args.trials} trials, "
          f"{MASTER}, ε = {EPSILON} per query, at most {K} rows per household")
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "meters"
        data.mkdir()
        truth = generate(data, args.rows)
        wanted = args.libraries.split(",")
        results: dict[str, Any] = privnoise_part(data, args.trials) if "privnoise" in wanted else {"versions": {}}
        peers_wanted = ",".join(w for w in wanted if w != "privnoise")
        if args.peers and peers_wanted:
            python = str((args.peers / "bin" / "python").absolute())
            env = dict(os.environ, PYSPARK_PYTHON=python, PYSPARK_DRIVER_PYTHON=python)  # executors: the peers' too
            # their progress and errors on stderr as they come; their figures as JSON on stdout
            done = subprocess.run([python, "-c", PEERS, str(data), str(args.trials), peers_wanted],
                                  stdout=subprocess.PIPE, text=True, check=False, env=env)
            if done.returncode != 0 or not done.stdout.strip():
                print(f"peers failed (exit {done.returncode}; their stderr is above)")
            else:
                peers = json.loads(done.stdout.strip().splitlines()[-1])
                results["versions"].update(peers.pop("versions"))
                results.update(peers)
    print(f"versions: {results['versions']}")
    print(f"{'library':12} {'query':12} {'median time [s]':>16} {'mean |error|':>14} {'relative':>10}")
    summary: dict[str, Any] = {"rows": args.rows, "trials": args.trials, "versions": results["versions"]}
    for library in ("privnoise", "tumult", "pipelinedp"):
        if results.get(f"{library}_error") == "LookupError: not requested":
            continue
        if f"{library}_error" in results:
            print(f"{library:12} failed: {results[f'{library}_error']}")
            continue
        for query, runs in results.get(library, {}).items():
            times = [t for t, _ in runs]
            errors = [float(np.mean(np.abs(np.array(v) - truth[query]))) for _, v in runs]
            scale = float(np.mean(np.abs(truth[query])))
            summary[f"{library}/{query}"] = {"median_s": statistics.median(times), "error": float(np.mean(errors))}
            print(f"{library:12} {query:12} {statistics.median(times):16.3f} {np.mean(errors):14.4g} "
                  f"{np.mean(errors) / scale:10.2%}")
    print(f"load average {os.getloadavg()[0]:.2f} after the runs")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
