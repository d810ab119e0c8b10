"""``privnoise sql``: answers with intervals and the guarantee, the ledger charged once per statement, and every
malformed or unanswerable statement refused with exit status 2, its position, and nothing charged."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import privnoise as pn
from privnoise.cli import app

pd = pytest.importorskip("pandas")
runner = CliRunner()


@pytest.fixture(scope="module")
def meters(tmp_path_factory):
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"household": rng.integers(0, 300, 3000), "region": rng.choice(["north", "south"], 3000),
                          "kwh": np.round(rng.gamma(2.0, 4.0, 3000), 4)})
    path = tmp_path_factory.mktemp("sql") / "meters.csv"
    frame.to_csv(path, index=False)
    return frame, path


def _run(path, statement, *options, ledger):
    return runner.invoke(app, ["sql", str(path), statement, *options], env={"PRIVNOISE_LEDGER": str(ledger)})


def test_the_command_line_answers_as_the_session_does(meters, tmp_path) -> None:
    frame, path = meters
    statement = "SELECT region, AVG(kwh) AS m, COUNT(*) AS n FROM meters WHERE kwh > 1 GROUP BY region"
    result = _run(path, statement, "--epsilon", "1", "--unit", "household", "--max-contributions", "20",
                  "--bounds", "kwh=0,60", "--keys", "region=north,south", "--seed", "9", "--json",
                  ledger=tmp_path / "l.sqlite")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    session = pn.Session(frame, privacy_unit="household", max_contributions=20, epsilon=1, rng=9)
    mine = session.sql(statement, epsilon=1, bounds={"kwh": (0, 60)}, keys=["north", "south"]).as_dict()
    assert payload["columns"] == mine["columns"] and payload["intervals"] == mine["intervals"]
    assert payload["guarantee"] == mine["guarantee"]
    assert payload["ledger"]["charged"] == {"epsilon": "1", "delta": "0"}


@pytest.mark.parametrize(("statement", "options", "message"), [
    ("SELECT kwh FROM meters", ("--epsilon", "1"), "row-level value (line 1, column 8)"),
    ("SELECT COUNT(*) FROM meters m JOIN x ON m.a = x.a", ("--epsilon", "1"), "JOIN"),
    ("SELECT AVG(kwh) FROM meters", ("--epsilon", "1"), "--bounds kwh=LO,HI"),
    ("SELECT COUNT(*) FROM meters", (), "--epsilon"),
    ("SELECT region, COUNT(*) FROM meters GROUP BY region", ("--epsilon", "1", "--keys", "kwh=1,2"), "--keys"),
    ("SELECT COUNT(*) FROM meters WHERE kwh = 'x'", ("--epsilon", "1"), "number literal"),
    ("SELEC COUNT(*) FROM meters", ("--epsilon", "1"), "does not parse"),
])
def test_refusals_exit_2_with_their_reason_and_charge_nothing(meters, tmp_path, statement, options, message) -> None:
    _, path = meters
    ledger = tmp_path / "l.sqlite"
    result = _run(path, statement, *options, ledger=ledger)
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert not ledger.exists() or "spent ε = 0" in runner.invoke(app, ["budget", str(path)], env={
        "PRIVNOISE_LEDGER": str(ledger)}).output


words = st.sampled_from(["SELECT", "COUNT(*)", "AVG(kwh)", "SUM(", ")", "FROM", "meters", "WHERE", "kwh", ">", "1",
                         "'north'", "region", "GROUP", "BY", "JOIN", "(", ",", "OR", "NOT", "IN", "LIKE", "*", ";",
                         "HAVING", "ORDER", "LIMIT", "-", "/", "NULL", "IS", "BETWEEN", "AND", "\"x\"", "`y`"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(words, min_size=1, max_size=14).map(" ".join))
def test_random_statements_never_crash_the_command(meters, tmp_path, statement: str) -> None:
    _, path = meters
    result = _run(path, statement, "--epsilon", "1", "--bounds", "kwh=0,60", ledger=tmp_path / "fuzz.sqlite")
    assert result.exit_code in (0, 2), (statement, result.output)
    assert "Traceback" not in result.output
