"""Every row of the Nageswaran reproduction report is a test, with second methods written here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from privnoise.reproduce import Report
from privnoise.reproduce import nageswaran as ng

# The tolerance of each row's printed-against-computed comparison, stated here (rows carry none).
TOLERANCES: dict[str, float] = {
    "lemma2-svd": 1e-9,
    "lemma3-nonzero-rows": 1e-9,
    "appC-constraint-all-rho": 1e-9,
    "appC-equality-up-to-total": 1e-9,
    "appC-equality-beyond-total": 0.05,
    "appC-privacy-all-rho": 1e-9,
    "appC-recoverability": 1e-09,
    "converse-random": 1e-09,
    "eq27-privacy": 1e-09,
    "eq29-affine": 1e-09,
    "eq6-descending-4": 1e-09,
    "eq6-descending-8.5": 1e-09,
    "eq7-mmse-given-AX": 1e-09,
    "fig1-pi-0": 1e-09,
    "fig1-pi-13": 1e-09,
    "fig1-pi-2": 1e-09,
    "fig1-pi-21": 1e-09,
    "fig1-pi-29": 1e-09,
    "fig1-pi-35": 1e-09,
    "fig1-pi-4": 1e-09,
    "fig1-pi-8.5": 1e-09,
    "general-identity": 1e-08,
    "mc-mmse": 0.01,
    "mc-recoverability": 0.01,
    "remark-i-slope-1": 1e-09,
    "remark-i-slope-2": 1e-09,
    "remark-i-slope-3": 1e-09,
    "remark-i-slope-4": 1e-09,
    "remark-ii-full-privacy": 1e-09,
    "remark-iii-monotone": 1e-09,
    "sec4-conjecture-not-affine": 1e-09,
}


S = ng.SETUP

REQUIRED_KEYS = {
    *(f"fig1-pi-{r:g}" for r in ng.FIGURE1_PRINTED),
    "remark-i-slope-1",
    "remark-i-slope-2",
    "remark-i-slope-3",
    "remark-i-slope-4",
    "eq7-mmse-given-AX",
    "remark-ii-full-privacy",
    "remark-iii-monotone",
    "eq6-descending-4",
    "eq6-descending-8.5",
    "appC-recoverability",
    "eq27-privacy",
    "mc-recoverability",
    "mc-mmse",
    "eq29-affine",
    "converse-random",
    "general-identity",
    "sec4-conjecture-not-affine",
    "lemma2-svd",
    "lemma3-nonzero-rows",
    "appC-constraint-all-rho",
    "appC-equality-up-to-total",
    "appC-equality-beyond-total",
    "appC-privacy-all-rho",
}


@pytest.fixture(scope="module")
def report() -> Report:
    return ng.build_report(None)


def eq9(rho: float, n: int = 5, s: tuple[float, ...] = (2.0, 3.0, 4.0)) -> float:
    """Eq. (9) written out piece by piece (independent of privnoise)."""
    before = 0.0
    for i, si in enumerate(s):
        if rho <= before + si**2:
            return n - len(s) + i + (rho - before) / si**2
        before += si**2
    return float(n)


def test_keys_and_statuses(report):
    keys = {r.key for r in report.rows}
    assert keys == REQUIRED_KEYS
    assert [r.key for r in report.rows if r.status == "erratum"] == ["appC-equality-beyond-total"]
    for row in report.rows:
        if row.status == "match":
            assert row.agrees(rtol=TOLERANCES[row.key]), row
        elif row.status == "erratum":
            assert not row.agrees(rtol=TOLERANCES[row.key]), row


def test_figure1_matrix_has_the_papers_singular_values():
    np.testing.assert_allclose(np.linalg.svd(ng.figure1_matrix(), compute_uv=False), [4.0, 3.0, 2.0])


@pytest.mark.parametrize("rho", list(ng.FIGURE1_PRINTED))
def test_printed_figure1_values_follow_eq9(report, rho):
    assert ng.FIGURE1_PRINTED[rho] == pytest.approx(eq9(rho), abs=1e-12)
    assert report.row(f"fig1-pi-{rho:g}").computed == pytest.approx(eq9(rho), abs=1e-9)


def test_check_rows(report):
    assert report.row("remark-iii-monotone").computed <= 1e-12
    for rho in (4.0, 8.5):
        row = report.row(f"eq6-descending-{rho:g}")
        # descending allocation written out: budget into s = 4 first, then 3, then 2
        left, priv = rho, 2.0
        for si in (4.0, 3.0, 2.0):
            used = min(left, si**2)
            priv += used / si**2
            left -= used
        assert row.computed == pytest.approx(priv)
        assert row.computed < row.printed - 0.5
    conv = report.row("converse-random")
    assert conv.computed <= conv.printed + 1e-9
    conj = report.row("sec4-conjecture-not-affine")
    assert conj.computed >= conj.printed - 1e-9 and conj.printed > 0.74


def test_monte_carlo_rows_within_one_percent(report):
    assert report.row("mc-recoverability").computed == pytest.approx(S.rho_scheme, rel=0.01)
    assert report.row("mc-mmse").computed == pytest.approx(eq9(S.rho_scheme), rel=0.01)


def test_writes_report_and_figure(tmp_path: Path):
    rep = ng.build_report(tmp_path)
    assert (tmp_path / "report.md").exists() and (tmp_path / "figure1.png").exists()
    assert rep.figures and "figure1.png" in (tmp_path / "report.md").read_text(encoding="utf-8")
    other = tmp_path / "nofig"
    ng.build_report(other, figures=False)
    assert (other / "report.md").exists() and not (other / "figure1.png").exists()


def test_lemma_rows_and_appendix_c_over_the_whole_rho_range(report):
    """The new rows are differences that must vanish (absolute tolerance 1e-9 on values of size ≤ 58)."""
    for key in (
        "lemma2-svd",
        "lemma3-nonzero-rows",
        "appC-constraint-all-rho",
        "appC-equality-up-to-total",
        "appC-privacy-all-rho",
    ):
        assert abs(report.row(key).computed) <= 1e-9, key
    # an independent check beyond the last vertex: ρ > Σsᵢ² = 29 gives π = n and the response reveals nothing
    from privnoise import recoverability as rec

    a = ng.figure1_matrix()
    for rho in (29.0, 30.0, 58.0):
        resp = rec.optimal_response(a, rho)
        assert resp.privacy() == pytest.approx(5.0, rel=1e-12)
        assert resp.recoverability_error() == pytest.approx(29.0, rel=1e-12)  # E‖AX‖² = Σsᵢ² ≤ ρ
    assert eq9(58.0) == 5.0


def scheme_error(a: np.ndarray, rho: float) -> float:
    """E‖AX − Z_o‖² of Z_o = ŨD_aŨᵀAX + ŨD_noN, eqs. (23)–(25) and the Remark, written out with numpy."""
    u, sv, _ = np.linalg.svd(a)
    order = np.argsort(sv)  # eq. (6): ascending
    s, ut = sv[order], u[:, order]
    parts, left = [], rho
    for si in s:  # (25)
        parts.append(min(left, si**2))
        left -= parts[-1]
    p = np.array(parts)
    f = ut @ np.diag(1 - p / s**2) @ ut.T @ a
    noise = p - p**2 / s**2
    return float(np.sum((a - f) ** 2) + np.sum(noise))


def test_appendix_c_equality_fails_beyond_the_total(report):
    """Appendix C prints E‖S̃VᵀX − Z̃_o‖² = Σρᵢ = ρ for every ρ; with (25) it is Σsᵢ² once ρ ≥ Σsᵢ²."""
    a = ng.figure1_matrix()
    row = report.row("appC-equality-beyond-total")
    rho = 58.0  # 2Σsᵢ², the end of the report's ρ grid
    assert row.status == "erratum" and row.printed == rho  # the printed right-hand side, ρ
    assert scheme_error(a, rho) == pytest.approx(29.0, rel=1e-12)
    assert float(row.computed) == pytest.approx(scheme_error(a, rho), rel=1e-9)
    assert abs(float(row.printed) - float(row.computed)) == pytest.approx(29.0, rel=1e-9)
    # up to Σsᵢ² the printed equality holds
    for r in (0.0, 4.0, 8.5, 13.0, 29.0):
        assert scheme_error(a, r) == pytest.approx(r, abs=1e-9)
