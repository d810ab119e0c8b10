"""Bounded noise supports W in two and three dimensions, as frozen validated value objects.

Each support knows its dimension, whether a point lies in it, and how to produce a conforming simplicial mesh
of itself (:meth:`initial_mesh`) for the finite-element solver of :mod:`privnoise.fisher.fem`:

==================  ====================================================================================
:class:`Box`        ``[lower, upper]``, a rectangle (2-D) or a cuboid (3-D)
:class:`Polygon`    any simple polygon, convex or not (2-D), meshed by a constrained Delaunay triangulation
:class:`Ellipsoid`  ``{w : (w − c)ᵀ shape⁻¹ (w − c) ≤ 1}`` (2-D ellipse or 3-D ellipsoid)
:class:`Ball`       ``{w : ‖w − c‖ ≤ radius}``
:class:`Polyhedron` the convex hull of a set of points (3-D)
:class:`MeshSupport` a user's conforming simplicial mesh (points and cells)
==================  ====================================================================================

Curved supports (balls and ellipsoids) are meshed by simplices whose boundary vertices lie on ∂W; the solver
then curves the boundary cells (quadratic patches through nodes on ∂W, :mod:`privnoise.fisher._meshes`), which
stay inside W, so the noise supported on the mesh stays inside W.

Each support is in its own module of this package (:mod:`~privnoise.fisher.supports.base` holds the interface);
every name is importable from :mod:`privnoise.fisher.supports` itself.

References
----------
F. Farokhi, H. Sandberg, Automatica 99 (2019), Problem 2 and Theorem 2 (the support set 𝒲 of the noise).
"""

from __future__ import annotations

from .base import Support
from .box import Box
from .ellipsoid import Ball, Ellipsoid
from .mesh import MeshSupport
from .polygon import Polygon
from .polyhedron import Polyhedron

__all__ = ["Ball", "Box", "Ellipsoid", "MeshSupport", "Polygon", "Polyhedron", "Support"]
