"""The ``privnoise stream`` command on its own typer app."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from privnoise._cli.systems import register

app = typer.Typer()
register(app)


@app.command()
def _other() -> None:  # a second command keeps typer in multi-command mode
    pass


runner = CliRunner()
MODEL = Path(__file__).resolve().parents[1] / "examples" / "building.toml"


def run(*args: str, data: str = ""):
    return runner.invoke(app, ["stream", "--model", str(MODEL), *args], input=data)


def test_stdin_to_stdout_with_header() -> None:
    result = run("--delta", "0.2", "--seed", "1", data="co2\n" + "".join(f"{400 + k}\n" for k in range(10)))
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if line]
    assert lines[0].startswith("# privnoise guarantee:")
    guarantee = json.loads(lines[0].split(":", 1)[1])
    assert guarantee["delta"] == 0.2 and guarantee["theorem"] == "III.5"
    assert lines[1] == "co2" and len(lines) == 12


def test_files_and_sidecar(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    src.write_text("".join(f"{k}\n" for k in range(1000)))
    out, side = tmp_path / "out.csv", tmp_path / "out.json"
    result = run("--input", str(src), "--output", str(out), "--sidecar", str(side))
    assert result.exit_code == 0, result.output
    assert len(out.read_text().splitlines()) == 1000
    assert json.loads(side.read_text())["readings"] == 1000


def test_bad_stream_and_model(tmp_path: Path) -> None:
    for data, match in (("1\n2\nx\n", "line 3"), ("1\nNaN\n", "line 2"), ("1\n\n2\n", "line 2")):
        result = run(data=data)
        assert result.exit_code == 2 and match in result.output and "Traceback" not in result.output
    bad = tmp_path / "bad.toml"
    bad.write_text(
        "[system]\nA = [[1, 2]]\nB = [[1]]\nC = [[1]]\n[privacy]\nhorizon = 2\nc = 1.0\ndelta = 0.1\n"
    )
    result = runner.invoke(app, ["stream", "--model", str(bad)], input="1\n")
    assert result.exit_code == 2 and "square" in result.output
    small = tmp_path / "small.toml"
    small.write_text(MODEL.read_text().replace("c = 2.02", "c = 1.0"))
    result = runner.invoke(app, ["stream", "--model", str(small)], input="1\n")
    assert result.exit_code == 2 and "smaller than the W2" in result.output
