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
import importlib
import json
import os
import sys
import time
import types
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

import privnoise as pn
from privnoise.dp.families import LAPLACE
from privnoise.planning import calibrate

EPSILON = 1.0
BOUNDS = (0.0, 10.0)
BINS = [0.0, 1.0, 2.0, 3.0, 5.0, 10.0]


def _peer(name: str) -> tuple[Any, str]:
    """The peer module, or None and the reason it is not importable."""
    if name == "diffprivlib":
        try:
            import sklearn  # noqa: F401
        except ImportError:
            pass
        try:
            return importlib.import_module("diffprivlib.tools"), ""
        except ImportError as exc:
            if "diffprivlib" in sys.modules or "sklearn" in str(exc):
                sys.modules.pop("diffprivlib", None)
                sys.modules["diffprivlib.models"] = types.ModuleType("diffprivlib.models")
                try:
                    return importlib.import_module("diffprivlib.tools"), "models stubbed (scikit-learn mismatch)"
                except ImportError as again:
                    return None, f"not importable: {again}"
            return None, f"not importable: {exc}"
    if name == "pipeline_dp":
        try:
            return importlib.import_module("pipeline_dp"), ""
        except ImportError as exc:
            return None, f"not importable: {exc}"
    try:
        module = importlib.import_module("opendp.prelude")
    except ImportError as exc:
        return None, f"not importable: {exc}"
    module.enable_features("contrib")
    return module, ""


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
FLOOR_K = 3
FLOOR_KEYS = [0, 1, 2, 3]
FLOOR_EDGES = list(np.linspace(*BOUNDS, 21))  # 20 bins over the bounds


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


# -- the peers on the floor's queries: the same rows, the same question, the same ε ---------------------------------
FLOOR_DELTA = 1e-7  # the partition selection's δ for selected keys, as the session's group_by(delta=1e-7)
FLOOR_CANDIDATES = list(np.linspace(*BOUNDS, 1024))  # OpenDP's median candidates (as in the utility table)
PEERS = ("pipeline_dp", "opendp", "diffprivlib")
PEER_TITLES = {"pipeline_dp": "PipelineDP", "opendp": "OpenDP", "diffprivlib": "diffprivlib"}
PEER_NOTES = {
    "pipeline_dp": (
        "PipelineDP (LocalBackend, Laplace): the privacy unit is its privacy id; it bounds each unit itself (a random "
        f"sample of its rows) with max_contributions = k = {FLOOR_K} for count, mean, histogram and the declared-key "
        "group mean; add/remove one unit, n private (the mean is its own noisy sum over noisy count). Histogram: its "
        "COUNT over the 20 bins as public partitions (bin codes by numpy). Median: its PERCENTILE(50) (PyDP's quantile "
        f"tree), which refuses max_contributions, so one partition with ≤ {FLOOR_K} rows per unit (the same cap). "
        "Selected keys: its own partition selection (truncated geometric) at δ = 1e-7 inside the same ε = 1; its "
        "selection passes no partition bound when max_contributions is set (0.3.1), so there it bounds "
        f"max_partitions_contributed = {FLOOR_K}, max_contributions_per_partition = 1 (≤ {FLOOR_K} rows per unit, "
        "at most one per key). Input: the frame's columns as Python tuples (timed)."),
    "opendp": (
        "OpenDP (core vector API on numpy arrays; its measurements built and calibrated inside the timed call): it "
        f"bounds nothing per unit. The noise is calibrated to d_in = {FLOOR_K} rows (symmetric distance), i.e. ε = 1 "
        f"for a unit of ≤ {FLOOR_K} rows, but nothing caps a unit's rows: a unit of m rows gets m·ε/{FLOOR_K}, and "
        "every row is used (no random choice of rows). Count: make_count + Laplace; mean: clamped sum / count at ε/2 "
        "each (n private); histogram: make_count_by_categories on bin codes found by numpy; median: "
        "make_private_quantile over 1024 candidates; declared keys: numpy groups, then sum and count per group; "
        "selected keys: make_count_by + Laplace threshold (δ = 1e-7) at ε/2, then a sum per kept key at ε/2."),
    "diffprivlib": (
        "diffprivlib tools: no privacy unit, no per-unit bounding and no group-by. Each call gets ε/k = "
        f"{EPSILON / FLOOR_K:.3g}, i.e. ε = 1 for any {FLOOR_K} rows by group privacy, but nothing caps a unit's rows "
        "(a unit of m rows gets m·ε/k) and every row is used. Count: count_nonzero of x (every x > 0 here, add/remove "
        "a row); mean: tools.mean, which replaces a row of a public-size dataset (n public); histogram: "
        "tools.histogram; median: tools.median; declared keys: numpy groups, then tools.mean per group (each group's "
        "size treated as public; a row moving between groups is not covered); selected keys: n/a (no partition "
        "selection: taking the keys numpy finds would release them without noise)."),
}


def _floor_bins(x: np.ndarray) -> np.ndarray:
    """The 20-bin code of each value (values clamped to the bounds, as the session clamps them)."""
    return np.clip(np.searchsorted(FLOOR_EDGES, x, side="right") - 1, 0, len(FLOOR_EDGES) - 2)


def _pipeline_dp_floor(pdp: Any) -> dict[str, Callable[[Any], Any] | str]:
    """PipelineDP answering the floor's queries from the frame (its own bounding of each privacy id)."""

    def run(frame: Any, metric: Any, keys: Any, public: list[int] | None, **bounding: Any) -> list[Any]:
        unit, x = frame["unit"].tolist(), frame["x"].tolist()
        rows = list(zip(unit, x, strict=True)) if keys is None else list(zip(unit, keys.tolist(), x, strict=True))
        accountant = pdp.NaiveBudgetAccountant(total_epsilon=EPSILON, total_delta=0.0 if public else FLOOR_DELTA)
        engine = pdp.DPEngine(accountant, pdp.LocalBackend())
        params = pdp.AggregateParams(metrics=[metric], noise_kind=pdp.NoiseKind.LAPLACE, min_value=BOUNDS[0],
                                     max_value=BOUNDS[1], **bounding)
        extractors = pdp.DataExtractors(privacy_id_extractor=lambda row: row[0], value_extractor=lambda row: row[-1],
                                        partition_extractor=(lambda row: 0) if keys is None else (lambda row: row[1]))
        result = engine.aggregate(rows, params, extractors, public_partitions=public)
        accountant.compute_budgets()
        return list(result)  # the local backend is lazy: this runs it

    metrics, k = pdp.Metrics, {"max_contributions": FLOOR_K}
    bins = list(range(len(FLOOR_EDGES) - 1))
    return {
        "count": lambda f: run(f, metrics.COUNT, None, [0], **k),
        "mean": lambda f: run(f, metrics.MEAN, None, [0], **k),
        "histogram (20 bins)": lambda f: run(f, metrics.COUNT, _floor_bins(f["x"].to_numpy()), bins, **k),
        "median": lambda f: run(f, metrics.PERCENTILE(50), None, [0], max_partitions_contributed=1,
                                max_contributions_per_partition=FLOOR_K),
        "group mean, declared keys": lambda f: run(f, metrics.MEAN, f["region"].to_numpy(), FLOOR_KEYS, **k),
        "group mean, selected keys": lambda f: run(f, metrics.MEAN, f["region"].to_numpy(), None,
                                                   max_partitions_contributed=FLOOR_K,
                                                   max_contributions_per_partition=1),
    }


def _writable(column: Any, dtype: Any = np.float64) -> np.ndarray:
    """A column as a writable numpy array (OpenDP's FFI refuses pandas' read-only views; copied only then)."""
    return np.require(column.to_numpy(dtype=dtype), requirements=["C", "W"])


def _opendp_floor(dp: Any) -> dict[str, Callable[[Any], Any] | str]:
    """OpenDP's core vector API answering the floor's queries (noise for d_in = k rows; nothing bounded per unit)."""
    k = FLOOR_K
    floats = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    integers = dp.vector_domain(dp.atom_domain(T=dp.i64)), dp.symmetric_distance()

    def summed(share: float) -> Any:
        return dp.binary_search_chain(
            lambda s: dp.t.make_clamp(*floats, bounds=BOUNDS) >> dp.t.then_sum() >> dp.m.then_laplace(s),
            d_in=k, d_out=share)

    def counted(share: float) -> Any:
        return dp.binary_search_chain(lambda s: dp.t.make_count(*floats) >> dp.m.then_laplace(s), d_in=k, d_out=share)

    def mean(x: np.ndarray) -> float:
        return summed(EPSILON / 2)(x) / max(counted(EPSILON / 2)(x), 1)

    def histogram(f: Any) -> Any:
        chain = dp.binary_search_chain(
            lambda s: dp.t.make_count_by_categories(*integers, categories=list(range(len(FLOOR_EDGES) - 1)),
                                                    null_category=False) >> dp.m.then_laplace(s),
            d_in=k, d_out=EPSILON)
        return chain(_floor_bins(_writable(f["x"])).astype(np.int64))

    def median(f: Any) -> float:
        chain = dp.binary_search_chain(
            lambda s: dp.m.make_private_quantile(*floats, dp.max_divergence(), candidates=FLOOR_CANDIDATES,
                                                 alpha=0.5, scale=s),
            d_in=k, d_out=EPSILON)
        return chain(_writable(f["x"]))

    def grouped(x: np.ndarray, region: np.ndarray, keys: list[int]) -> list[float]:
        total, count = summed(EPSILON / 2), counted(EPSILON / 2)
        return [total(x[region == key]) / max(count(x[region == key]), 1) for key in keys]

    def selected(f: Any) -> dict[int, float]:
        x, region = _writable(f["x"]), _writable(f["region"], np.int64)
        by_key = dp.t.make_count_by(*integers)

        def released(scale: float, threshold: int) -> Any:
            return by_key >> dp.m.then_laplace_threshold(scale, threshold=threshold)

        scale = dp.binary_search(lambda s: released(s, 2**30).map(k)[0] <= EPSILON / 2, bounds=(1e-3, 1e6))
        threshold = dp.binary_search(lambda t: released(scale, t).map(k)[1] <= FLOOR_DELTA, T=int)
        counts = released(scale, threshold)(region)
        total = summed(EPSILON / 2)
        return {key: total(x[region == key]) / max(n, 1) for key, n in counts.items()}

    return {
        "count": lambda f: counted(EPSILON)(_writable(f["x"])),
        "mean": lambda f: mean(_writable(f["x"])),
        "histogram (20 bins)": histogram,
        "median": median,
        "group mean, declared keys": lambda f: grouped(_writable(f["x"]), _writable(f["region"], np.int64), FLOOR_KEYS),
        "group mean, selected keys": selected,
    }


def _diffprivlib_floor(tools: Any) -> dict[str, Callable[[Any], Any] | str]:
    """diffprivlib's tools answering the floor's queries at ε/k per call (no per-unit bounding, no group-by)."""
    import warnings

    share = EPSILON / FLOOR_K

    def quiet(run: Callable[[np.ndarray, np.ndarray], Any]) -> Callable[[Any], Any]:
        def answer(f: Any) -> Any:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return run(f["x"].to_numpy(), f["region"].to_numpy())

        return answer

    return {
        "count": quiet(lambda x, _: tools.count_nonzero(x, epsilon=share)),
        "mean": quiet(lambda x, _: tools.mean(x, epsilon=share, bounds=BOUNDS)),
        "histogram (20 bins)": quiet(lambda x, _: tools.histogram(x, epsilon=share, bins=len(FLOOR_EDGES) - 1,
                                                                  range=BOUNDS)),
        "median": quiet(lambda x, _: tools.median(x, epsilon=share, bounds=BOUNDS)),
        "group mean, declared keys": quiet(lambda x, r: [tools.mean(x[r == key], epsilon=share, bounds=BOUNDS)
                                                         for key in FLOOR_KEYS]),
        "group mean, selected keys": "n/a: no partition selection",
    }


def _floor_peers() -> dict[str, dict[str, Callable[[Any], Any] | str]]:
    """The importable peers' floor queries; the reason each other peer is missing printed."""
    builders = {"pipeline_dp": _pipeline_dp_floor, "opendp": _opendp_floor, "diffprivlib": _diffprivlib_floor}
    out = {}
    for name in PEERS:
        module, note = _peer(name)
        if module is None:
            print(f"  {name}: {note}, no columns")
            continue
        print(f"  {name}: available{'; ' + note if note else ''}")
        out[name] = builders[name](module)
    return out


def floor_table(sizes: list[int], rounds: int) -> dict[str, Any]:
    """Medians over ``rounds`` interleaved rounds of: a fresh privnoise session answering one query, pandas bounding
    and aggregating the same rows, a further query on a built session, and the numpy aggregate over bounded rows."""
    generator = np.random.default_rng(5)
    peers = _floor_peers()
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
            for peer, answers in peers.items():
                answer = answers[name]
                if callable(answer):
                    peer_times[peer][name].append(_clock(lambda a=answer: a(frame)))
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
        result["peers"] = _peer_table(peers, peer_times, table)
    return result


def _peer_table(peers: dict[str, dict[str, Callable[[Any], Any] | str]], peer_times: dict[str, dict[str, list[float]]],
                table: dict[str, dict[str, float]]) -> dict[str, Any]:
    """The peers' columns: medians of their rounds (seconds) and their ratio to privnoise's fresh session."""
    print(f"\nPeers on the same rows and question at ε = {EPSILON} (seconds, medians of the same rounds; ratio = "
          "peer / privnoise fresh)")
    print(f"{'query':27}{'privnoise':>10}" + "".join(f"{PEER_TITLES[p]:>21}" for p in peers))
    out: dict[str, Any] = {p: {} for p in peers}
    for name in FLOOR_QUERIES:
        fresh = table[name]["fresh"]
        cells = []
        for peer, answers in peers.items():
            answer = answers[name]
            if not callable(answer):
                out[peer][name] = {"seconds": None, "ratio_to_fresh": None, "note": answer}
                cells.append(f"{'n/a':>21}")
                continue
            seconds = float(np.median(peer_times[peer][name]))
            out[peer][name] = {"seconds": seconds, "ratio_to_fresh": seconds / fresh}
            cells.append(f"{seconds:12.4f}{seconds / fresh:8.1f}×")
        print(f"{name:27}{fresh:10.4f}" + "".join(cells))
    for peer, answers in peers.items():
        missing = [f"{name} ({answer})" for name, answer in answers.items() if not callable(answer)]
        if missing:
            print(f"  {PEER_TITLES[peer]}: " + "; ".join(missing))
    return {peer: {"queries": queries, "computes": PEER_NOTES[peer]} for peer, queries in out.items()}


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
    peers = {name: _peer(name) for name in ("diffprivlib", "opendp")}
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
