"""A guaranteed bracket of λ₁ of −∇·(A∇u) = λu on a box by polynomials: Rayleigh–Ritz above, Kato–Temple below.

On the box W = Π [l_d, u_d] the map x = c + h∘t takes the problem to t ∈ [−1, 1]^d with the matrix
A_t = H⁻¹AH⁻¹ (H = diag h), the same eigenvalues. Everything below is exact polynomial algebra in Legendre bases (the
integrals by Gauss–Legendre rules exact for the degrees involved), up to floating-point rounding, which the relative
margin :data:`~privnoise.fisher._fem_bounds.ROUNDING` covers as in the finite-element bounds.

* **Upper bound.** The trial functions φ_α(t) = Π_d (1 − t_d²) P_{α_d}(t_d), α_d ≤ p, vanish on the boundary, so
  the smallest Ritz value ρ = a(u, u)/(u, u) of the Galerkin problem on their span is ≥ λ₁ (Rayleigh–Ritz). The
  stiffness and mass matrices are sums of Kronecker products of 1-D matrices.
* **Lower bound** (Kato 1949, Temple; the complementary-energy form of the finite-element module). With ∫u² = 1,
  ρ = a(u, u) and S the solution operator of −∇·(A∇·) on H¹₀ (eigenvalues 1/λ_k), any flux σ with
  div σ = −u + r gives, for every v in H¹₀, a(Su, v) = (σ, ∇v) + (r, v), hence
  a(Su, Su) ≤ B = (‖A^(−½)σ‖ + ‖r‖/√λ̂₁)² with λ̂₁ ≤ λ₁. Temple's inequality for the largest eigenvalue of S on
  (H¹₀, a) then gives, when λ̂₂ ≤ λ₂ and ρ < λ̂₂,
  1/λ₁ ≤ 1/ρ + (B/ρ − 1/ρ²)/(1/ρ − 1/λ̂₂). The flux is the polynomial of least ‖A^(−½)σ‖ whose divergence equals
  −u exactly (σ_i of degree q + 1 in t_i and q in the others, q = p + 2: the divergence maps onto the tensor
  polynomials of degree q, which hold u), found from the saddle-point system of that constrained minimum; r is
  what rounding leaves of div σ + u. λ̂₁ and λ̂₂ are the Crouzeix–Raviart lower bounds on a coarse mesh of the box
  (:func:`~privnoise.fisher._fem_bounds.crouzeix_raviart_bounds`), which need only be below λ₁, λ₂.

Where the eigenfunction is analytic (A diagonal on a box: a product of cosines) the bracket narrows exponentially in
p; with a correlated A it has edge singularities and narrows algebraically, the flux bound far faster than Temple's
residual form ‖Lu − ρu‖ would (the residual needs u in H², the flux only the energy).

References
----------
T. Kato, "On the upper and lower bounds of eigenvalues", J. Phys. Soc. Japan 4 (1949).
T. Vejchodský, "Three methods for two-sided bounds of eigenvalues – a comparison", Numer. Methods PDE 34 (2018).
F. Farokhi, H. Sandberg, Automatica 99 (2019), Theorem 2: the eigenproblem bracketed here.
"""

from __future__ import annotations

import functools
import math
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.polynomial import legendre
from numpy.typing import ArrayLike, NDArray

from .._validation import check_in_range, check_positive_int
from ..exceptions import InvalidParameterError
from ._fem_bounds import crouzeix_raviart_bounds
from ._meshes import quiet_skfem
from ._spectral_common import SpectralBracket, kato_temple_bracket
from .particular_solutions import particular_solutions_bracket
from .spectral_ellipsoid import ellipsoid_bracket
from .spectral_polygon import polygon_bracket
from .supports import Box, Ellipsoid, Polygon
from .supports.base import operator_matrix

__all__ = ["SpectralBracket", "spectral_bracket"]

FloatArray = NDArray[np.float64]


@functools.lru_cache(maxsize=32)
def _one_dimensional(p: int) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """For b_k = (1 − t²)P_k, k ≤ p: M[a, b] = ∫b_a b_b, D[a, b] = ∫b'_a b'_b, C[a, b] = ∫b'_a b_b on [−1, 1]
    (Gauss–Legendre, exact), and E[k, m], the Legendre coefficients of b_k (m ≤ p + 2)."""
    t, w = legendre.leggauss(p + 4)
    values = np.empty((p + 1, t.size))
    slopes = np.empty((p + 1, t.size))
    expansion = np.zeros((p + 1, p + 3))
    for k in range(p + 1):
        c = np.zeros(k + 1)
        c[k] = 1.0
        bubble = legendre.legsub(c, legendre.legmulx(legendre.legmulx(c)))  # (1 − t²)P_k
        expansion[k, : bubble.size] = bubble
        values[k] = legendre.legval(t, bubble)
        slopes[k] = legendre.legval(t, legendre.legder(bubble))
    mass = (values * w) @ values.T
    stiffness = (slopes * w) @ slopes.T
    cross = (slopes * w) @ values.T
    return mass, stiffness, cross, expansion


def _kron(factors: list[FloatArray]) -> FloatArray:
    return functools.reduce(lambda left, right: np.asarray(np.kron(left, right), dtype=np.float64), factors)


def _galerkin(matrix: FloatArray, p: int) -> tuple[FloatArray, FloatArray]:
    """The stiffness ∫∇φ_αᵀA∇φ_β and mass ∫φ_αφ_β of the tensor bubble basis of degree p (dense)."""
    d = matrix.shape[0]
    mass1, stiff1, cross1, _ = _one_dimensional(p)
    mass = _kron([mass1] * d)
    stiffness = np.zeros_like(mass)
    for i in range(d):
        for j in range(d):
            if matrix[i, j] == 0.0:
                continue
            factors = [mass1] * d
            if i == j:
                factors[i] = stiff1
            else:
                factors[i], factors[j] = cross1, cross1.T
            stiffness += matrix[i, j] * _kron(factors)
    return stiffness, mass


def _flux_energy(matrix: FloatArray, coefficients: FloatArray, p: int) -> tuple[float, float]:
    """min ‖A^(−½)σ‖² over polynomial fluxes with div σ = −u (u the bubble ``coefficients``), and ‖div σ + u‖."""
    from scipy.sparse import bmat, coo_matrix
    from scipy.sparse.linalg import spsolve

    d = matrix.shape[0]
    q = p + 2
    expansion = _one_dimensional(p)[3]  # (p + 1, q + 1)
    target = coefficients.reshape((p + 1,) * d)
    for axis in range(d):  # Legendre coefficients of u, degree ≤ q per coordinate
        target = np.moveaxis(np.tensordot(target, expansion, axes=([axis], [0])), -1, axis)
    u_legendre = target.reshape(-1)
    norms = 2.0 / (2.0 * np.arange(q + 2) + 1.0)  # ∫P_a² on [−1, 1]
    derivative = np.zeros((q + 1, q + 2))  # d/dt Σ c_a P_a = Σ_k (2k + 1) Σ_{a > k, a − k odd} c_a P_k
    for a in range(q + 2):
        for k in range(a - 1, -1, -2):
            derivative[k, a] = 2.0 * k + 1.0
    keep = np.eye(q + 1, q + 2)  # the coefficients of degree ≤ q
    # component i: degree q + 1 in t_i, q in the others; stored on the (q + 2)^d grid, the unused entries dropped
    grid = np.indices((q + 2,) * d).reshape(d, -1)
    used = [np.flatnonzero(np.all(np.delete(grid, i, axis=0) <= q, axis=0)) for i in range(d)]
    weight = functools.reduce(np.multiply.outer, [norms] * d).reshape(-1)
    inverse = np.linalg.inv(matrix)
    blocks: list[list[Any]] = [[None] * d for _ in range(d)]
    for i in range(d):
        for j in range(d):
            common = np.intersect1d(used[i], used[j])
            rows = np.searchsorted(used[i], common)
            cols = np.searchsorted(used[j], common)
            blocks[i][j] = coo_matrix((inverse[i, j] * weight[common], (rows, cols)),
                                      shape=(used[i].size, used[j].size))
    gram = bmat(blocks).tocsc()
    divergence = bmat([[_kron_sparse([derivative if a == i else keep for a in range(d)]).tocsc()[:, used[i]]
                        for i in range(d)]]).tocsc()
    size = gram.shape[0]
    system = bmat([[gram, divergence.T], [divergence, None]]).tocsc()
    rhs = np.concatenate([np.zeros(size), -u_legendre])
    solution = spsolve(system, rhs)
    flux = solution[:size]
    energy = float(flux @ (gram @ flux))
    defect_coefficients = divergence @ flux + u_legendre
    legendre_norms = functools.reduce(np.multiply.outer, [norms[: q + 1]] * d).reshape(-1)
    defect = math.sqrt(float(np.sum(legendre_norms * defect_coefficients**2)))
    return energy, defect


def _kron_sparse(factors: list[FloatArray]) -> Any:
    from scipy.sparse import csr_matrix, kron

    out = csr_matrix(factors[0])
    for f in factors[1:]:
        out = kron(out, csr_matrix(f), format="csr")
    return out


def _box_mesh(lower: FloatArray, upper: FloatArray, cells: int) -> Any:
    """A tetrahedral or triangular mesh of the box with ``cells`` cells along its shortest side (as many per unit
    length along the others)."""
    from skfem import MeshTet, MeshTri

    sides = upper - lower
    counts = np.maximum(np.ceil(cells * sides / sides.min()).astype(int), 1)
    axes = [np.linspace(lo, hi, n + 1) for lo, hi, n in zip(lower, upper, counts, strict=True)]
    return MeshTri.init_tensor(*axes) if len(axes) == 2 else MeshTet.init_tensor(*axes)


def _separated(lower: FloatArray, upper: FloatArray, matrix: FloatArray, ritz: float) -> tuple[float, float]:
    """Crouzeix–Raviart lower bounds of λ₁ and λ₂ with λ̂₂ clear of the Ritz value (Temple's inequality needs
    ρ < λ̂₂, and is sharper the larger the gap): the mesh refined while λ̂₂ < 1.3 ρ, up to 200,000 cells."""
    cells = 8
    while True:
        with quiet_skfem():
            bounds, _ = crouzeix_raviart_bounds(_box_mesh(lower, upper, cells), matrix, count=2)
        finer = int(cells * 1.5)
        if bounds[1] >= 1.3 * ritz or _box_mesh(lower, upper, finer).t.shape[1] > 200_000:
            return float(bounds[0]), float(bounds[1])
        cells = finer


def _ritz(scaled: FloatArray, degree: int) -> float:
    from scipy.linalg import eigh

    stiffness, mass = _galerkin(scaled, degree)
    return float(eigh(stiffness, mass, subset_by_index=[0, 0], eigvals_only=True)[0])


def _bracket_at(scaled: FloatArray, degree: int, first: float, second: float) -> SpectralBracket:
    """The bracket from the trial polynomials of ``degree`` on [−1, 1]^d with the matrix ``scaled``, given the lower
    bounds ``first`` ≤ λ₁ and ``second`` ≤ λ₂."""
    from scipy.linalg import eigh

    stiffness, mass = _galerkin(scaled, degree)
    vectors = eigh(stiffness, mass, subset_by_index=[0, 0])[1]
    u = vectors[:, 0]
    u = u / math.sqrt(float(u @ mass @ u))  # ∫u² = 1
    rho = float(u @ stiffness @ u)
    energy, defect = _flux_energy(scaled, u, degree)
    return kato_temple_bracket(rho, energy, defect, first, second, degree=degree,
                               unknowns=(degree + 1) ** scaled.shape[0])


def spectral_bracket(support: Box | Ellipsoid | Polygon, matrix: ArrayLike | None = None, *, rtol: float = 1e-6,
                     max_degree: int | None = None, method: str = "auto") -> SpectralBracket:
    """A guaranteed bracket of λ₁ of −∇·(A∇u) = λu without a mesh for λ₁: by polynomials on a box (module
    docstring) or an ellipsoid or ball (:mod:`privnoise.fisher.spectral_ellipsoid`), by particular solutions on
    any polygon (:mod:`privnoise.fisher.particular_solutions`), or by polynomials on a convex polygon
    (:mod:`privnoise.fisher.spectral_polygon`).

    Parameters
    ----------
    support : Box, Ellipsoid or Polygon
        A 2-D or 3-D :class:`~privnoise.fisher.Box`, :class:`~privnoise.fisher.Ellipsoid` or
        :func:`~privnoise.fisher.Ball`, or a convex :class:`~privnoise.fisher.Polygon`.
    matrix : array_like (d, d), optional
        Symmetric positive definite A (CCᵀ of a linear query); the identity when omitted.
    rtol : float, default 1e-6
        Raise the degree until the bracket is narrower than ``rtol`` relative to its upper end.
    max_degree : int, optional
        The highest degree tried: per coordinate on a box (default 40 in 2-D, 14 in 3-D: about 30 s), in total on
        an ellipsoid or by polynomials on a polygon (default 30 in 2-D, 16 in 3-D); by particular solutions, the
        most functions per corner expansion (default 60). ``converged`` is False when the bracket is still wider
        than ``rtol`` there.
    method : {"auto", "polynomials", "particular solutions"}, default "auto"
        On a polygon, "auto" and "particular solutions" use Fourier–Bessel functions at its corners (any simple
        polygon, convex or not; ``degree`` of the result counts functions per corner, ``defect`` is the
        Fox–Henrici–Moler ε); "polynomials" the bubble polynomials (convex polygons only). Boxes and ellipsoids
        take "auto" or "polynomials".

    Returns
    -------
    SpectralBracket

    Examples
    --------
    >>> import math
    >>> from privnoise.fisher import Box
    >>> b = spectral_bracket(Box([-1, -1], [1, 1]), rtol=1e-9)
    >>> b.converged and b.low <= math.pi**2 / 2 <= b.up
    True
    >>> from privnoise.fisher import Ball
    >>> b = spectral_bracket(Ball([0, 0, 0], 1.0), rtol=1e-9)   # λ₁ of the unit ball is π²
    >>> b.converged and b.low <= math.pi**2 <= b.up
    True
    >>> from privnoise.fisher import Polygon
    >>> b = spectral_bracket(Polygon([(0, 0), (2, 0), (2, 1), (1, 1), (1, 2), (0, 2)]), rtol=1e-9)  # an L-shape
    >>> b.converged and b.low <= 9.6397238440219 <= b.up
    True
    """
    owner = "spectral_bracket"
    if not isinstance(support, Box | Ellipsoid | Polygon) or support.dim not in (2, 3):
        raise InvalidParameterError(
            f"`support` of `{owner}` must be a 2-D or 3-D Box or Ellipsoid (a Ball), or a Polygon; got "
            f"{support!r}."
        )
    d = support.dim
    a = operator_matrix(matrix, d, owner)
    tol = check_in_range(rtol, "rtol", owner, low=0.0, high=0.1, low_open=True)
    methods = ("auto", "polynomials", "particular solutions")
    if method not in methods or (method == "particular solutions" and not isinstance(support, Polygon)):
        raise InvalidParameterError(
            f"`method` of `{owner}` must be one of {methods} (\"particular solutions\" on a Polygon only); got "
            f"{method!r}."
        )
    particular = isinstance(support, Polygon) and method != "polynomials"
    default = 60 if particular else {(True, 2): 40, (True, 3): 14, (False, 2): 30, (False, 3): 16}[
        isinstance(support, Box), d]
    top = check_positive_int(default if max_degree is None else max_degree, "max_degree", owner, minimum=2)
    if isinstance(support, Polygon) and particular:
        return particular_solutions_bracket(support, a, tol, top)
    if isinstance(support, Ellipsoid):
        return ellipsoid_bracket(support, a, tol, top)
    if isinstance(support, Polygon):
        return polygon_bracket(support, a, tol, top)
    low_corner, high_corner = np.asarray(support.lower, dtype=float), np.asarray(support.upper, dtype=float)
    half = (high_corner - low_corner) / 2.0
    scaled = a / np.outer(half, half)  # A_t = H⁻¹AH⁻¹ on [−1, 1]^d: the same eigenvalues
    bracket = None
    separated: tuple[float, float] | None = None
    for degree in range(4, top + 1, 2) if top >= 4 else [top]:
        if separated is None:  # from the first Ritz value: later ones only come down
            separated = _separated(low_corner, high_corner, a, _ritz(scaled, degree))
        bracket = _bracket_at(scaled, degree, *separated)
        if bracket.relative_width <= tol:
            return replace(bracket, converged=True)
    assert bracket is not None
    return bracket
