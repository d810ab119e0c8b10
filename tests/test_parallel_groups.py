"""``make test`` runs ``pytest -n 2 --dist loadgroup``: tests marked ``xdist_group`` (the Spark tests and the Spark
guide, which share one Spark session per worker, and the executor-loss scenarios) must run in one worker. A run of
a small suite in a subprocess checks that the installed pytest and pytest-xdist keep a group together, whether
the mark is written on the test or added by a conftest hook that runs first (as ``tests/spark/conftest.py``
does: a hook that runs after pytest-xdist's adds a mark nobody reads)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("xdist")

CONFTEST = '''
import pytest
from pathlib import Path

HERE = Path(__file__).parent


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.xdist_group("hooked"))
'''

TESTS = '''
import os
from pathlib import Path

import pytest


@pytest.mark.parametrize("i", range(8))
def test_hooked(i):
    (Path(os.environ["GROUPS_OUT"]) / f"hooked-{i}-{os.environ['PYTEST_XDIST_WORKER']}").touch()


@pytest.mark.xdist_group("marked")
@pytest.mark.parametrize("i", range(8))
def test_marked(i):
    (Path(os.environ["GROUPS_OUT"]) / f"marked-{i}-{os.environ['PYTEST_XDIST_WORKER']}").touch()


@pytest.mark.parametrize("i", range(8))
def test_free(i):
    (Path(os.environ["GROUPS_OUT"]) / f"free-{i}-{os.environ['PYTEST_XDIST_WORKER']}").touch()
'''


def test_a_group_runs_in_one_worker(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "grouped").mkdir()
    (tmp_path / "grouped" / "conftest.py").write_text(CONFTEST)
    (tmp_path / "grouped" / "test_groups.py").write_text(TESTS)
    out = tmp_path / "ran"
    out.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))} | {"GROUPS_OUT": str(out)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-q",
                           "-p", "no:cacheprovider", "grouped"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    workers: dict[str, set[str]] = {}
    for ran in out.iterdir():
        group, _, worker = ran.name.split("-")
        workers.setdefault(group, set()).add(worker)
    assert len(list(out.iterdir())) == 24 and set(workers) == {"hooked", "marked", "free"}
    assert len(workers["marked"]) == 1, f"a marked group ran in {sorted(workers['marked'])}"
    assert len(workers["hooked"]) == 1, f"a group added by a conftest hook ran in {sorted(workers['hooked'])}"
