"""Koufogiannis, Han & Pappas, Appendix: the discretised linear program of the optimal Lipschitz-private noise.

On a grid of N points of step ν on [−M, M], the minimum-MSE ε-Lipschitz density is an LP
(:func:`~privnoise.dp.optimal_noise_lp`, HiGHS); its discrete optimum, the two-sided geometric law, has MSE
(2/ε²)(1 − (εν)²/4), which approaches the Laplace mechanism's 2/ε² (Theorem 6) as ν → 0. With absolute-error loss
the objective approaches E|V| = 1/ε.

References
----------
F. Koufogiannis, S. Han, G. J. Pappas, "Optimality of the Laplace mechanism in differential privacy",
arXiv:1504.00065: Theorem 6, Appendix.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...dp.lp import optimal_noise_lp
from .._report import Report, Row
from .parameters import Setup

__all__ = ["add_rows", "convergence_figure"]


def add_rows(report: Report, s: Setup) -> list[tuple[int, float, float]]:
    """The Appendix's discretised LP on growing grids (objective → 2/ε²) and with absolute-error loss (→ 1/ε);
    returns (points, objective, grid step) per grid."""
    # -- the discretised LP ---------------------------------------------------------------------------
    le, hw = s.lp_epsilon, s.lp_half_width
    lp_table: list[tuple[int, float, float]] = []
    for grid in s.lp_grids:
        sol = optimal_noise_lp(le, grid=grid, half_width=hw)
        nu = 2 * hw / (grid - 1)
        lp_table.append((grid, sol.objective, nu))
        report.add(
            Row(
                f"lp-mse-{grid}",
                f"Appendix LP: objective on {grid} points (ε = {le:g}, M = {hw:g}) → 2/ε²",
                2 / le**2 * (1 - (le * nu) ** 2 / 4),
                sol.objective,
                "check",
                f"printed column: discrete optimum (2/ε²)(1 − (εν)²/4), ν = {nu:.4g}; gap to 2/ε² = "
                f"{(sol.objective - 2 / le**2) / (2 / le**2):+.3%}",
                "closed form: the MSE (2/ε²)(1 − (εν)²/4) of the two-sided geometric law gₖ ∝ ρ^{|k|}, "
                "ρ = (1 − εν/2)/(1 + εν/2), written in the report",
            )
        )
    last = lp_table[-1]
    report.add(
        Row(
            "lp-mse-limit",
            f"Theorem 6 via the LP: objective → 2/ε² ({last[0]} points, within 1 %)",
            2 / le**2,
            last[1],
            "match",
            "HiGHS (scipy.optimize.linprog)",
        )
    )
    sol_l1 = optimal_noise_lp(le, loss="l1", grid=s.lp_grids[-1], half_width=hw)
    report.add(
        Row(
            "lp-l1-limit",
            "LP with absolute-error loss: objective → E|V| = 1/ε of Laplace (not printed in the paper; printed = "
            "the second method)",
            1 / le,
            sol_l1.objective,
            "check",
            "HiGHS; Laplace is also optimal for E|V| under the Lipschitz constraint",
            "closed form: E|V| = ∫|v|(ε/2)e^{−ε|v|}dv = 1/ε for the Laplace density of Theorem 6",
        )
    )
    return lp_table


def convergence_figure(
    report: Report, output: Path, s: Setup, lp_table: list[tuple[int, float, float]]
) -> None:
    """The LP's optimal densities beside Laplace, and the objective's gap (εν)²/4."""
    from ...plotting import figure, save

    fig = figure(figsize=(9.6, 3.8))
    ax1, ax2 = fig.subplots(1, 2)
    le = s.lp_epsilon
    for grid in (51, 201, 2001):
        sol = optimal_noise_lp(le, grid=grid, half_width=s.lp_half_width)
        ax1.plot(sol.density.grid, sol.density.values, label=f"LP, N = {grid}", lw=1)
    v = np.linspace(-6, 6, 601)
    ax1.plot(v, le / 2 * np.exp(-le * np.abs(v)), "k--", lw=1, label="Laplace (ε/2)exp(−ε|v|)")
    ax1.set_xlim(-6, 6)
    ax1.set_xlabel("v")
    ax1.set_ylabel("g(v)")
    ax1.legend(fontsize=8)
    nus = np.array([t[2] for t in lp_table])
    gaps = np.array([abs(t[1] - 2 / le**2) / (2 / le**2) for t in lp_table])
    ax2.loglog(nus, gaps, "o-", label="|LP − 2/ε²|/(2/ε²)")
    ax2.loglog(nus, (le * nus) ** 2 / 4, "k--", label="(εν)²/4")
    ax2.set_xlabel("grid step ν")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    save(fig, output / "lp-convergence.png", dpi=110)
    report.figures.append(
        ("lp-convergence.png", "The Appendix LP: optimal densities approach Laplace; objective gap = (εν)²/4")
    )
