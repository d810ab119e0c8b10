"""``privnoise release ... --epsilon``: differentially private releases from CSV and Parquet files, with a privacy
unit, printed with their guarantee and accuracy."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from privnoise.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    pd = pytest.importorskip("pandas")
    folder = tmp_path_factory.mktemp("meters")
    rng = np.random.default_rng(0)
    households, rows = 120, 48
    unit = np.repeat(np.arange(households), rows)
    frame = pd.DataFrame({
        "household": unit,
        "region": np.array(["north", "south", "east"])[unit % 3],
        "kwh": rng.gamma(2.0, 0.5, size=unit.size),
    })
    frame.loc[7, "kwh"] = np.nan
    frame.to_csv(folder / "meters.csv", index=False)
    frame.to_parquet(folder / "meters.parquet")
    return folder


def _run(*args):
    result = runner.invoke(app, ["release", *map(str, args)])
    return result


UNIT = ("--unit", "household", "--max-contributions", "48", "--missing", "drop")


@pytest.mark.parametrize("name", ["meters.csv", "meters.parquet"])
def test_mean_release_prints_answer_guarantee_and_accuracy(files, name):
    result = _run(files / name, "--column", "kwh", "--query", "mean", "--bounds", "0,60", "--epsilon", "1", *UNIT)
    assert result.exit_code == 0, result.output
    assert "mean:" in result.output and "95% interval" in result.output
    assert "(1, 0)-differential privacy" in result.output and "'household'" in result.output
    assert "noise only" in result.output


@pytest.mark.parametrize(
    "options",
    [
        ("--query", "count"),
        ("--query", "sum", "--bounds", "0,10"),
        ("--query", "variance", "--bounds", "0,10"),
        ("--query", "histogram", "--bins", "0,1,2,5,10"),
        ("--query", "quantile", "--q", "0.5,0.9", "--bounds", "0,10"),
        ("--query", "mean", "--bounds", "0,10", "--group-by", "region", "--delta", "1e-6"),
        ("--query", "count", "--group-by", "region", "--keys", "north,south"),
        ("--query", "quantile", "--q", "0.5", "--bounds", "0,10", "--accountant", "zcdp", "--delta", "1e-6"),
        ("--query", "mean", "--bounds", "0,10", "--accountant", "rdp", "--delta", "1e-6"),
        ("--query", "mean", "--bounds", "0,10", "--accountant", "pld", "--delta", "1e-6"),
    ],
)
def test_every_query_kind_in_json(files, options):
    result = _run(files / "meters.parquet", "--column", "kwh", "--epsilon", "4", "--total-epsilon", "4", *UNIT,
                  *options, "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["guarantee"]["notion"] in ("differential-privacy", "zero-concentrated-differential-privacy")
    assert "confidence_interval" in payload or "accuracy" in payload
    assert payload["query"]["max_contributions"] == 48


def test_top_k_over_declared_categories(files):
    result = _run(files / "meters.csv", "--column", "region", "--query", "top-k", "--categories", "north,south,west",
                  "--top", "2", "--epsilon", "2", "--total-epsilon", "2", *UNIT)
    assert result.exit_code == 0, result.output
    assert "top_k: [" in result.output


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (("--query", "mean", "--epsilon", "1"), "--bounds"),
        (("--query", "quantile", "--bounds", "0,1", "--epsilon", "1"), "--q"),
        (("--query", "histogram", "--epsilon", "1"), "--bins"),
        (("--query", "mean", "--bounds", "0,1", "--epsilon", "1", "--support", "-1,1"), "--support"),
        (("--query", "count"), "--epsilon"),
        (("--query", "mean", "--bounds", "0,1", "--epsilon", "-1"), "--epsilon"),
        (("--query", "mean", "--bounds", "0,1", "--epsilon", "1", "--accountant", "zcdp"), "delta"),
        (("--query", "mean", "--bounds", "0,1", "--epsilon", "1", "--missing", "maybe"), "--missing"),
    ],
)
def test_bad_options_fail_with_one_line(files, options, message):
    result = _run(files / "meters.csv", "--column", "kwh", *options)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_demo_releases_at_the_household_level(tmp_path):
    from privnoise._cli.demo_analyst import household_releases
    from privnoise.sample_data import smart_meter_data

    data = smart_meter_data(60, 2, rng=1)
    path = data.to_csv(tmp_path / "readings.csv")
    releases = household_releases(path, days=2, bounds=data.bounds)
    queries = [entry["query"] for entry in releases]
    assert queries[:2] == ["mean(kwh)", "quantile(kwh, 0.5, 0.9)"] and queries[-1] == "remaining()"
    for entry in releases[:-1]:
        assert "one unit of 'household'" in entry["guarantee"]["adjacency"]
        assert entry["details"]["max_contributions"] == 96
    assert releases[-1]["remaining"]["epsilon"] == pytest.approx(0.0, abs=1e-12)
