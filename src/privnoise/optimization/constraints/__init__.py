"""Convex constraint sets 𝒞 with exact Euclidean projections P_𝒞[x] = argmin_{y ∈ 𝒞} ‖x − y‖₂ (Farokhi, eq. (5)).

=====================  ================================================  ===========================================
set                    𝒞                                                  projection
=====================  ================================================  ===========================================
:class:`Box`           {x : lo ≤ x ≤ hi} (infinite ends allowed)           clip, coordinate by coordinate
:class:`Ball`          {x : ‖x − c‖₂ ≤ r}                                  radial scaling c + (x − c)·min(1, r/‖x − c‖)
:class:`Affine`        {x : A x = b}                                       x − A⁺(A x − b)
:class:`Polyhedron`    {x : G x ≤ h, A x = b}                              a quadratic program, solved exactly by the
                                                                           Lawson–Hanson least-distance method (NNLS)
=====================  ================================================  ===========================================

Each set is in its own module of this package (:mod:`~privnoise.optimization.constraints.base` holds the
interface); every name is importable from :mod:`privnoise.optimization.constraints` itself.

Every projection accepts a batch of points of shape ``(..., n)``. Each set also describes its recession cone
(the directions along which it is unbounded), which :class:`~privnoise.optimization.QuadraticProgram` uses to
refuse a problem whose objective is unbounded below.

Examples
--------
>>> import numpy as np
>>> Box(lower=[0.0, 0.0], upper=[1.0, 1.0]).project(np.array([2.0, -1.0]))
array([1., 0.])
>>> Ball(center=[0.0, 0.0], radius=1.0).project(np.array([3.0, 4.0]))
array([0.6, 0.8])
>>> Affine(matrix=[[1.0, 1.0]], offset=[1.0]).project(np.array([1.0, 1.0]))
array([0.5, 0.5])
>>> p = Polyhedron(inequality_matrix=[[1.0, 1.0]], inequality_bound=[1.0])
>>> np.round(p.project(np.array([1.0, 1.0])), 12)
array([0.5, 0.5])
"""

from __future__ import annotations

from .affine import Affine
from .ball import Ball
from .base import Constraint, RecessionCone
from .box import Box
from .polyhedron import Polyhedron

__all__ = ["Affine", "Ball", "Box", "Constraint", "Polyhedron", "RecessionCone"]
