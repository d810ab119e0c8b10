"""Minimum-Fisher-information noise by a discretised convex program (Fisher PDE on an interval).

    minimise ∫ g′²/g   over densities g on ℝ,  subject to a support [a, b] and/or E w² ≤ ϑ.

With u = √g the objective is 4∫u′² and the normalisation ∫u² = 1, so the problem is a Rayleigh quotient. We
discretise u with continuous piecewise-linear finite elements on a uniform grid (u = 0 at both ends: the support
edge, or the truncation ±M of ℝ), which turns it into a generalized symmetric eigenproblem:

* support only: the smallest eigenpair of K u = λ M u (K stiffness, M mass), Fisher information 4λ; the
  continuous minimiser is the cos² density with information 4π²/L² (Farokhi & Sandberg, Corollary 1);
* second-moment budget ϑ: the Lagrangian 4∫u′² + μ(∫w²u² − ϑ) gives the ground state of (4K + μX) u = λ M u
  (X the mass matrix weighted by w², a harmonic oscillator); μ ≥ 0 is found by root finding so that the ground
  state's second moment is ϑ (or μ = 0 if the support alone already meets the budget). On ℝ the minimiser is the
  Gaussian N(0, ϑ), information 1/ϑ (the Cramér–Rao equality case; Farokhi & Sandberg, Corollary 6).

The reported ``fisher_information`` is the Rayleigh quotient 4uᵀKu/uᵀMu, i.e. the exact Fisher information of the
density (piecewise-linear u)²; it is an upper bound on the continuous minimum (Ritz) converging at O(h²).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import optimize, sparse
from scipy.sparse import linalg as splinalg

from .._validation import check_finite, check_positive, check_positive_int
from ..exceptions import InvalidParameterError, SolverError
from ..mechanisms.tabulated import TabulatedDensity

__all__ = ["FisherProgramSolution", "minimum_fisher_noise"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FisherProgramSolution:
    """Solution of the discretised minimum-Fisher-information program.

    Attributes
    ----------
    density : TabulatedDensity
        g = u² at the grid nodes, linearly interpolated (zero at both ends).
    fisher_information : float
        4∫u′² of the discrete minimiser (exact for the density (piecewise-linear u)²).
    reference : float
        The continuous optimum where a closed form exists (4π²/L² on a support of length L; 1/ϑ for a
        second-moment budget on ℝ), NaN otherwise.
    second_moment : float
        E w² of the discrete minimiser (∫w²u² with the finite-element mass matrix).
    multiplier : float
        The Lagrange multiplier μ ≥ 0 of the second-moment constraint (0 when inactive or absent).
    interval : tuple of float
        The computational interval (the support, or ±M).
    """

    density: TabulatedDensity
    fisher_information: float
    reference: float
    second_moment: float
    multiplier: float
    interval: tuple[float, float]

    @property
    def relative_error(self) -> float:
        """(fisher_information − reference)/reference (NaN without a reference)."""
        return (self.fisher_information - self.reference) / self.reference


def _tridiag(main: NDArray[np.float64], off: NDArray[np.float64]) -> sparse.csc_matrix:
    return sparse.diags([off, main, off], [-1, 0, 1], format="csc")


def _matrices(
    x: NDArray[np.float64],
) -> tuple[sparse.csc_matrix, sparse.csc_matrix, sparse.csc_matrix]:
    """Stiffness, mass and w²-weighted mass of P1 elements on the interior nodes of the uniform grid x."""
    h = x[1] - x[0]
    k = x.size - 2
    stiff = _tridiag(np.full(k, 2.0 / h), np.full(k - 1, -1.0 / h))
    mass = _tridiag(np.full(k, 4.0 * h / 6.0), np.full(k - 1, h / 6.0))
    # ∫ w² φ_a φ_b on each element by 3-point Gauss–Legendre (exact for degree 4).
    t, wts = np.polynomial.legendre.leggauss(3)
    s = (t + 1.0) / 2.0  # positions in [0, 1] within an element
    left = x[:-1]
    pts = left[:, None] + h * s[None, :]
    w2 = pts**2 * (wts[None, :] * h / 2.0)
    phi_l, phi_r = 1.0 - s, s
    e_ll = w2 @ (phi_l * phi_l)
    e_rr = w2 @ (phi_r * phi_r)
    e_lr = w2 @ (phi_l * phi_r)
    # interior node i (1..N−2) gets e_rr of element i−1 and e_ll of element i
    diag = e_rr[:-1] + e_ll[1:]
    off = e_lr[1:-1]
    return stiff, mass, _tridiag(diag, off)


def _ground_state(a: sparse.csc_matrix, mass: sparse.csc_matrix) -> tuple[float, NDArray[np.float64]]:
    try:
        vals, vecs = splinalg.eigsh(a, k=1, M=mass, sigma=0.0, which="LM")
    except (RuntimeError, splinalg.ArpackError) as exc:  # pragma: no cover - ARPACK failure
        raise SolverError(f"`minimum_fisher_noise`: the eigen-solver failed ({exc}).") from exc
    u = np.asarray(vecs[:, 0], dtype=float)
    u *= np.sign(u[np.argmax(np.abs(u))])
    u /= math.sqrt(float(u @ (mass @ u)))
    return float(vals[0]), u


def minimum_fisher_noise(
    *,
    support: tuple[float, float] | None = None,
    variance: float | None = None,
    grid: int = 2001,
    half_width: float | None = None,
) -> FisherProgramSolution:
    """Scalar noise density of minimum Fisher information under a support and/or a second-moment budget.

    Parameters
    ----------
    support : (a, b), optional
        Bounded support a < b of the noise.
    variance : float, optional
        Budget ϑ > 0 on the second moment E w² (the variance for the symmetric optimum on ℝ).
    grid : int
        Number of grid nodes N ≥ 5 (including the two end nodes where u = 0).
    half_width : float, optional
        Without ``support``: truncation M of ℝ to [−M, M]; default 12√ϑ.

    Returns
    -------
    FisherProgramSolution

    Raises
    ------
    InvalidParameterError
        If neither constraint is given, or a parameter is out of range.
    SolverError
        If the eigen-solver or the multiplier search fails.

    References
    ----------
    F. Farokhi, H. Sandberg, "Ensuring privacy with constrained additive noise by minimizing Fisher
    information", Automatica 99 (2019): Corollary 1 (cos², 4π²/L² per coordinate — see docs/errata.md item 2)
    and Corollary 6 (Gaussian).

    Examples
    --------
    >>> sol = minimum_fisher_noise(support=(0.0, 1.0), grid=801)
    >>> abs(sol.relative_error) < 1e-3                 # 4π²
    True
    >>> sol = minimum_fisher_noise(variance=2.0, grid=801)
    >>> abs(sol.fisher_information - 0.5) < 1e-3       # 1/ϑ
    True
    """
    owner = "minimum_fisher_noise"
    n = check_positive_int(grid, "grid", owner, minimum=5)
    if support is None and variance is None:
        raise InvalidParameterError(f"`support` or `variance` of `{owner}` is required; got neither.")
    theta = None if variance is None else check_positive(variance, "variance", owner)
    if support is not None:
        if not isinstance(support, tuple | list) or len(support) != 2:
            raise InvalidParameterError(f"`support` of `{owner}` must be a pair (a, b); got {support!r}.")
        a = check_finite(support[0], "support", owner)
        b = check_finite(support[1], "support", owner)
        if not b > a:
            raise InvalidParameterError(f"`support` of `{owner}` must satisfy a < b; got {support!r}.")
        if half_width is not None:
            raise InvalidParameterError(f"`half_width` of `{owner}` is only used without `support`.")
    else:
        assert theta is not None
        m = 12.0 * math.sqrt(theta) if half_width is None else check_positive(half_width, "half_width", owner)
        a, b = -m, m
    x = np.linspace(a, b, n)
    stiff, mass, weighted = _matrices(x)

    def solve(mu: float) -> tuple[float, float, NDArray[np.float64]]:
        _, u = _ground_state(4.0 * stiff + mu * weighted, mass)
        return 4.0 * float(u @ (stiff @ u)), float(u @ (weighted @ u)), u

    mu = 0.0
    info, second, u = solve(0.0) if support is not None else (math.inf, math.inf, np.zeros(n - 2))
    if theta is not None and second > theta:
        # Second moment of the ground state decreases in μ; bracket in log μ around the oscillator value 1/ϑ².
        def gap(log_mu: float) -> float:
            return solve(math.exp(log_mu))[1] - theta

        lo, hi = math.log(1.0 / theta**2) - 5.0, math.log(1.0 / theta**2) + 5.0
        for _ in range(20):
            if gap(lo) > 0:
                break
            lo -= 5.0
        for _ in range(20):
            if gap(hi) < 0:
                break
            hi += 5.0
        if not (gap(lo) > 0 > gap(hi)):
            raise SolverError(f"`{owner}`: could not bracket the multiplier of the second-moment budget.")
        mu = math.exp(optimize.brentq(gap, lo, hi, xtol=1e-12, rtol=1e-12))
        info, second, u = solve(mu)
    g = np.concatenate(([0.0], u * u, [0.0]))
    if support is not None and theta is None:
        reference = 4.0 * math.pi**2 / (b - a) ** 2
    elif support is None and theta is not None:
        reference = 1.0 / theta
    else:
        reference = math.nan
    return FisherProgramSolution(
        density=TabulatedDensity(grid=x, values=g, interpolation="linear"),
        fisher_information=info,
        reference=reference,
        second_moment=second,
        multiplier=mu,
        interval=(float(a), float(b)),
    )
