"""``privnoise demo``: synthetic smart-meter data, optimal noise for four queries, releases, a trade-off plot.

The database x holds each household's mean daily consumption (kWh/day) over a week of synthetic half-hourly
readings (:mod:`privnoise.sample_data`), with the owner-declared bounds [0, 60] kWh/day. Four queries are
answered, each with the noise that minimises the Fisher information it carries about x (Farokhi & Sandberg):

1. the mean over households, with bounded cos² noise on [−0.2, 0.2] kWh/day (Problem 2);
2. the sample variance, a nonlinear query, with bounded cos² noise on [−2.5, 2.5] (kWh/day)² (Corollary 5);
   its guarantee is the worst case over the declared bounds;
3. the four regional means, a 4-output linear query, with Gaussian noise Σ ∝ (CCᵀ)^{1/2} under the quality
   budget Q ≤ 0.25 (kWh/day)² (Problem 4); the region labels are public metadata, the readings are private;
4. the total over households, with Gaussian noise for min Tr 𝓘 + ϱQ, ϱ = 5·10⁻⁴ (Problem 3, corrected).

The noise is drawn from the cryptographically strong default generator; only the synthetic data are seeded.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import __version__, queries
from ..fisher import fisher_guarantee, optimal_noise
from ..mechanisms import Laplace, Mechanism
from ..queries import LinearQuery, Query
from ..release import Release, release
from ..sample_data import DAILY_KWH_BOUNDS, REGIONS, SmartMeterData, smart_meter_data
from .render import goal_text

__all__ = ["DemoItem", "DemoResult", "run_demo"]

DAYS = 7
MEAN_SUPPORT = (-0.2, 0.2)
VARIANCE_SUPPORT = (-2.5, 2.5)
REGION_BUDGET = 0.25
TOTAL_WEIGHT = 5e-4


@dataclass(frozen=True)
class DemoItem:
    """One release of the demo."""

    name: str
    unit: str
    goal: dict[str, Any]
    release: Release
    labels: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "unit": self.unit, "goal": goal_text(self.goal)}
        if self.labels:
            out["labels"] = list(self.labels)
        return out | self.release.as_dict()


@dataclass(frozen=True)
class DemoResult:
    """What the demo produced: the data, the releases and the files written."""

    data: SmartMeterData
    items: list[DemoItem]
    csv: Path
    figure: Path
    summary: Path


def _mechanism(query: Query, **goal: Any) -> Mechanism:
    noise = optimal_noise(query, **goal)
    assert isinstance(noise, Mechanism)  # every goal used here gives data-independent noise
    return noise


def _release(x: np.ndarray, query: Query, goal: dict[str, Any]) -> Release:
    return release(x, query, _mechanism(query, **goal), out_of_bounds="clamp")


def _releases(data: SmartMeterData) -> list[DemoItem]:
    x = data.daily_means()
    n = x.size
    items = []
    goal: dict[str, Any] = {"support": MEAN_SUPPORT}
    items.append(
        DemoItem("mean", "kWh/day", goal, _release(x, queries.mean(n, bounds=DAILY_KWH_BOUNDS), goal))
    )
    goal = {"support": VARIANCE_SUPPORT}
    items.append(
        DemoItem(
            "variance", "(kWh/day)²", goal, _release(x, queries.variance(n, bounds=DAILY_KWH_BOUNDS), goal)
        )
    )
    matrix = data.region_matrix()
    present = np.flatnonzero(matrix.any(axis=1))  # a region without households has no mean to release
    labels = tuple(REGIONS[i] for i in present)
    region_query = LinearQuery(matrix[present], bounds=DAILY_KWH_BOUNDS, name="region_means")
    goal = {"quality_budget": REGION_BUDGET}
    items.append(DemoItem("regional means", "kWh/day", goal, _release(x, region_query, goal), labels))
    goal = {"quality_weight": TOTAL_WEIGHT}
    items.append(
        DemoItem("total", "kWh/day", goal, _release(x, queries.sum_query(n, bounds=DAILY_KWH_BOUNDS), goal))
    )
    return items


def _curve(query: Query, mechanisms: Sequence[Mechanism]) -> tuple[np.ndarray, np.ndarray]:
    """(√Q, √worst-record bound) for each mechanism, from the library's own guarantees."""
    pairs = [(m.second_moment(), fisher_guarantee(query, m).worst_record_bound) for m in mechanisms]
    q, b = np.array(pairs).T
    return np.sqrt(q), np.sqrt(b)


def plot_tradeoff(path: Path, n: int) -> Path:
    """The privacy–quality trade-off of the mean over ``n`` households, written as a PNG."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    query = queries.mean(n, bounds=DAILY_KWH_BOUNDS)
    half_widths = np.linspace(0.025, 0.5, 20)
    cosine = [_mechanism(query, support=(-h, h)) for h in half_widths]
    quality = [m.second_moment() for m in cosine]
    gaussian = [_mechanism(query, quality_budget=q) for q in quality]
    laplace = [Laplace(scale=math.sqrt(q / 2.0)) for q in quality]

    fig = Figure(figsize=(8.0, 5.6), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    curves: list[tuple[Sequence[Mechanism], str, dict[str, Any]]] = [
        (gaussian, "Gaussian, budget ϑ = Q (Problem 4: optimal unbounded noise)", {"color": "C0", "lw": 2.2}),
        (
            cosine,
            "cos² on [−h, h], h = 0.025 … 0.5 (Problem 2: optimal bounded noise)",
            {"color": "C1", "lw": 2.2, "marker": "o", "ms": 4},
        ),
        (
            laplace,
            "Laplace at the same Q (classical ε-DP noise, for reference)",
            {"color": "C2", "lw": 1.6, "ls": "--"},
        ),
    ]
    for mechs, label, style in curves:
        rms, floor = _curve(query, mechs)
        ax.plot(rms, floor, label=label, **style)
    demo = _mechanism(query, support=MEAN_SUPPORT)
    rms, floor = _curve(query, [demo])
    ax.plot(
        rms,
        floor,
        marker="*",
        ms=16,
        color="C3",
        ls="none",
        label=f"demo release: cos² on [{MEAN_SUPPORT[0]:g}, {MEAN_SUPPORT[1]:g}]",
    )
    ax.annotate(
        f"  RMS noise {rms[0]:.3f}\n  floor {floor[0]:.1f} kWh/day",
        (rms[0], floor[0]),
        textcoords="offset points",
        xytext=(8, -30),
        fontsize=9,
        color="C3",
    )
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.set_xlabel("RMS noise on the released mean, √Q  [kWh/day]   (lower = better quality)")
    ax.set_ylabel(
        "per-household error floor $\\sqrt{\\min_i 1/\\mathcal{I}_{ii}}$  [kWh/day]\n(higher = more privacy)"
    )
    ax.set_title(
        f"Privacy–quality trade-off: mean daily consumption of {n} households\n"
        "error floor of any unbiased estimate of one household, even knowing all others (eq. 7)",
        fontsize=11,
    )
    ax.legend(loc="upper left", fontsize=9, framealpha=0.9)
    fig.savefig(path)
    return path


def run_demo(output: Path, *, households: int = 500, seed: int = 2024) -> DemoResult:
    """Generate the data into ``output``, release the four answers, write tradeoff.png and demo.json."""
    import json

    output.mkdir(parents=True, exist_ok=True)
    data = smart_meter_data(households, DAYS, rng=seed)
    csv_path = data.to_csv(output / "smart_meter.csv")
    items = _releases(data)
    figure = plot_tradeoff(output / "tradeoff.png", households)
    summary = {
        "privnoise_version": __version__,
        "data": {
            "csv": csv_path.name,
            "households": data.households,
            "days": data.days,
            "readings": len(data),
            "seed": seed,
            "reading_bounds_kwh": list(data.bounds),
            "daily_mean_bounds_kwh_per_day": list(DAILY_KWH_BOUNDS),
            "database": "mean daily consumption of each household (kWh/day)",
        },
        "noise_rng": "cryptographically strong default (not seeded)",
        "releases": [item.as_dict() for item in items],
        "figure": figure.name,
    }
    path = output / "demo.json"
    path.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return DemoResult(data, items, csv_path, figure, path)
