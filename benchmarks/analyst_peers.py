"""The peers of ``bench_analyst.py``'s floor table (PipelineDP, OpenDP, diffprivlib): each answers the floor's
six queries from the same frame at the same ε, and says what it computes (its neighbours, its bounding or none).
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable
from typing import Any

import numpy as np
from analyst_setup import BOUNDS, EPSILON, FLOOR_EDGES, FLOOR_K, FLOOR_KEYS


def peer(name: str) -> tuple[Any, str]:
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


def floor_peers() -> dict[str, dict[str, Callable[[Any], Any] | str]]:
    """The importable peers' floor queries; the reason each other peer is missing printed."""
    builders = {"pipeline_dp": _pipeline_dp_floor, "opendp": _opendp_floor, "diffprivlib": _diffprivlib_floor}
    out = {}
    for name in PEERS:
        module, note = peer(name)
        if module is None:
            print(f"  {name}: {note}, no columns")
            continue
        print(f"  {name}: available{'; ' + note if note else ''}")
        out[name] = builders[name](module)
    return out


def peer_table(peers: dict[str, dict[str, Callable[[Any], Any] | str]], peer_times: dict[str, dict[str, list[float]]],
                table: dict[str, dict[str, float]]) -> dict[str, Any]:
    """The peers' columns: medians of their rounds (seconds) and their ratio to privnoise's fresh session."""
    print(f"\nPeers on the same rows and question at ε = {EPSILON} (seconds, medians of the same rounds; ratio = "
          "peer / privnoise fresh)")
    print(f"{'query':27}{'privnoise':>10}" + "".join(f"{PEER_TITLES[p]:>21}" for p in peers))
    out: dict[str, Any] = {p: {} for p in peers}
    for name in table:
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
