"""Simplicial meshes of a support for the finite-element solver: refinement, and curved (isoparametric) P2 cells.

On a curved support (a ball or an ellipsoid) a mesh of straight simplices misses W by O(h²) near ∂W, and the
eigenvalue inherits that O(h²) geometric error whatever the degree of the elements. :func:`quadratic_mesh` turns a
vertex mesh whose boundary vertices lie on ∂W into a mesh of quadratic (P2-mapped) cells: the midpoint node of
every boundary edge is moved onto ∂W, so each boundary facet becomes the quadratic patch through its 3 (2-D) or
6 (3-D) nodes on ∂W and the geometric error drops to O(h⁴), the order of the P2 eigenvalue error (Lenoir 1986).

The nodes are placed in the coordinates v = R⁻¹(w − c) in which W is the unit ball (chord midpoints are moved
radially); there the quadratic arc through three such nodes is |F(t)|² = 1 − a²t²(1 − t²) ≤ 1 (a = 1 − cos θ,
t ∈ [−1, 1]): the curved cells stay inside W, at distance O(h⁴) from ∂W. The same holds for the 3-D patches
(checked on every boundary patch by the tests).

Uniform refinement of tetrahedra splits each into eight ("red" refinement); the inner octahedron is cut along its
shortest diagonal, measured in 3-D (scikit-fem measures it in the first two coordinates only, which on a ball
lets the cells degenerate level after level and the P2 eigenvalue converge like h³ instead of h⁴).

References
----------
M. Lenoir, "Optimal isoparametric finite elements and error estimates for domains involving curved boundaries",
SIAM J. Numer. Anal. 23 (1986).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import numpy as np

from ._fem_symmetry import EllipsoidOrthant, dirichlet_facets
from .supports import Support
from .supports.base import FloatArray, IntArray

__all__ = ["boundary_cells", "quadratic_mesh", "refine", "snap_vertices", "vertex_mesh"]

# Children of a tetrahedron (t0..t3 its vertices, e0..e5 the midpoints of its edges in scikit-fem's order
# (0,1), (1,2), (0,2), (0,3), (1,3), (2,3)): four corner tetrahedra, then four for each diagonal of the octahedron.
_CORNERS = ((("t", 0), ("e", 0), ("e", 2), ("e", 3)), (("t", 1), ("e", 0), ("e", 1), ("e", 4)),
            (("t", 2), ("e", 1), ("e", 2), ("e", 5)), (("t", 3), ("e", 3), ("e", 4), ("e", 5)))  # fmt: skip
_OCTAHEDRON = {
    (2, 4): ((2, 4, 0, 1), (2, 4, 0, 3), (2, 4, 1, 5), (2, 4, 3, 5)),
    (1, 3): ((1, 3, 0, 4), (1, 3, 4, 5), (1, 3, 5, 2), (1, 3, 2, 0)),
    (0, 5): ((0, 5, 1, 4), (0, 5, 4, 3), (0, 5, 3, 2), (0, 5, 2, 1)),
}


@contextmanager
def quiet_skfem() -> Iterator[None]:
    """scikit-fem logs a warning whenever refinement leaves non-contiguous arrays; keep it off stderr."""
    logger = logging.getLogger("skfem")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def vertex_mesh(points: FloatArray, cells: IntArray) -> Any:
    """A scikit-fem mesh of straight simplices (MeshTri or MeshTet)."""
    from skfem import MeshTet, MeshTri

    cls = MeshTri if points.shape[1] == 2 else MeshTet
    return cls(np.ascontiguousarray(points.T), np.ascontiguousarray(cells.T))


def _with_points(mesh: Any, points: FloatArray) -> Any:
    return replace(mesh, doflocs=np.ascontiguousarray(points.T))


def snap_vertices(mesh: Any, support: Support) -> Any:
    """Move the boundary vertices of ``mesh`` onto ∂W (no change on flat-sided supports)."""
    if not support.curved:
        return mesh
    p = np.array(mesh.p.T)
    b = mesh.boundary_nodes()
    if isinstance(support, EllipsoidOrthant):  # only the nodes on ∂W, not those on the symmetry planes
        b = np.unique(np.asarray(mesh.facets[:, dirichlet_facets(mesh, np.asarray(support.center))]))
    p[b] = support.project_to_boundary(p[b])
    return _with_points(mesh, p)


def _red_refine(mesh: Any) -> Any:
    """Split every tetrahedron into eight, the octahedron along its shortest diagonal (3-D distances)."""
    from skfem import MeshTet

    t = np.asarray(mesh.t)
    n = mesh.p.shape[1]
    mid = np.asarray(mesh.t2e) + n
    points = np.hstack([mesh.p, mesh.p[:, mesh.edges].mean(axis=1)])

    def length(i: int, j: int) -> FloatArray:
        return np.asarray(np.sum((points[:, mid[i]] - points[:, mid[j]]) ** 2, axis=0))

    lengths = np.stack([length(*pair) for pair in _OCTAHEDRON])
    choice = np.argmin(lengths, axis=0)
    nodes = {"t": t, "e": mid}
    children = [np.stack([nodes[kind][k] for kind, k in corner]) for corner in _CORNERS]
    for which, split in enumerate(_OCTAHEDRON.values()):
        pick = choice == which
        children.extend(np.stack([mid[k, pick] for k in child]) for child in split)
    return MeshTet(points, np.hstack(children))


def boundary_cells(mesh: Any) -> IntArray:
    """The cells with a vertex on the boundary of the mesh."""
    on_boundary = np.zeros(mesh.p.shape[1], dtype=bool)
    on_boundary[mesh.boundary_nodes()] = True
    return np.flatnonzero(on_boundary[np.asarray(mesh.t)].any(axis=0)).astype(np.int64)


def refine(mesh: Any, support: Support, marked: IntArray | None = None) -> Any:
    """Refine all cells (``marked`` None) or the marked ones and their neighbours, then snap to ∂W."""
    if marked is not None:
        new = mesh.refined(marked)
    elif mesh.p.shape[0] == 3:
        new = _red_refine(mesh)
    else:
        new = mesh.refined()
    return snap_vertices(new, support)


def quadratic_mesh(mesh: Any, support: Support) -> tuple[Any, IntArray]:
    """The P2-mapped mesh of a vertex mesh on a curved support, and the indices of its curved cells.

    Every node on a boundary facet (its vertices and edge midpoints) is placed on ∂W; the cells with such a node
    off the straight position are returned as curved, the others keep an affine map.
    """
    from skfem import MeshTet2, MeshTri2

    cls = MeshTri2 if mesh.p.shape[0] == 2 else MeshTet2
    quadratic = cls.from_mesh(mesh)
    nodes = quadratic.dofs.get_facet_dofs(quadratic.boundary_facets()).flatten()
    locations = np.array(quadratic.doflocs)
    straight = locations[:, nodes].T
    moved = support.project_to_boundary(straight)
    locations[:, nodes] = moved.T
    scale = float(np.max(np.ptp(locations, axis=1)))
    shifted = np.zeros(locations.shape[1], dtype=bool)
    shifted[nodes] = np.linalg.norm(moved - straight, axis=1) > 1e-14 * scale
    element_nodes = np.asarray(quadratic.dofs.element_dofs)
    curved = np.flatnonzero(shifted[element_nodes].any(axis=0)).astype(np.int64)
    return replace(quadratic, doflocs=locations), curved
