"""The demo's owner: its configuration (``owner.toml``, :data:`OWNER_TOML`), its data file, its queriers and their
keys, and the commands that serve the demo again (:mod:`.demo` runs it)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from ..sample_data import SmartMeterData

__all__ = [
    "ANALYST_EPSILON",
    "ANALYST_FISHER_FLOOR",
    "DEFAULT_PORT",
    "EXPLORER",
    "EXPLORER_DELTA",
    "EXPLORER_EPSILON",
    "OWNER_TOML",
    "TARIFFS",
    "console_url",
    "create_demo_queriers",
    "try_commands",
    "write_households",
    "write_keys",
    "write_owner_files",
]

#: The port ``privnoise serve --config owner.toml`` serves the demo on unless ``--port`` says otherwise.
DEFAULT_PORT = 8000


OWNER_TOML = """\
# The owner's configuration of the demo (see docs/server.md).
[server]
database = "sqlite"          # embedded: privnoise.db next to this file

[datasets.households]
source = "households.csv"    # household,region,tariff,kwh
epsilon = 5.0                # global budget of the dataset, all queriers together
delta = 1e-5

[datasets.households.columns.kwh]
bounds = [0.0, 60.0]         # declared mean daily consumption bounds, kWh/day
out_of_bounds = "clamp"
fisher_floor = 4.0           # no record's Cramér–Rao bound below 4 (kWh/day)², all queriers together
step_queries = "allow"       # histograms, quantiles and filters on kwh (the floor then bounds the others)

[datasets.households.columns.region]
type = "text"
categories = ["north", "south", "east", "west"]   # public keys: `group by region`, `histogram(region)`

[datasets.households.columns.tariff]
type = "text"
categories = ["standard", "economy7", "green"]

[datasets.households.policies.count]
mechanism = "laplace"
epsilon = 0.1

[datasets.households.policies.sum]
mechanism = "laplace"
epsilon = 0.1

[datasets.households.policies.mean]
mechanism = "laplace"        # centre + noisy Σ(x − centre) / noisy count, ε split evenly
epsilon = 0.2

[datasets.households.policies.variance]
mechanism = "laplace"
epsilon = 0.3

[datasets.households.policies.histogram]
mechanism = "laplace"
epsilon = 0.1

[datasets.households.policies.quantile]
mechanism = "exponential"    # the exponential mechanism over the declared bounds
epsilon = 0.2

[datasets.households.policies.identity]
mechanism = "fisher-gaussian"   # every household's value with Gaussian noise, E w² = 25 (kWh/day)²
quality = 25.0
"""
#: The tariffs of the demo's households (public categories), drawn from the data's seed.
TARIFFS = ("standard", "economy7", "green")
ANALYST_EPSILON = 1.0
ANALYST_FISHER_FLOOR = 10.0
#: The querier the demo leaves with its whole budget (no Fisher floor of its own): the README's examples use it.
EXPLORER = "explorer"
EXPLORER_EPSILON = 2.0
EXPLORER_DELTA = 1e-6

def write_households(data: SmartMeterData, path: Path, *, seed: int = 0) -> Path:
    """households.csv: each household's region, tariff (drawn from ``seed``) and mean daily consumption."""
    x = data.daily_means()
    tariffs = np.random.default_rng([seed, 7]).choice(len(TARIFFS), size=len(x), p=[0.6, 0.3, 0.1])
    lines = ["household,region,tariff,kwh"] + [
        f"{i},{region},{TARIFFS[t]},{value:.4f}"
        for i, (region, t, value) in enumerate(zip(data.regions, tariffs, x, strict=True))
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_owner_files(output: Path, data: SmartMeterData, *, port: int = DEFAULT_PORT, seed: int = 0) -> Path:
    """households.csv and owner.toml in ``output`` (the demo's configuration, served on ``port``), and no database
    left from an earlier run; the configuration's path."""
    write_households(data, output / "households.csv", seed=seed)
    config_path = output / "owner.toml"
    config_path.write_text(OWNER_TOML.replace("[server]\n", f"[server]\nport = {port}\n", 1), encoding="utf-8")
    for suffix in ("", "-wal", "-shm"):
        (output / f"privnoise.db{suffix}").unlink(missing_ok=True)
    return config_path


def create_demo_queriers(engine: Any, config: Any) -> dict[str, str]:
    """The demo's keys: the admin's, the analyst's (ε = 1, Fisher floor 10, spent by the demo) and the explorer's
    (ε = 2, δ = 1e-6, no floor of its own, left whole for the reader)."""
    from ..server import store

    admin = store.ensure_admin(engine, config)
    analyst = store.create_querier(
        engine, config, "analyst", epsilon=ANALYST_EPSILON, delta=0, fisher_floor=ANALYST_FISHER_FLOOR
    )
    explorer = store.create_querier(engine, config, EXPLORER, epsilon=EXPLORER_EPSILON, delta=EXPLORER_DELTA)
    return {"admin": admin or "", "analyst": analyst, EXPLORER: explorer}


def write_keys(path: Path, keys: dict[str, str]) -> Path:
    """The demo's keys, in a file only its owner may read (keys are never printed)."""
    path.unlink(missing_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        out.write("# Keys of the demo (shown nowhere else): sign in to the console with one of them.\n")
        out.writelines(f'{name} = "{key}"\n' for name, key in keys.items())
    return path


def try_commands(config_path: Path, url: str) -> list[str]:
    r"""The shell commands that serve the demo again and query it as the explorer (whose key stays in keys.toml).

    >>> print("\n".join(try_commands(Path("out/owner.toml"), "http://127.0.0.1:8000/console/")))
    privnoise serve --config out/owner.toml &
    export PRIVNOISE_KEY=$(sed -n 's/^explorer = "\(.*\)"$/\1/p' out/keys.toml)
    privnoise query --server http://127.0.0.1:8000 "mean(kwh) group by region"
    """
    server = url.removesuffix("/console/")
    keys = config_path.parent / "keys.toml"
    return [
        f"privnoise serve --config {config_path} &",
        f"export PRIVNOISE_KEY=$(sed -n 's/^{EXPLORER} = \"\\(.*\\)\"$/\\1/p' {keys})",
        f"privnoise query --server {server} \"mean(kwh) group by region\"",
    ]


def console_url(config: Any) -> str:
    """The address of the web console that ``privnoise serve --config`` serves for ``config`` (its host and port)."""
    host = f"[{config.host}]" if ":" in config.host else config.host
    return f"http://{host}:{config.port}/console/"
