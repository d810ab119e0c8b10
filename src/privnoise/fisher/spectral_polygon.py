"""A guaranteed bracket of λ₁ of −∇·(A∇u) = λu on a convex polygon, by polynomials (no mesh for λ₁).

The polygon is mapped to its bounding box [−1, 1]² by x = c + h∘t (the matrix becomes H⁻¹AH⁻¹, the eigenvalues are
the same). :mod:`privnoise.fisher._bubble_polynomials` then gives the Rayleigh–Ritz upper bound ρ of the trial space
b·P, b = Π_k ℓ_k the product of the distances to the edges' lines (zero on the boundary, positive inside: the
polygon must be convex) and P of total degree ≤ p, and a polynomial flux with div σ = −u for Kato–Temple's lower
bound (:mod:`privnoise.fisher._spectral_common`). λ̂₁ and λ̂₂ are the Crouzeix–Raviart bounds on a mesh of the
polygon, refined while λ̂₂ < 1.1ρ, up to 100,000 cells.

Where every corner's angle is π/n with A = I (the equilateral triangle, the square, a rotated square) the
eigenfunction is analytic and the bracket narrows exponentially in p. Elsewhere the eigenfunction has corner
singularities r^(π/α) (α the corner's angle in the coordinates A^(−½)x) and the bracket narrows algebraically, as on
a box with a correlated A. A re-entrant corner (a non-convex polygon) is refused: the bubble would change sign
inside, and the singularity r^(2/3) would leave polynomials far behind the finite elements.

References
----------
T. Kato, "On the upper and lower bounds of eigenvalues", J. Phys. Soc. Japan 4 (1949).
F. Farokhi, H. Sandberg, Automatica 99 (2019), Theorem 2: the eigenproblem bracketed here.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ..exceptions import InvalidParameterError
from ._bubble_domains import convex_polygon_domain
from ._spectral_common import SpectralBracket, bubble_bracket, meshed_lower_bounds
from .supports import Polygon

__all__ = ["is_convex", "polygon_bracket"]

FloatArray = NDArray[np.float64]

# Crouzeix–Raviart meshes are refined while λ̂₂ < _GAP·ρ, up to _CELLS cells.
_GAP = 1.1
_CELLS = 100_000


def is_convex(polygon: Polygon) -> bool:
    """Whether every corner of the (counter-clockwise) polygon turns left (a straight corner counts as convex)."""
    v = np.asarray(polygon.vertices, dtype=float)
    edges = np.roll(v, -1, axis=0) - v
    following = np.roll(edges, -1, axis=0)
    turns = edges[:, 0] * following[:, 1] - edges[:, 1] * following[:, 0]
    scale = float(np.max(np.sum(edges**2, axis=1)))
    return bool(np.all(turns >= -1e-12 * scale))


def polygon_bracket(support: Polygon, matrix: FloatArray, rtol: float, max_degree: int) -> SpectralBracket:
    """The bracket of λ₁ on the convex polygon ``support`` (checked by
    :func:`~privnoise.fisher.spectral_bracket`): total degrees 4, 6, … up to ``max_degree`` until its relative
    width is ≤ ``rtol``."""
    if not is_convex(support):
        raise InvalidParameterError(
            "`support` of `spectral_bracket` must be a convex polygon (a re-entrant corner makes the "
            "eigenfunction singular there): use solve_dirichlet_eigenproblem for it."
        )
    v = np.asarray(support.vertices, dtype=float)
    low, high = v.min(axis=0), v.max(axis=0)
    center, half = (low + high) / 2.0, (high - low) / 2.0
    domain = convex_polygon_domain((v - center) / half)
    scaled = matrix / np.outer(half, half)
    return bubble_bracket(domain, scaled, rtol, max_degree, (0.0, 0.0),
                          lambda rho: meshed_lower_bounds(support, matrix, _GAP * rho, _CELLS))
