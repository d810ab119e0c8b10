"""The discretised linear program of Koufogiannis, Han & Pappas (Appendix): loss-optimal ε-Lipschitz noise.

On the grid vᵢ = −M + (i − 1)ν, i = 1…N, ν = 2M/(N − 1), with gᵢ ≈ g(vᵢ):

    minimise   Σᵢ gᵢ ℓ(vᵢ) ν               (ℓ(v) = v² for "mse", |v| for "l1")
    subject to Σᵢ gᵢ ν = 1,  gᵢ ≥ 0,
               −ε(gᵢ + gᵢ₊₁)/2 ≤ (gᵢ₊₁ − gᵢ)/ν ≤ ε(gᵢ + gᵢ₊₁)/2,   i = 1…N − 1,

the discretisation of problem (18) (the Lipschitz-privacy constraint |g′| ≤ εg). It is solved with HiGHS
(``scipy.optimize.linprog(method="highs")``) on sparse constraint matrices. As the grid refines the objective
converges to the Laplace value 2/ε² (MSE; Theorem 6) or 1/ε (absolute error), and the minimiser to the Laplace
density (ε/2)e^{−ε|v|}.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import optimize, sparse

from .._validation import check_positive, check_positive_int
from ..exceptions import InvalidParameterError, SolverError
from ..mechanisms.tabulated import TabulatedDensity

__all__ = ["NoiseLPSolution", "optimal_noise_lp"]


@dataclass(frozen=True, slots=True, kw_only=True)
class NoiseLPSolution:
    """Solution of the discretised optimal-noise linear program.

    Attributes
    ----------
    density : TabulatedDensity
        The optimal gᵢ as a piecewise-linear density on the grid (renormalised by the trapezoid rule).
    objective : float
        The LP optimum Σ gᵢ ℓ(vᵢ) ν.
    reference : float
        The Laplace value the objective converges to: 2/ε² ("mse") or 1/ε ("l1").
    epsilon : float
    loss : str
    grid : int
        Number N of grid points.
    half_width : float
        Truncation M of the grid [−M, M].

    Notes
    -----
    The tabulated density has bounded support [−M, M], so — unlike the Laplace density it approximates — it is
    *not* Lipschitz or ε-differentially private (its log density is −∞ outside the grid). Use it to study the
    optimum, and release with :class:`~privnoise.mechanisms.Laplace`.
    """

    density: TabulatedDensity
    objective: float
    reference: float
    epsilon: float
    loss: str
    grid: int
    half_width: float

    @property
    def relative_gap(self) -> float:
        """(objective − reference)/reference."""
        return (self.objective - self.reference) / self.reference


def optimal_noise_lp(
    epsilon: float,
    *,
    loss: Literal["mse", "l1"] = "mse",
    grid: int = 2001,
    half_width: float | None = None,
) -> NoiseLPSolution:
    """Solve the discretised LP for the loss-optimal ε-Lipschitz-private additive noise on ℝ.

    Parameters
    ----------
    epsilon : float
        Lipschitz privacy level ε > 0.
    loss : {"mse", "l1"}
        E V² or E|V|.
    grid : int
        Number of grid points N ≥ 3.
    half_width : float, optional
        Truncation M; default 25/ε (the Laplace tail beyond it has mass e^{−25} ≈ 1.4e-11).

    Returns
    -------
    NoiseLPSolution

    Raises
    ------
    InvalidParameterError
        For a bad ε, loss, grid or half_width.
    SolverError
        If HiGHS does not report an optimal solution.

    References
    ----------
    F. Koufogiannis, S. Han, G. J. Pappas, "Optimality of the Laplace mechanism in differential privacy",
    Appendix (discretised problem (18)) and Theorem 6.

    Examples
    --------
    >>> sol = optimal_noise_lp(1.0, grid=401)
    >>> abs(sol.relative_gap) < 0.01, sol.reference
    (True, 2.0)
    """
    owner = "optimal_noise_lp"
    eps = check_positive(epsilon, "epsilon", owner)
    if loss not in ("mse", "l1"):
        raise InvalidParameterError(f"`loss` of `{owner}` must be 'mse' or 'l1'; got {loss!r}.")
    n = check_positive_int(grid, "grid", owner, minimum=3)
    m = 25.0 / eps if half_width is None else check_positive(half_width, "half_width", owner)
    v = np.linspace(-m, m, n)
    nu = 2.0 * m / (n - 1)
    cost = (v * v if loss == "mse" else np.abs(v)) * nu

    # Rows scaled by ν: ±(gᵢ₊₁ − gᵢ) − (εν/2)(gᵢ + gᵢ₊₁) ≤ 0.
    k = n - 1
    half = 0.5 * eps * nu
    rows = np.arange(k)
    first = sparse.csr_matrix(
        (
            np.concatenate([np.full(k, -1.0 - half), np.full(k, 1.0 - half)]),
            (np.tile(rows, 2), np.r_[rows, rows + 1]),
        ),
        shape=(k, n),
    )
    second = sparse.csr_matrix(
        (
            np.concatenate([np.full(k, 1.0 - half), np.full(k, -1.0 - half)]),
            (np.tile(rows, 2), np.r_[rows, rows + 1]),
        ),
        shape=(k, n),
    )
    a_ub = sparse.vstack([first, second], format="csr")
    a_eq = sparse.csr_matrix(np.full((1, n), nu))
    res = optimize.linprog(
        cost,
        A_ub=a_ub,
        b_ub=np.zeros(2 * k),
        A_eq=a_eq,
        b_eq=np.array([1.0]),
        bounds=(0.0, None),
        method="highs",
        options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
    )
    if res.status != 0 or res.x is None:
        raise SolverError(f"`{owner}`: HiGHS did not solve the LP (status {res.status}: {res.message}).")
    g = np.maximum(np.asarray(res.x, dtype=float), 0.0)
    reference = 2.0 / eps**2 if loss == "mse" else 1.0 / eps
    return NoiseLPSolution(
        density=TabulatedDensity(grid=v, values=g, interpolation="linear"),
        objective=float(res.fun),
        reference=reference,
        epsilon=eps,
        loss=loss,
        grid=n,
        half_width=float(m),
    )
