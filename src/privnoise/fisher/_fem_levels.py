"""One level of the P2 finite-element eigensolver of :mod:`privnoise.fisher.fem`: assemble, solve, normalise.

On one mesh of a support W, :func:`solve_level` assembles the stiffness ∫∇uᵀA∇v and mass ∫uv matrices of
continuous P2 elements with scikit-fem (straight cells with their affine map; on balls and ellipsoids the cells at
∂W curved, P2-mapped through nodes on ∂W, :mod:`privnoise.fisher._meshes`, with a quadrature exact for the mass
integrand), imposes u = 0 on ∂W, and finds the eigenvector of the smallest eigenvalue of K v = λ M v: the
principal Dirichlet eigenfunction of −∇·(A∇u) = λu (Farokhi & Sandberg, Theorem 2, eq. (12) with A = CCᵀ),
normalised so that ∫u² = 1 and u ≥ 0 on most of the mesh. Its Rayleigh quotient is the level's λ_h.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..exceptions import SolverError
from . import _isoparametric as iso
from ._meshes import quadratic_mesh
from .supports import Support

__all__ = ["Level", "eigen_forms", "solve_level"]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Level:
    """One solve: λ_h, the normalised u per cell, the mesh, the curved cells and their nodes, the unknowns."""

    eigenvalue: float
    coefficients: FloatArray
    points: FloatArray
    cells: NDArray[np.int64]
    curved: NDArray[np.int64]
    curved_nodes: FloatArray
    unknowns: int


# Quadrature degree on curved cells: exact for the mass integrand u²·det DF (degree 4 + d).
_CURVED_ORDER = 8


def eigen_forms(matrix: FloatArray) -> tuple[Any, Any]:
    """The bilinear forms of −∇·(A∇u) = λu: the stiffness ∫ (A∇u)·∇v and the mass ∫ uv (scikit-fem forms)."""
    from skfem import BilinearForm

    @BilinearForm
    def stiffness(u: Any, v: Any, _: Any) -> Any:
        return np.einsum("ij,j...,i...->...", matrix, u.grad, v.grad)

    @BilinearForm
    def mass(u: Any, v: Any, _: Any) -> Any:
        return u * v

    return stiffness, mass


def solve_level(
    mesh: Any, matrix: FloatArray, support: Support, *, straight: bool = False, dirichlet: Any = None
) -> Level:
    """Assemble (curved cells at the boundary of a curved support unless ``straight``), solve, normalise.

    With ``straight`` the cells keep their affine maps: on a curved support the mesh then lies inside W and the
    level's λ_h, with exact quadrature, is a guaranteed upper bound of λ₁(W) (Rayleigh–Ritz). ``dirichlet``: the
    boundary facets where u = 0 (all of them by default; the others get the natural, Neumann, condition).
    """
    from skfem import Basis, ElementTetP2, ElementTriP2
    from skfem.mapping import MappingAffine

    d = mesh.p.shape[0]
    element = ElementTriP2() if d == 2 else ElementTetP2()
    if support.curved and not straight:
        geometry, curved = quadratic_mesh(mesh, support)
        _check_orientation(geometry, curved)
        flat = np.setdiff1d(np.arange(mesh.t.shape[1]), curved)
        bases = [Basis(geometry, element, elements=curved, intorder=_CURVED_ORDER)]
        if flat.size:
            bases.append(Basis(geometry, element, mapping=MappingAffine(geometry), elements=flat))
    else:
        geometry, curved = mesh, np.zeros(0, dtype=np.int64)
        bases = [Basis(mesh, element)]

    stiffness, mass = eigen_forms(matrix)
    k = stiffness.assemble(bases[0])
    m = mass.assemble(bases[0])
    for basis in bases[1:]:
        k = k + stiffness.assemble(basis)
        m = m + mass.assemble(basis)
    fixed = mesh.boundary_facets() if dirichlet is None else dirichlet
    interior = bases[0].complement_dofs(bases[0].get_dofs(fixed))
    ki = k[interior][:, interior]
    mi = m[interior][:, interior]
    vector = _principal_mode(ki.tocsr(), mi.tocsr(), d)
    u = np.zeros(k.shape[0])
    u[interior] = vector
    u /= math.sqrt(float(u @ (m @ u)))
    if u.sum() < 0:
        u = -u
    element_dofs = np.asarray(bases[0].dofs.element_dofs)
    nodes = np.asarray(geometry.doflocs)[:, element_dofs[:, curved]]  # (d, nloc, Ec)
    return Level(
        eigenvalue=float(u @ (k @ u)),  # the Rayleigh quotient of the normalised u (exactly its ∫∇uᵀA∇u)
        coefficients=u[element_dofs.T],
        points=np.array(mesh.p.T),
        cells=np.array(mesh.t.T, dtype=np.int64),
        curved=curved,
        curved_nodes=np.ascontiguousarray(np.transpose(nodes, (2, 1, 0))),
        unknowns=int(interior.size),
    )


def _check_orientation(geometry: Any, curved: NDArray[np.int64]) -> None:
    """Every curved cell's map must keep the sign of its Jacobian (Bernstein coefficients of one sign)."""
    nodes = np.transpose(np.asarray(geometry.doflocs)[:, geometry.dofs.element_dofs[:, curved]], (2, 1, 0))
    coef = iso.determinant_bernstein(nodes)
    if not np.all((coef.min(axis=1) > 0) | (coef.max(axis=1) < 0)):
        raise SolverError("a curved boundary cell folds over (its Jacobian changes sign); refine the support's mesh.")


def _principal_mode(k: Any, m: Any, dim: int) -> FloatArray:
    """The eigenvector of the smallest eigenvalue of K v = λ M v (K, M symmetric positive definite).

    In 2-D: ARPACK in shift-invert mode about 0 (``eigsh(sigma=0)``, a sparse LU of K). In 3-D the LU's fill-in
    makes that slow (18 s at 30,000 unknowns against 4 s), so LOBPCG with an algebraic multigrid preconditioner
    (pyamg) is used when pyamg is installed.
    """
    from scipy.sparse.linalg import ArpackNoConvergence, eigsh, lobpcg

    if dim == 3:
        try:
            import pyamg
        except ImportError:  # pragma: no cover - pyamg is part of the fem extra
            pyamg = None
        if pyamg is not None:
            precond = pyamg.smoothed_aggregation_solver(
                k, symmetry="symmetric", max_coarse=500
            ).aspreconditioner()
            start = np.ones((k.shape[0], 1))
            vals, vecs = lobpcg(
                k, start, B=m, M=precond, tol=1e-10 * math.sqrt(k.shape[0]), maxiter=400, largest=False
            )
            return np.asarray(vecs[:, 0])
    try:
        # a fixed start (the ground state is positive, so it overlaps the constant): the same result every run
        start = np.ones(k.shape[0])
        _, vecs = eigsh(k.tocsc(), k=1, M=m.tocsc(), sigma=0.0, which="LM", tol=1e-13, v0=start)
    except (ArpackNoConvergence, RuntimeError) as exc:  # pragma: no cover - ARPACK failures are rare
        raise SolverError(f"the sparse eigensolver did not converge: {exc}") from None
    return np.asarray(vecs[:, 0])
