"""Recoverability privacy for data X ~ N(μ, Σ) with a general positive-definite Σ (beyond the paper).

Nageswaran leaves this case open (Section IV) and conjectures that π(ρ) stays piecewise affine. privnoise
computes the exact π_Σ(ρ) over **all** responses and an optimal response that is linear-Gaussian.

Result (privnoise's own; short proof below, checked numerically in ``tests/recoverability``)
---------------------------------------------------------------------------------------------
With K = Σ^{1/2}AᵀAΣ^{1/2},

    π_Σ(ρ) = max { tr(ΣR) : 0 ⪯ R ⪯ Iₙ, tr(KR) ≤ ρ }                                  (P)
           = min_{λ ≥ 0} λρ + Σᵢ max(0, eigᵢ(Σ − λK))                                   (D)

and Z = E[AX + b | T] is optimal, where T is a Gaussian observation of Y = Σ^{−1/2}(X − μ) whose posterior
covariance is the maximiser R* of (P). Explicitly, with R* = U diag(r) Uᵀ and B = AΣ^{1/2},

    Z = F X + c + W,  F = B(I − R*)Σ^{−1/2},  W ~ N(0, B U diag(r(1 − r)) Uᵀ Bᵀ),  c = (A − F)μ + b.

*Converse (all responses).* For any P_{Z|X} let P̄ = E[Cov(Y|Z)]. Then mmse(X|Z) = tr(ΣP̄) since
E[X|Z] = μ + Σ^{1/2}E[Y|Z]; E‖AX + b − Z‖² ≥ E‖B(Y − E[Y|Z])‖² = tr(KP̄) because E[AX + b|Z] is the MMSE
estimator of AX + b; and 0 ⪯ P̄ ⪯ Cov(Y) = I by the law of total covariance. So P̄ is feasible for (P).

*Achievability.* Every 0 ⪯ R ⪯ I is the posterior covariance of T_j = u_jᵀY + √(r_j/(1 − r_j)) N_j (j with
r_j < 1). The response Z = E[AX + b | T] has recoverability exactly tr(KR) (its error is the MMSE error of
AX + b given T) and, being a function of T, posterior P' ⪰ R. At a maximiser R*, P' is feasible (its
recoverability bound tr(KP') ≤ tr(KR*) ≤ ρ), so tr(ΣP') ≤ tr(ΣR*), and P' ⪰ R* forces P' = R*.

(D) is the Lagrange dual of (P) (Slater holds for ρ > 0: R = εI): the inner maximum of tr((Σ − λK)R) over
0 ⪯ R ⪯ I is the sum of the positive eigenvalues. With Σ = Iₙ, (P) is a fractional knapsack in the singular
basis of A and gives Theorem 1 (filling the smallest sᵢ first), an independent proof of eq. (8).

What is proven and what is numerical
------------------------------------
* Proven (above): (P) = (D) = π_Σ(ρ) over all responses, and the optimal response is linear-Gaussian.
* Numerical: λ* is found by bisection on the monotone h(λ) = tr(KΠ₊(Σ − λK)) (Π₊: projector on the positive
  eigenspace), R* as a convex combination of Π₊ at the two ends of the final bracket so that tr(KR*) = ρ
  exactly. Every solution carries its duality gap (D at λ) − (P at R*), a certificate that it is optimal to
  that accuracy; :class:`~privnoise.exceptions.SolverError` is raised when the gap exceeds 1e-8·tr Σ.
* Closed form: when Σ commutes with AᵀA (e.g. Σ = σ²I: X = σY, π_Σ = σ²π_{σA}) (P) is again a fractional
  knapsack over the common eigenvectors and π_Σ is piecewise affine.
* The conjecture of Section IV fails for general Σ: π_Σ need not be piecewise affine. For Σ = [[1, ½], [½, 1]],
  A = [1, 0], the noiseless response Z = X₁ − √ρ X₂ has E‖X₁ − Z‖² = ρ and mmse = ¾ + ¾√ρ + O(ρ), so the slope
  of π_Σ at 0⁺ is infinite (checked in the tests and the reproduction report).

Examples
--------
>>> import numpy as np
>>> from privnoise.recoverability.general_covariance import solve_general
>>> sol = solve_general(np.array([[1.0, 0.0]]), 0.01, np.array([[1.0, 0.5], [0.5, 1.0]]))
>>> round(sol.value, 4), sol.gap < 1e-9
(0.8412, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import readonly
from ..exceptions import SolverError
from ._inputs import check_data_cov, check_matrix, check_rho, rank_tolerance

__all__ = ["GeneralSolution", "dual_bound", "solve_general", "sqrtm_psd"]

_MAX_DOUBLINGS = 400
_MAX_BISECTIONS = 200


def sqrtm_psd(matrix: NDArray[np.float64]) -> NDArray[np.float64]:
    """Symmetric square root of a symmetric positive-semidefinite matrix."""
    w, v = np.linalg.eigh((matrix + matrix.T) / 2.0)
    root = (v * np.sqrt(np.maximum(w, 0.0))) @ v.T
    return np.asarray((root + root.T) / 2.0)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class GeneralSolution:
    """The solution of (P)/(D) for one ρ.

    Attributes
    ----------
    value : float
        π_Σ(ρ) = tr(ΣR*) (primal value of the returned R*).
    whitened_posterior : numpy.ndarray, shape (n, n)
        R*, the posterior covariance of Y = Σ^{−1/2}(X − μ) given the optimal response.
    posterior : numpy.ndarray, shape (n, n)
        Σ^{1/2}R*Σ^{1/2}, the error covariance of the querier's MMSE estimate of X.
    multiplier : float
        λ (∞ at ρ = 0, where R* is the projector on the null space of K).
    upper_bound : float
        The dual value at ``multiplier``: a certified upper bound on π_Σ(ρ).
    gap : float
        upper_bound − value >= 0.
    recoverability : float
        tr(KR*), equal to min(ρ, tr(AΣAᵀ)).
    """

    value: float
    whitened_posterior: Any
    posterior: Any
    multiplier: float
    upper_bound: float
    gap: float
    recoverability: float


def _positive_projector(matrix: NDArray[np.float64]) -> NDArray[np.float64]:
    w, v = np.linalg.eigh((matrix + matrix.T) / 2.0)
    keep = w > 0.0
    return np.asarray(v[:, keep] @ v[:, keep].T)


def _dual(sigma: NDArray[np.float64], k: NDArray[np.float64], rho: float, lam: float) -> float:
    w = np.linalg.eigvalsh(sigma - lam * k)
    return float(lam * rho + np.sum(np.maximum(w, 0.0)))


def dual_bound(A: ArrayLike, rho: float, data_cov: ArrayLike, multiplier: float) -> float:
    """The dual function (D) at λ = ``multiplier`` >= 0: an upper bound on π_Σ(ρ) for every λ.

    Examples
    --------
    >>> dual_bound([[1.0, 0.0]], 0.5, [[1.0, 0.0], [0.0, 1.0]], 1.0)           # Theorem 1: π(0.5) = 1.5
    1.5
    """
    owner = "dual_bound"
    matrix = check_matrix(A, owner)
    r = check_rho(rho, owner)
    lam = check_rho(multiplier, owner.replace("dual_bound", "dual_bound (multiplier)"))
    sigma = check_data_cov(data_cov, matrix.shape[1], owner)
    root = sqrtm_psd(sigma)
    b = matrix @ root
    return _dual(sigma, b.T @ b, r, lam)


def solve_general(A: NDArray[np.float64], rho: float, data_cov: NDArray[np.float64]) -> GeneralSolution:
    """Solve (P) by bisection on the dual multiplier; inputs must already be validated.

    Raises
    ------
    SolverError
        If the bracket cannot be found or the duality gap exceeds 1e-8·tr Σ.
    """
    sigma = data_cov
    n = sigma.shape[0]
    root = sqrtm_psd(sigma)
    b = A @ root
    k = b.T @ b
    k = (k + k.T) / 2.0
    total = float(np.trace(k))  # tr(AΣAᵀ) = var(AX)
    scale = float(np.trace(sigma))
    if rho >= total:
        r_star = np.eye(n)
        lam, upper = 0.0, float(np.trace(sigma))
    elif rho == 0.0:
        _, s, vt = np.linalg.svd(b, full_matrices=True)
        rank = int(np.sum(s > rank_tolerance(s, b.shape)))
        null = vt[rank:].T
        r_star = null @ null.T
        lam, upper = float("inf"), float(np.trace(sigma @ r_star))
    else:

        def h(lam: float) -> tuple[float, NDArray[np.float64]]:
            proj = _positive_projector(sigma - lam * k)
            return float(np.sum(k * proj)), proj

        lo, hi = 0.0, 1.0 / float(np.linalg.eigvalsh(k)[-1])
        h_lo, p_lo = h(lo)
        h_hi, p_hi = h(hi)
        doublings = 0
        while h_hi > rho:
            lo, h_lo, p_lo = hi, h_hi, p_hi
            hi *= 2.0
            h_hi, p_hi = h(hi)
            doublings += 1
            if doublings > _MAX_DOUBLINGS:
                raise SolverError(f"`solve_general` could not bracket the multiplier for rho = {rho:g}.")
        for _ in range(_MAX_BISECTIONS):
            mid = 0.5 * (lo + hi)
            if not lo < mid < hi:
                break
            h_mid, p_mid = h(mid)
            if h_mid > rho:
                lo, h_lo, p_lo = mid, h_mid, p_mid
            else:
                hi, h_hi, p_hi = mid, h_mid, p_mid
        t = (rho - h_hi) / (h_lo - h_hi) if h_lo > h_hi else 0.0
        r_star = (1.0 - t) * p_hi + t * p_lo
        lam, upper = hi, _dual(sigma, k, rho, hi)
    r_star = (r_star + r_star.T) / 2.0
    value = float(np.sum(sigma * r_star))
    gap = max(upper - value, 0.0)
    if gap > 1e-8 * scale:
        raise SolverError(
            f"`solve_general` stopped with duality gap {gap:.3g} (> 1e-8·tr Σ) at rho = {rho:g}; the result "
            "is not certified."
        )
    posterior = root @ r_star @ root
    return GeneralSolution(
        value=value,
        whitened_posterior=readonly(r_star),
        posterior=readonly((posterior + posterior.T) / 2.0),
        multiplier=lam,
        upper_bound=upper,
        gap=gap,
        recoverability=float(np.sum(k * r_star)),
    )
