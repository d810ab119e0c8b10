"""An in-process query server with twin datasets: the same records imported into SQLite (``<name>``) and read
from partitioned Parquet by Dask (``<name>_dask``, ``engine = "dask"`` on a given scheduler) — or by Spark
(``<name>_spark``, ``engine = "spark"`` on a given master).

Built on the server tests' :class:`tests.server._lab.Lab` (in-process app, keys, ledger helpers).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import numpy as np

from tests.server._lab import DatasetDef, Lab, _policies

REGIONS = ("north", "south", "east")


def twin_rows(count: int, *, seed: int = 3) -> list[dict[str, Any]]:
    """Records with x ∈ [10, 60] (bounds reached), y ∈ [−5, 3], w ∈ [0.5, 2] and a region."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(5.0, 65.0, count)  # some outside the bounds: clamped in both engines
    x[:2] = (10.0, 60.0)
    return [
        {"x": float(x[i]), "y": float(rng.uniform(-5.0, 3.0)), "w": float(rng.uniform(0.5, 2.0)),
         "region": REGIONS[int(rng.integers(0, 3))]}
        for i in range(count)
    ]


def twin_dataset(name: str, rows: list[dict[str, Any]], family: str = "laplace") -> DatasetDef:
    # filters and bins on x and y compare the engines: those columns are open to step queries (their floor then
    # bounds the differentiable answers only), as in the server's own lab
    steps = {} if family.startswith("fisher-") else {"x": "allow", "y": "allow"}
    return DatasetDef(name, rows, {"x": (10.0, 60.0), "y": (-5.0, 3.0), "w": (0.5, 2.0)}, _policies(family), family,
                      step_queries=steps)


class TwinLab(Lab):
    """A :class:`Lab` whose every dataset also exists as ``<name>_dask`` (three Parquet files, engine "dask"), or
    ``<name>_spark`` with ``engine="spark"`` (``scheduler``: then the Spark master)."""

    def __init__(self, root: Path, datasets: list[DatasetDef], scheduler: str, *, files: int = 3,
                 engine: str = "dask") -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        from privnoise.server import store
        from privnoise.server.config import load_config

        self.root = root
        self.datasets = {d.name: d for d in datasets}
        root.mkdir(parents=True, exist_ok=True)
        text = '[server]\ndatabase = "sqlite"\n'
        for d in datasets:
            (root / f"{d.name}.csv").write_text(d.csv(), encoding="utf-8")
            folder = root / f"{d.name}_parts"
            folder.mkdir()
            columns = [*d.bounds, "region"]
            for i, chunk in enumerate(np.array_split(np.arange(len(d.rows)), files)):
                table = pa.table({c: [d.rows[j][c] for j in chunk] for c in columns})
                pq.write_table(table, folder / f"part-{i}.parquet", row_group_size=max(len(chunk) // 2, 1))
            text += d.toml()
            where = "scheduler" if engine == "dask" else "master"
            twin = d.toml().replace(f"[datasets.{d.name}", f"[datasets.{d.name}_{engine}").replace(
                f'source = "{d.name}.csv"',
                f'source = "{d.name}_parts/*.parquet"\nengine = "{engine}"\n{where} = "{scheduler}"',
            )
            text += twin
        self.path = root / "owner.toml"
        self.path.write_text(text, encoding="utf-8")
        self.config = load_config(self.path)
        self.engine = store.init_database(self.config)
        admin = store.ensure_admin(self.engine, self.config)
        self.keys = {} if admin is None else {"admin": admin}
        self._stack = contextlib.ExitStack()
