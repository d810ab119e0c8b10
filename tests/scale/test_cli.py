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


@pytest.fixture(scope="module")
def sparse_meters(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2,000 households over 12,000 readings: no household has more than 40 readings (checked in the test)."""
    folder = write_meters(tmp_path_factory.mktemp("sparse") / "meters", households=2000)
    import pandas as pd

    pd.concat([pd.read_parquet(p) for p in sorted(folder.glob("*.parquet"))]).to_parquet(folder.parent / "all.parquet")
    return folder


def test_a_release_on_a_running_cluster_states_the_in_memory_guarantee(cluster: Any, sparse_meters: Path) -> None:
    """Same guarantee and noise law on Dask and in memory; both values within the noise of the exact mean.

    With at most 40 readings per household, bounding to 40 keeps every row, so both paths release the mean of the
    same clamped data. At ε = 1000 the (midpoint-centred) sum's noise is Laplace(b = 40·30/500 = 2.4) and the
    count's Laplace(0.08): with probability 1 − 2e-6 each stays below 13.8·b (ln 1e6 = 13.8), which moves a mean
    over about 11,600 readings by less than 0.004. The tolerance 0.02 holds both paths' noise; values left unclamped would move
    the mean by 0.49 (the exact aggregates of both paths are compared in ``test_session.py``).
    """
    import pandas as pd

    frame = pd.read_parquet(sparse_meters.parent / "all.parquet").dropna(subset=["kwh"])
    assert int(frame.groupby("household").size().max()) <= 40
    exact = float(frame["kwh"].clip(0, 60).mean())
    mean = ("--column", "kwh", "--query", "mean", "--bounds", "0,60", "--epsilon", "1000", "--missing", "drop",
            "--unit", "household", "--max-contributions", "40", "--json", "--total-epsilon", "1000")
    on_dask = _release(f"{sparse_meters}/*.parquet", *mean, "--scheduler", cluster.client.scheduler.address)
    assert on_dask.exit_code == 0, on_dask.output
    in_memory = _release(sparse_meters.parent / "all.parquet", *mean)
    assert in_memory.exit_code == 0, in_memory.output
    a, b = json.loads(on_dask.stdout), json.loads(in_memory.stdout)
    assert a["guarantee"] == b["guarantee"] and a["noise"] == b["noise"] and a["query"] == b["query"]
    assert abs(a["value"] - exact) < 0.02 and abs(b["value"] - exact) < 0.02, (a["value"], b["value"], exact)


def test_a_grouped_release_on_a_running_cluster_answers_every_key(cluster: Any, meters: Path) -> None:
    address = cluster.client.scheduler.address
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
