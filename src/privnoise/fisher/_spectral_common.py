"""What the polynomial brackets of λ₁ share: the result type and Kato–Temple's lower bound from a flux.

With ∫u² = 1, ρ = a(u, u) and S the solution operator of −∇·(A∇·) on H¹₀ (eigenvalues 1/λ_k), a flux σ with
div σ = −u + r gives a(Su, v) = (σ, ∇v) + (r, v) for every v in H¹₀, hence a(Su, Su) ≤ B = (‖A^(−½)σ‖ +
‖r‖/√λ̂₁)² with λ̂₁ ≤ λ₁. The S-Rayleigh quotient of u in (H¹₀, a) is 1/ρ, and Temple's inequality for the largest
eigenvalue of S gives, when λ̂₂ ≤ λ₂ and ρ < λ̂₂, 1/λ₁ ≤ 1/ρ + (B/ρ − 1/ρ²)/(1/ρ − 1/λ̂₂). It holds for any u in
H¹₀, not only a Ritz vector; floating-point rounding is covered by the relative margin
:data:`~privnoise.fisher._fem_bounds.ROUNDING`.

References
----------
T. Kato, "On the upper and lower bounds of eigenvalues", J. Phys. Soc. Japan 4 (1949).
T. Vejchodský, "Three methods for two-sided bounds of eigenvalues – a comparison", Numer. Methods PDE 34 (2018).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from ._bubble_polynomials import BubbleDomain, bubble_flux, bubble_ritz
from ._fem_bounds import ROUNDING, circumscribed_scale, crouzeix_raviart_bounds
from ._meshes import quiet_skfem, refine, vertex_mesh
from .supports import Support

__all__ = ["SpectralBracket", "bubble_bracket", "kato_temple_bracket", "meshed_lower_bounds", "narrowest"]


@dataclass(frozen=True, slots=True)
class SpectralBracket:
    """λ₁ ∈ [low, up], from trial polynomials of degree ``degree`` (per coordinate on a box, in total on an
    ellipsoid or a polygon; ``unknowns`` of them); ``second`` is the lower bound of λ₂ used, ``defect`` the norm of div σ + u
    that rounding left, ``converged`` whether the requested relative width was reached."""

    low: float
    up: float
    degree: int
    unknowns: int
    second: float
    defect: float
    converged: bool

    @property
    def relative_width(self) -> float:
        return (self.up - self.low) / self.up


def kato_temple_bracket(rho: float, energy: float, defect: float, first: float, second: float, *, degree: int,
                        unknowns: int) -> SpectralBracket:
    """The bracket [Kato–Temple, ρ] from u with ∫u² = 1 and a(u, u) = ``rho``, a flux of ‖A^(−½)σ‖² = ``energy``
    with ‖div σ + u‖ = ``defect``, and the lower bounds ``first`` ≤ λ₁, ``second`` ≤ λ₂ (module docstring).

    The lower end is ``first`` where Temple's inequality does not apply (ρ not below ``second``).

    >>> b = kato_temple_bracket(2.0, 0.5, 0.0, 1.0, 4.0, degree=1, unknowns=1)   # B = 1/ρ: u an eigenfunction
    >>> round(b.low, 9), round(b.up, 9)
    (2.0, 2.0)
    """
    bound = (math.sqrt(energy) + defect / math.sqrt(first)) ** 2  # ≥ a(Su, Su)
    low = 0.0
    if rho < second:
        inverse = 1.0 / rho + (bound / rho - 1.0 / rho**2) / (1.0 / rho - 1.0 / second)
        low = (1.0 / inverse) * (1.0 - ROUNDING)
    up = rho * (1.0 + ROUNDING)
    return SpectralBracket(min(max(low, first), up), up, degree, unknowns, second, defect, False)


def meshed_lower_bounds(support: Support, matrix: NDArray[np.float64], target: float,
                        cells: int) -> tuple[float, float]:
    """Crouzeix–Raviart lower bounds of λ₁ and λ₂ of ``support`` (on a curved one from the polytope circumscribing
    its mesh, divided by the scale squared), the mesh refined while λ̂₂ < ``target``, up to ``cells`` cells."""
    mesh = vertex_mesh(*support.initial_mesh())
    d = support.dim
    with quiet_skfem():
        while mesh.t.shape[1] < 64:  # enough interior faces for two eigenvalues
            mesh = refine(mesh, support)
    while True:
        with quiet_skfem():
            bounds, _ = crouzeix_raviart_bounds(mesh, matrix, count=2)
            scale = circumscribed_scale(mesh, support) if support.curved else 1.0
            first, second = float(bounds[0]) / scale**2, float(bounds[1]) / scale**2
            if second >= target or mesh.t.shape[1] * 2**d > cells:
                return first, second
            mesh = refine(mesh, support)


def narrowest(previous: SpectralBracket | None, bracket: SpectralBracket) -> SpectralBracket:
    """The intersection of two brackets of λ₁ (each holds, whatever the degree that made it: where rounding spoils
    a high degree's Ritz vector its bounds only widen), with the newer one's degree and unknowns."""
    if previous is None:
        return bracket
    return SpectralBracket(max(previous.low, bracket.low), min(previous.up, bracket.up), bracket.degree,
                           bracket.unknowns, max(previous.second, bracket.second), bracket.defect, False)


def bubble_bracket(domain: BubbleDomain, scaled: NDArray[np.float64], rtol: float, max_degree: int,
                   known: tuple[float, float], meshed: Callable[[float], tuple[float, float]]) -> SpectralBracket:
    """The bracket of λ₁ on a bubble domain with the matrix ``scaled``: total degrees 4, 6, … up to ``max_degree``
    until its relative width is ≤ ``rtol``. ``known`` holds lower bounds (λ̂₁, λ̂₂) (zeros if none);
    ``meshed(ρ)`` gives better ones from a mesh, and is called once, if λ̂₂ < 1.1ρ at the first degree that
    needs it (later Ritz values only come down). The brackets of successive degrees are intersected."""
    first, second = known
    asked = False
    bracket = None
    for degree in range(4, max_degree + 1, 2) if max_degree >= 4 else [max_degree]:
        rho, coefficients = bubble_ritz(domain, scaled, degree)
        if second < 1.1 * rho and not asked:
            mesh_first, mesh_second = meshed(rho)
            first, second, asked = max(first, mesh_first), max(second, mesh_second), True
        energy, defect = bubble_flux(domain, scaled, coefficients, degree)
        unknowns = math.comb(degree + domain.dim, domain.dim)
        bracket = narrowest(bracket, kato_temple_bracket(rho, energy, defect, first, second, degree=degree,
                                                         unknowns=unknowns))
        if bracket.relative_width <= rtol:
            return replace(bracket, converged=True)
        if rho >= second and degree >= 8:  # Temple's inequality does not apply: more degrees cannot help
            break
    assert bracket is not None
    return bracket
