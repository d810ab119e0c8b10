"""The built wheel in a fresh environment, away from the repository, with no extras: the command, one release,
``import privnoise``, the one-line message of a missing extra, and the installed size of the core."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The core's installed size (numpy, scipy, randomgen, typer, rich and their dependencies, bytecode included) must
#: stay below this. numpy and scipy alone take about 205 MB on Linux x86-64 (each wheel ships its own OpenBLAS;
#: scipy is 140 MB with its bytecode), so the core cannot be smaller than that; the limit catches any other heavy
#: package creeping back into the core (matplotlib, pandas, scikit-learn, psycopg each add 30–70 MB). sqlglot, the
#: SQL reader of the core's private SQL and SQL conditions, adds about 10 MB.
CORE_LIMIT_MB = 265.0
#: What a fresh environment holds before privnoise: the installer itself.
INSTALLER = ("pip", "setuptools", "_distutils_hack", "pkg_resources", "distutils-precedence.pth")

pytestmark = pytest.mark.wheel


def _run(*args: str | Path, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False
    )
    if check:
        assert done.returncode == 0, f"{args}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def _size_mb(site: Path) -> float:
    total = 0
    for entry in site.iterdir():
        if entry.name.split("-")[0] in INSTALLER or entry.name in INSTALLER:
            continue
        files = (
            [entry]
            if entry.is_file()
            else [p for p in entry.rglob("*") if p.is_file() and not p.is_symlink()]
        )
        total += sum(p.stat().st_size for p in files)
    return total / 2**20


def test_the_wheel_installs_and_runs_without_extras(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", dist, ROOT, cwd=tmp_path)
    wheels = list(dist.glob("privnoise-*.whl"))
    assert len(wheels) == 1
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    python, command = venv / "bin" / "python", venv / "bin" / "privnoise"
    _run(python, "-m", "pip", "install", "--quiet", wheels[0], cwd=tmp_path)  # dependencies from the index

    work = tmp_path / "work"  # away from the repository: nothing but the installed wheel is importable
    work.mkdir()
    helped = _run(command, "--help", cwd=work)
    assert "Usage: privnoise" in helped.stdout and "reproduce" in helped.stdout

    (work / "meters.csv").write_text("kwh\n" + "".join(f"{1 + k % 4}.5\n" for k in range(200)))
    released = _run(
        command, "release", "meters.csv", "--column", "kwh", "--query", "mean", "--bounds", "0,5",
        "--support", "-0.01,0.01", "--json", cwd=work,
    )  # fmt: skip
    payload = json.loads(released.stdout)
    assert (
        payload["guarantee"]["notion"] == "fisher-information" and abs(payload["value"] - 3.0) <= 0.01
    )  # cos² noise on [-0.01, 0.01]

    probe = _run(
        python,
        "-c",
        "import importlib.util, json, privnoise as pn\n"
        "extras = ['matplotlib', 'pandas', 'sklearn', 'fastapi', 'httpx', 'dp_accounting', 'psycopg', 'dask']\n"
        "try:\n    pn.dp.accountant_for(mode='pld')\nexcept pn.MissingExtraError as exc:\n    message = str(exc)\n"
        "print(json.dumps({'file': pn.__file__, 'version': pn.__version__, 'message': message,\n"
        "    'installed': [m for m in extras if importlib.util.find_spec(m)]}))",
        cwd=work,
    )
    info = json.loads(probe.stdout)
    assert str(venv) in info["file"] and info["installed"] == []
    assert info["message"].endswith("pip install 'privnoise[dp]'")

    demo = _run(command, "demo", "--output", "out", cwd=work, check=False)
    assert demo.returncode == 2 and not (work / "out").exists()
    assert demo.stderr.strip().count("\n") == 0 and "pip install 'privnoise[plots,server]'" in demo.stderr

    site = next((venv / "lib").glob("python3*/site-packages"))
    size = _size_mb(site)
    print(f"installed size of the core (site-packages without the installer): {size:.1f} MB")
    assert size <= CORE_LIMIT_MB, size
