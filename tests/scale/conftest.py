"""Fixtures of the Dask tests: a ``LocalCluster`` of two worker processes per test module (loopback, no dashboard),
and small partitioned Parquet datasets written into a temporary directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed")
pytest.importorskip("pyarrow")


@pytest.fixture(scope="module")
def cluster() -> Iterator[object]:
    """A client of a fresh two-worker LocalCluster, the default scheduler while the module's tests run."""
    from privnoise.scale.cluster import connect

    with connect("local", workers=2, owner="tests") as connection:
        yield connection


def write_meters(folder: Path, *, files: int = 3, rows: int = 4000, row_group: int = 1000, seed: int = 0,
                 households: int = 150) -> Path:
    """``files`` Parquet files of ``rows`` readings each: kwh in [−5, 70] (some missing), region (some missing),
    household ids spread over every file; returns the folder."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    for i in range(files):
        kwh = rng.uniform(-5.0, 70.0, rows)
        kwh[rng.random(rows) < 0.03] = np.nan
        region = rng.choice(np.array(["north", "south", "east"], dtype=object), rows)
        region[rng.random(rows) < 0.02] = None
        table = pa.table({
            "kwh": pa.array(kwh, from_pandas=True),
            "region": pa.array(region.tolist(), type=pa.string()),
            "household": rng.integers(0, households, rows),
        })
        pq.write_table(table, folder / f"meters-{i:02d}.parquet", row_group_size=row_group)
    return folder
