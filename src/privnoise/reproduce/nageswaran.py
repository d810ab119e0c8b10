"""Reproduction of Nageswaran, "Gaussian data privacy under linear function recoverability".

Rows: Figure 1 (π(ρ) for n = 5, s = (2, 3, 4)) at its vertices and mid-segments, the slopes of eq. (9),
Remarks (i)–(iii), eq. (7), the scheme (23)–(25) in closed form (Appendix C, eq. (27)) and by Monte Carlo, Appendix
C's equality E‖S̃VᵀX − Z̃_o‖² = ρ (printed for every ρ; it fails beyond Σsᵢ², an erratum), the
affine query (29), the ascending-order requirement of eq. (6), a converse check with random linear-Gaussian
responses, and the general-covariance extension (Section IV). Figure 1 has no printed numbers: its *printed*
column holds eq. (9) evaluated by hand at the figure's parameters.

Figures are drawn with matplotlib's Agg canvas inside :func:`build_report`; importing this module does not
import matplotlib.

References
----------
A. Nageswaran, "Gaussian data privacy under linear function recoverability" (ISIT 2022, extended version).

Examples
--------
>>> from privnoise.reproduce import nageswaran
>>> report = nageswaran.build_report(None)                    # doctest: +SKIP
>>> report.row("fig1-pi-13").status                          # doctest: +SKIP
'match'
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import recoverability as rec
from ..random import default_rng
from ._report import Report, RowBuilder
from .nageswaran_rows import general_rows, lemma_rows, privacy_by_hand

__all__ = ["FIGURE1_PRINTED", "SETUP", "SOURCE", "Setup", "build_report", "figure1_matrix"]

SOURCE = (
    'A. Nageswaran, "Gaussian data privacy under linear function recoverability" (Theorem 1, Remarks (i)–(iii), '
    "Figure 1, eq. (23)–(29), Appendix C, Section IV)."
)

#: Figure 1 read through eq. (9) at n = 5, s = (2, 3, 4): ρ → π(ρ). Vertices at ρ = 0, 4, 13, 29.
FIGURE1_PRINTED: dict[float, float] = {
    0.0: 2.0,
    2.0: 2.5,
    4.0: 3.0,
    8.5: 3.5,
    13.0: 4.0,
    21.0: 4.5,
    29.0: 5.0,
    35.0: 5.0,
}


@dataclass(frozen=True)
class Setup:
    """Parameters of the reproduction."""

    n: int = 5
    s: tuple[float, ...] = (2.0, 3.0, 4.0)
    matrix_seed: int = 2022
    rho_scheme: float = 8.5
    mc_draws: int = 400_000
    mc_seed: int = 17
    converse_trials: int = 2000
    converse_seed: int = 5
    offset: tuple[float, float, float] = (1.0, -2.0, 0.5)
    general_cov: tuple[tuple[float, float], tuple[float, float]] = ((1.0, 0.5), (0.5, 1.0))
    general_rho: float = 1e-6
    rho_grid_points: int = 59  # App. C over [0, 2 Σ sᵢ²], beyond the last vertex Σ sᵢ²


SETUP = Setup()


def figure1_matrix(s: Setup = SETUP) -> NDArray[np.float64]:
    """A 3 × 5 matrix U diag(4, 2, 3) Vᵀ with random orthogonal U, V (singular values deliberately unsorted)."""
    g = np.random.default_rng(s.matrix_seed)
    u, _ = np.linalg.qr(g.standard_normal((3, 3)))
    v, _ = np.linalg.qr(g.standard_normal((s.n, s.n)))
    diag = np.zeros((3, s.n))
    diag[[0, 1, 2], [0, 1, 2]] = (s.s[2], s.s[0], s.s[1])
    return np.asarray(u @ diag @ v.T)


def _theorem1_rows(b: RowBuilder, s: Setup, a: NDArray[np.float64]) -> None:
    for rho, printed in FIGURE1_PRINTED.items():
        b.add(
            f"fig1-pi-{rho:g}",
            f"Fig. 1 / eq. (9): π({rho:g}) for n = 5, s = (2, 3, 4)",
            printed,
            rec.max_privacy(a, rho),
            "match",
            "max_privacy on U diag(s) Vᵀ with random orthogonal U, V (eq. (8))",
        )
    corners = np.array([0.0, 4.0, 13.0, 29.0, 35.0])
    for i, printed in enumerate((1 / 4, 1 / 9, 1 / 16, 0.0)):
        lo, hi = corners[i], corners[i + 1]
        values = rec.max_privacy(a, [lo, hi])
        b.add(
            f"remark-i-slope-{i + 1}",
            f"Remark (i): π is affine on [{lo:g}, {hi:g}] with slope {'1/s²' if i < 3 else '0'}",
            printed,
            (values[1] - values[0]) / (hi - lo),
            "match",
            "difference quotient of max_privacy between the vertices",
        )
    direct = rec.mmse_of_linear_response(np.eye(s.n), a)
    b.add(
        "eq7-mmse-given-AX",
        "Eq. (7) / Remark (ii): mmse(X|AX) = n − r = π(0)",
        s.n - len(s.s),
        direct,
        "match",
        f"direct conditional covariance tr(I − Aᵀ(AAᵀ)⁺A); π(0) = {rec.max_privacy(a, 0.0):.12g}",
    )
    b.add(
        "remark-ii-full-privacy",
        "Remark (ii): π(ρ) = n = var(X) once ρ ≥ tr(AAᵀ) = 29",
        float(s.n),
        rec.max_privacy(a, float(np.trace(a @ a.T))),
        "match",
        f"tr(AAᵀ) = {np.trace(a @ a.T):.12g}",
    )
    grid = np.linspace(0.0, 40.0, 161)
    worst = -np.inf
    for i in range(3):
        for factor in (1.05, 1.5, 3.0):
            bigger = np.zeros((len(s.s), s.n))
            bigger[np.arange(len(s.s)), np.arange(len(s.s))] = s.s
            bigger[i, i] *= factor
            worst = max(worst, float(np.max(rec.max_privacy(bigger, grid) - rec.max_privacy(a, grid))))
    sv = np.array(s.s)
    worst_hand = -np.inf
    for i in range(3):
        for factor in (1.05, 1.5, 3.0):
            grown = sv.copy()
            grown[i] *= factor
            for rho in grid:
                gap = privacy_by_hand(s.n, grown, rho) - privacy_by_hand(s.n, sv, rho)
                worst_hand = max(worst_hand, gap)
    b.add(
        "remark-iii-monotone",
        "Remark (iii): π is nonincreasing in each sᵢ (largest increase when one sᵢ grows)",
        0.0,
        worst,
        "check",
        "max over ρ ∈ [0, 40] and sᵢ × {1.05, 1.5, 3}: must be ≤ 0",
        f"closed form: eq. (9) by hand, ρ spent on ascending sᵢ, gives the largest increase {worst_hand:.3g}",
    )
    s_sorted = np.array(s.s)
    for rho in (4.0, 8.5):
        desc = rec.privacy_of_allocation(s.n, s_sorted[::-1], rec.allocation(s_sorted[::-1], rho))
        b.add(
            f"eq6-descending-{rho:g}",
            f"Eq. (6): ρ must be spent on ascending sᵢ; descending order at ρ = {rho:g} (printed = π by the second "
            "method)",
            privacy_by_hand(s.n, s_sorted, rho),
            desc,
            "check",
            "computed: privnoise's eq. (27) with the allocation (25) in descending order, strictly worse",
            "closed form: eq. (9) by hand with ascending allocation; descending by hand gives "
            f"{privacy_by_hand(s.n, s_sorted, rho, ascending=False):.10g}",
        )


def _scheme_rows(b: RowBuilder, s: Setup, a: NDArray[np.float64], cache: dict[str, Any]) -> None:
    rho = s.rho_scheme
    resp = rec.optimal_response(a, rho)
    sch = resp.scheme
    assert sch is not None
    b.add(
        "appC-recoverability",
        f"App. C: E‖AX − Z_o‖² = ρ at ρ = {rho:g}",
        rho,
        resp.recoverability_error(),
        "match",
        "closed form tr((A − F)(A − F)ᵀ) + tr Q of the response Z_o = Ũ D_a ŨᵀAX + Ũ D_no N",
    )
    b.add(
        "eq27-privacy",
        f"Eq. (26)–(27): mmse(X|Z_o) = n − r + Σρᵢ/sᵢ² at ρ = {rho:g}",
        FIGURE1_PRINTED[rho],
        resp.privacy(),
        "match",
        f"direct conditional covariance; eq. (27) gives {sch.privacy():.12g}",
    )
    g = default_rng(s.mc_seed)
    x = g.standard_normal((s.mc_draws, s.n))
    z = resp.respond(x, rng=g)
    rec_mc = float(np.mean(np.sum((x @ a.T - z) ** 2, axis=1)))
    mmse_mc = float(np.mean(np.sum((x - resp.estimator()(z)) ** 2, axis=1)))
    cache["mc"] = (rho, rec_mc, mmse_mc)
    b.add(
        "mc-recoverability",
        f"Monte Carlo: E‖AX − Z_o‖² = ρ = {rho:g}",
        rho,
        rec_mc,
        "match",
        f"{s.mc_draws} draws, seed {s.mc_seed}; tolerance 1 %",
    )
    b.add(
        "mc-mmse",
        f"Monte Carlo: E‖X − E[X|Z_o]‖² = π({rho:g})",
        FIGURE1_PRINTED[rho],
        mmse_mc,
        "match",
        f"{s.mc_draws} draws, seed {s.mc_seed}, the querier's linear MMSE estimator; tolerance 1 %",
    )
    affine = rec.optimal_response(a, rho, offset=np.array(s.offset))
    b.add(
        "eq29-affine",
        "Eq. (29): π(ρ) of AX + b does not depend on b",
        FIGURE1_PRINTED[rho],
        affine.privacy(),
        "match",
        f"b = {s.offset}; recoverability {affine.recoverability_error():.12g}",
    )
    gen = np.random.default_rng(s.converse_seed)
    best = -np.inf
    for _ in range(s.converse_trials):
        d = gen.standard_normal(a.shape) * gen.uniform(0.0, 1.0)
        low = gen.standard_normal((3, 3)) * gen.uniform(0.0, 1.0)
        scale = np.sqrt(rho / (np.sum(d * d) + np.sum(low * low)))
        f, q = a + scale * d, scale**2 * (low @ low.T)
        best = max(best, rec.mmse_of_linear_response(np.eye(s.n), f, q))
    b.add(
        "converse-random",
        f"Converse (22): no ρ-QR beats π({rho:g}); best of {s.converse_trials} random linear-Gaussian responses",
        FIGURE1_PRINTED[rho],
        best,
        "check",
        "responses Z = FX + W scaled to E‖AX − Z‖² = ρ; computed must be ≤ printed",
        f"closed form: π({rho:g}) = {privacy_by_hand(s.n, np.array(s.s), rho):g} by eq. (9) written in the report",
    )


def _figures(output: Path, s: Setup, a: NDArray[np.float64], cache: dict[str, Any]) -> list[tuple[str, str]]:
    from ..plotting import figure, save

    rho = np.linspace(0.0, 35.0, 701)
    s_arr = np.array(s.s)
    desc = [rec.privacy_of_allocation(s.n, s_arr[::-1], rec.allocation(s_arr[::-1], r)) for r in rho]
    fig = figure(figsize=(11, 4.5), layout="constrained")
    left, right = fig.subplots(1, 2)
    left.plot(rho, rec.max_privacy(a, rho), "C0", lw=2, label="π(ρ), eq. (8)")
    left.plot(rho, desc, "C3--", lw=1.2, label=r"allocation to largest $s_i$ first (worse)")
    corners = list(FIGURE1_PRINTED.items())[::2]
    left.plot([c[0] for c in corners], [c[1] for c in corners], "ko", ms=5, label="vertices of eq. (9)")
    mc_rho, _, mc_mmse = cache["mc"]
    left.plot([mc_rho], [mc_mmse], "C2s", ms=8, label=f"Monte Carlo mmse at ρ = {mc_rho:g}")
    left.set_xlabel("ρ")
    left.set_ylabel("π(ρ)")
    left.set_xlim(0, 35)
    left.set_ylim(1.8, 5.2)
    left.grid(alpha=0.3)
    left.legend(loc="lower right", fontsize=8)
    left.set_title("Figure 1 reproduced: n = 5, s = (2, 3, 4)")

    sigma = np.array(s.general_cov)
    query = np.array([[1.0, 0.0]])
    grid = np.linspace(0.0, 1.2, 121)
    right.plot(
        grid,
        rec.max_privacy(query, grid, data_cov=sigma),
        "C0",
        lw=2,
        label=r"$\pi_\Sigma(\rho)$, Σ = [[1, ½], [½, 1]] (√ρ near 0)",
    )
    right.plot(grid, rec.max_privacy(query, grid), "C1--", lw=1.2, label="π(ρ), Σ = I (Theorem 1)")
    right.set_xlabel("ρ")
    right.set_ylabel("privacy")
    right.grid(alpha=0.3)
    right.legend(loc="lower right", fontsize=8)
    right.set_title("Beyond the paper: A = [1, 0], general Σ")
    save(fig, output / "figure1.png", dpi=100)
    return [
        (
            "figure1.png",
            "Figure 1 reproduced (left): π(ρ) for n = 5, s = (2, 3, 4), with the vertices of eq. (9), the worse "
            "descending allocation and a Monte Carlo point; right: the general-covariance extension.",
        )
    ]


def build_report(output: Path | None = None, *, figures: bool = True) -> Report:
    """Evaluate every checkable claim; with ``output``, write ``report.md`` and ``figure1.png`` there.

    Parameters
    ----------
    output : pathlib.Path, optional
        Directory for the report and the figure; nothing is written when None.
    figures : bool, default True
        Draw ``figure1.png`` (only with ``output``).

    Returns
    -------
    Report
    """
    report = Report(
        title="Nageswaran: Gaussian data privacy under linear function recoverability",
        source=SOURCE,
        notes=[
            "Figure 1 prints no numbers; its printed column is eq. (9) evaluated at n = 5, s = (2, 3, 4).",
            "The matrix is U diag(4, 2, 3) Vᵀ with random orthogonal U, V (seed 2022), so that privnoise must "
            "sort the singular values itself.",
            "Monte Carlo rows use fixed seeds; their tolerance is 1 %.",
            "One erratum: Appendix C's last display claims E‖S̃VᵀX − Z̃_o‖² = ρ for every ρ, but beyond Σsᵢ² the "
            "scheme's error is Σsᵢ² < ρ (row appC-equality-beyond-total). The ascending order of eq. (6) is "
            "essential (rows eq6-descending-*).",
            "Section IV conjectures that π stays piecewise affine for a general covariance; it does not "
            "(row sec4-conjecture-not-affine; proof and solver in privnoise.recoverability.general_covariance).",
        ],
    )
    builder = RowBuilder(report)
    s = SETUP
    a = figure1_matrix(s)
    cache: dict[str, Any] = {}
    _theorem1_rows(builder, s, a)
    _scheme_rows(builder, s, a, cache)
    lemma_rows(builder, s, a)
    general_rows(builder, s, a, FIGURE1_PRINTED)
    if output is not None:
        directory = Path(output)
        directory.mkdir(parents=True, exist_ok=True)
        if figures:
            report.figures.extend(_figures(directory, s, a, cache))
        report.write(directory)
    return report
