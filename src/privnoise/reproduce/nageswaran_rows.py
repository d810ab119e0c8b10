"""Rows of the Nageswaran report on Lemmas 2–3, Appendix C over the whole range of ρ, and the general-covariance
extension of Section IV (:mod:`privnoise.reproduce.nageswaran` builds the report)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from .. import recoverability as rec
from ._report import RowBuilder, second_method

if TYPE_CHECKING:
    from .nageswaran import Setup

__all__ = ["general_rows", "lemma_rows", "linear_mmse_by_hand", "privacy_by_hand"]


@second_method
def privacy_by_hand(
    n: int, singular_values: NDArray[np.float64], rho: float, *, ascending: bool = True
) -> float:
    """n − r + Σρᵢ/sᵢ² with ρ spent on the nonzero sᵢ in ascending (eq. (9)) or descending order, ρᵢ ≤ sᵢ²
    (a second method for Theorem 1, written here without privnoise.recoverability)."""
    sv = np.sort(singular_values[singular_values > 0])
    left, total = float(rho), float(n - sv.size)
    for si in sv if ascending else sv[::-1]:
        spent = min(left, float(si * si))
        total += spent / float(si * si)
        left -= spent
    return total


@second_method
def linear_mmse_by_hand(cov: NDArray[np.float64], f: NDArray[np.float64]) -> float:
    """mmse(X | FX) = Tr(Σ − ΣFᵀ(FΣFᵀ)⁻¹FΣ) for X ~ N(0, Σ), a noiseless linear response (dense matrices)."""
    gain = cov @ f.T @ np.linalg.inv(f @ cov @ f.T)
    return float(np.trace(cov - gain @ f @ cov))


def lemma_rows(b: RowBuilder, s: Setup, a: NDArray[np.float64]) -> None:
    """Lemmas 2 and 3 on the whole ρ range, and Appendix C's scheme beyond ρ = Σ sᵢ²."""
    u, sv, vt = np.linalg.svd(a)
    r = sv.size
    total = float(np.sum(sv**2))
    rhos = np.linspace(0.0, 2.0 * total, s.rho_grid_points)
    reduced = np.diag(sv) @ vt[:r]  # S̃Vᵀ: the r nonzero rows of SVᵀ
    padded = np.vstack([reduced, np.zeros((2, a.shape[1]))])  # SVᵀ with zero rows (m > r)
    pi_a = np.array([rec.max_privacy(a, float(rho)) for rho in rhos])
    pi_sv = np.array([rec.max_privacy(padded, float(rho)) for rho in rhos])
    pi_reduced = np.array([rec.max_privacy(reduced, float(rho)) for rho in rhos])
    b.add(
        "lemma2-svd",
        f"Lemma 2: π(ρ) for AX equals π(ρ) for SVᵀX (max over {rhos.size} ρ in [0, 2Σsᵢ²] of the difference)",
        0.0,
        float(np.max(np.abs(pi_a - pi_sv))),
        "match",
        "Theorem 1's π for A = USVᵀ and for SVᵀ (U dropped, two zero rows kept)",
    )
    b.add(
        "lemma3-nonzero-rows",
        "Lemma 3: restricting to the r nonzero rows S̃Vᵀ loses no privacy (max difference over the ρ grid)",
        0.0,
        float(np.max(np.abs(pi_sv - pi_reduced))),
        "match",
        "π for SVᵀ (with zero rows) against π for S̃Vᵀ",
    )
    errors, privacies = [], []
    for rho in rhos:
        resp = rec.optimal_response(a, float(rho))
        errors.append(resp.recoverability_error())
        privacies.append(resp.privacy())
    errors_arr = np.array(errors)
    up_to = rhos <= total
    b.add(
        "appC-equality-up-to-total",
        "App. C, last display: E‖S̃VᵀX − Z̃_o‖² = Σρᵢ = ρ, for ρ ≤ Σsᵢ² = 29 (max over the ρ grid of "
        "|E‖AX − Z_o‖² − ρ|; printed = 0)",
        0.0,
        float(np.max(np.abs(errors_arr[up_to] - rhos[up_to]))),
        "match",
        f"{int(up_to.sum())} values of ρ in [0, {total:g}]; closed-form recoverability error of the response",
    )
    beyond = 2.0 * float(np.sum(np.square(s.s)))  # 58, from the paper's singular values
    error_beyond = rec.optimal_response(a, beyond).recoverability_error()
    b.add(
        "appC-equality-beyond-total",
        f"App. C, last display: E‖S̃VᵀX − Z̃_o‖² = Σρᵢ = ρ, printed for every ρ ≥ 0 with (25); at ρ = {beyond:g} "
        "= 2Σsᵢ² (printed = ρ, computed = E‖AX − Z_o‖²)",
        beyond,
        error_beyond,
        "erratum",
        "for ρ ≥ Σsᵢ², (25) sets ρᵢ = sᵢ², so Σρᵢ = Σsᵢ² = 29 < ρ: the error is min(ρ, Σsᵢ²) and (13) holds "
        "with ≤, not = (Nageswaran N1, docs/errata.md); Theorem 1 is unaffected",
    )
    b.add(
        "appC-constraint-all-rho",
        "App. C corrected: E‖AX − Z_o‖² = min(ρ, Σsᵢ²) ≤ ρ for every ρ (max over the ρ grid of the deviation "
        "from min(ρ, Σsᵢ²))",
        "not printed",
        float(np.max(np.abs(errors_arr - np.minimum(rhos, total)))),
        "check",
        f"{rhos.size} values of ρ in [0, {2 * total:g}]; closed-form recoverability error of the response",
        "closed form: min(ρ, Σsᵢ²) with the sᵢ of numpy.linalg.svd",
    )
    b.add(
        "appC-privacy-all-rho",
        "App. C: mmse(X | Z_o) = π(ρ) of eq. (8) for every ρ, also ρ > Σsᵢ² (π = n) (max difference)",
        0.0,
        float(np.max(np.abs(np.array(privacies) - pi_a))),
        "match",
        "direct conditional covariance of the jointly Gaussian (X, Z_o) against Theorem 1",
    )


def general_rows(b: RowBuilder, s: Setup, a: NDArray[np.float64], printed: dict[float, float]) -> None:
    """The extension to a general covariance (``printed``: the values Figure 1 prints, by ρ)."""
    rho = s.rho_scheme
    b.add(
        "general-identity",
        "Extension: the general-Σ solver at Σ = I gives Theorem 1",
        printed[rho],
        rec.max_privacy(a, rho, data_cov=np.eye(s.n)),
        "match",
        "bisection on the dual (D) of privnoise.recoverability.general_covariance, duality gap ≤ 1e-8",
    )
    sigma = np.array(s.general_cov)
    query = np.array([[1.0, 0.0]])
    r = s.general_rho
    base = rec.max_privacy(query, 0.0, data_cov=sigma)
    ratio = (rec.max_privacy(query, r, data_cov=sigma) - base) / np.sqrt(r)
    base_hand = linear_mmse_by_hand(sigma, query)  # π_Σ(0) = mmse(X | AX)
    explicit = (linear_mmse_by_hand(sigma, np.array([[1.0, -np.sqrt(r)]])) - base_hand) / np.sqrt(r)
    b.add(
        "sec4-conjecture-not-affine",
        "Sec. IV conjecture: π_Σ piecewise affine. Σ = [[1, ½], [½, 1]], A = [1, 0]: (π_Σ(ρ) − π_Σ(0))/√ρ, "
        f"ρ = {r:g}",
        explicit,
        ratio,
        "check",
        "printed column: the same ratio for the explicit response Z = X₁ − √ρX₂ (a lower bound); a bounded "
        "ratio/√ρ → ∞ means infinite slope at 0⁺, so π_Σ is not piecewise affine",
        "dense matrix: mmse(X | fX) = Tr(Σ − ΣFᵀ(FΣFᵀ)⁻¹FΣ) for F = [1, −√ρ] and F = A, written in the report",
    )
