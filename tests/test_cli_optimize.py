"""The ``optimize`` command on its own typer app."""

from __future__ import annotations

import json

import typer
from typer.testing import CliRunner

from privnoise._cli.optimization import register

ADULT = (
    "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, "
    "United-States, <=50K\n"
    "52, Self-emp-inc, 287927, HS-grad, 9, Married-civ-spouse, Exec-managerial, Wife, White, Female, 15024, 0, 40, "
    "United-States, >50K\n"
)


def _app() -> typer.Typer:
    app = typer.Typer()
    register(app)

    @app.command("noop")
    def noop() -> None:  # a second command keeps typer in multi-command mode
        pass

    return app


def test_optimize_diabetes_json(tmp_path):
    plot = tmp_path / "o.png"
    res = CliRunner().invoke(
        _app(), ["optimize", "--noise-variance", "0.1", "--iterations", "50", "--seed", "1", "--radius", "5", "--plot", str(plot),
                 "--json"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["dataset"] == "diabetes" and len(out["weights"]) == 10
    assert out["objective_gap"] >= 0
    assert abs(out["guarantee"]["fisher_information_trace"] - 121 / 0.1) < 1e-6
    assert out["guarantee"]["differential_privacy"]["delta"] == 1e-5
    assert plot.stat().st_size > 1000


def test_optimize_tables(tmp_path):
    res = CliRunner().invoke(
        _app(),
        ["optimize", "--noise-variance", "0.1", "--iterations", "20", "--plot", str(tmp_path / "p.png")],
    )
    assert res.exit_code == 0, res.output
    assert "objective gap" in res.stdout and "Tr I" in res.stdout and "(intercept)" in res.stdout


def test_optimize_adult_file(tmp_path):
    path = tmp_path / "adult.data"
    path.write_text(ADULT, encoding="utf-8")
    res = CliRunner().invoke(
        _app(), ["optimize", "--dataset", "adult", "--adult-file", str(path), "--iterations", "10", "--seed", "2",
                 "--plot", str(tmp_path / "a.png"), "--json"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["records"] == 2


def test_optimize_errors(tmp_path):
    runner = CliRunner()
    res = runner.invoke(_app(), ["optimize", "--dataset", "adult", "--plot", str(tmp_path / "x.png")])
    assert res.exit_code == 2 and "--adult-file" in res.stderr
    res = runner.invoke(_app(), ["optimize", "--noise-variance", "-1", "--plot", str(tmp_path / "x.png")])
    assert res.exit_code == 2 and "error: --noise-variance must be" in res.stderr, res.stderr
    bad = tmp_path / "bad.data"
    bad.write_text("1, 2, 3\n", encoding="utf-8")
    res = runner.invoke(_app(), ["optimize", "--dataset", "adult", "--adult-file", str(bad)])
    assert res.exit_code == 2 and "line 1" in res.stderr
    res = runner.invoke(
        _app(), ["optimize", "--dataset", "adult", "--adult-file", str(tmp_path / "missing.data")]
    )
    assert res.exit_code == 2 and "missing.data" in res.stderr
