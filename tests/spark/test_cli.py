"""``privnoise release DATA ... --epsilon 1 --engine spark --master local[2]``: Spark reads the files and aggregates,
and the release is the in-memory one (same research seed, no unit: the same value, guarantee and noise)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from privnoise.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import pandas as pd

    folder = tmp_path_factory.mktemp("spark-cli")
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"kwh": rng.uniform(0, 60, 2000).round(2), "household": rng.integers(0, 300, 2000),
                          "region": rng.choice(["north", "south"], 2000)})
    frame.to_parquet(folder / "meters.parquet")
    frame.to_csv(folder / "meters.csv", index=False)
    return folder


def _release(*args: Any) -> Any:
    return runner.invoke(app, ["release", *map(str, args)])


GROUP_MEAN = ("--column", "kwh", "--query", "mean", "--bounds", "0,60", "--epsilon", "1", "--group-by", "region",
              "--keys", "north,south", "--seed", "5", "--json", "--total-epsilon", "10")


@pytest.mark.parametrize("name", ["meters.parquet", "meters.csv"])
def test_a_release_on_spark_is_the_in_memory_release(spark, files: Path, name: str) -> None:
    on_spark = _release(files / name, *GROUP_MEAN, "--engine", "spark", "--master", "local[2]",
                        "--ledger", files / f"spark-{name}.sqlite")
    in_memory = _release(files / name, *GROUP_MEAN, "--ledger", files / f"memory-{name}.sqlite")
    assert on_spark.exit_code == 0 and in_memory.exit_code == 0, (on_spark.output, in_memory.output)
    a, b = json.loads(on_spark.stdout), json.loads(in_memory.stdout)
    assert a["guarantee"] == b["guarantee"] and a["noise"] == b["noise"] and a["keys"] == b["keys"]
    np.testing.assert_allclose(a["value"], b["value"], rtol=1e-9)
    assert spark.range(3).count() == 3  # the tests' own Spark session is left running


def test_engine_options_that_do_not_go_together_are_refused(files: Path) -> None:
    mean = ("--column", "kwh", "--query", "mean", "--bounds", "0,60")
    cases = [
        ((*mean, "--epsilon", "1", "--engine", "spark", "--master", "http://host"), "--master must be a Spark master"),
        ((*mean, "--epsilon", "1", "--master", "local[2]"), "--master is the Spark master of --engine spark"),
        ((*mean, "--engine", "spark", "--support=-1,1"), "--engine spark computes differentially private releases"),
        ((*mean, "--epsilon", "1", "--engine", "flink"), "--engine must be 'dask' or 'spark'"),
        ((*mean, "--epsilon", "1", "--engine", "spark", "--scheduler", "local"), "Spark takes --master"),
    ]
    for args, message in cases:
        result = _release(files / "meters.parquet", *args)
        assert result.exit_code == 2 and message in result.output, result.output


def test_a_path_spark_cannot_read_is_one_line(spark, files: Path) -> None:
    result = _release(files / "absent.parquet", "--column", "kwh", "--query", "mean", "--bounds", "0,60",
                      "--epsilon", "1", "--engine", "spark", "--ledger", files / "absent.sqlite")
    assert result.exit_code == 2 and "Spark could not read it" in result.output, result.output
