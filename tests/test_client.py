"""The Python client (``pn.client.Client``) against a real server, and its lazy import."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

import privnoise as pn  # noqa: E402
from tests.server._harness import running_server, write_config  # noqa: E402


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    path, keys = write_config(tmp_path_factory.mktemp("client"))
    with running_server(path) as s:
        yield {"url": s.url, "keys": keys}


def test_import_privnoise_stays_light_and_client_loads_on_access() -> None:
    code = (
        "import sys, privnoise as pn; heavy = [m for m in ('fastapi', 'httpx', 'sqlalchemy', 'uvicorn') "
        "if m in sys.modules]; assert not heavy, heavy; pn.client.Client; assert 'httpx' in sys.modules; "
        "assert 'fastapi' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    with pytest.raises(AttributeError):
        pn.no_such_thing  # noqa: B018


def test_text_and_json_queries_return_value_guarantee_and_budget(server: dict[str, Any]) -> None:
    with pn.client.Client(server["url"], server["keys"]["alice"]) as c:
        assert c.health()
        a = c.query("mean(kwh) where region = 'north'", dataset="meters")
        assert 0.0 <= a["value"] <= 60.0
        assert (
            a["guarantee"]["notion"] == "differential-privacy" and a["guarantee"]["epsilon_exact"] == "1/10"
        )
        assert a["remaining"]["epsilon"]["remaining"] == "9/10"
        b = c.query(
            {"kind": "count", "dataset": "meters", "where": [{"column": "region", "op": "=", "value": "south"}]}
        )
        assert b["charged"]["epsilon"] == "1/20"
        budget = c.budget()
        assert budget["querier"] == "alice"
        assert budget["datasets"]["meters"]["epsilon"]["spent"] == "3/20"


def test_refusals_and_errors_raise(server: dict[str, Any]) -> None:
    from privnoise.client import BudgetRefused, ServerError

    with pn.client.Client(server["url"], server["keys"]["alice"]) as alice:
        alice.query("count() from meters")
    with pn.client.Client(server["url"], server["keys"]["admin"]) as admin:
        key = admin.add_querier("small", epsilon="1/10")
        assert any(r["querier"] == "alice" for r in admin.ledger())
    with pn.client.Client(server["url"], key) as c:
        c.query("sum(kwh) from meters")
        with pytest.raises(BudgetRefused):
            c.query("sum(kwh) from meters")
        with pytest.raises(ServerError, match="422"):
            c.query("sum(nope) from meters")
        with pytest.raises(TypeError):
            c.query(3)  # type: ignore[arg-type]
    with pn.client.Client(server["url"], "pn_wrong") as c, pytest.raises(ServerError, match="401"):
        c.budget()


def test_cli_query_prints_answer_and_exits_2_on_refusal(server: dict[str, Any], tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from privnoise.cli import app

    runner = CliRunner()
    with pn.client.Client(server["url"], server["keys"]["admin"]) as admin:
        key = admin.add_querier("cli", epsilon="1/10")
    args = ["query", "--server", server["url"], "--key", key, "--dataset", "meters"]
    result = runner.invoke(app, [*args, "sum(kwh) where region = 'north'"])
    assert result.exit_code == 0, result.output
    assert "value:" in result.output and "ε = 0.1" in result.output  # budgets as decimals
    # the owner declared a Fisher floor on kwh: its record bound comes with what it means, in the data's unit
    assert "kwh record bound" in result.output
    assert "record bound: the smallest variance, in the square of the unit of kwh" in result.output
    result = runner.invoke(app, [*args, '{"kind": "sum", "column": "kwh"}'])
    assert result.exit_code == 2 and "budget" in result.output


def test_answers_carry_their_accuracy_to_the_client_and_the_cli(server: dict[str, Any]) -> None:
    from typer.testing import CliRunner

    from privnoise.cli import app

    with pn.client.Client(server["url"], server["keys"]["admin"]) as admin:
        key = admin.add_querier("accuracy", epsilon="1/2")
    with pn.client.Client(server["url"], key) as c:
        answer = c.query("mean(kwh) group by region", dataset="meters")
    assert answer["keys"] == ["north", "south", "east", "west"] and len(answer["value"]) == 4
    assert answer["accuracy"]["level"] == 0.95 and len(answer["accuracy"]["low"]) == 4
    assert answer["accuracy"]["meaning"].startswith("noise only")
    args = ["query", "--server", server["url"], "--key", key, "--dataset", "meters"]
    result = CliRunner().invoke(app, [*args, "count() group by region"])
    assert result.exit_code == 0, result.output
    assert "north:" in result.output and "accuracy: 95% intervals" in result.output
    assert "noise only" in result.output
    result = CliRunner().invoke(app, [*args, "sum(kwh) where region = 'north'"])
    assert result.exit_code == 0 and "accuracy: 95% interval [" in result.output, result.output


def test_a_sql_statement_through_the_client_and_the_cli(server: dict[str, Any]) -> None:
    from typer.testing import CliRunner

    from privnoise.cli import app

    with pn.client.Client(server["url"], server["keys"]["admin"]) as admin:
        key = admin.add_querier("sql", epsilon="1/2")
    with pn.client.Client(server["url"], key) as c:
        answer = c.query("SELECT region, COUNT(*) AS n FROM meters GROUP BY region")
    assert answer["columns"]["region"] == ["north", "south", "east", "west"] and answer["charged"]["epsilon"] == "1/20"
    args = ["query", "--server", server["url"], "--key", key]
    result = CliRunner().invoke(app, [*args, "select avg(kwh) as m from meters where region in ('north', 'east')"])
    assert result.exit_code == 0, result.output
    # budgets print as decimals (privnoise --exact prints the rationals)
    assert "row: m: " in result.output and "intervals at 95%" in result.output and "ε = 0.1" in result.output
    result = CliRunner().invoke(app, [*args, "SELECT kwh FROM meters"])
    assert result.exit_code == 2 and "row-level" in result.output and "line 1, column 8" in result.output


def test_client_and_cli_dry_runs_charge_nothing(server: dict[str, Any]) -> None:
    from typer.testing import CliRunner

    from privnoise.cli import app

    with pn.client.Client(server["url"], server["keys"]["admin"]) as admin:
        key = admin.add_querier("dry", epsilon="1/4")
    with pn.client.Client(server["url"], key) as c:
        before = c.budget()
        preview = c.query("sum(kwh) where region = 'north'", dataset="meters", dry_run=True)
        assert preview["dry_run"] is True and preview["fits"] is True
        assert preview["cost"]["exact"]["epsilon"] != "0" and preview["accuracy"]["radius"] > 0
        assert c.budget() == before  # nothing charged
        real = c.query("sum(kwh) where region = 'north'", dataset="meters")
        assert real["accuracy"]["high"] - real["value"] == pytest.approx(preview["accuracy"]["radius"], rel=1e-6) \
            or real["value"] - real["accuracy"]["low"] == pytest.approx(preview["accuracy"]["radius"], rel=1e-6)
    args = ["query", "--server", server["url"], "--key", key, "--dataset", "meters", "--dry-run"]
    shown = CliRunner().invoke(app, [*args, "sum(kwh) where region = 'north'"])
    assert shown.exit_code == 0, shown.output
    assert "cost: ε = " in shown.output and "fits: yes" in shown.output and "charges nothing" in shown.output
    # beyond the budget: said, not charged, exit status 0 (a dry run is an answer)
    over = CliRunner().invoke(app, [*args, "variance(kwh)"])
    assert over.exit_code == 0 and "fits: no" in over.output, over.output
    with pn.client.Client(server["url"], key) as c:
        assert c.budget() != before  # only the one real query above was charged
