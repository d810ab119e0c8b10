"""The plain command lines of ``privnoise release`` and ``privnoise stream`` (:mod:`privnoise._cli.quick`): parsed
into the values typer gives the command, and every other command line left to typer."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from privnoise._cli.quick import PLAIN_COMMANDS, declared_options, parse_plain
from privnoise._cli.release import release_command
from privnoise._cli.systems import stream_command

PLAIN = [
    ["small.csv", "--column", "kwh", "--query", "mean", "--bounds", "2500,6500", "--epsilon", "0.001"],
    ["small.csv", "--column=kwh", "--query=median", "--epsilon", "1e-3", "--json", "--delta", "-0", "--top", "3",
     "--level", "0.5"],
    ["--unit", "id", "d.parquet", "--column", "x", "--query", "count", "--epsilon", "2", "--max-contributions", "4",
     "--seed", "0", "--ledger", "l.sqlite", "--total-epsilon", "1/3", "--where", "x > 0", "--dry-run"],
]
TO_TYPER = [
    ["small.csv", "--column", "kwh", "--query", "mean", "--epsilon", "nan"],  # not a plain number
    ["small.csv", "--column", "kwh", "--query", "mean", "--epsilon", "1", "--level", "2"],  # beyond its bound
    ["small.csv", "--column", "kwh", "--query", "mean", "--epsilon", "1", "--max-contributions", "0"],
    ["small.csv", "--column", "kwh", "--query", "average", "--epsilon", "1"],  # not a choice
    ["small.csv", "--column", "kwh", "--column", "w", "--query", "mean"],  # given twice
    ["small.csv", "--query", "mean"],  # --column missing
    ["small.csv", "other.csv", "--column", "kwh", "--query", "mean"],  # a second argument
    ["small.csv", "--column", "kwh", "--query", "mean", "-h"],
    ["small.csv", "--column", "kwh", "--query", "mean", "--help"],
    ["small.csv", "--column", "kwh", "--query", "mean", "--json=yes"],
    ["small.csv", "--column", "kwh", "--query", "mean", "--epsilon"],  # no value
    ["small.csv", "--column", "kwh", "--query", "mean", "--", "x"],
    ["small.csv", "--column", "--query", "mean"],  # an option where a value is due
]
STREAM_PLAIN = [
    ["--model", "building.toml"],
    ["--model", "b.toml", "--columns", "co2", "--input", "r.csv", "--output", "n.csv", "--sidecar", "g.json"],
    ["--model=b.toml", "--delta", "0.05", "--header", "--seed", "3", "--ledger", "l.sqlite", "--dataset", "d"],
    ["--no-header", "--guarantee-header", "--model", "b.toml", "--delta", "1e-3"],
]
STREAM_TO_TYPER = [
    ["readings.csv", "--model", "b.toml"],  # stream takes no argument
    ["--columns", "co2"],  # --model missing
    ["--model", "b.toml", "--header", "--no-header"],  # both of a pair: typer's rule (the last wins)
    ["--model", "b.toml", "--header=yes"],
    ["--model", "b.toml", "--seed", "-1"],  # below its bound
    ["--model", "b.toml", "--delta", "inf"],
    ["--model", "b.toml", "-v"],
]


def _typer_values(command: Any, name: str, line: list[str]) -> dict[str, Any]:
    """The keyword arguments typer gives ``command`` for a command line (a spy with the command's signature)."""
    captured: dict[str, Any] = {}

    def spy(**kwargs: Any) -> None:
        captured.update(kwargs)

    spy.__signature__ = inspect.signature(inspect.unwrap(command), eval_str=True)  # type: ignore[attr-defined]
    app = typer.Typer()
    app.command(name)(spy)
    app.command("other")(lambda: None)
    result = CliRunner().invoke(app, [name, *line])
    assert result.exit_code == 0, result.output
    return captured


@pytest.fixture(scope="module")
def typer_values() -> Any:
    """The keyword arguments typer gives ``release`` for a command line."""
    return lambda line: _typer_values(release_command, "release", line)


@pytest.mark.parametrize("line", PLAIN)
def test_a_plain_command_line_gets_the_values_typer_gives(line: list[str], typer_values: Any) -> None:
    found = declared_options(release_command)
    assert found is not None
    parsed = parse_plain(line, *found)
    assert parsed is not None
    mine, flags = parsed
    theirs = typer_values(line)
    assert mine == theirs
    assert {k: type(v) for k, v in mine.items()} == {k: type(v) for k, v in theirs.items()}
    assert flags["column"] == "--column" and flags["level"] == "--level"  # error messages name the flags
    assert isinstance(mine["data"], Path)


@pytest.mark.parametrize("line", TO_TYPER)
def test_any_other_command_line_is_left_to_typer(line: list[str]) -> None:
    found = declared_options(release_command)
    assert found is not None
    assert parse_plain(line, *found) is None


@pytest.mark.parametrize("line", STREAM_PLAIN)
def test_a_plain_stream_command_line_gets_the_values_typer_gives(line: list[str]) -> None:
    found = declared_options(stream_command)
    assert found is not None and found[1] is None  # options only
    parsed = parse_plain(line, *found)
    assert parsed is not None
    mine, flags = parsed
    theirs = _typer_values(stream_command, "stream", line)
    assert mine == theirs
    assert {k: type(v) for k, v in mine.items()} == {k: type(v) for k, v in theirs.items()}
    assert flags["model"] == "--model"
    if "--no-header" in line:
        assert mine["header"] is False and flags["header"] == "--no-header"
    elif "--header" in line:
        assert mine["header"] is True and flags["header"] == "--header"
    else:
        assert mine["header"] is None and "header" not in flags


@pytest.mark.parametrize("line", STREAM_TO_TYPER)
def test_any_other_stream_command_line_is_left_to_typer(line: list[str]) -> None:
    found = declared_options(stream_command)
    assert found is not None
    assert parse_plain(line, *found) is None


@pytest.mark.parametrize("name", sorted(PLAIN_COMMANDS))
def test_every_plain_command_is_one_the_plain_parser_reads(name: str) -> None:
    """A command listed for the plain path whose declarations the parser cannot read would silently always go
    through typer."""
    import importlib

    module, function = PLAIN_COMMANDS[name]
    command = getattr(importlib.import_module(f"privnoise._cli.{module}"), function)
    assert declared_options(command) is not None
