"""Koufogiannis, Han & Pappas: the dual problems behind the optimality of the Laplace mechanism.

The dual function η solves η′ + (n−1)η/r + ε|η| = r² − λ, η(0) = 0 (eqs. (9), (16), (19)); the dual is feasible
iff λ < λ* = 2/ε² (n = 1) or n(n+1)/ε², which proves Theorems 6 and 8. Checked here against direct ODE integration
and root finding: λ* (Figures 1 and 2), η at λ* (Remark 2, Theorem 8), the Appendix's v̂₁ and η′ and Figure 3's
v̂₂ for small δ, and the coefficient of Theorem 9's dual constraint (a typo: docs/errata.md, Koufogiannis N1).
Figures 1–3 are drawn here.

References
----------
F. Koufogiannis, S. Han, G. J. Pappas, "Optimality of the Laplace mechanism in differential privacy",
arXiv:1504.00065: Theorems 6, 8 and 9 (proofs), Remark 2, Figures 1–3, Appendix.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from scipy import integrate, optimize

from ...dp.lp_dual import dual_crossing, dual_eta, dual_eta_ode, dual_threshold
from ...mechanisms.norm_laplace import MultiUserLaplace
from .._report import Report, Row, second_method
from .parameters import Setup

__all__ = ["add_figure3_row", "add_rows", "eta_by_ode", "figure3", "figures"]


@second_method
def eta_by_ode(radius: float, lam: float, *, epsilon: float, dim: int) -> float:
    """η(radius) of the dual ODE η′ = r² − λ − (n−1)η/r − ε|η|, η(0) = 0 (eqs. (9), (16)), integrated here by
    scipy's LSODA from the series η ≈ −λr/n at r₀ = 10⁻⁸ (a second method, independent of privnoise.dp)."""

    def rhs(r: float, y: NDArray[np.float64]) -> list[float]:
        return [r * r - lam - (dim - 1) / r * y[0] - epsilon * abs(y[0])]

    r0 = 1e-8
    sol = integrate.solve_ivp(rhs, (r0, radius), [-lam * r0 / dim], method="LSODA", rtol=1e-10, atol=1e-10)
    return float(sol.y[0, -1])


def _threshold_by_bisection(eps: float, n: int, horizon: float) -> float:
    """λ* as the largest λ whose ODE solution is positive at R = horizon/ε (bisection, independent of P)."""
    lo, hi = 0.5 * dual_threshold(eps, n), 1.5 * dual_threshold(eps, n)
    for _ in range(30):
        mid = 0.5 * (lo + hi)
        if dual_eta_ode([horizon / eps], mid, epsilon=eps, dim=n)[0] > 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def add_rows(report: Report, s: Setup) -> None:
    """The dual functions η of Figures 1 and 2 (feasible iff λ < λ*), Remark 2 and Theorem 8 at λ*, the
    Appendix's v̂₁ and η′, and the coefficient of Theorem 9's dual constraint (an erratum)."""
    eps = s.epsilon
    users, m = s.users, s.user_dim
    multi = MultiUserLaplace(epsilon=eps, users=users, user_dim=m)

    # -- dual functions of Figures 1 and 2 -------------------------------------------------------------
    fe = s.fig_epsilon
    for fig, n in (("fig1", 1), ("fig2", s.fig2_dim)):
        star = 2 / fe**2 if n == 1 else n * (n + 1) / fe**2  # the printed λ* of Theorems 6 and 8
        report.add(
            Row(
                f"{fig}-lambda-star",
                f"{'Theorem 6' if n == 1 else 'Theorem 8'}: dual feasible iff λ < λ* = "
                f"{'2/ε²' if n == 1 else 'n(n+1)/ε²'} (n = {n}, ε = {fe:g})",
                star,
                _threshold_by_bisection(fe, n, s.horizon),
                "match",
                f"bisection on the sign of η(R), R = {s.horizon:g}/ε, from direct ODE integration",
            )
        )
        for f in (0.9, 1.05):
            lam = f * star
            eta_far = float(dual_eta_ode([s.horizon / fe], lam, epsilon=fe, dim=n)[0])
            second = eta_by_ode(s.horizon / fe, lam, epsilon=fe, dim=n)
            report.add(
                Row(
                    f"{fig}-{'feasible' if f < 1 else 'infeasible'}",
                    f"{'Figure 1' if n == 1 else 'Figure 2'}: η for λ = {f:g}λ* is "
                    f"{'feasible' if f < 1 else 'infeasible'}",
                    "feasible" if f < 1 else "infeasible",
                    "feasible" if eta_far >= 0 else "infeasible",
                    "check",
                    f"η({s.horizon:g}/ε) = {eta_far:.4g} by privnoise's ODE integration; crossing r₃ = "
                    f"{dual_crossing(lam, epsilon=fe, dim=n):.6g}",
                    f"ODE integration: scipy LSODA of the dual ODE written in the report, λ = {f:g}·"
                    f"{'2/ε²' if n == 1 else 'n(n+1)/ε²'}: η({s.horizon:g}/ε) = {second:.4g}, "
                    f"{'feasible' if second >= 0 else 'infeasible'}",
                )
            )
    v = 3.0
    report.add(
        Row(
            "remark2-eta-star",
            "Remark 2: at λ* the dual solution is η(v) = −v(ε|v|+2)/ε² (v = 3)",
            -v * (fe * v + 2) / fe**2,
            float(dual_eta_ode([v], 2 / fe**2, epsilon=fe)[0]),
            "match",
            "direct ODE integration of (9)",
        )
    )
    n = s.fig2_dim
    report.add(
        Row(
            "thm8-eta-star",
            f"Theorem 8: at λ* the dual solution is η(r) = −r(rε+n+1)/ε² (r = 3, n = {n})",
            -v * (v * fe + n + 1) / fe**2,
            float(dual_eta_ode([v], n * (n + 1) / fe**2, epsilon=fe, dim=n)[0]),
            "match",
            "direct ODE integration of (16)",
        )
    )
    delta = s.appendix_delta
    lam = (2 - delta) / fe**2

    def eta_second(x: float) -> float:  # η″ = 2v + εη′ on the negative branch, η′ = v² − λ + εη
        eta = float(dual_eta_ode([x], lam, epsilon=fe)[0])
        return 2 * x + fe * (x * x - lam + fe * eta)

    v1 = optimize.brentq(eta_second, 0.1, dual_crossing(lam, epsilon=fe) - 1e-9, xtol=1e-13)
    report.add(
        Row(
            "appendix-v1",
            f"Appendix: η″ vanishes at v̂₁ = (ln 2 − ln δ)/ε (δ = {delta:g})",
            (math.log(2) - math.log(delta)) / fe,
            v1,
            "match",
            "root of η″ computed from the ODE solution",
        )
    )
    v3 = dual_crossing(lam, epsilon=fe)
    x = v3 + 1.0
    printed_prime = (
        2 * (x * fe - 1) / fe**2 + math.exp((v3 - x) * fe) * (delta - 2 * v3 * fe + v3**2 * fe**2) / fe**2
    )
    eta_x = float(dual_eta_ode([x], lam, epsilon=fe)[0])
    report.add(
        Row(
            "appendix-eta-prime",
            "Appendix: η′(v) for v ≥ v̂₃ (v = v̂₃ + 1, δ = 0.1)",
            printed_prime,
            x * x - lam - fe * eta_x,
            "match",
            f"η′ = v² − λ − εη with η from the ODE; v̂₃ = {v3:.8g}",
        )
    )
    # Theorem 9's dual constraint prints (n−1)/rᵢ; with n users that is the radial ODE of dimension n.
    printed_dual = users * dual_threshold(eps, users)
    report.add(
        Row(
            "thm9-dual-coefficient",
            f"Theorem 9 proof: dual constraint with (n−1)/rᵢ (n = {users} users, m = {m}) — implied dual bound",
            printed_dual,
            users * dual_threshold(eps, m),
            "erratum",
            "typo: the coefficient must be (m−1)/rᵢ (block dimension); with (n−1) the dual value n·n(n+1)/ε² "
            f"would exceed the primal MSE nm(m+1)/ε² = {multi.second_moment():g} of a feasible density, "
            "contradicting weak duality (docs/errata.md, Koufogiannis N1)",
        )
    )


def figures(report: Report, output: Path, s: Setup) -> None:
    """Figures 1 and 2: the dual functions η for λ below and above λ*."""
    from ...plotting import figure, save

    fe = s.fig_epsilon
    for name, n, caption in (
        ("fig1-dual-eta.png", 1, "Figure 1: η′ + ε|η| = v² − λ, η(0) = 0, ε = 1; feasible iff λ < λ* = 2"),
        (
            "fig2-dual-eta-l2.png",
            s.fig2_dim,
            f"Figure 2: η′ + (n−1)η/r + ε|η| = r² − λ, η(0) = 0, n = {s.fig2_dim}, ε = 1; "
            f"feasible iff λ < λ* = {dual_threshold(fe, s.fig2_dim):g}",
        ),
    ):
        fig = figure(figsize=(6.4, 4.2))
        ax = fig.add_subplot()
        star = dual_threshold(fe, n)
        x = np.linspace(-12, 12, 961) if n == 1 else np.linspace(0, 16, 641)
        for f in s.fractions:
            eta = dual_eta(x, f * star, epsilon=fe, dim=n)
            ax.plot(x, eta, label=f"λ = {f:g} λ*" + (" (feasible)" if f < 1 else " (infeasible)"))
        ax.axhline(0, color="k", lw=0.5)
        ax.set_ylim(-60, 60)
        ax.set_xlabel("v" if n == 1 else "r")
        ax.set_ylabel("η")
        ax.set_title(caption.split(":")[0])
        ax.legend(fontsize=8)
        fig.tight_layout()
        save(fig, output / name, dpi=110)
        report.figures.append((name, caption))


def _eta_small_delta(s: Setup) -> tuple[float, float, float, float]:
    """λ = (2 − δ)/ε² and the points v̂₁ (η″ = 0), v̂₂ (η′ = 0) and v̂₃ (η = 0) of the dual solution of (19)."""
    fe, delta = s.fig_epsilon, s.appendix_delta
    lam = (2 - delta) / fe**2

    def eta(x: float) -> float:
        return float(dual_eta_ode([x], lam, epsilon=fe)[0])

    v3 = dual_crossing(lam, epsilon=fe)
    v1 = optimize.brentq(lambda x: 2 * x + fe * (x * x - lam + fe * eta(x)), 0.1, v3 - 1e-9, xtol=1e-13)
    v2 = optimize.brentq(lambda x: x * x - lam + fe * eta(x), v1, v3 - 1e-9, xtol=1e-13)  # η′ on η < 0
    return lam, v1, v2, v3


def add_figure3_row(report: Report, s: Setup) -> None:
    """Figure 3: η becomes increasing at v̂₂, between v̂₁ and v̂₃ (small δ)."""
    _, v1, v2, v3 = _eta_small_delta(s)
    e, d = s.fig_epsilon, s.appendix_delta
    # the appendix's negative branch η = (δ/ε³)e^{εv} − v²/ε − 2v/ε² − δ/ε³ has η′ = 0 at:
    closed = optimize.brentq(lambda v: d / e**2 * math.exp(e * v) - 2 * v / e - 2 / e**2, v1, v3, xtol=1e-14)
    report.add(
        Row(
            "fig3-v2",
            f"Fig. 3: η becomes increasing at v̂₂, between v̂₁ and v̂₃ (δ = {d:g}; printed = root of η′ of the "
            "appendix's closed-form negative branch, computed = from the ODE solution)",
            closed,
            v2,
            "check",
            f"η′(v̂₂) = 0 by root finding on the ODE solution; v̂₁ = {v1:.8g} < v̂₂ = {v2:.8g} < v̂₃ = {v3:.8g}",
            "root finding: scipy brentq of η′ = 0 on the appendix's negative branch "
            "(δ/ε³)e^{εv} − v²/ε − 2v/ε² − δ/ε³, written in the report",
        )
    )


def figure3(report: Report, output: Path, s: Setup) -> None:
    """Figure 3: the dual solution for small δ, with v̂₁, v̂₂ and v̂₃."""
    from ...plotting import figure, save

    lam, v1, v2, v3 = _eta_small_delta(s)
    x = np.linspace(0.0, v3 + 1.5, 600)
    eta = dual_eta(x, lam, epsilon=s.fig_epsilon)
    fig = figure(figsize=(6.4, 4.2), layout="constrained")
    ax = fig.subplots()
    ax.plot(x, eta, color="tab:blue", label=f"η, λ = (2 − δ)/ε², δ = {s.appendix_delta:g}")
    for v, name, color in (
        (v1, "v̂₁: η″ = 0", "tab:orange"),
        (v2, "v̂₂: η′ = 0", "tab:green"),
        (v3, "v̂₃: η = 0", "tab:red"),
    ):
        ax.axvline(v, color=color, ls="--", lw=1, label=f"{name} ({v:.3f})")
    ax.axhline(0.0, color="0.5", lw=0.8)
    ax.set_xlabel("v")
    ax.set_ylabel("η(v)")
    ax.set_title("Figure 3: the dual solution for small δ")
    ax.legend(fontsize=8)
    save(fig, output / "fig3-dual-eta-small-delta.png")
    report.figures.append(
        (
            "fig3-dual-eta-small-delta.png",
            "Figure 3 reproduced: η changes curvature at v̂₁, becomes increasing at v̂₂ and vanishes at v̂₃; once "
            "positive it stays increasing.",
        )
    )
