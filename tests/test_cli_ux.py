"""The command as users expect it: fast start (no heavy imports), -h, plain help, verbosity on stderr, errors that
name flags, and one line naming the pip extra when an optional dependency is missing (nothing half-written)."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import privnoise
from privnoise import MissingExtraError
from privnoise._cli import logs
from privnoise.cli import app

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("numpy", "scipy", "matplotlib", "pandas", "sklearn", "fastapi", "sqlalchemy", "dp_accounting")
runner = CliRunner()

_PROBE = """
import sys
sys.argv = ["privnoise", *{args!r}]
from privnoise.cli import main
try:
    main()
except SystemExit:
    pass
print("MODULES", sorted({{m.split(".")[0] for m in sys.modules}}), file=sys.stderr)
"""


def _imported(*args: str, stdin: str = "") -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(args=list(args))],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
    )
    line = next(line for line in done.stderr.splitlines() if line.startswith("MODULES"))
    return set(json.loads(line.split(" ", 1)[1].replace("'", '"')))


def test_help_imports_no_numpy_scipy_or_plotting() -> None:
    imported = _imported("--help")
    assert not imported & set(HEAVY), imported & set(HEAVY)


def test_import_privnoise_is_lazy() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, privnoise; print(sorted(m for m in sys.modules if m in ('numpy', 'scipy')))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "[]"


def test_stream_on_one_line_imports_no_scipy_pandas_or_plotting(tmp_path: Path) -> None:
    imported = _imported(
        "stream", "--model", "examples/building.toml", "--sidecar", str(tmp_path / "g.json"), stdin="410\n"
    )
    assert "numpy" in imported  # it does sample noise
    assert not imported & {"scipy", "matplotlib", "pandas", "sklearn", "fastapi"}, imported
    assert json.loads((tmp_path / "g.json").read_text())["readings"] == 1


@pytest.mark.parametrize(
    "command", [[], ["design"], ["stream"], ["reproduce"], ["serve"], ["admin"], ["admin", "init"]]
)
def test_h_is_help_and_no_bool_placeholder(command: list[str]) -> None:
    short = runner.invoke(app, [*command, "-h"])
    assert short.exit_code == 0, short.output
    assert short.output == runner.invoke(app, [*command, "--help"]).output
    assert "<bool>" not in short.output and "Usage:" in short.output


def test_reproduce_help_lists_every_paper() -> None:
    text = runner.invoke(app, ["reproduce", "-h"]).output
    for paper in privnoise.reproduce.available():
        assert paper in text


def test_optimize_flag_says_noise_variance_and_eps_is_gone() -> None:
    text = runner.invoke(app, ["optimize", "-h"]).output
    assert "--noise-variance" in text and "--eps" not in text
    result = runner.invoke(app, ["optimize", "--eps", "0.1"])
    assert result.exit_code == 2 and "No such option: --eps" in result.output


def test_errors_name_the_flag_not_the_python_parameter() -> None:
    result = runner.invoke(app, ["design", "--query", "mean", "--n", "10", "--quality-budget", "-1"])
    assert result.exit_code == 2
    assert result.stderr.strip() == "error: --quality-budget must be > 0; got -1.0."


def test_serve_offers_log_level_and_access_log() -> None:
    text = runner.invoke(app, ["serve", "-h"]).output
    assert "--log-level" in text and "--access-log" in text
    for level in ("critical", "error", "warning", "info", "debug"):
        assert level in text


def test_verbosity_levels() -> None:
    assert [logs.own_level(v) for v in (-2, -1, 0, 1, 2)] == [
        logging.ERROR,
        logging.WARNING,
        logging.INFO,
        logging.DEBUG,
        logging.DEBUG,
    ]
    assert [logs.library_level(v) for v in (-2, -1, 0, 1, 2)] == [
        logging.ERROR,
        logging.WARNING,
        logging.WARNING,
        logging.INFO,
        logging.DEBUG,
    ]


def test_messages_go_to_stderr_and_quiet_silences_them(tmp_path: Path) -> None:
    model = str(ROOT / "examples" / "building.toml")
    args = ["stream", "--model", model, "--seed", "1", "--sidecar", str(tmp_path / "g.json")]
    loud = runner.invoke(app, args, input="410\n411\n")
    assert loud.exit_code == 0, loud.output
    assert "reading(s) noised" in loud.stderr and "warning: --seed" in loud.stderr
    assert "noised" not in loud.stdout and len(loud.stdout.splitlines()) == 2
    quiet = runner.invoke(app, ["-q", *args], input="410\n411\n")
    assert "noised" not in quiet.stderr and "warning: --seed" in quiet.stderr
    silent = runner.invoke(app, ["-qq", *args], input="410\n411\n")
    assert silent.stderr == "" and len(silent.stdout.splitlines()) == 2
    verbose = runner.invoke(app, ["-v", "reproduce", "-h"])
    assert verbose.exit_code == 0


# -- missing extras: one line, the pip command, nothing written ------------------------------------------------


def _without(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """Make ``modules`` look uninstalled (imports fail, find_spec returns None)."""
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


def _one_error_line(result, extra: str) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    assert f"pip install 'privnoise[{extra}]'" in lines[0], lines[0]
    return lines[0]


def test_demo_without_the_server_extra_fails_before_writing(monkeypatch, tmp_path: Path) -> None:
    _without(monkeypatch, "fastapi", "uvicorn")
    out = tmp_path / "demo"
    line = _one_error_line(runner.invoke(app, ["demo", "--output", str(out)]), "server")
    assert line.startswith("error: privnoise demo needs the optional packages 'fastapi', 'uvicorn'")
    assert not out.exists()


def test_demo_names_every_missing_extra_in_one_line(monkeypatch, tmp_path: Path) -> None:
    _without(monkeypatch, "httpx", "matplotlib")
    line = _one_error_line(runner.invoke(app, ["demo", "--output", str(tmp_path / "d")]), "plots,server")
    assert "'httpx', 'matplotlib'" in line and not (tmp_path / "d").exists()


def test_reproduce_without_plots_writes_nothing(monkeypatch, tmp_path: Path) -> None:
    _without(monkeypatch, "matplotlib")
    out = tmp_path / "r"
    _one_error_line(runner.invoke(app, ["reproduce", "nageswaran", "--output", str(out)]), "plots")
    assert not out.exists()
    with pytest.raises(MissingExtraError, match=r"pip install 'privnoise\[plots\]'"):
        privnoise.reproduce.run("nageswaran", out)
    assert not out.exists()


def test_server_commands_without_the_server_extra(monkeypatch, tmp_path: Path) -> None:
    _without(monkeypatch, "sqlalchemy")
    for args in (["serve", "--config", "x.toml"], ["admin", "init", "--config", "x.toml"]):
        line = _one_error_line(runner.invoke(app, args), "server")
        assert "privnoise " + args[0] in line


def test_postgres_url_without_psycopg(monkeypatch, tmp_path: Path) -> None:
    config = tmp_path / "owner.toml"
    config.write_text(
        (ROOT / "examples" / "owner.toml")
        .read_text()
        .replace('database = "sqlite"', 'database = "postgresql://u:p@127.0.0.1:1/db"')
    )
    (tmp_path / "meters.csv").write_text((ROOT / "examples" / "meters.csv").read_text())
    _without(monkeypatch, "psycopg")
    _one_error_line(runner.invoke(app, ["admin", "init", "--config", str(config)]), "postgres")


def test_optimize_and_plots_without_their_extras(monkeypatch, tmp_path: Path) -> None:
    _without(monkeypatch, "sklearn")
    _one_error_line(runner.invoke(app, ["optimize", "--iterations", "5"]), "ml")
    monkeypatch.delitem(sys.modules, "sklearn")
    _without(monkeypatch, "matplotlib")
    plot = tmp_path / "p.png"
    _one_error_line(
        runner.invoke(
            app,
            [
                "recoverability",
                "--matrix",
                str(ROOT / "examples" / "A.csv"),
                "--rho",
                "4",
                "--plot",
                str(plot),
            ],
        ),
        "plots",
    )
    assert not plot.exists()
    ok = runner.invoke(app, ["recoverability", "--matrix", str(ROOT / "examples" / "A.csv"), "--rho", "4"])
    assert ok.exit_code == 0 and "π(ρ) = 3" in ok.stdout  # no plot asked: no plotting extra needed


def test_library_features_name_their_extra(monkeypatch) -> None:
    _without(monkeypatch, "dp_accounting")
    with pytest.raises(MissingExtraError) as info:
        privnoise.dp.accountant_for(mode="pld")
    assert str(info.value) == (
        "accountant_for(mode='pld') needs the optional package 'dp_accounting' (not installed): "
        "pip install 'privnoise[dp]'"
    )
    assert isinstance(info.value, ImportError)
    privnoise.dp.accountant_for(mode="pure")  # the exact modes need nothing
    _without(monkeypatch, "sklearn", "sklearn.datasets")  # also when an earlier test has imported it
    with pytest.raises(MissingExtraError, match=r"privnoise\[ml\]"):
        privnoise.optimization.load_diabetes()
    _without(monkeypatch, "httpx")
    monkeypatch.delitem(sys.modules, "privnoise.client", raising=False)
    import importlib

    with pytest.raises(
        MissingExtraError, match=r"privnoise.client needs .* pip install 'privnoise\[server\]'"
    ):
        importlib.import_module("privnoise.client")


def test_a_broken_installed_package_is_not_reported_as_missing(monkeypatch, tmp_path: Path) -> None:
    from privnoise._optional import require

    package = tmp_path / "brokenpkg_for_privnoise"
    package.mkdir()
    (package / "__init__.py").write_text("import dependency_that_is_not_there_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError) as info:
        require("brokenpkg_for_privnoise", feature="x")
    assert not isinstance(info.value, MissingExtraError)
    assert info.value.name == "dependency_that_is_not_there_xyz"
    with pytest.raises(
        MissingExtraError, match=r"x needs the optional package 'not_installed_xyz'.*privnoise\[all\]"
    ):
        require("not_installed_xyz.sub", feature="x")


@pytest.mark.parametrize(
    ("args", "level", "access"),
    [
        ([], "warning", False),
        (["-v"], "info", False),
        (["--log-level", "debug", "--access-log"], "debug", True),
    ],
)
def test_serve_logs_to_stderr_at_the_chosen_level(monkeypatch, tmp_path: Path, args, level, access) -> None:
    import shutil

    import uvicorn

    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    server_log = logging.getLogger("privnoise.server")
    monkeypatch.setattr(server_log, "level", server_log.level)  # restored after the test
    seen: dict[str, object] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: seen.update(kwargs))
    verbosity = [a for a in args if a == "-v"]
    options = [a for a in args if a != "-v"]
    config = str(tmp_path / "examples" / "owner.toml")
    result = runner.invoke(app, [*verbosity, "serve", "--config", config, "--port", "8123", *options])
    assert result.exit_code == 0, result.output
    assert seen["log_level"] == level and seen["access_log"] is access
    assert (
        seen["log_config"] is None
    )  # uvicorn keeps the command's stderr handler (its default logs to stdout)
    assert logging.getLogger("privnoise.server").level == logging.getLevelName(level.upper())
