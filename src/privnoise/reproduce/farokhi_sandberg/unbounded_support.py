"""Section 3, unbounded support: Corollary 6 (Problems 3 and 4), checked against BFGS over Cholesky factors."""

from __future__ import annotations

from typing import cast

import numpy as np
from numpy.typing import NDArray
from scipy import optimize

from ... import queries
from ..._validation import check_positive
from ...fisher import fisher_guarantee, optimal_noise, problem3_objective
from ...mechanisms import Gaussian
from .._report import Row, make_row, second_method
from .common import cholesky_matrix, noise_for
from .parameters import Setup

__all__ = ["printed_corollary6_noise", "rows"]


def printed_corollary6_noise(query: queries.Query, *, quality_weight: float) -> Gaussian:
    """Corollary 6 as printed for Problem 3: Gaussian noise with Σ = 2(CCᵀ)^{1/2}/√ϱ (ERRATA 4: twice the minimiser).

    Twice the minimiser for ϱ is the minimiser for ϱ/4, so the covariance keeps the structure the corrected design
    gives the query (scalar, structured or dense), bit for bit twice the corrected one.

    Examples
    --------
    >>> from privnoise import queries
    >>> printed_corollary6_noise(queries.sum_query(4), quality_weight=4.0).covariance()   # corrected: 1
    2.0
    """
    rho = check_positive(quality_weight, "quality_weight", "printed_corollary6_noise")
    return cast(Gaussian, optimal_noise(query, quality_weight=rho / 4.0))


@second_method
def _minimise_problem3(gram: NDArray[np.float64], rho: float) -> NDArray[np.float64]:
    m = gram.shape[0]

    def objective(p: NDArray[np.float64]) -> float:
        sigma = cholesky_matrix(p, m)
        return float(np.trace(np.linalg.solve(sigma, gram)) + rho * np.trace(sigma))

    res = optimize.minimize(objective, np.zeros(m * (m + 1) // 2), method="BFGS", options={"gtol": 1e-10})
    return cholesky_matrix(res.x, m)


@second_method
def _minimise_problem4(gram: NDArray[np.float64], theta: float) -> NDArray[np.float64]:
    m = gram.shape[0]

    def scaled(p: NDArray[np.float64]) -> NDArray[np.float64]:
        sigma = cholesky_matrix(p, m)
        return theta * sigma / np.trace(sigma)

    def objective(p: NDArray[np.float64]) -> float:
        return float(np.trace(np.linalg.solve(scaled(p), gram)))

    res = optimize.minimize(objective, np.zeros(m * (m + 1) // 2), method="BFGS", options={"gtol": 1e-10})
    return scaled(res.x)


def rows(s: Setup) -> list[Row]:
    """Rows of Corollary 6 (Problems 3 and 4: Gaussian noise ∝ (CCᵀ)^{1/2}, ERRATA 4)."""
    rows: list[Row] = []
    q = queries.LinearQuery(np.array(s.cor6_matrix))
    rho, theta = s.cor6_rho, s.cor6_theta
    corrected = cast(Gaussian, noise_for(q, quality_weight=rho))
    gram = np.array(s.cor6_matrix) @ np.array(s.cor6_matrix).T  # CCᵀ from the matrix as given
    vals, vecs = np.linalg.eigh(gram)
    root = (vecs * np.sqrt(vals)) @ vecs.T  # (CCᵀ)^{1/2} by its eigen-decomposition
    sigma_printed = 2.0 * root / np.sqrt(rho)  # Corollary 6 as printed for Problem 3
    sigma_opt = _minimise_problem3(gram, rho)
    opt_value = float(np.trace(np.linalg.solve(sigma_opt, gram)) + rho * np.trace(sigma_opt))
    rows.append(
        make_row(
            key="cor6-p3-objective",
            claim="Cor. 6 (Problem 3): Tr(Σ⁻¹CCᵀ) + ϱTrΣ at the printed Σ = 2(CCᵀ)^{1/2}/√ϱ (2×3 C, ϱ = 2)",
            printed=float(np.trace(np.linalg.solve(sigma_printed, gram)) + rho * np.trace(sigma_printed)),
            computed=problem3_objective(q, corrected.cov, rho),
            status="erratum",
            reason=f"ERRATA 4: minimiser is (CCᵀ)^{{1/2}}/√ϱ; BFGS over a Cholesky factor finds {opt_value:.10g}",
        )
    )
    rows.append(
        make_row(
            key="cor6-p3-quality",
            claim="Cor. 6 (Problem 3): Q = TrΣ of the printed minimiser",
            printed=float(np.trace(sigma_printed)),
            computed=corrected.second_moment(),
            status="erratum",
            reason="ERRATA 4: factor 2; Q = Tr((CCᵀ)^{1/2})/√ϱ at the minimiser (CCᵀ)^{1/2}/√ϱ; the numerical "
            f"minimiser has TrΣ = {np.trace(sigma_opt):.10g}",
        )
    )
    rows.append(
        make_row(
            key="cor6-p3-optimiser",
            claim="Cor. 6 (Problem 3): no covariance beats privnoise's Σ (printed = optimiser minimum)",
            printed=opt_value,
            computed=problem3_objective(q, corrected.cov, rho),
            status="check",
            reason="no covariance does better than privnoise's; "
            f"max entry of abs(Σ_opt − Σ) = {np.max(np.abs(sigma_opt - corrected.cov)):.2e}",
            method="optimisation: scipy.optimize BFGS of Tr(Σ⁻¹CCᵀ) + ϱTrΣ, written out, over a log-Cholesky "
            "factor of Σ",
        )
    )

    p4 = cast(Gaussian, noise_for(q, quality_budget=theta))
    sigma_printed4 = theta * root / np.trace(root)
    sigma_opt4 = _minimise_problem4(gram, theta)
    opt4 = float(np.trace(np.linalg.solve(sigma_opt4, gram)))
    rows.append(
        make_row(
            key="cor6-p4-information",
            claim="Cor. 6 (Problem 4): Tr 𝓘 at Σ = ϑ(CCᵀ)^{1/2}/Tr(CCᵀ)^{1/2} (ϑ = 0.5)",
            printed=float(np.trace(np.linalg.solve(sigma_printed4, gram))),
            computed=fisher_guarantee(q, p4).information.trace(),
            status="match",
            reason=f"BFGS over Cholesky factors with TrΣ = ϑ finds {opt4:.10g} = (Tr(CCᵀ)^{{1/2}})²/ϑ",
        )
    )
    c = np.array(s.weights_c1) / sum(s.weights_c1)
    ex2 = noise_for(queries.weighted_mean(np.array(s.weights_c1)), quality_budget=theta)
    for key, claim, second_moment, reason in (
        ("cor6-p4-quality", "Cor. 6 (Problem 4): the budget is active, Q = ϑ", p4.second_moment(),
         "Gaussian.second_moment"),
        ("cor6-example2-variance", "After Cor. 6: for Example 2 the optimal noise is Gaussian with variance ϑ",
         ex2.covariance(), f"weights {np.round(c, 3).tolist()}; independent of C"),
    ):
        rows.append(make_row(key, claim, theta, second_moment, "match", reason))
    return rows
