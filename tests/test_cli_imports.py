"""The command line imports only what a command needs: a DP release of a small CSV file loads neither pandas nor scipy
nor pyarrow (each costs more import time than the whole release; a small file is read by the strict reader), nor the
reproduction cache; a plain release or stream command line is parsed without pydantic (typer's per-option converters) and
without building the application or importing any other command's module, prints without rich's console and scans no
installed distribution's entry points."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import importlib.metadata, json, sys
scans = []
every_entry_point = importlib.metadata.entry_points
def counted(**selection):
    scans.append(selection)
    return every_entry_point(**selection)
importlib.metadata.entry_points = counted
sys.argv = ["privnoise", *json.loads(sys.argv[1])]
from privnoise.cli import main
try:
    main()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
heavy = sorted(m for m in ("pandas", "scipy", "pyarrow", "sqlglot", "matplotlib", "privnoise.reproduce._cache")
               if m in sys.modules)
command = "privnoise._cli." + {"release": "systems", "stream": "release"}[sys.argv[1]]  # the other one
unneeded = sorted(m for m in ("pydantic", "typer._adapters", "rich.console", "privnoise._cli.application",
                              command, "privnoise._cli.server", "privnoise._cli.demo_command",
                              "privnoise._cli.optimization", "privnoise._cli.sql_command") if m in sys.modules)
scanned = len(scans)
print(json.dumps({"code": code, "heavy": heavy, "unneeded": unneeded, "scanned": scanned}), file=sys.stderr)
"""


def _plain_release(tmp_path: Path) -> dict[str, object]:
    """What the probe reports of a plain DP release of a small CSV file (it must succeed and print the mean)."""
    pytest.importorskip("pyarrow")
    rows = "\n".join(f"{v:.3f}" for v in [1.5, 2.25, 3.0, 9.5, 0.0] * 40)
    (tmp_path / "small.csv").write_text("kwh\n" + rows + "\n", encoding="utf-8")
    line = ["release", "small.csv", "--column", "kwh", "--query", "mean", "--bounds", "0,10", "--epsilon", "0.01"]
    report, out = _probe(tmp_path, line)
    assert "mean:" in out
    return report


def _probe(directory: Path, line: list[str]) -> tuple[dict[str, object], str]:
    """What the probe reports of the command line ``line`` (it must succeed), and its stdout."""
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(line)], cwd=directory, capture_output=True,
                          text=True, timeout=300, check=False)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["code"] in (0, None), done.stderr
    return report, done.stdout


def test_a_dp_release_of_a_small_csv_file_imports_no_pandas_scipy_pyarrow_or_sqlglot(tmp_path: Path) -> None:
    report = _plain_release(tmp_path)
    assert report["heavy"] == [], report


def test_a_plain_release_loads_no_pydantic_no_rich_console_and_scans_no_entry_points(tmp_path: Path) -> None:
    report = _plain_release(tmp_path)
    assert report["unneeded"] == [], report
    assert report["scanned"] == 0, report


def test_a_plain_stream_loads_no_pydantic_no_rich_console_and_no_other_command(tmp_path: Path) -> None:
    (tmp_path / "readings.csv").write_text("time,co2\n0,410\n1,412\n", encoding="utf-8")
    model = Path(__file__).resolve().parents[1] / "examples" / "building.toml"
    report, out = _probe(tmp_path, ["stream", "--model", str(model), "--columns", "co2", "--input", "readings.csv",
                                    "--sidecar", "g.json"])
    assert out.splitlines()[0] == "time,co2" and len(out.splitlines()) == 3
    assert (tmp_path / "g.json").is_file()
    assert report["unneeded"] == [], report
    assert report["heavy"] == [], report
