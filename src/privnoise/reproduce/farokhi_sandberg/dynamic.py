"""Section 4, dynamic estimation: Theorem 4, Remark 8 and Example 4 (traffic), with ERRATA 4–6."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from scipy import optimize

from ...systems import initial_state_noise, observability_gramian
from .._report import Row, Status, make_row, second_method
from .common import cholesky_matrix
from .example4 import example4_closed_forms, example4_system, printed_initial_state_noise, theorem4_objective
from .parameters import Setup

__all__ = ["example4_gramian", "rows"]


def rows(s: Setup) -> list[Row]:
    """Rows of Section 4: Remark 8, Theorem 4, Example 4 and the Cramér–Rao bounds (ERRATA 4–6)."""
    rows: list[Row] = []
    system = example4_system()
    t, rho = s.thm4_case
    g = observability_gramian(system, t)
    closed = example4_gramian(t)
    rows.append(
        make_row(
            key="remark8-gramian",
            claim=f"Ψ_TᵀΨ_T of Example 4 (T = {t}), (1,1)+(1,2)+(2,2) entries",
            printed=float(closed[0, 0] + closed[0, 1] + closed[1, 1]),
            computed=float(g[0, 0] + g[0, 1] + g[1, 1]),
            status="match",
            reason="direct product Ψ_TᵀΨ_T",
        )
    )
    printed = printed_initial_state_noise(system, horizon=t, quality_weight=rho)
    corrected = initial_state_noise(system, horizon=t, quality_weight=rho)
    obj_printed = theorem4_objective(system, t, printed.initial_covariance, rho)
    obj_corrected = theorem4_objective(system, t, corrected.initial_covariance, rho)
    rows.append(
        make_row(
            key="thm4-objective",
            claim=f"Theorem 4: Tr 𝓘 + ϱQ at Σ = 2(Ψ_TᵀΨ_T)^(-1/2)/√ϱ (Example 4, T = {t}, ϱ = {rho:g})",
            printed=obj_printed,
            computed=obj_corrected,
            status="erratum",
            reason="ERRATA 4: the minimiser is Σ = (Ψ_TᵀΨ_T)^(-1/2)/√ϱ (Appendix K drops a 1/4); printed Σ costs 2.5√ϱTr G^½",
        )
    )
    rows.append(
        make_row(
            key="thm4-optimiser",
            claim="Theorem 4 (corrected): BFGS over Cholesky factors of Σ against the closed form",
            printed=_minimise_theorem4(closed, rho),
            computed=obj_corrected,
            status="check",
            reason="no covariance does better than the corrected Σ",
            method="optimisation: scipy.optimize BFGS of Tr Σ⁻¹ + ϱTr(GΣ) over a log-Cholesky factor of Σ, with "
            "G = Ψ_TᵀΨ_T of Example 4 by its entries Σk⁰, Σk, Σk²",
        )
    )
    for horizon, weight in s.ex4_cases:
        q_closed, e_closed = example4_closed_forms(horizon, weight, variant="printed")
        printed_noise = printed_initial_state_noise(system, horizon=horizon, quality_weight=weight)
        corrected_noise = initial_state_noise(system, horizon=horizon, quality_weight=weight)
        tag, case = f"T{horizon}-rho{weight:g}", f"(T = {horizon}, ϱ = {weight:g})"
        cases: tuple[tuple[str, str, float, float, Status, str], ...] = (
            ("quality", "Example 4: printed closed form of Q", q_closed, printed_noise.second_moment(), "match",
             "direct Tr(Ψ_TᵀΨ_T Σ) with the printed Σ"),
            ("error", "Example 4: printed closed form of E‖x̂₀ − x₀‖²", e_closed, printed_noise.cramer_rao_bound(),
             "match", "direct Tr Σ = Tr 𝓘⁻¹ with the printed Σ"),
            ("corrected", "Example 4 with the corrected Σ: Q", q_closed, corrected_noise.second_moment(), "erratum",
             "ERRATA 4: the corrected Σ = (Ψ_TᵀΨ_T)^(-1/2)/√ϱ halves Q and the error"),
        )
        for name, claim, closed_form, computed, status, reason in cases:
            rows.append(make_row(f"ex4-{name}-{tag}", f"{claim} {case}", closed_form, computed, status, reason))
    t1, t2 = s.ex4_asymptotic
    (q1, e1), (q2, e2) = example4_closed_forms(t1, 1.0), example4_closed_forms(t2, 1.0)
    ratio = t2 / t1
    asymptotics: tuple[tuple[str, str, float, Status, str], ...] = (
        ("ex4-error-asymptotics", f"Example 4: E‖x̂₀ − x₀‖² = O(1/(T√T√ϱ)): ratio E(T={t1})/E(T={t2})", e1 / e2,
         "erratum", f"ERRATA 5: the ratio is ≈ √{ratio:g} = {math.sqrt(ratio):g}, i.e. E = Θ(1/√(Tϱ)); "
         "λ_min(G) ~ T/4"),
        ("ex4-quality-asymptotics", f"Example 4: Q = O(T√T/√ϱ): ratio Q(T={t2})/Q(T={t1})", q2 / q1, "match",
         "closed form; λ_max(G) ~ T³/3"),
    )
    for key, claim, computed, status, reason in asymptotics:
        rows.append(make_row(key, claim, ratio**1.5, computed, status, reason))
    t, rho = s.false_bound_case
    mech = initial_state_noise(system, horizon=t, quality_weight=rho)
    info = mech.fisher_information()
    n = system.n
    rows.append(
        make_row(
            key="sec4-false-bound",
            claim=f"Section 4: Tr(𝓘⁻¹) ≥ (T+1)²n²/Tr 𝓘 (Example 4, Theorem 4 noise, T = {t}, ϱ = {rho:g})",
            printed=(t + 1) ** 2 * n**2 / float(np.trace(info)),
            computed=mech.cramer_rao_bound(),
            status="erratum",
            reason="ERRATA 6: the printed bound exceeds the attained Tr(𝓘⁻¹); only n²/Tr 𝓘 holds (never reported)",
        )
    )
    root = np.linalg.eigvalsh(example4_gramian(t)) ** 0.5  # 𝓘 = Σ⁻¹ = √ϱ G^½ for the corrected Σ
    rows.append(
        make_row(
            key="sec4-valid-bound",
            claim="Section 4: the valid bound n²/Tr 𝓘 ≤ Tr(𝓘⁻¹) (Proposition 5 with the trace; printed = the bound "
            "by the second method, computed = privnoise's Tr(𝓘⁻¹))",
            printed=n**2 / (math.sqrt(rho) * float(root.sum())),
            computed=mech.cramer_rao_bound(),
            status="check",
            reason="Cauchy–Schwarz on the eigenvalues",
            method="closed form: 𝓘 = √ϱ G^½ with G = Ψ_TᵀΨ_T of Example 4 by its entries; eigenvalues by numpy",
        )
    )
    return rows


@second_method
def example4_gramian(horizon: int) -> NDArray[np.float64]:
    """Ψ_TᵀΨ_T of Example 4 by its entries (Remark 8): Σₖ1 = T+1, Σₖk = T(T+1)/2, Σₖk² = T(T+1)(2T+1)/6.

    Ψ_T stacks the rows C Aᵏ = [1, k] for k = 0..T, so the Gramian is written here without the system's matrices.
    """
    t = horizon
    return np.array([[t + 1, t * (t + 1) / 2], [t * (t + 1) / 2, t * (t + 1) * (2 * t + 1) / 6]], dtype=float)


@second_method
def _minimise_theorem4(gram: NDArray[np.float64], rho: float) -> float:
    m = gram.shape[0]

    def objective(p: NDArray[np.float64]) -> float:
        sigma = cholesky_matrix(p, m)
        return float(np.trace(np.linalg.inv(sigma)) + rho * np.sum(gram * sigma))

    start = np.zeros(m * (m + 1) // 2)
    res = optimize.minimize(objective, start, method="BFGS", options={"gtol": 1e-10})
    return float(res.fun)
