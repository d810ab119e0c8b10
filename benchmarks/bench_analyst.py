"""privnoise's analyst sessions side by side with OpenDP and diffprivlib, on the same data and ε, in one run.

Usage::

    pip install 'privnoise[peers]'            # OpenDP, diffprivlib, PipelineDP (not installed by `make test`)
    python benchmarks/bench_analyst.py [--trials 2000] [--rows 10000] [--groupby-rows 10000000] [--json PATH]
    python benchmarks/bench_analyst.py --floor [--floor-rows 1e6,1e7] [--rounds 5]

Printed, never asserted (targets from the analyst issue):

* utility at ε = 1 over ``--trials`` releases on one dataset (fresh noise each time): the mean's MSE, the
  histogram's MSE summed over bins, and the median's rank error |#{x < q̂} − n/2| (mean over trials) and its MSE
  in value units — privnoise equal or better;
* a group-by mean over ``--groupby-rows`` rows (four public keys, ε = 1): rows per second, privnoise ≥ 10× OpenDP;
* with ``--floor``, only the floor table, at ``--floor-rows`` rows with a privacy unit (~3.3 rows per unit, k = 3):
  count, mean, a 20-bin histogram, the median and a group mean with declared and with selected keys — a fresh
  session against pandas doing the same bounding without noise (the rows in a random order, then
  ``groupby().head(k)``) and the aggregate, and a further query on a built session against the numpy aggregate over
  the already bounded rows; ratios of medians over ``--rounds`` interleaved rounds, each ≤ 1.5× the target. In the
  same rounds, each importable peer answers the same queries from the same frame at the same ε: PipelineDP with the
  privacy unit as its privacy id and its own bounding (k rows per unit); OpenDP's core vector API and diffprivlib's
  tools, which bound nothing per unit (their noise is sized for k rows, so ε holds only for units of ≤ k rows) — their
  seconds and ratio to privnoise's fresh session in a second table, what each computes printed below it.

Neighbouring datasets. privnoise's session adds or removes one row (the number of rows stays private: the mean is a
noisy sum over a noisy count). diffprivlib's ``mean`` and OpenDP's sized ``make_mean`` replace one row of a dataset
whose size is public, a weaker notion under which the mean needs no count. The table therefore also shows
"privnoise, n public": the same session components (hardened Laplace on the centred sum, divided by the public n)
at the peers' own neighbouring notion — the like-for-like row. Histograms and quantiles use add/remove in all three.

diffprivlib 0.6's package import pulls in its scikit-learn models, which fail with scikit-learn ≥ 1.7; only its
``tools`` are used here, so the models module is stubbed before the import (said in the output when it happens).
OpenDP's polars front end needs the polars version it was built against; its core vector API is used instead, with
the grouping done by numpy beforehand (which favours OpenDP).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

import privnoise as pn
from privnoise.dp.families import LAPLACE
from privnoise.planning import calibrate

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the benchmark's own modules beside it
from analyst_peers import PEER_NOTES, floor_peers, peer, peer_table  # noqa: E402
from analyst_setup import BOUNDS, EPSILON, FLOOR_EDGES, FLOOR_K, FLOOR_KEYS  # noqa: E402

BINS = [0.0, 1.0, 2.0, 3.0, 5.0, 10.0]


def _data(rows: int, seed: int = 0) -> np.ndarray:
    return np.clip(np.random.default_rng(seed).gamma(2.0, 1.5, size=rows), *BOUNDS)


# -- utility --------------------------------------------------------------------------------------------------
def _privnoise_utility(x: np.ndarray, trials: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"mean": [], "mean_public_n": [], "histogram": [], "median": []}
    generator = pn.default_rng()
    half = (BOUNDS[1] - BOUNDS[0]) / 2.0
    centre = BOUNDS[0] + half
    public = calibrate("sum", LAPLACE, 2.0 * half, Fraction(EPSILON))  # replace-one: Δ = high − low
    for _ in range(trials):
        s = pn.Session({"x": x}, epsilon=3 * EPSILON)
        out["mean"].append(s.mean("x", bounds=BOUNDS, epsilon=EPSILON).value)
        out["histogram"].append(s.histogram("x", bins=BINS, epsilon=EPSILON).value)
        out["median"].append(s.quantile("x", 0.5, bounds=BOUNDS, epsilon=EPSILON).value)
        noisy = public.add(np.array([np.sum(x - centre)]), generator)[0]
        out["mean_public_n"].append(float(np.clip(centre + noisy / x.size, *BOUNDS)))
    return out


def _diffprivlib_utility(tools: Any, x: np.ndarray, trials: int) -> dict[str, list[float]]:
    import warnings

    out: dict[str, list[float]] = {"mean": [], "histogram": [], "median": []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(trials):
            out["mean"].append(float(tools.mean(x, epsilon=EPSILON, bounds=BOUNDS)))
            counts, _ = tools.histogram(x, epsilon=EPSILON, bins=BINS, range=BOUNDS)
            out["histogram"].append(counts.astype(float))
            out["median"].append(float(tools.quantile(x, 0.5, epsilon=EPSILON, bounds=BOUNDS)))
    return out


def _opendp_measurements(dp: Any, x: np.ndarray) -> dict[str, Any]:
    n = x.size
    space = dp.vector_domain(dp.atom_domain(bounds=BOUNDS), size=n), dp.symmetric_distance()
    mean = dp.binary_search_chain(
        lambda s: dp.t.make_mean(*space) >> dp.m.then_laplace(s), d_in=2, d_out=EPSILON
    )
    bins_space = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    hist = dp.binary_search_chain(
        lambda s: dp.t.make_count_by_categories(*bins_space, categories=list(range(len(BINS) - 1)),
                                                null_category=False) >> dp.m.then_laplace(s, mode="discrete"),
        d_in=1, d_out=EPSILON,
    ) if _has_mode(dp) else dp.binary_search_chain(
        lambda s: dp.t.make_count_by_categories(*bins_space, categories=list(range(len(BINS) - 1)),
                                                null_category=False) >> dp.m.then_laplace(s),
        d_in=1, d_out=EPSILON,
    )
    candidates = list(np.linspace(*BOUNDS, 1024))
    raw = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    median = dp.binary_search_chain(
        lambda s: dp.t.make_quantile_score_candidates(*raw, candidates=candidates, alpha=0.5)
        >> dp.m.then_report_noisy_max_gumbel(s, optimize="min"),
        d_in=1, d_out=EPSILON,
    )
    return {"mean": mean, "histogram": hist, "median": (median, candidates)}


def _has_mode(dp: Any) -> bool:
    import inspect

    return "mode" in inspect.signature(dp.m.then_laplace).parameters


def _opendp_utility(dp: Any, x: np.ndarray, trials: int) -> dict[str, list[float]]:
    measurements = _opendp_measurements(dp, x)
    values = x.tolist()
    codes = (np.clip(np.searchsorted(BINS, x, side="right") - 1, 0, len(BINS) - 2)).tolist()
    out: dict[str, list[float]] = {"mean": [], "histogram": [], "median": []}
    median, candidates = measurements["median"]
    for _ in range(trials):
        out["mean"].append(float(np.clip(measurements["mean"](values), *BOUNDS)))
        out["histogram"].append(np.maximum(np.asarray(measurements["histogram"](codes), dtype=float), 0.0))
        out["median"].append(float(candidates[median(values)]))
    return out


def _scores(x: np.ndarray, results: dict[str, list[Any]]) -> dict[str, float]:
    truth_mean = float(np.mean(x))
    truth_hist = np.histogram(x, bins=BINS)[0].astype(float)
    sorted_x = np.sort(x)
    scores = {}
    for key in ("mean", "mean_public_n"):
        if key in results:
            scores[key + " MSE"] = float(np.mean((np.asarray(results[key]) - truth_mean) ** 2))
    scores["histogram MSE (sum over bins)"] = float(np.mean(np.sum((np.asarray(results["histogram"]) - truth_hist) ** 2,
                                                                    axis=1)))
    medians = np.asarray(results["median"])
    ranks = np.searchsorted(sorted_x, medians, side="left")
    scores["median rank error (rows)"] = float(np.mean(np.abs(ranks - x.size / 2.0)))
    scores["median MSE"] = float(np.mean((medians - np.median(x)) ** 2))
    return scores


# -- throughput -----------------------------------------------------------------------------------------------
def _timed(run: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def _groupby_privnoise(table: Any) -> Any:
    s = pn.Session(table, epsilon=EPSILON)
    return s.group_by("region", keys=[0, 1, 2, 3]).mean("x", bounds=BOUNDS, epsilon=EPSILON).value


def _groupby_opendp(dp: Any, x: np.ndarray, region: np.ndarray) -> list[float]:
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    share = EPSILON / 2.0  # sum and count per group (one row changes one group's sum and count)
    total = dp.binary_search_chain(
        lambda s: dp.t.make_clamp(*space, bounds=BOUNDS) >> dp.t.then_sum() >> dp.m.then_laplace(s),
        d_in=1, d_out=share,
    )
    count = dp.binary_search_chain(
        lambda s: dp.t.make_count(*space) >> dp.m.then_laplace(s), d_in=1, d_out=share
    )
    means = []
    for key in range(4):
        part = x[region == key].tolist()
        means.append(total(part) / max(count(part), 1))
    return means


# -- the floor: privnoise against numpy/pandas doing the same work without noise ------------------------------------


def _floor_frame(rows: int) -> Any:
    """``rows`` rows, ~3.3 per privacy unit: a value and a key of four values."""
    import pandas as pd

    generator = np.random.default_rng(3)
    return pd.DataFrame({"unit": generator.integers(0, max(int(rows / 3.3), 1), rows), "x": _data(rows, seed=4),
                         "region": generator.integers(0, len(FLOOR_KEYS), rows)})


def _floor_session(frame: Any) -> Any:
    return pn.Session(frame, privacy_unit="unit", max_contributions=FLOOR_K, epsilon=1e9, delta=0.1)


FLOOR_QUERIES: dict[str, Callable[[Any], Any]] = {
    "count": lambda s: s.count(epsilon=EPSILON),
    "mean": lambda s: s.mean("x", bounds=BOUNDS, epsilon=EPSILON),
    "histogram (20 bins)": lambda s: s.histogram("x", bins=FLOOR_EDGES, epsilon=EPSILON),
    "median": lambda s: s.quantile("x", 0.5, bounds=BOUNDS, epsilon=EPSILON),
    "group mean, declared keys": lambda s: s.group_by("region", keys=FLOOR_KEYS).mean("x", bounds=BOUNDS,
                                                                                       epsilon=EPSILON),
    "group mean, selected keys": lambda s: s.group_by("region", delta=1e-7).mean("x", bounds=BOUNDS, epsilon=EPSILON),
}


def _bounded_frame(frame: Any, generator: np.random.Generator) -> Any:
    """pandas' contribution bounding: the rows in a random order, then the first k of each unit."""
    return frame.take(generator.permutation(len(frame))).groupby("unit", sort=False).head(FLOOR_K)


def _numpy_aggregates(x: np.ndarray, region: np.ndarray) -> dict[str, Callable[[], Any]]:
    """The same aggregates over already bounded rows (values clamped to the bounds, as the session clamps them)."""
    low, high = BOUNDS

    def grouped() -> Any:
        clamped = np.clip(x, low, high)
        return np.bincount(region, weights=clamped, minlength=4) / np.bincount(region, minlength=4)

    return {
        "count": lambda: x.size,
        "mean": lambda: float(np.clip(x, low, high).mean()),
        "histogram (20 bins)": lambda: np.histogram(np.clip(x, low, high), bins=20, range=BOUNDS)[0],
        "median": lambda: float(np.median(np.clip(x, low, high))),
        "group mean, declared keys": grouped,
        "group mean, selected keys": grouped,
    }


def _pandas_fresh(frame: Any, query: str, generator: np.random.Generator) -> Any:
    """pandas doing the fresh session's work without noise: bound (random order, head(k)), then the aggregate."""
    bounded = _bounded_frame(frame, generator)
    if query == "group mean, declared keys":
        bounded = bounded[bounded["region"].isin(FLOOR_KEYS)]
    x = bounded["x"].to_numpy()
    return _numpy_aggregates(x, bounded["region"].to_numpy())[query]()


def _clock(run: Callable[[], Any]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def floor_table(sizes: list[int], rounds: int) -> dict[str, Any]:
    """Medians over ``rounds`` interleaved rounds of: a fresh privnoise session answering one query, pandas bounding
    and aggregating the same rows, a further query on a built session, and the numpy aggregate over bounded rows."""
    generator = np.random.default_rng(5)
    peers = floor_peers()
    out = {f"{rows}": _floor_at(rows, rounds, generator, peers) for rows in sizes}
    if peers:
        print("\nWhat each peer computes:")
        for name in peers:
            print(f"  {PEER_NOTES[name]}")
    return out


def _floor_at(rows: int, rounds: int, generator: np.random.Generator,
              peers: dict[str, dict[str, Callable[[Any], Any] | str]] | None = None) -> dict[str, Any]:
    peers = peers or {}
    frame = _floor_frame(rows)
    built = _floor_session(frame)
    FLOOR_QUERIES["count"](built)  # the bounding is done here, once
    bounded = _bounded_frame(frame, generator)
    x, region = bounded["x"].to_numpy(), bounded["region"].to_numpy()
    floors = _numpy_aggregates(x, region)
    times: dict[str, dict[str, list[float]]] = {q: {"fresh": [], "pandas": [], "built": [], "numpy": []}
                                                for q in FLOOR_QUERIES}
    peer_times: dict[str, dict[str, list[float]]] = {p: {q: [] for q in FLOOR_QUERIES} for p in peers}
    loads = []
    for _ in range(rounds):
        loads.append(os.getloadavg()[0])
        for name, query in FLOOR_QUERIES.items():
            times[name]["fresh"].append(_clock(lambda q=query: q(_floor_session(frame))))
            times[name]["pandas"].append(_clock(lambda n=name: _pandas_fresh(frame, n, generator)))
            times[name]["built"].append(_clock(lambda q=query: q(built)))
            times[name]["numpy"].append(_clock(floors[name]))
            for who, answers in peers.items():
                answer = answers[name]
                if callable(answer):
                    peer_times[who][name].append(_clock(lambda a=answer: a(frame)))
    print(f"\nFloor at {rows:.0e} rows, {rows / int(rows / 3.3):.1f} rows per unit, k = {FLOOR_K}; medians of "
          f"{rounds} interleaved rounds (seconds); load average {min(loads):.2f}–{max(loads):.2f}")
    print(f"{'query':27}{'fresh':>9}{'pandas':>9}{'ratio':>7}   {'built':>9}{'numpy':>9}{'ratio':>11}")
    table = {}
    for name, measured in times.items():
        m = {key: float(np.median(values)) for key, values in measured.items()}
        fresh_ratio, built_ratio = m["fresh"] / m["pandas"], m["built"] / max(m["numpy"], 1e-9)
        table[name] = m | {"fresh_ratio": fresh_ratio, "built_ratio": built_ratio}
        print(f"{name:27}{m['fresh']:9.4f}{m['pandas']:9.4f}{fresh_ratio:6.2f}×   {m['built']:9.5f}"
              f"{m['numpy']:9.5f}{built_ratio:10.2f}×")
    print("  targets (not asserted): each ratio ≤ 1.5×. fresh: a new Session answering the query (table, bounding,"
          " noise);\n  pandas: random order + groupby().head(k) + the aggregate; built: the query on a session that "
          "has bounded once;\n  numpy: the aggregate over the bounded rows (values clamped to the bounds); count's "
          "floor is len().")
    result: dict[str, Any] = {"load_average": loads, "queries": table}
    if peers:
        result["peers"] = peer_table(peers, peer_times, table)
    return result


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--groupby-rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=str, default=None)
    parser.add_argument("--floor", action="store_true", help="print only the floor table (privnoise against pandas)")
    parser.add_argument("--floor-rows", type=str, default="1e6,1e7", help="row counts of the floor table")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds of the floor table")
    args = parser.parse_args(argv)
    if args.floor:
        print(f"privnoise {pn.__version__}; load average {os.getloadavg()[0]:.2f}")
        floor = floor_table([int(float(r)) for r in args.floor_rows.split(",")], args.rounds)
        if args.json:
            with open(args.json, "w", encoding="utf-8") as handle:
                json.dump({"floor": floor}, handle, indent=2)
        return {"floor": floor}

    load = os.getloadavg()[0]
    print(f"privnoise {pn.__version__}; ε = {EPSILON}; load average {load:.2f}")
    peers = {name: peer(name) for name in ("diffprivlib", "opendp")}
    for name, (module, note) in peers.items():
        print(f"  {name}: {'available' if module is not None else ''}{'; ' if module and note else ''}{note}")

    x = _data(args.rows)
    results = {"privnoise": _scores(x, _privnoise_utility(x, args.trials))}
    if peers["diffprivlib"][0] is not None:
        results["diffprivlib"] = _scores(x, _diffprivlib_utility(peers["diffprivlib"][0], x, args.trials))
    if peers["opendp"][0] is not None:
        results["opendp"] = _scores(x, _opendp_utility(peers["opendp"][0], x, args.trials))
    metrics = list(results["privnoise"])
    print(f"\nUtility on {args.rows} rows, {args.trials} releases each (lower is better)")
    print(f"{'metric':34}" + "".join(f"{name:>14}" for name in results))
    for metric in metrics:
        cells = "".join(f"{results[name].get(metric, float('nan')):>14.4g}" for name in results)
        print(f"{metric:34}{cells}")
    print("  mean: privnoise adds/removes a row (n private); 'mean_public_n' and the peers replace a row (n public).")

    region = np.random.default_rng(1).integers(0, 4, size=args.groupby_rows)
    values = _data(args.groupby_rows, seed=2)
    import pyarrow as pa

    table = pa.table({"region": region, "x": values})
    throughput = {"privnoise": args.groupby_rows / _timed(lambda: _groupby_privnoise(table), args.repeat)}
    if peers["opendp"][0] is not None:
        dp = peers["opendp"][0]
        throughput["opendp"] = args.groupby_rows / _timed(lambda: _groupby_opendp(dp, values, region), 1)
    print(f"\nGroup-by mean over {args.groupby_rows:.0e} rows, 4 public keys (rows per second, higher is better)")
    for name, rate in throughput.items():
        print(f"  {name:12} {rate:14.4g}")
    if "opendp" in throughput:
        print(f"  ratio privnoise / OpenDP: {throughput['privnoise'] / throughput['opendp']:.1f}×")
    summary = {"load_average": load, "utility": results, "groupby_rows_per_second": throughput,
               "peers": {name: note or "available" for name, (_, note) in peers.items()}}
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(summary, handle, indent=2)
    return summary


if __name__ == "__main__":
    main()
