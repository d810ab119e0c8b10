"""A guaranteed bracket of λ₁ of −∇·(A∇u) = λu on an ellipsoid or a ball, by polynomials (no mesh for λ₁).

The ellipsoid W = {c + Rt : |t| ≤ 1} (R the symmetric root of its shape) is the unit ball in t, where the problem
has the matrix B = R⁻¹AR⁻¹ and the same eigenvalues (the Jacobian det R cancels in the Rayleigh quotient). On the
unit ball, :mod:`privnoise.fisher._bubble_polynomials` gives the Rayleigh–Ritz upper bound ρ of the trial space
(1 − |t|²)·P (P of total degree ≤ p) and a polynomial flux with div σ = −u; Kato–Temple
(:mod:`privnoise.fisher._spectral_common`) turns them into the lower bound.

Temple's inequality needs lower bounds λ̂₁ ≤ λ₁ and λ̂₂ ≤ λ₂ with ρ < λ̂₂. Two come in closed form: in y = B^(−½)t
the problem is the Laplacian on an ellipsoid with semi-axes 1/√μ_i (μ the eigenvalues of B), which lies inside the
ball of radius 1/√μ_min and inside the box of sides 2/√μ_i, and a larger domain has smaller Dirichlet eigenvalues:

    λ_k ≥ μ_min · λ_k(unit ball)  (λ₁ = j₀,₁², λ₂ = j₁,₁² in 2-D; π² and j_{3/2,1}² in 3-D),
    λ₁ ≥ (π²/4)Σμ_i,  λ₂ ≥ (π²/4)(Σμ_i + 3μ_min).

Where they leave λ̂₂ below 1.1ρ (a strongly anisotropic B), the Crouzeix–Raviart bounds on a circumscribed polytope
(:mod:`privnoise.fisher._fem_bounds`) are computed on refined meshes of W, up to 100,000 cells in 2-D and 5,000 in
3-D (4,096 cells take about 1 s, the next level 90 s; a ball with a correlated A needs 4,096). If ρ stays above
λ̂₂ (an ellipsoid with axes 1 : 2 : 3 and a correlated A needs the next level) the bracket is [λ̂₁, ρ], not
converged, and the degree is not raised past 8. The eigenfunction is analytic up to the sphere, so the bracket narrows exponentially in p: the unit ball to
5e-12 at p = 8, in under a second.

References
----------
T. Kato, "On the upper and lower bounds of eigenvalues", J. Phys. Soc. Japan 4 (1949).
F. Farokhi, H. Sandberg, Automatica 99 (2019), Theorem 2: the eigenproblem bracketed here.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.typing import NDArray

from ._bubble_domains import ball_domain
from ._spectral_common import SpectralBracket, bubble_bracket, meshed_lower_bounds
from .supports import Ellipsoid

__all__ = ["ellipsoid_bracket"]

FloatArray = NDArray[np.float64]

# Crouzeix–Raviart meshes are refined while λ̂₂ < _GAP·ρ, up to this many cells.
_GAP = 1.1
_CELLS = {2: 100_000, 3: 5_000}


@functools.lru_cache(maxsize=2)
def _unit_ball(d: int) -> tuple[float, float]:
    """λ₁ and λ₂ of −Δ on the unit ball: the first zeros of J₀ and J₁ in 2-D; π² and the first zero of the
    spherical Bessel function j₁ (tan x = x) in 3-D."""
    from scipy.optimize import brentq
    from scipy.special import jn_zeros, spherical_jn

    if d == 2:
        return float(jn_zeros(0, 1)[0] ** 2), float(jn_zeros(1, 1)[0] ** 2)
    return math.pi**2, float(brentq(lambda x: spherical_jn(1, x), 4.0, 4.7, xtol=1e-15)) ** 2


def _closed_form_bounds(scaled: FloatArray) -> tuple[float, float]:
    """λ̂₁, λ̂₂ from the ball and the box containing the mapped ellipsoid (module docstring)."""
    mu = np.linalg.eigvalsh(scaled)
    first, second = _unit_ball(scaled.shape[0])
    box = math.pi**2 / 4.0
    return (max(mu[0] * first, box * float(mu.sum())) * (1.0 - 1e-12),
            max(mu[0] * second, box * float(mu.sum() + 3.0 * mu[0])) * (1.0 - 1e-12))


def ellipsoid_bracket(support: Ellipsoid, matrix: FloatArray, rtol: float, max_degree: int) -> SpectralBracket:
    """The bracket of λ₁ on ``support`` (checked by :func:`~privnoise.fisher.spectral_bracket`): total degrees
    4, 6, … up to ``max_degree`` until its relative width is ≤ ``rtol``."""
    inverse_root = np.linalg.inv(np.asarray(support.root, dtype=float))
    scaled = inverse_root @ matrix @ inverse_root
    scaled = (scaled + scaled.T) / 2.0
    cells = _CELLS[support.dim]
    return bubble_bracket(ball_domain(support.dim), scaled, rtol, max_degree, _closed_form_bounds(scaled),
                          lambda rho: meshed_lower_bounds(support, matrix, _GAP * rho, cells))
