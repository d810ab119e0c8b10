"""Modes are typed as Literal: a type checker rejects a misspelt mode (mypy on a small snippet)."""

from __future__ import annotations

from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api")

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
