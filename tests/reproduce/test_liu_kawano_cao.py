"""Every row of the Liu–Kawano–Cao reproduction is a test; second methods are written here independently."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from privnoise.reproduce import Report
from privnoise.reproduce import liu_kawano_cao as lkc

# The tolerance of each row's printed-against-computed comparison, stated here (rows carry none).
TOLERANCES: dict[str, float] = {
    "c-t+1-samples": 0.0,
    "c-t+2-samples": 0.005,
    "norm-N2": 1e-06,
    "printed-sigma-equals-0.1": 1e-05,
    "printed-sigma-equals-0.2": 1e-05,
    "sigma-delta-0.1": 0.0001,
    "sigma-delta-0.2": 0.0001,
    "tv-certified-0.1": 0.0,
    "tv-certified-0.2": 0.0,
    "tv-mc-0.1": 0.014,
    "tv-mc-0.2": 0.013,
    "tv-printed-0.1": 0.0,
    "tv-printed-0.2": 0.0,
}


REQUIRED = {
    "c-t+1-samples",
    "c-t+2-samples",
    "sigma-delta-0.1",
    "sigma-delta-0.2",
    "printed-sigma-equals-0.1",
    "printed-sigma-equals-0.2",
    "tv-certified-0.1",
    "tv-certified-0.2",
    "tv-printed-0.1",
    "tv-printed-0.2",
    "tv-mc-0.1",
    "tv-mc-0.2",
}
N2 = np.array([[0.0, 0, 0], [1, 0, 0], [0.9, 1, 0]])


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    return lkc.build_report(tmp_path_factory.mktemp("lkc"))


ALL_KEYS = sorted(REQUIRED | {"norm-N2"})


def test_the_report_has_exactly_the_tested_rows(report: Report) -> None:
    assert {r.key for r in report.rows} == set(ALL_KEYS)


@pytest.mark.parametrize("key", ALL_KEYS)
def test_row(report: Report, key: str) -> None:
    r = report.row(key)
    if r.status == "match":
        assert r.agrees(rtol=TOLERANCES[r.key]), r
    elif r.status == "erratum":
        assert not r.agrees(rtol=TOLERANCES[r.key]), r
    else:
        assert r.status == "check" and r.reason, r  # verified below by an independent computation


def test_independent_values(report: Report) -> None:
    per = 1 + (math.sqrt(0.1) - math.sqrt(0.2)) ** 2
    assert report.row("c-t+1-samples").computed == pytest.approx(math.sqrt(3 * per))
    assert report.row("c-t+2-samples").computed == pytest.approx(math.sqrt(4 * per))
    lam = np.linalg.eigvalsh(N2.T @ N2)[-1]
    for d in (0.1, 0.2):
        assert report.row(f"sigma-delta-{d:g}").computed == pytest.approx(
            math.sqrt(2.02**2 * lam / (2 * d * d))
        )
        for kind in ("certified", "printed"):
            assert float(report.row(f"tv-{kind}-{d:g}").computed) <= d


def test_figures(report: Report, tmp_path: Path) -> None:
    assert [name for name, _ in report.figures] == ["figure1.png", "figure2.png"]
