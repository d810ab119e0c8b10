"""``privnoise release "meters/*.parquet" ... --epsilon 1 --scheduler tcp://host:8786`` (and ``local``): the release
is aggregated by Dask and printed with the guarantee of the in-memory release."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from privnoise.cli import app
from tests.scale.conftest import write_meters

runner = CliRunner()
MEAN = ("--column", "kwh", "--query", "mean", "--bounds", "0,60", "--epsilon", "1", "--missing", "drop")


@pytest.fixture(scope="module")
def meters(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = write_meters(tmp_path_factory.mktemp("meters") / "meters")
    import pandas as pd

    pd.concat([pd.read_parquet(p) for p in sorted(folder.glob("*.parquet"))]).to_parquet(folder.parent / "all.parquet")
    return folder


def _release(*args: Any) -> Any:
    return runner.invoke(app, ["release", *map(str, args)])


def test_a_release_on_a_running_cluster_states_the_in_memory_guarantee(cluster: Any, meters: Path) -> None:
    address = cluster.client.scheduler.address
    on_dask = _release(f"{meters}/*.parquet", *MEAN, "--unit", "household", "--max-contributions", "20",
                       "--scheduler", address, "--json")
    assert on_dask.exit_code == 0, on_dask.output
    in_memory = _release(meters.parent / "all.parquet", *MEAN, "--unit", "household", "--max-contributions", "20",
                         "--json")
    a, b = json.loads(on_dask.stdout), json.loads(in_memory.stdout)
    assert a["guarantee"] == b["guarantee"] and a["noise"] == b["noise"] and a["query"] == b["query"]
    assert abs(a["value"] - b["value"]) < 2.0
    grouped = _release(f"{meters}/*.parquet", *MEAN, "--group-by", "region", "--keys", "north,south",
                       "--scheduler", address)
    assert grouped.exit_code == 0, grouped.output
    assert "north:" in grouped.output and "south:" in grouped.output and "(1, 0)-differential privacy" in grouped.output


def test_a_local_cluster_is_started_and_closed_by_the_command(meters: Path) -> None:
    result = _release(f"{meters}/*.parquet", *MEAN, "--scheduler", "local")
    assert result.exit_code == 0, result.output
    assert "mean:" in result.output and "95% interval" in result.output


def test_a_bad_scheduler_is_refused_before_anything_starts(meters: Path) -> None:
    result = _release(f"{meters}/*.parquet", *MEAN, "--scheduler", "http://host")
    assert result.exit_code == 2 and "tcp://HOST:PORT" in result.output
    fisher = _release(f"{meters}/*.parquet", "--column", "kwh", "--query", "mean", "--bounds", "0,60",
                      "--support=-1,1", "--scheduler", "local")
    assert fisher.exit_code == 2 and "--scheduler computes differentially private releases" in fisher.output
