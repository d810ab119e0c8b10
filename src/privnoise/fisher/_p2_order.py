"""The local order of the degrees of freedom of quadratic (P2) elements on a simplex in 2-D and 3-D.

A P2 function or map on a simplex with vertices 0, …, d is stored by its d + 1 vertex values followed by one value
per edge midpoint, the edges in the order of :data:`EDGES` (scikit-fem's P2 elements). Both the P2 functions of
:mod:`privnoise.fisher._simplices` and the P2-mapped (curved) cells of :mod:`privnoise.fisher._isoparametric` read
their coefficients in this order.
"""

from __future__ import annotations

__all__ = ["EDGES"]

#: Local edges (vertex pairs) in the order of the edge degrees of freedom, per dimension.
EDGES: dict[int, tuple[tuple[int, int], ...]] = {
    2: ((0, 1), (1, 2), (0, 2)),
    3: ((0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3)),
}
