"""``privnoise demo``: the trusted query server end to end on the embedded default, plus the trade-off plot.

1. Synthetic smart-meter data (:mod:`privnoise.sample_data`): each household's mean daily consumption
   (kWh/day, declared bounds [0, 60]), its region and its tariff, written to ``households.csv``.
2. An ``owner.toml`` declaring the dataset, its bounds, public categories and a policy per query kind (every
   query of the README and of docs/server.md runs on it), and a fresh embedded SQLite database next to it; one
   analyst with ε = 1 and a Fisher floor of 10 (kWh/day)², whom the demo spends, and an explorer with ε = 2 whom
   it leaves whole for the reader (:func:`try_commands`).
3. The server starts in-process on a free loopback port; the analyst's queries go through the HTTP client
   (:class:`privnoise.client.Client`) until the budgets are exhausted and the server refuses; every answer is
   printed with its guarantee and the remaining budget. The server then stops.
4. Household-level releases in the library (:mod:`privnoise._cli.demo_analyst`): a :class:`privnoise.Session`
   over the half-hourly readings (kWh per half hour, not the server's kWh/day) with the household as privacy unit
   (at most 48 × days readings each).
5. The privacy–quality trade-off plot of the mean (Farokhi & Sandberg) and ``demo.json``.
6. The keys (admin, analyst, explorer) go to ``keys.toml`` (readable by its owner only), never to the output: with
   ``privnoise serve --config owner.toml`` the web console at the configuration's address (:func:`console_url`;
   ``--port`` of the demo sets its port) shows all of it to the owner.

The noise is drawn from the cryptographically strong default generator; only the synthetic data are seeded.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import queries
from .._version import __version__
from ..fisher import fisher_guarantee, optimal_noise
from ..mechanisms import Laplace, Mechanism
from ..queries import Query
from ..sample_data import DAILY_KWH_BOUNDS, SmartMeterData, smart_meter_data
from .demo_analyst import BUDGET, READING_BOUNDS, household_releases
from .demo_setup import (
    DEFAULT_PORT,
    EXPLORER,
    EXPLORER_DELTA,
    EXPLORER_EPSILON,
    console_url,
    create_demo_queriers,
    try_commands,
    write_keys,
    write_owner_files,
)

__all__ = [
    "DemoItem",
    "DemoResult",
    "console_url",
    "create_demo_queriers",
    "run_demo",
    "server_in_process",
    "try_commands",
    "write_owner_files",
]

DAYS = 7
MEAN_SUPPORT = (-0.2, 0.2)
QUERIES = (
    "mean(kwh)",
    "mean(kwh) where region = 'north'",
    "count() where region = 'north'",
    "identity(kwh)",
    "identity(kwh)",
    "identity(kwh)",
    "variance(kwh)",
    "mean(kwh) where region = 'south'",
    "mean(kwh) where region = 'east'",
    "mean(kwh) where region = 'west'",
)


@dataclass(frozen=True)
class DemoItem:
    """One analyst query and what the server said: an answer (dict) or a refusal."""

    query: str
    answer: dict[str, Any] | None
    refusal: str | None = None

    def as_dict(self) -> dict[str, Any]:
        if self.answer is None:
            return {"query": self.query, "refused": self.refusal}
        return {"query": self.query} | {
            k: self.answer[k] for k in ("value", "guarantee", "charged", "remaining")
        }


@dataclass(frozen=True)
class DemoResult:
    """What the demo produced: the data, the server's answers and the files written."""

    data: SmartMeterData
    items: list[DemoItem]
    csv: Path
    config: Path
    figure: Path
    summary: Path
    url: str
    keys: Path
    household: list[dict[str, Any]] = field(default_factory=list)
    console: str = ""  # where ``privnoise serve --config owner.toml`` serves the console


def _mechanism(query: Query, **goal: Any) -> Mechanism:
    noise = optimal_noise(query, **goal)
    assert isinstance(noise, Mechanism)  # every goal used here gives data-independent noise
    return noise


@contextmanager
def server_in_process(app: Any) -> Iterator[str]:
    """Run ``app`` with uvicorn in a thread on a free loopback port; stop it cleanly at exit."""
    import socket
    import threading
    import time

    import uvicorn

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(
            app, host="127.0.0.1", port=port, log_level="warning", access_log=False, log_config=None
        )
    )
    thread = threading.Thread(target=server.run, name="privnoise-demo-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30.0
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the demo server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30.0)


def run_server_session(
    output: Path, data: SmartMeterData, *, port: int = DEFAULT_PORT, seed: int = 0
) -> tuple[list[DemoItem], Path, str, str]:
    """Owner set-up, in-process server, the analyst's queries until the budget is exhausted; the items, the
    configuration, the in-process server's URL and the console's address when served with ``privnoise serve``."""
    from ..client import BudgetRefused, Client
    from ..server import store
    from ..server.app import create_app
    from ..server.config import load_config

    config_path = write_owner_files(output, data, port=port, seed=seed)
    config = load_config(config_path)
    engine = store.init_database(config)
    keys = create_demo_queriers(engine, config)
    key = keys["analyst"]
    write_keys(output / "keys.toml", keys)
    items: list[DemoItem] = []
    try:
        with server_in_process(create_app(config, engine=engine)) as url, Client(url, key) as client:
            for text in QUERIES:
                try:
                    items.append(DemoItem(text, client.query(text)))
                except BudgetRefused as exc:
                    items.append(DemoItem(text, None, str(exc.body.get("error", "refused"))))
    finally:
        engine.dispose()
    return items, config_path, url, console_url(config)


def _curve(query: Query, mechanisms: Sequence[Mechanism]) -> tuple[np.ndarray, np.ndarray]:
    """(√Q, √worst-record bound) for each mechanism, from the library's own guarantees."""
    pairs = [(m.second_moment(), fisher_guarantee(query, m).worst_record_bound) for m in mechanisms]
    q, b = np.array(pairs).T
    return np.sqrt(q), np.sqrt(b)


def plot_tradeoff(path: Path, n: int) -> Path:
    """The privacy–quality trade-off of the mean over ``n`` households, written as a PNG."""
    from ..plotting import figure, save

    query = queries.mean(n, bounds=DAILY_KWH_BOUNDS)
    half_widths = np.linspace(0.025, 0.5, 20)
    cosine = [_mechanism(query, support=(-h, h)) for h in half_widths]
    quality = [m.second_moment() for m in cosine]
    gaussian = [_mechanism(query, quality_budget=q) for q in quality]
    laplace = [Laplace(scale=math.sqrt(q / 2.0)) for q in quality]

    fig = figure(figsize=(8.0, 5.6), dpi=110, layout="constrained")
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
    save(fig, path)
    return path


def run_demo(output: Path, *, households: int = 500, seed: int = 2024, port: int = DEFAULT_PORT) -> DemoResult:
    """Data, owner.toml (served on ``port`` by ``privnoise serve``), the server session, tradeoff.png and demo.json,
    all in ``output``."""
    import json

    output.mkdir(parents=True, exist_ok=True)
    data = smart_meter_data(households, DAYS, rng=seed)
    csv_path = data.to_csv(output / "smart_meter.csv")
    items, config_path, url, console = run_server_session(output, data, port=port, seed=seed)
    household = household_releases(csv_path, days=data.days, bounds=READING_BOUNDS)
    figure = plot_tradeoff(output / "tradeoff.png", households)
    summary = {
        "privnoise_version": __version__,
        "data": {
            "csv": csv_path.name,
            "households_csv": "households.csv",
            "households": data.households,
            "days": data.days,
            "readings": len(data),
            "seed": seed,
            "reading_bounds_kwh_per_half_hour": list(data.bounds),
            "analyst_reading_bounds_kwh_per_half_hour": list(READING_BOUNDS),
            "daily_mean_bounds_kwh_per_day": list(DAILY_KWH_BOUNDS),
            "database": "mean daily consumption of each household (kWh/day), embedded SQLite",
        },
        "server": {"config": config_path.name, "url": url, "database": "privnoise.db"},
        "console": {"url": console, "serve": f"privnoise serve --config {config_path}", "keys": "keys.toml"},
        "try": {"querier": EXPLORER, "epsilon": EXPLORER_EPSILON, "delta": EXPLORER_DELTA,
                "commands": try_commands(config_path, console)},
        "noise_rng": "cryptographically strong default (not seeded)",
        "releases": [item.as_dict() for item in items],
        "household_level_releases": {
            "privacy_unit": "household",
            "unit_of_the_values": "kWh per half hour (the readings), not the kWh/day of the server's data",
            "max_contributions": 48 * data.days,
            "budget": {"epsilon": BUDGET[0], "delta": BUDGET[1]},
            "releases": household,
        },
        "figure": figure.name,
    }
    path = output / "demo.json"
    path.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return DemoResult(data, items, csv_path, config_path, figure, path, url, output / "keys.toml", household, console)
