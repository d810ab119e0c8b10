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
    "c-adjacency": 0.0,
    "c-t+1-samples": 0.05,
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
    "c-adjacency",
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
    "lemma-iii1",
    "lemma-iii2",
    "thm-iii3-sigma",
    "thm-iii3-tv",
    "cor-iii4-sigma",
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


# Section IV prints "By setting c=2.02, the pair of input probability distributions parameterized by one individual
# and by two individual is in Adj_2^c", with t = 2, so U₂ has t+1 = 3 samples (Definition II.1: N_{(t+1)m}).
PRINTED_C = 2.02


def _joint_law(occupants: int, samples: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean and covariance of (x₀, u(0), …) written out from Section IV (x₀ ~ N(90, 10), u ~ N(20 + n, 0.1n))."""
    mean = np.array([90.0] + [20.0 + occupants] * samples)
    cov = np.diag([10.0] + [0.1 * occupants] * samples)
    return mean, cov


def test_printed_c_is_not_the_w2_of_the_papers_pair(report: Report) -> None:
    row = report.row("c-t+1-samples")
    assert row.status == "erratum" and row.printed == PRINTED_C
    # second method: the general Gaussian W₂ formula (matrix square roots), not the diagonal closed form
    w3 = _gauss_w2(*_joint_law(1, 3), *_joint_law(2, 3))
    w4 = _gauss_w2(*_joint_law(1, 4), *_joint_law(2, 4))
    assert float(row.computed) == pytest.approx(w3, rel=1e-9)
    assert w3 == pytest.approx(1.7468, abs=5e-5)
    assert abs(PRINTED_C - w3) > 0.25  # 2.02 is not the W₂ of three samples ...
    assert round(w4, 2) == PRINTED_C  # ... but of four
    assert float(report.row("c-t+2-samples").computed) == pytest.approx(w4, rel=1e-9)
    adj = report.row("c-adjacency")  # the printed sentence itself (membership in Adj₂^c) holds
    assert adj.printed == PRINTED_C and float(adj.computed) == pytest.approx(w3, rel=1e-9) and w3 <= PRINTED_C


def test_figures(report: Report, tmp_path: Path) -> None:
    assert [name for name, _ in report.figures] == ["figure1.png", "figure2.png"]


def _gauss_kl(m1: np.ndarray, s1: np.ndarray, m2: np.ndarray, s2: np.ndarray) -> float:
    """KL(N(m1, s1) ‖ N(m2, s2)) written out (independent of privnoise)."""
    k = m1.size
    inv = np.linalg.inv(s2)
    d = m2 - m1
    return 0.5 * float(
        np.trace(inv @ s1) + d @ inv @ d - k + np.linalg.slogdet(s2)[1] - np.linalg.slogdet(s1)[1]
    )


def _gauss_w2(m1: np.ndarray, s1: np.ndarray, m2: np.ndarray, s2: np.ndarray) -> float:
    from scipy.linalg import sqrtm

    r = np.real(sqrtm(s2))
    cross = np.real(sqrtm(r @ s1 @ r))
    return math.sqrt(max(float(np.sum((m1 - m2) ** 2) + np.trace(s1 + s2 - 2 * cross)), 0.0))


def test_lemmas_theorem_iii3_and_corollary_iii4_rows(report: Report) -> None:
    s = lkc.SETUP
    system, x0 = s.system(), s.x0()
    from privnoise.systems import observability_matrix, toeplitz_matrix

    on = np.hstack([observability_matrix(system, 2), toeplitz_matrix(system, 2)])
    laws = [x0 & s.inputs(k, 3) for k in (1, 2)]
    sigma = float(report.row("sigma-delta-0.1").computed)
    outs = [(on @ law.mean, on @ law.cov @ on.T + sigma**2 * np.eye(3)) for law in laws]
    skl = _gauss_kl(*outs[0], *outs[1]) + _gauss_kl(*outs[1], *outs[0])
    floor = min(float(np.linalg.eigvalsh(c)[0]) for _, c in outs)
    bound = 2 * _gauss_w2(*outs[0], *outs[1]) ** 2 / floor
    row = report.row("lemma-iii1")
    assert row.computed == pytest.approx(skl, rel=1e-9)
    assert row.printed == pytest.approx(bound, rel=1e-9)
    assert skl <= bound
    row = report.row("lemma-iii2")
    w_in = _gauss_w2(laws[0].mean, laws[0].cov, laws[1].mean, laws[1].cov)
    w_out = _gauss_w2(on @ laws[0].mean, on @ laws[0].cov @ on.T, on @ laws[1].mean, on @ laws[1].cov @ on.T)
    assert row.computed == pytest.approx(w_out, rel=1e-6)
    assert row.printed == pytest.approx(np.linalg.norm(on, 2) * w_in, rel=1e-9)
    assert w_out <= row.printed
    assert float(report.row("thm-iii3-tv").computed) <= 0.1
    lam = float(np.linalg.eigvalsh(on.T @ on)[-1])
    assert report.row("cor-iii4-sigma").computed == pytest.approx(
        math.sqrt(2.02**2 * lam / (2 * 0.1**2)), rel=1e-9
    )
    assert report.row("cor-iii4-sigma").computed >= report.row("sigma-delta-0.1").computed
