"""The same question asked through the command line and through the Session gets the same release.

``privnoise release FILE --epsilon ...`` is a Session over the file: for every query kind it must state the same
guarantee, describe the same noise (family and scale, hence the same law), release the same value for the same
research seed, and charge the command line's ledger exactly what the Session spent. The agreement of the Session
on Dask with the Session in memory (the same noise law by KS, the same guarantees) is held in
``tests/scale/test_agreement.py``.
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

import privnoise as pn
from privnoise.cli import app

pd = pytest.importorskip("pandas")
runner = CliRunner()

UNIT = ("--unit", "household", "--max-contributions", "4")


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> tuple[Any, Any]:
    rng = np.random.default_rng(8)
    households = 150
    unit = np.repeat(np.arange(households), 6)
    frame = pd.DataFrame({
        "household": unit,
        "region": np.array(["north", "south", "east"])[unit % 3],
        "tariff": np.array(["day", "night"])[unit % 2],
        "kwh": np.round(rng.gamma(2.0, 0.5, size=unit.size), 6),
    })
    path = tmp_path_factory.mktemp("parity") / "meters.csv"
    frame.to_csv(path, index=False)
    return frame, path


#: (command-line options, the Session call that asks the same question)
CASES: dict[str, tuple[tuple[str, ...], Any]] = {
    "count": (("--query", "count"), lambda s: s.count("kwh", epsilon=1)),
    "sum": (("--query", "sum", "--bounds", "0,5"), lambda s: s.sum("kwh", bounds=(0, 5), epsilon=1)),
    "mean": (("--query", "mean", "--bounds", "0,5"), lambda s: s.mean("kwh", bounds=(0, 5), epsilon=1)),
    "variance": (("--query", "variance", "--bounds", "0,5"), lambda s: s.variance("kwh", bounds=(0, 5), epsilon=1)),
    "histogram": (("--query", "histogram", "--bins", "0,1,2,5"),
                  lambda s: s.histogram("kwh", bins=[0, 1, 2, 5], epsilon=1)),
    "quantile": (("--query", "quantile", "--q", "0.5", "--bounds", "0,5"),
                 lambda s: s.quantile("kwh", [0.5], bounds=(0, 5), epsilon=1)),
    "median": (("--query", "median", "--bounds", "0,5"), lambda s: s.median("kwh", bounds=(0, 5), epsilon=1)),
    "count distinct": (("--query", "count-distinct", "--where", "region = 'south'"),
                       lambda s: s.where("region = 'south'").count_distinct(epsilon=1)),
    "filtered mean": (("--query", "mean", "--bounds", "0,5", "--where", "kwh > 0.5 and region != 'east'"),
                      lambda s: s.where("kwh > 0.5 and region != 'east'").mean("kwh", bounds=(0, 5), epsilon=1)),
    "group mean": (("--query", "mean", "--bounds", "0,5", "--group-by", "region", "--keys", "east,north,south"),
                   lambda s: s.group_by("region", keys=["east", "north", "south"]).mean("kwh", bounds=(0, 5),
                                                                                        epsilon=1)),
    "two-key group mean": (("--query", "mean", "--bounds", "0,5", "--group-by", "region,tariff",
                            "--keys", "region=east,north,south;tariff=day,night"),
                           lambda s: s.group_by(["region", "tariff"], keys={"region": ["east", "north", "south"],
                                                                            "tariff": ["day", "night"]}
                                                ).mean("kwh", bounds=(0, 5), epsilon=1)),
    "two-key group count": (("--query", "count", "--group-by", "tariff, region", "--keys",
                             "tariff=night,day; region=south"),
                            lambda s: s.group_by(["tariff", "region"], keys={"tariff": ["night", "day"],
                                                                             "region": ["south"]}).count(epsilon=1)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_command_line_and_the_session_release_the_same(table, case: str, tmp_path, monkeypatch) -> None:
    frame, path = table
    options, ask = CASES[case]
    monkeypatch.setenv("PRIVNOISE_LEDGER", str(tmp_path / "ledger.sqlite"))
    result = runner.invoke(app, ["release", str(path), "--column", "kwh", "--epsilon", "1", "--total-epsilon", "3",
                                 *UNIT, *options, "--seed", "41", "--json"])
    assert result.exit_code == 0, result.output
    cli = json.loads(result.stdout)  # the research seed's warning goes to stderr
    session = pn.Session(frame, privacy_unit="household", max_contributions=4, epsilon=1, rng=41)
    estimate = ask(session)
    mine = estimate.as_dict(0.95)
    # the same guarantee and the same noise (family, scale, grid: the same law)
    assert cli["guarantee"] == mine["guarantee"]
    assert cli["noise"] == mine["noise"]
    # the same release for the same research seed
    assert np.array_equal(np.asarray(cli["value"], dtype=float), np.asarray(mine["value"], dtype=float))
    # the ledger of the command line is charged what the Session spent
    charged = cli["ledger"]["charged"]
    assert Fraction(charged["epsilon"]) == Fraction(str(session.spent().epsilon)) == 1
    assert Fraction(charged["delta"]) == 0


@pytest.mark.parametrize(("where", "message"), [("regio = 'north'", "regio"), ("kwh >", "end too early"),
                                                ("region > 3", "region")])
def test_a_bad_filter_is_refused_before_anything_is_charged(table, where, message, tmp_path, monkeypatch) -> None:
    _, path = table
    monkeypatch.setenv("PRIVNOISE_LEDGER", str(tmp_path / "ledger.sqlite"))
    result = runner.invoke(app, ["release", str(path), "--column", "kwh", "--epsilon", "1", *UNIT, "--query", "mean",
                                 "--bounds", "0,5", "--where", where])
    assert result.exit_code == 2 and message in result.output
    listed = runner.invoke(app, ["budget", "list", "--json"])
    assert listed.exit_code == 0 and str(path) not in listed.stdout  # nothing was charged


@pytest.mark.parametrize(("group_by", "keys", "message"), [
    ("region,tariff", "east,north", "COLUMN=A,B separated by ';'"),
    ("region,tariff", "region=east;region=north", "COLUMN=A,B separated by ';'"),
    ("region,tariff", "region=east,north", "no values for key column(s) tariff"),
    ("region,tariff", "region=east;kind=day", "COLUMN=A,B separated by ';'"),
    ("region,region", None, "names a column twice"),
    ("region,", None, "must not have empty entries"),
])
def test_a_bad_group_by_of_several_columns_is_refused_before_anything_is_charged(table, group_by, keys, message,
                                                                                  tmp_path, monkeypatch) -> None:
    _, path = table
    monkeypatch.setenv("PRIVNOISE_LEDGER", str(tmp_path / "ledger.sqlite"))
    result = runner.invoke(app, ["release", str(path), "--column", "kwh", "--query", "count", "--epsilon", "1",
                                 "--delta", "1e-7", "--total-delta", "1e-6", "--group-by", group_by,
                                 *(["--keys", keys] if keys is not None else []), "--json"])
    assert result.exit_code == 2
    assert message in result.output
    listed = runner.invoke(app, ["budget", "list", "--json"])
    assert listed.exit_code == 0 and str(path) not in listed.stdout  # nothing was charged
