"""Supports: validation, membership, meshes that cover them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privnoise.exceptions import DimensionError, InvalidParameterError
from privnoise.fisher import Ball, Box, Ellipsoid, MeshSupport, Polygon, Polyhedron

pytest.importorskip("skfem")


def _mesh_volume(points: np.ndarray, cells: np.ndarray) -> float:
    edges = points[cells[:, 1:]] - points[cells[:, :1]]
    return float(np.sum(np.abs(np.linalg.det(edges))) / math.factorial(points.shape[1]))


@pytest.mark.parametrize(
    "support",
    [
        Box([0, -1], [2, 1]),
        Box([0, 0, 0], [1, 2, 3]),
        Polygon([(0, 0), (2, 0), (2, 1), (1, 1), (1, 2), (0, 2)]),
        Polygon([(0, 0), (4, 0), (4, 3), (3, 1), (2, 3), (1, 1), (0, 3)]),  # a comb, clockwise-safe
        Polyhedron([[0, 0, 0], [2, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]]),
    ],
)
def test_flat_meshes_cover_the_support_exactly(support) -> None:
    points, cells = support.initial_mesh()
    assert _mesh_volume(points, cells) == pytest.approx(support.volume(), rel=1e-12)
    assert support.contains(points).all()
    centroids = points[cells].mean(axis=1)
    assert support.contains(centroids).all()


@pytest.mark.parametrize("support", [Ball([1, 2], 0.5), Ellipsoid([0, 0, 0], np.diag([1.0, 4.0, 0.25]))])
def test_curved_meshes_are_inscribed(support) -> None:
    points, cells = support.initial_mesh()
    assert support.contains(points).all()
    assert _mesh_volume(points, cells) < support.volume()
    moved = support.project_to_boundary(points[:5] * 1.3 + 1e-3)
    unit = np.linalg.solve(support.root, (moved - support.center).T).T
    assert np.allclose(np.linalg.norm(unit, axis=1), 1.0, atol=1e-12)


def test_polygon_orientation_and_closed_ring() -> None:
    clockwise = Polygon([(0, 0), (0, 1), (1, 1), (1, 0), (0, 0)])
    assert clockwise.volume() == pytest.approx(1.0)
    assert clockwise.vertices.shape == (4, 2)
    assert clockwise.contains([[1.0, 0.5], [1.0 + 1e-9, 0.5]]).tolist() == [True, False]


def test_ellipsoid_contains_matches_quadratic_form() -> None:
    shape = np.array([[2.0, 0.5], [0.5, 1.0]])
    e = Ellipsoid([1.0, 0.0], shape)
    pts = np.random.default_rng(0).uniform(-2, 3, size=(2000, 2))
    q = np.einsum("ni,ij,nj->n", pts - [1.0, 0.0], np.linalg.inv(shape), pts - [1.0, 0.0])
    assert (e.contains(pts) == (q <= 1)).all()
    assert e.volume() == pytest.approx(math.pi * math.sqrt(np.linalg.det(shape)))


@pytest.mark.parametrize(
    ("build", "error", "match"),
    [
        (lambda: Box([0, 0], [1]), DimensionError, "same length"),
        (lambda: Box([0], [1]), DimensionError, "2 or 3"),
        (lambda: Box([0, 1], [1, 1]), InvalidParameterError, "upper"),
        (lambda: Box([0, np.nan], [1, 1]), InvalidParameterError, "finite"),
        (lambda: Polygon([(0, 0), (1, 0)]), DimensionError, "k >= 3"),
        (lambda: Polygon([(0, 0), (2, 2), (2, 0), (0, 1)]), InvalidParameterError, "simple"),  # a bow-tie
        (lambda: Polygon([(0, 0), (1, 0), (2, 0)]), InvalidParameterError, "area"),
        (lambda: Polygon([(0, 0), (1, 0), (1, 0), (0, 1)]), InvalidParameterError, "repeat"),
        (lambda: Ellipsoid([0, 0], [[1, 2], [2, 1]]), InvalidParameterError, "positive definite"),
        (lambda: Ellipsoid([0, 0], np.eye(3)), DimensionError, "2×2"),
        (lambda: Ball([0, 0], -1.0), InvalidParameterError, "radius"),
        (lambda: Polyhedron([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]]), InvalidParameterError, "plane"),
        (lambda: Polyhedron([[0, 0], [1, 0], [0, 1], [1, 1]]), DimensionError, "k >= 4, 3"),
        (
            lambda: MeshSupport(points=[[0, 0], [1, 0], [0, 1]], cells=[[0, 1, 3]]),
            InvalidParameterError,
            "index",
        ),
        (
            lambda: MeshSupport(points=[[0, 0], [1, 0], [2, 0]], cells=[[0, 1, 2]]),
            InvalidParameterError,
            "volume",
        ),
        (
            lambda: MeshSupport(points=[[0, 0], [1, 0], [0, 1]], cells=[[0.0, 1, 2]]),
            DimensionError,
            "integer",
        ),
    ],
)
def test_bad_supports(build, error, match) -> None:
    with pytest.raises(error, match=match):
        build()


def test_contains_checks_dimension() -> None:
    with pytest.raises(DimensionError, match="length 2"):
        Box([0, 0], [1, 1]).contains([0.5, 0.5, 0.5])
