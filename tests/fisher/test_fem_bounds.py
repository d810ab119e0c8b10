"""The guaranteed bracket of λ₁ of the finite-element eigensolver against closed forms, at every mesh level.

Closed forms: the rectangle (λ₁ = π²Σ aᵢ/Lᵢ² for a diagonal A), the disk and the ellipse matched to A
(j₀,₁²/s), the equilateral triangle (16π²/3a²), the unit cube (3π²) and the unit ball (π²), the last two also from
one orthant; the L-shape's literature value (Trefethen & Betcke 2006).
The bracket must hold on coarse meshes too: a bound that needs a fine mesh to be true is not a bound.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

pytest.importorskip("skfem")

from privnoise.exceptions import InvalidParameterError  # noqa: E402
from privnoise.fisher import (  # noqa: E402
    Ball,
    Box,
    Ellipsoid,
    Polygon,
    _fem_bounds,
    _fem_levels,
    _meshes,
    solve_dirichlet_eigenproblem,
)

J01 = float(special.jn_zeros(0, 1)[0])
A_CORRELATED = np.array([[2.0, 0.7], [0.7, 1.0]])
A_CORRELATED_3D = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, 0.0], [0.0, 0.0, 1.0]])
L_SHAPE = [(0, 0), (2, 0), (2, 1), (1, 1), (1, 2), (0, 2)]
L_SHAPE_LAMBDA = 9.6397238440219

CASES_2D = {
    "square": (Box([0, 0], [1, 1]), np.eye(2), 2 * math.pi**2),
    "rectangle-diagonal": (Box([0, 0], [2, 1]), np.diag([2.0, 0.5]), math.pi**2 * (2.0 / 4 + 0.5)),
    "disk": (Ellipsoid([0.0, 0.0], np.eye(2)), np.eye(2), J01**2),
    "ellipse-matched": (Ellipsoid([1.0, -1.0], 1.5 * A_CORRELATED), A_CORRELATED, J01**2 / 1.5),
    "l-shape": (Polygon(L_SHAPE), np.eye(2), L_SHAPE_LAMBDA),
    # Lamé: λ₁ = 16π²/(3a²) on the equilateral triangle of side a
    "equilateral-triangle": (Polygon([(0.0, 0.0), (1.0, 0.0), (0.5, math.sqrt(3.0) / 2.0)]), np.eye(2), 16 * math.pi**2 / 3),
}


def _levels(support, levels: int):  # type: ignore[no-untyped-def]
    mesh = _meshes.vertex_mesh(*support.initial_mesh())
    while mesh.t.shape[1] < 8:  # the triangle starts as one cell: too few unknowns for two eigenpairs
        mesh = _meshes.refine(mesh, support)
    for _ in range(levels):
        yield mesh
        mesh = _meshes.refine(mesh, support)


@pytest.mark.parametrize("name", sorted(CASES_2D))
def test_bracket_contains_the_closed_form_at_every_level_2d(name: str) -> None:
    support, matrix, exact = CASES_2D[name]
    second = 0.0
    widths = []
    for mesh in _levels(support, 4):
        level = _fem_levels.solve_level(mesh, matrix, support)
        bounds = _fem_bounds.level_bracket(mesh, matrix, support, level, second)
        second = bounds.second
        assert 0.0 < bounds.lower <= exact <= bounds.upper, (mesh.t.shape[1], bounds)
        widths.append(bounds.upper - bounds.lower)
    assert widths[-1] < widths[0]


@pytest.mark.parametrize(
    ("support", "exact"),
    [(Box([0, 0, 0], [1, 1, 1]), 3 * math.pi**2), (Ball([0, 0, 0], 1.0), math.pi**2)],
    ids=["cube", "ball"],
)
def test_bracket_contains_the_closed_form_3d(support: object, exact: float) -> None:
    for mesh in _levels(support, 2):
        level = _fem_levels.solve_level(mesh, np.eye(3), support)  # type: ignore[arg-type]
        bounds = _fem_bounds.level_bracket(mesh, np.eye(3), support, level)  # type: ignore[arg-type]
        assert 0.0 < bounds.lower <= exact <= bounds.upper


def test_crouzeix_raviart_bound_is_below_both_eigenvalues_and_the_discrete_ones() -> None:
    support = Box([0, 0], [1, 1])
    mesh = _meshes.vertex_mesh(*support.initial_mesh())
    for _ in range(3):
        mesh = _meshes.refine(mesh, support)
    lower, discrete = _fem_bounds.crouzeix_raviart_bounds(mesh, np.eye(2))
    exact = np.array([2.0, 5.0]) * math.pi**2
    assert np.all(lower <= exact) and np.all(lower < discrete)


def test_interpolation_constant_of_an_equilateral_triangle() -> None:
    # (h/π)² + m/d² with m = h²/12 the mean squared distance to the centroid: √(1/π² + 1/48) for h = 1
    points = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, math.sqrt(3) / 2]])
    value = _fem_bounds.interpolation_constant(points, np.array([[0, 1, 2]]), np.eye(2))
    assert value == pytest.approx(math.sqrt(1 / math.pi**2 + 1 / 48))
    # A = 4I halves the mapped cell: the constant halves
    assert _fem_bounds.interpolation_constant(points, np.array([[0, 1, 2]]), 4 * np.eye(2)) == pytest.approx(
        value / 2
    )


def test_circumscribed_scale_of_the_disk() -> None:
    support = Ellipsoid([0.0, 0.0], np.eye(2))
    mesh = _meshes.vertex_mesh(*support.initial_mesh())
    boundary = mesh.boundary_facets().size
    # boundary vertices on the unit circle, evenly spaced: the polygon's apothem is cos(π/n)
    assert _fem_bounds.circumscribed_scale(mesh, support) == pytest.approx(1 / math.cos(math.pi / boundary))


def test_temple_needs_a_gap_to_the_second_eigenvalue() -> None:
    support = Box([0, 0], [1, 1])
    mesh = _meshes.vertex_mesh(*support.initial_mesh())
    level = _fem_levels.solve_level(mesh, np.eye(2), support)
    assert _fem_bounds.temple_lower_bound(mesh, np.eye(2), level.coefficients, level.eigenvalue, 1.0) == 0.0


@pytest.mark.parametrize("name", ["square", "disk", "l-shape"])
def test_solver_reports_a_bracket_and_converges_only_within_it(name: str) -> None:
    support, matrix, exact = CASES_2D[name]
    sol = solve_dirichlet_eigenproblem(support, matrix, rtol=1e-3)
    lower, upper = sol.bracket
    assert lower <= exact <= upper
    assert lower <= sol.eigenvalue <= upper
    assert sol.converged and sol.relative_width <= 1e-3
    assert sol.error_estimate == pytest.approx(upper - lower)
    assert abs(sol.eigenvalue - exact) <= sol.error_estimate
    assert sol.describe()["lower_bound"] == lower


def test_not_converged_when_the_bracket_is_wider_than_rtol() -> None:
    sol = solve_dirichlet_eigenproblem(Box([0, 0], [1, 1]), rtol=1e-8, max_unknowns=3000, polynomial_bound=False)
    assert not sol.converged
    assert sol.relative_width > 1e-8
    assert sol.lower_bound <= 2 * math.pi**2 <= sol.upper_bound


def test_anisotropic_bracket_agrees_with_the_sheared_domain() -> None:
    # −∇·(A∇u) on the box is −Δ on A^(−½)·box: two brackets of one number must overlap
    box = Box([-1.0, -1.0], [1.0, 1.0])
    direct = solve_dirichlet_eigenproblem(box, A_CORRELATED, rtol=1e-3)
    vals, vecs = np.linalg.eigh(A_CORRELATED)
    shear = (vecs / np.sqrt(vals)) @ vecs.T
    corners = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], dtype=float) @ shear.T
    sheared = solve_dirichlet_eigenproblem(Polygon(corners), rtol=1e-3, polynomial_bound=False)
    assert max(direct.lower_bound, sheared.lower_bound) <= min(direct.upper_bound, sheared.upper_bound)


def test_bad_rtol_is_refused() -> None:
    with pytest.raises(InvalidParameterError):
        solve_dirichlet_eigenproblem(Box([0, 0], [1, 1]), rtol=-1e-3)


def test_uncertified_solve_states_no_bracket_and_never_converged() -> None:
    # certify=False refines on the levels' contraction: an estimate, checked here against the closed form 2π² and
    # against the certified solve on the same support (a second method); nothing is claimed as a bound
    exact = 2 * math.pi**2
    estimate = solve_dirichlet_eigenproblem(Box([0, 0], [1, 1]), rtol=1e-6, certify=False)
    assert not estimate.converged
    assert math.isnan(estimate.lower_bound) and math.isnan(estimate.upper_bound)
    assert estimate.discrete_eigenvalue >= exact
    assert abs(estimate.eigenvalue - exact) <= 1e-6 * exact
    certified = solve_dirichlet_eigenproblem(Box([0, 0], [1, 1]), rtol=1e-3, polynomial_bound=False)
    assert certified.lower_bound <= estimate.eigenvalue <= certified.upper_bound


def test_orthant_bracket_contains_the_closed_form_and_is_narrower() -> None:
    # a 3-D box with a diagonal A: the mixed problem on the orthant {x ≥ centre} has the same λ₁; its bracket
    # must hold at every level and be narrower than the whole box's at the same number of cells
    box, a = Box([-1.0, 0.0, 0.0], [1.0, 3.0, 1.0]), np.diag([1.0, 2.0, 0.5])
    exact = math.pi**2 * (1.0 / 4 + 2.0 / 9 + 0.5 / 1)
    orthant = Box([0.0, 1.5, 0.5], [1.0, 3.0, 1.0])
    whole = _meshes.vertex_mesh(*box.initial_mesh())
    half = _meshes.vertex_mesh(*orthant.initial_mesh())
    for _ in range(2):
        assert half.t.shape[1] == whole.t.shape[1]
        bounds = _fem_bounds.orthant_bracket(half, a, orthant, np.array([0.0, 1.5, 0.5]))
        assert 0.0 < bounds.lower <= exact <= bounds.upper
        level = _fem_levels.solve_level(whole, a, box)
        full = _fem_bounds.level_bracket(whole, a, box, level)
        assert full.lower <= exact <= full.upper
        assert bounds.upper - bounds.lower < 0.5 * (full.upper - full.lower)
        whole, half = _meshes.refine(whole, box), _meshes.refine(half, orthant)


def test_solver_uses_the_orthant_on_a_symmetric_3d_box() -> None:
    exact = 3 * math.pi**2
    sol = solve_dirichlet_eigenproblem(Box([0, 0, 0], [1, 1, 1]), rtol=5e-2, max_unknowns=5000)
    assert sol.converged and sol.relative_width <= 5e-2
    assert sol.lower_bound <= exact <= sol.upper_bound
    # the returned density is the whole box's; its Rayleigh quotient is above λ₁ but need not be the upper bound
    assert sol.discrete_eigenvalue >= exact


def test_ball_orthant_mesh_keeps_its_planes_and_its_sphere() -> None:
    from privnoise.fisher import _fem_symmetry

    orthant = _fem_symmetry.orthant_of(Ball([1.0, -1.0, 0.5], 2.0), np.eye(3))
    assert isinstance(orthant, _fem_symmetry.EllipsoidOrthant)
    center = np.array([1.0, -1.0, 0.5])
    mesh = _meshes.vertex_mesh(*orthant.initial_mesh())
    assert mesh.t.shape[1] == 8
    for _ in range(2):
        mesh = _meshes.refine(mesh, orthant)
    points = np.asarray(mesh.p.T)
    assert np.all(points >= center - 1e-12)  # nothing leaves the orthant
    curved = np.unique(np.asarray(mesh.facets[:, _fem_symmetry.dirichlet_facets(mesh, center)]))
    assert np.allclose(np.linalg.norm(points[curved] - center, axis=1), 2.0)  # ∂W's nodes on the sphere
    planar = np.setdiff1d(mesh.boundary_nodes(), curved)
    assert planar.size and np.all(np.linalg.norm(points[planar] - center, axis=1) < 2.0 - 1e-9)
    assert np.all(np.any(np.abs(points[planar] - center) <= 1e-12, axis=1))  # the others on a symmetry plane
    assert _fem_symmetry.orthant_of(Ball([0, 0, 0], 1.0), A_CORRELATED_3D) is None



@pytest.mark.parametrize(
    ("support", "matrix", "exact"),
    [
        (Ball([0, 0, 0], 1.0), np.eye(3), math.pi**2),
        # the ellipsoid matched to a diagonal A (v = (2A)^(−½)w maps it to the unit ball): π²/2
        (Ellipsoid([0, 0, 0], 2.0 * np.diag([1.0, 2.0, 3.0])), np.diag([1.0, 2.0, 3.0]), math.pi**2 / 2.0),
    ],
    ids=["ball", "ellipsoid"],
)
def test_orthant_bracket_of_curved_supports_at_every_level(support: object, matrix: object, exact: float) -> None:
    from privnoise.fisher import _fem_symmetry

    orthant = _fem_symmetry.orthant_of(support, matrix)  # type: ignore[arg-type]
    assert orthant is not None
    center = _fem_symmetry.symmetry_center(orthant)
    mesh = _meshes.vertex_mesh(*orthant.initial_mesh())
    widths = []
    for _ in range(3):
        bounds = _fem_bounds.orthant_bracket(mesh, matrix, orthant, center)  # type: ignore[arg-type]
        assert 0.0 < bounds.lower <= exact <= bounds.upper, bounds
        widths.append(bounds.upper - bounds.lower)
        mesh = _meshes.refine(mesh, orthant)
    assert widths[-1] < 0.5 * widths[0]
    # against the whole support's bracket (a second discretisation) at the same number of cells
    whole = _meshes.vertex_mesh(*support.initial_mesh())  # type: ignore[attr-defined]
    for _ in range(2):
        whole = _meshes.refine(whole, support)  # type: ignore[arg-type]
    level = _fem_levels.solve_level(whole, matrix, support)  # type: ignore[arg-type]
    full = _fem_bounds.level_bracket(whole, matrix, support, level)  # type: ignore[arg-type]
    assert full.lower <= exact <= full.upper
    assert max(full.lower, bounds.lower) <= min(full.upper, bounds.upper)
