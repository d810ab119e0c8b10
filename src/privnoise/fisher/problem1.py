"""Problem 1 (Theorem 1): the noise maximising Tr 𝓘⁻¹ on a bounded support, for a square invertible query.

For f(x) = Cx with C invertible (m = n = 2 or 3) and γ = u² on W, 𝓘 = Cᵀ𝓘_w C with 𝓘_w = 4∫∇u∇uᵀ. Problem 1
maximises Tr 𝓘⁻¹, which is not concave in γ (Remark 6). Its stationarity condition is the nonlinear
eigenproblem (11),

    Tr(𝓘⁻² Cᵀ D²u C) + μu = 0 in W,  u = 0 on ∂W,  ∫u² = 1,

i.e. −∇·(M∇u) = μu with M = C𝓘⁻²Cᵀ depending on u through 𝓘. :func:`solve_problem1` iterates on that weight
(the multiplier matrix of the linearised problem): given 𝓘_k, take u_{k+1} the principal eigenfunction for
M_k = C𝓘_k⁻²Cᵀ. Because Tr 𝓘⁻¹ is convex in 𝓘, Tr 𝓘⁻¹ ≥ Tr 𝓘_k⁻¹ − Tr(𝓘_k⁻²(𝓘 − 𝓘_k)); u_{k+1} minimises
the subtracted term, so Tr 𝓘_{k+1}⁻¹ ≥ Tr 𝓘_k⁻¹: every step is an ascent (a minorise–maximise scheme), and a
fixed point satisfies (11) with μ = Tr 𝓘⁻¹/4 (multiply (11) by u and integrate).

References
----------
F. Farokhi, H. Sandberg, Automatica 99 (2019): Problem 1, Theorem 1, eq. (11), Remarks 5–6.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .._validation import check_in_range, check_positive_int
from ..exceptions import DimensionError, InvalidParameterError
from ..queries import LinearQuery, Query
from .fem import solve_dirichlet_eigenproblem
from .fem_noise import FiniteElementNoise
from .support_design import query_gram
from .supports import Support

__all__ = ["Problem1Solution", "solve_problem1"]


@dataclass(frozen=True, slots=True)
class Problem1Solution:
    """The result of :func:`solve_problem1`.

    Attributes
    ----------
    noise : FiniteElementNoise
        The density u² of the last iterate.
    trace_inverse : float
        Tr 𝓘⁻¹ = Tr((C ᵀ𝓘_w C)⁻¹) of that density (the objective of Problem 1).
    multiplier : float
        μ of (11): the principal eigenvalue for the final weight M = C𝓘⁻²Cᵀ (equals Tr 𝓘⁻¹/4 at a fixed point).
    weight : ndarray (m, m)
        M = C𝓘⁻²Cᵀ at the last iterate.
    history : tuple of float
        Tr 𝓘⁻¹ after every iteration, starting with Problem 2's solution (non-decreasing).
    converged : bool
        Whether the relative change of Tr 𝓘⁻¹ fell below ``tol``.
    """

    noise: FiniteElementNoise
    trace_inverse: float
    multiplier: float
    weight: NDArray[np.float64]
    history: tuple[float, ...]
    converged: bool


def _information(c: NDArray[np.float64], noise: FiniteElementNoise) -> NDArray[np.float64]:
    return np.asarray(c.T @ np.asarray(noise.fisher_information()) @ c)


def solve_problem1(
    query: Query,
    support: Support,
    *,
    rtol: float = 1e-5,
    tol: float = 1e-6,
    max_iterations: int = 50,
) -> Problem1Solution:
    """Maximise Tr 𝓘⁻¹ over noise densities on ``support`` (Theorem 1), starting from Problem 2's optimum.

    Parameters
    ----------
    query : LinearQuery
        f(x) = Cx with C square and invertible, 2×2 or 3×3 (𝓘 must be invertible for Tr 𝓘⁻¹ to be finite).
    support : Support
        The support W, of dimension m.
    rtol : float
        Tolerance of each finite-element solve.
    tol : float
        Stop when Tr 𝓘⁻¹ changes by less than ``tol`` relative.
    max_iterations : int
        Largest number of eigenproblems after the first.

    Examples
    --------
    >>> import numpy as np, privnoise as pn
    >>> q = pn.queries.LinearQuery(np.diag([1.0, 2.0]))        # separable: Problems 1 and 2 agree on a box
    >>> sol = solve_problem1(q, pn.fisher.Box([0, 0], [1, 1]), rtol=1e-4)
    >>> bool(abs(sol.trace_inverse - (1 + 1 / 4) / (4 * np.pi**2)) < 1e-4 * sol.trace_inverse)
    True
    """
    owner = "solve_problem1"
    gram = query_gram(query, support, owner)
    assert isinstance(query, LinearQuery)  # query_gram refuses other queries
    c: NDArray[np.float64] = np.asarray(query.matrix_2d, dtype=np.float64)
    if c.shape[0] != c.shape[1]:
        raise DimensionError(
            f"`query` of `{owner}` must be square (n = m): with n > m the information 𝓘 = Cᵀ𝓘_wC is singular and "
            "Tr 𝓘⁻¹ is infinite (Assumption 3)."
        )
    if np.linalg.matrix_rank(c) < c.shape[0]:
        raise InvalidParameterError(f"`query` of `{owner}` must be invertible.")
    fem_tol = check_in_range(rtol, "rtol", owner, low=0.0, high=0.1, low_open=True)
    stop = check_in_range(tol, "tol", owner, low=0.0, high=1.0, low_open=True)
    iterations = check_positive_int(max_iterations, "max_iterations", owner)

    weight = gram / np.trace(gram)
    noise = FiniteElementNoise(solution=solve_dirichlet_eigenproblem(support, weight, rtol=fem_tol))
    info = _information(c, noise)
    history = [float(np.trace(np.linalg.inv(info)))]
    converged = False
    best = (history[0], noise, weight)
    for _ in range(iterations):
        inv = np.linalg.inv(info)
        weight = c @ inv @ inv @ c.T
        weight = (weight + weight.T) / (2.0 * np.trace(weight))  # the scale of M does not change u
        noise = FiniteElementNoise(solution=solve_dirichlet_eigenproblem(support, weight, rtol=fem_tol))
        info = _information(c, noise)
        history.append(float(np.trace(np.linalg.inv(info))))
        if history[-1] > best[0]:
            best = (history[-1], noise, weight)
        if abs(history[-1] - history[-2]) <= stop * abs(history[-1]):
            converged = True
            break
    value, noise, weight = best
    inv = np.linalg.inv(_information(c, noise))
    m = c @ inv @ inv @ c.T
    multiplier = float(np.trace(m @ np.asarray(noise.fisher_information())) / 4.0)
    return Problem1Solution(
        noise=noise,
        trace_inverse=value,
        multiplier=multiplier,
        weight=(m + m.T) / 2.0,
        history=tuple(history),
        converged=converged,
    )
