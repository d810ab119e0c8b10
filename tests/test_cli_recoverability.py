"""The ``recoverability`` command, registered on a fresh typer app."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import privnoise.recoverability as rec
from privnoise._cli.recoverability import register

runner = CliRunner()
app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
register(app)


@app.callback()
def _root() -> None:
    """Test app (a callback keeps `recoverability` a subcommand)."""


def write(path: Path, rows: list[list[float]] | str) -> Path:
    text = rows if isinstance(rows, str) else "\n".join(",".join(repr(v) for v in r) for r in rows)
    path.write_text(text + "\n", encoding="utf-8")
    return path


A = [[2.0, 0, 0, 0, 0], [0, 3.0, 0, 0, 0], [0, 0, 4.0, 0, 0]]


def test_table_output_and_plot(tmp_path):
    png = tmp_path / "pi.png"
    res = runner.invoke(
        app,
        ["recoverability", "--matrix", str(write(tmp_path / "A.csv", A)), "--rho", "4", "--plot", str(png)],
    )
    assert res.exit_code == 0, res.output
    assert "π(ρ) = 3" in res.output and "Scheme (23)" in res.output
    assert png.exists() and png.stat().st_size > 1000


def test_json_output(tmp_path):
    res = runner.invoke(
        app,
        [
            "recoverability",
            "--matrix",
            str(write(tmp_path / "A.csv", A)),
            "--rho",
            "8.5",
            "--plot",
            str(tmp_path / "p.png"),
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["max_privacy"] == pytest.approx(3.5)
    assert data["recoverability_error"] == pytest.approx(8.5)
    assert data["singular_values_ascending"] == pytest.approx([2.0, 3.0, 4.0])
    assert data["scheme"]["allocation"] == pytest.approx([4.0, 4.5, 0.0])


def test_data_cov(tmp_path):
    sigma = [[1.0, 0.5], [0.5, 1.0]]
    res = runner.invoke(
        app,
        [
            "recoverability",
            "--matrix",
            str(write(tmp_path / "A.csv", [[1.0, 0.0]])),
            "--rho",
            "0.25",
            "--data-cov",
            str(write(tmp_path / "S.csv", sigma)),
            "--plot",
            str(tmp_path / "p.png"),
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["max_privacy"] == pytest.approx(rec.max_privacy([[1.0, 0.0]], 0.25, data_cov=sigma))
    assert data["data_cov"] == "given"


@pytest.mark.parametrize(
    ("content", "rho", "match"),
    [
        ("1,2\n3,x", "1", "line 2: entry 2 is not a number."),
        ("1,2\n3", "1", "line 2: 1 entries where the rows above have 2"),
        ("0,0\n0,0", "1", "zero matrix"),
        ("1,nan", "1", "NaN"),
        ("1,2", "-1", "error: --rho must be finite and >= 0; got -1.0."),
        ("1,2", "nan", "error: --rho must be finite and >= 0; got nan."),
        ("", "1", "no numbers"),
    ],
)
def test_errors_exit_2(tmp_path, content, rho, match):
    res = runner.invoke(
        app,
        [
            "recoverability",
            "--matrix",
            str(write(tmp_path / "A.csv", content)),
            "--rho",
            rho,
            "--plot",
            str(tmp_path / "p.png"),
        ],
    )
    assert res.exit_code == 2, res.output
    assert match in res.output and "Traceback" not in res.output
    assert not (tmp_path / "p.png").exists()


def test_bad_data_cov_and_missing_file(tmp_path):
    a = str(write(tmp_path / "A.csv", [[1.0, 0.0]]))
    res = runner.invoke(
        app,
        [
            "recoverability",
            "--matrix",
            a,
            "--rho",
            "1",
            "--data-cov",
            str(write(tmp_path / "S.csv", [[1.0, 0.0], [0.0, -1.0]])),
            "--plot",
            str(tmp_path / "p.png"),
        ],
    )
    assert res.exit_code == 2 and "positive definite" in res.output
    res = runner.invoke(app, ["recoverability", "--matrix", str(tmp_path / "missing.csv"), "--rho", "1"])
    assert res.exit_code == 2 and "missing.csv" in res.output
