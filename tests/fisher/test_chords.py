"""Chords of plane supports, the cos² rectangle densities on them, and the planes bounding Problem 1 from above."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privnoise.exceptions import InvalidParameterError
from privnoise.fisher import (
    Ball,
    Box,
    Ellipsoid,
    Polygon,
    chord_limit,
    eigenvalue_lower_bound,
    longest_chord,
    relaxation_bound,
)
from privnoise.fisher.chords import chord_density
from privnoise.fisher.problem1_bounds import Planes, chord_planes

L_SHAPE = Polygon([(0, 0), (2, 0), (2, 1), (1, 1), (1, 2), (0, 2)])
GRAM = np.array([[1.36, 0.6], [0.6, 1.0]])  # CCᵀ for C = [[1, 0.6], [0, 1]]


def _brute_force_chord(support, v: np.ndarray, lines: int = 801, points: int = 4001) -> float:
    """The longest run of grid points inside W along lines parallel to v (a lower estimate of L_v)."""
    n = np.array([-v[1], v[0]])
    vertices = np.asarray(support.vertices)
    offsets = np.linspace((vertices @ n).min(), (vertices @ n).max(), lines)
    t = np.linspace((vertices @ v).min(), (vertices @ v).max(), points)
    inside = support.contains(offsets[:, None, None] * n + t[None, :, None] * v)  # (lines, points)
    padded = np.pad(inside.astype(int), ((0, 0), (1, 1)))
    edges = np.diff(padded, axis=1)
    best = 0.0
    for row in edges:
        starts, ends = np.flatnonzero(row == 1), np.flatnonzero(row == -1)
        if starts.size:
            best = max(best, float(np.max(ends - starts - 1)) * (t[1] - t[0]))
    return best


@pytest.mark.parametrize(
    ("support", "direction", "expected"),
    [
        (Box([-1, -1], [1, 1]), [1, 0], 2.0),
        (Box([-1, -1], [1, 1]), [1, -1], 2 * math.sqrt(2)),
        (Box([0, 0], [2, 1]), [2, 1], math.sqrt(5)),
        (Ball([0.3, -0.2], 1.5), [0.6, 0.8], 3.0),
        (Ellipsoid([0, 0], [[4.0, 0.0], [0.0, 1.0]]), [0, 1], 2.0),
        (L_SHAPE, [1, -1], 2 * math.sqrt(2)),  # through the re-entrant corner, as a limit of chords beside it
        (L_SHAPE, [1, 1], math.sqrt(2)),
        (L_SHAPE, [2, 1], math.sqrt(5)),
    ],
)
def test_longest_chord_closed_forms(support, direction, expected: float) -> None:
    chord = longest_chord(support, direction)
    assert chord.length == pytest.approx(expected, rel=1e-12)
    assert np.linalg.norm(chord.end - chord.start) == pytest.approx(expected, rel=1e-9)
    assert chord.information_bound == pytest.approx(4 * math.pi**2 / expected**2, rel=1e-12)


@pytest.mark.parametrize("angle", [0.3, 2.0, 2.8])
def test_longest_chord_against_a_grid_of_lines(angle: float) -> None:
    v = np.array([math.cos(angle), math.sin(angle)])
    for support in (L_SHAPE, Polygon([(0, 0), (3, 0), (1, 1), (0, 2)])):
        exact = longest_chord(support, v).length
        grid = _brute_force_chord(support, v, lines=501, points=1501)
        assert grid <= exact * (1 + 1e-9)
        assert grid >= exact * (1 - 1e-2)


def test_chord_limit_closed_forms() -> None:
    b = np.linalg.inv(GRAM)
    v = np.array([1.0, -1.0]) / math.sqrt(2)
    box = chord_limit(Box([-1, -1], [1, 1]), GRAM)
    assert box.value == pytest.approx(8 * (v @ b @ v) / (4 * math.pi**2), rel=1e-12)  # 0.36070…
    assert box.value == pytest.approx(0.3607034137667, rel=1e-10)
    assert abs(box.chord.direction @ v) == pytest.approx(1.0, rel=1e-12)
    assert chord_limit(L_SHAPE, GRAM).value == pytest.approx(box.value, rel=1e-12)
    disc = chord_limit(Ball([0, 0], 1.0), GRAM)
    assert disc.value == pytest.approx(float(np.linalg.eigvalsh(b)[-1]) / math.pi**2, rel=1e-12)
    # a direction grid never beats the chord limit
    for support, lim in ((Box([-1, -1], [1, 1]), box), (Ball([0, 0], 1.0), disc)):
        for a in np.linspace(0, math.pi, 181):
            u = np.array([math.cos(a), math.sin(a)])
            assert longest_chord(support, u).length ** 2 * (u @ b @ u) / (4 * math.pi**2) <= lim.value * (1 + 1e-12)


def test_chord_sequence_is_feasible_and_increases_to_the_limit() -> None:
    for support in (Box([-1, -1], [1, 1]), L_SHAPE, Ball([0, 0], 1.0)):
        lim = chord_limit(support, GRAM)
        values = [d.trace_inverse(GRAM) for d in lim.sequence]
        assert all(x <= lim.value * (1 + 1e-12) or d.half_width > 0 for x, d in zip(values, lim.sequence, strict=True))
        assert values[-1] == pytest.approx(lim.value, rel=2e-3)
        assert values[-1] > values[0]
        for density in lim.sequence[:4]:
            v, n = density.direction, np.array([-density.direction[1], density.direction[0]])
            big_a, big_d = density.half_length, density.half_width
            # the rectangle lies in W: its boundary, densely sampled
            s = np.linspace(-1, 1, 401)[:, None]
            edges = np.concatenate([
                density.center + s * big_a * v + sign * big_d * n for sign in (-1, 1)
            ] + [density.center + sign * big_a * v + s * big_d * n for sign in (-1, 1)])
            assert support.contains(edges).all()
            assert np.allclose(density.pdf(edges), 0.0, atol=1e-9 / (big_a * big_d))
            # ∫γ = 1 on a grid in the rectangle's own coordinates (midpoint rule)
            k = 400
            a = (np.arange(k) + 0.5) / k * 2 * big_a - big_a
            b = (np.arange(k) + 0.5) / k * 2 * big_d - big_d
            pts = density.center + a[:, None, None] * v + b[None, :, None] * n
            mass = density.pdf(pts.reshape(-1, 2)).sum() * (2 * big_a / k) * (2 * big_d / k)
            assert mass == pytest.approx(1.0, rel=1e-9)


def test_chord_density_information_by_finite_differences() -> None:
    lim = chord_limit(Box([-1, -1], [1, 1]), GRAM)
    density = lim.sequence[1]
    v, n = density.direction, np.array([-density.direction[1], density.direction[0]])
    k, h = 600, 1e-6
    a = (np.arange(k) + 0.5) / k * 2 * density.half_length - density.half_length
    b = (np.arange(k) + 0.5) / k * 2 * density.half_width - density.half_width
    pts = (density.center + a[:, None, None] * v + b[None, :, None] * n).reshape(-1, 2)
    g = density.pdf(pts)
    grad = np.stack([(density.pdf(pts + h * e) - density.pdf(pts - h * e)) / (2 * h) for e in np.eye(2)], axis=1)
    cell = (2 * density.half_length / k) * (2 * density.half_width / k)
    info = np.einsum("ni,nj->ij", grad / g[:, None], grad) * cell
    assert np.allclose(info, density.fisher_information(), rtol=1e-3)
    b_mat = np.linalg.inv(GRAM)
    assert float(np.trace(np.linalg.solve(info, b_mat))) == pytest.approx(density.trace_inverse(GRAM), rel=1e-3)


def test_eigenvalue_lower_bound_is_exact_or_below_finite_elements() -> None:
    pytest.importorskip("skfem")
    from privnoise.fisher import solve_dirichlet_eigenproblem

    assert eigenvalue_lower_bound(Ball([0, 0], 2.0), np.eye(2)) == pytest.approx(5.783185962946784 / 4, rel=1e-12)
    assert eigenvalue_lower_bound(Box([0, 0], [2, 1]), np.diag([2.0, 0.5])) == pytest.approx(
        math.pi**2 * (2.0 / 4 + 0.5), rel=1e-9
    )
    for support in (Box([-1, -1], [1, 1]), L_SHAPE):
        for m in (GRAM, np.array([[0.9, -0.4], [-0.4, 0.3]])):
            fem = solve_dirichlet_eigenproblem(support, m, rtol=1e-3)
            assert eigenvalue_lower_bound(support, m) <= fem.eigenvalue * (1 + 1e-3)


def _brute_force_relaxation(b: np.ndarray, planes: Planes, axis_levels: float) -> float:
    """max Tr(X⁻¹B) over a grid of X = R diag(x₁, x₂) Rᵀ satisfying the planes."""
    best = -math.inf
    xs = np.geomspace(axis_levels * 0.999, axis_levels * 400, 300)
    x1, x2 = np.meshgrid(xs, xs, indexing="ij")
    for phi in np.linspace(0, math.pi, 180, endpoint=False):
        e1, e2 = np.array([math.cos(phi), math.sin(phi)]), np.array([-math.sin(phi), math.cos(phi)])
        p = np.einsum("i,kij,j->k", e1, planes.weights, e1)
        q = np.einsum("i,kij,j->k", e2, planes.weights, e2)
        ok = np.all(p[:, None, None] * x1 + q[:, None, None] * x2 >= planes.levels[:, None, None] * (1 - 1e-12), axis=0)
        if ok.any():
            f = (e1 @ b @ e1) / x1[ok] + (e2 @ b @ e2) / x2[ok]
            best = max(best, float(f.max()))
    return best


def test_relaxation_bound_against_a_brute_force_grid() -> None:
    disc = Ball([0, 0], 1.0)
    planes = chord_planes(disc, np.linspace(0, math.pi, 24, endpoint=False))
    planes = planes + Planes.of([np.eye(2) / 2], [4 * eigenvalue_lower_bound(disc, np.eye(2) / 2)])
    bound = relaxation_bound(disc, GRAM, planes, frames=90)
    brute = _brute_force_relaxation(np.linalg.inv(GRAM), planes, math.pi**2)
    assert brute <= bound.value * (1 + 1e-9)
    assert brute >= bound.value * (1 - 5e-3)
    x = bound.information
    assert np.all(np.einsum("kij,ij->k", planes.weights, x) >= planes.levels * (1 - 1e-9))


def test_bad_input_names_the_parameter() -> None:
    with pytest.raises(InvalidParameterError, match="`support` of `longest_chord`"):
        longest_chord(Box([0, 0, 0], [1, 1, 1]), [1, 0, 0])
    with pytest.raises(InvalidParameterError, match="`direction` of `longest_chord`"):
        longest_chord(Box([0, 0], [1, 1]), [0, 0])
    with pytest.raises(InvalidParameterError, match="`half_width` of `chord_density`"):
        chord_density(Box([0, 0], [1, 1]), longest_chord(Box([0, 0], [1, 1]), [1, 0]), -1.0)
    with pytest.raises(InvalidParameterError, match="`gram` of `chord_limit`"):
        chord_limit(Box([0, 0], [1, 1]), [[1.0, 2.0], [2.0, 1.0]])
    with pytest.raises(InvalidParameterError, match="`frames` of `relaxation_bound`"):
        relaxation_bound(Box([0, 0], [1, 1]), np.eye(2), chord_planes(Box([0, 0], [1, 1]), [0.0]), frames=3)
    with pytest.raises(InvalidParameterError, match="`matrix` of `eigenvalue_lower_bound`"):
        eigenvalue_lower_bound(Box([0, 0], [1, 1]), [[1, 2], [2, 1]])
