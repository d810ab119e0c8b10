"""Modes are typed as Literal: a type checker rejects a misspelt mode (mypy on a small snippet); and the package
itself type-checks cleanly under the project's mypy configuration, so that new errors fail the tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api")

ROOT = Path(__file__).resolve().parents[1]

SNIPPET = """\
import privnoise as pn

pn.dp.accountant_for(mode="pld")
pn.dp.accountant_for(mode="pdl")
pn.queries.mean(3, bounds=(0.0, 1.0)).sensitivity(norm="l3")
pn.dp.lattice_sensitivity(1.0, 0.5, norm="l2")
pn.dp.optimal_noise_lp(1.0, loss="mes")
"""


def test_mypy_rejects_misspelt_modes(tmp_path: Path) -> None:
    snippet = tmp_path / "snippet.py"
    snippet.write_text(SNIPPET)
    out, err, status = mypy_api.run(
        [
            str(snippet),
            "--no-incremental",
            f"--cache-dir={os.devnull}",  # no cache written: the package's run below keeps the one of `make lint`
            "--follow-imports=silent",
            "--python-version=3.11",
            "--show-error-codes",
            "--no-error-summary",
            "--config-file=/dev/null",
        ]
    )
    assert status == 1, out + err
    errors = [line for line in out.splitlines() if ": error:" in line]
    lines = sorted(int(line.split(":")[1]) for line in errors)
    assert lines == [4, 5, 7], out  # "pdl", "l3" and "mes"; the valid calls pass
    assert all("[arg-type]" in line for line in errors), out
    assert "Literal['pdl']" in errors[0] and "Literal['pure', 'approximate', 'pld', 'rdp', 'zcdp']" in errors[0], (
        errors[0]
    )


def test_the_package_type_checks_under_the_project_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    if not (ROOT / "src" / "privnoise").is_dir():
        pytest.skip("the source tree is not next to the tests")
    # mypy as `make lint` runs it (the files and options of pyproject.toml), so the two share the git-ignored
    # cache: a warm run takes seconds, a cold one under a minute
    monkeypatch.chdir(ROOT)
    out, err, status = mypy_api.run([])
    assert status == 0, out + err
