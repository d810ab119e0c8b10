"""What an observer of the iterates of noisy gradient descent can learn about (Q, q) (Farokhi, Proposition 1).

The iterates of (3) satisfy y_k := (x[k+1] − x[k])/α_k = A_k θ − w[k] with θ = [vec Q; q] = vec([Q q]) and
A_k = −(x̃_kᵀ ⊗ I_n), x̃_k = [x[k]; 1] (the matrix A of eq. (6), one block row per iteration). With J the Fisher
information of the noise density γ, the Fisher information of θ carried by the iterates (given x[0:T−1]) is

    𝓘_θ = Σ_k A_kᵀ J A_k = G ⊗ J,   G = Σ_{k<T} x̃_k x̃_kᵀ,

so the Cramér–Rao bound of any unbiased estimator of (Q, q) is Tr(𝓘_θ⁻¹) = Tr(G⁻¹)·Tr(J⁻¹) (∞ when G is singular,
for instance with fewer than n + 1 iterations), and, by Tr(M⁻¹) ≥ d²/Tr(M) with d = n² + n,

    E‖Q − Q̂‖²_F + ‖q − q̂‖² ≥ (n² + n)² / (Tr(G)·Tr(J)) = (n² + n)² / (Σ_k (1 + ‖x[k]‖²) · Tr(J)),

which is Proposition 1 with the constant c = (n² + n)²/Σ_k(1 + ‖x[k]‖²). The printed proof replaces Tr(G) by
λ_max(Σ A_kᵀA_k) = λ_max(G); that bound can exceed the Cramér–Rao bound itself (errata, "Proposition 1 constant")
and is not reported. For projected iterates (5) the data-processing inequality keeps these as lower bounds.

The differential-privacy statement treats each iteration as a Gaussian mechanism on the gradient: T adaptive
Gaussian mechanisms of standard deviation σ at ℓ2 sensitivity Δ compose exactly to one Gaussian mechanism of
standard deviation σ/√T (Dong, Roth & Su 2022, Corollary 3.3), whose (ε, δ) profile is Balle & Wang's (2018).
Proposition 2's utility bound is not reported (errata item 12); the measured objective gap is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_positive, check_probability, readonly
from ..dp.profile import profile_of
from ..guarantees import DifferentialPrivacyGuarantee, Guarantee, json_number
from ..mechanisms import Mechanism

__all__ = [
    "OptimizationGuarantee",
    "iterate_gram",
    "iterates_guarantee",
    "iterates_information_matrix",
    "noise_fisher_matrix",
]


def noise_fisher_matrix(mechanism: Mechanism | None, n: int) -> NDArray[np.float64] | None:
    """The n × n Fisher information J of the per-iteration noise (a scalar mechanism is used per coordinate)."""
    if mechanism is None:
        return None
    j = mechanism.fisher_information_matrix()
    if mechanism.shape == ():
        return float(j[0, 0]) * np.eye(n)
    return np.asarray(j, dtype=float)


def iterate_gram(iterates: NDArray[np.float64]) -> NDArray[np.float64]:
    """G = Σ_{k<T} x̃_k x̃_kᵀ with x̃_k = [x[k]; 1], from iterates x[0:T] of shape (T + 1, n)."""
    xt = np.hstack([iterates[:-1], np.ones((iterates.shape[0] - 1, 1))])
    return xt.T @ xt


def iterates_information_matrix(iterates: NDArray[np.float64], noise_information: NDArray[np.float64]) -> Any:
    """𝓘_θ = Σ_k A_kᵀ J A_k built directly from the block rows A_k of eq. (6) (a check of G ⊗ J; small n only)."""
    n = iterates.shape[1]
    total = np.zeros((n * n + n, n * n + n))
    for x in iterates[:-1]:  # one block row of (6) per iteration
        a = -np.kron(np.append(x, 1.0)[None, :], np.eye(n))
        total += a.T @ noise_information @ a
    return total


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class OptimizationGuarantee(Guarantee):
    """Privacy of the iterates x[0:T] of noisy (projected) gradient descent.

    Attributes
    ----------
    noise_information : ndarray (n, n) or None
        J, the Fisher information of one noise vector w[k] (None without noise).
    fisher_trace : float
        Tr J, the paper's privacy measure (n²/ε for Theorem 1's noise; ∞ without noise).
    gram : ndarray (n + 1, n + 1)
        G = Σ_{k<T} x̃_k x̃_kᵀ from the actual iterates.
    cramer_rao_bound : float
        Tr(G⁻¹)·Tr(J⁻¹): the least E‖Q − Q̂‖²_F + ‖q − q̂‖² of an unbiased estimator given these iterates.
    proposition1_bound : float
        (n² + n)²/(Tr G · Tr J), Proposition 1 with its constant computed from the iterates (≤ the bound above).
    differential_privacy : DifferentialPrivacyGuarantee or None
        (ε, δ)-DP of the whole sequence of iterates for the declared gradient sensitivity, when it holds.
    dp_note : str
        Why no DP statement is given, or the assumption it rests on.
    """

    noise_information: NDArray[np.float64] | None
    fisher_trace: float
    gram: NDArray[np.float64]
    cramer_rao_bound: float
    proposition1_bound: float
    iterations: int
    differential_privacy: DifferentialPrivacyGuarantee | None
    dp_note: str
    notion: str = "fisher-information"

    def as_dict(self) -> dict[str, Any]:
        return {
            "notion": self.notion,
            "iterations": self.iterations,
            "fisher_information_trace": json_number(self.fisher_trace),
            "inverse_fisher_trace": json_number(1.0 / self.fisher_trace) if self.fisher_trace > 0 else "inf",
            "cramer_rao_bound_on_Q_q": json_number(self.cramer_rao_bound),
            "proposition1_bound": json_number(self.proposition1_bound),
            "differential_privacy": None
            if self.differential_privacy is None
            else self.differential_privacy.as_dict(),
            "dp_note": self.dp_note,
        }

    def summary(self) -> str:
        dp = "no DP statement" if self.differential_privacy is None else self.differential_privacy.summary()
        return (
            f"Fisher-information privacy of the iterates: Tr 𝓘 = {self.fisher_trace:.6g} per iteration; "
            f"any unbiased estimate of (Q, q) from the {self.iterations} iterations has "
            f"E‖Q − Q̂‖²_F + ‖q − q̂‖² ≥ {self.cramer_rao_bound:.6g} (Proposition 1 bound "
            f"{self.proposition1_bound:.6g}); {dp} ({self.dp_note})"
        )


def _dp_statement(
    mechanism: Mechanism | None, iterations: int, sensitivity: float | None, delta: float
) -> tuple[DifferentialPrivacyGuarantee | None, str]:
    if mechanism is None:
        return None, "no noise: the iterates reveal the gradients exactly"
    if sensitivity is None:
        return None, "no gradient sensitivity declared"
    profile = profile_of(mechanism)
    composed = profile.composed(iterations)
    if composed is None:
        return None, f"the DP statement needs Gaussian noise; got {mechanism.name}"
    sigma = profile.scale  # σ_min: the weakest direction
    eps = composed.epsilon(sensitivity, delta)
    adjacency = f"datasets whose gradients differ by at most Δ = {sensitivity:g} in ℓ2 at every point of the constraint set"
    return (
        DifferentialPrivacyGuarantee(epsilon=eps, delta=delta, adjacency=adjacency),
        f"{iterations} Gaussian steps of σ = {sigma:.6g} compose exactly to σ/√T = {sigma / math.sqrt(iterations):.6g}",
    )


def iterates_guarantee(
    iterates: NDArray[np.float64],
    mechanism: Mechanism | None,
    *,
    gradient_sensitivity: float | None = None,
    delta: float = 1e-5,
) -> OptimizationGuarantee:
    """The guarantee of :class:`OptimizationGuarantee` for iterates ``x[0:T]`` (shape (T + 1, n)).

    Parameters
    ----------
    iterates : ndarray, shape (T + 1, n)
    mechanism : Mechanism or None
        The per-iteration noise (a scalar mechanism is drawn independently per coordinate).
    gradient_sensitivity : float, optional
        Declared Δ ≥ sup ‖∇f_D(x) − ∇f_D'(x)‖₂ over neighbouring datasets D, D' and x ∈ 𝒞 (never derived from data).
    delta : float
        δ of the (ε, δ) statement.

    Examples
    --------
    >>> import numpy as np
    >>> from privnoise.mechanisms import Gaussian
    >>> it = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> g = iterates_guarantee(it, Gaussian(cov=0.05 * np.eye(2)))
    >>> round(g.fisher_trace, 9), round(g.cramer_rao_bound, 9)
    (40.0, 0.5)
    """
    owner = "iterates_guarantee"
    n = iterates.shape[1]
    t = iterates.shape[0] - 1
    dl = check_probability(delta, "delta", owner)
    sens = (
        None
        if gradient_sensitivity is None
        else check_positive(gradient_sensitivity, "gradient_sensitivity", owner)
    )
    j = noise_fisher_matrix(mechanism, n)
    gram = iterate_gram(iterates)
    d2 = float(n * n + n) ** 2
    if j is None:
        tr_j, crb, prop1 = math.inf, 0.0, 0.0
    else:
        tr_j = float(np.trace(j))
        eig_g = np.linalg.eigvalsh(gram)
        singular = eig_g[0] <= 1e-12 * max(eig_g[-1], 1e-300)
        eig_j = np.linalg.eigvalsh(j)
        crb = math.inf if singular or eig_j[0] <= 0 else float(np.sum(1 / eig_g) * np.sum(1 / eig_j))
        prop1 = d2 / (float(np.trace(gram)) * tr_j) if tr_j > 0 else math.inf
    dp, note = _dp_statement(mechanism, t, sens, dl)
    return OptimizationGuarantee(
        noise_information=None if j is None else readonly(j),
        fisher_trace=tr_j,
        gram=readonly(gram),
        cramer_rao_bound=crb,
        proposition1_bound=prop1,
        iterations=t,
        differential_privacy=dp,
        dp_note=note,
    )
