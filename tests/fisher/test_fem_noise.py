"""The finite-element noise and the matched-ellipsoid closed form: exact densities, information, sampling.

The projection cdfs used by the KS tests are computed here independently of the sampler: each triangle is clipped
by the half-plane θᵀw ≤ t and u² is integrated exactly over the pieces (a degree-4 Gauss rule on triangles).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, interpolate, special

import privnoise as pn
from privnoise.exceptions import DimensionError, InvalidParameterError
from privnoise.fisher import (
    Ball,
    Box,
    Ellipsoid,
    EllipsoidalNoise,
    FiniteElementNoise,
    Polygon,
    solve_dirichlet_eigenproblem,
)

pytest.importorskip("skfem")

L_SHAPE = [(0, 0), (2, 0), (2, 1), (1, 1), (1, 2), (0, 2)]
A = np.array([[1.0, 0.4], [0.4, 0.5]])
C = np.linalg.cholesky(A)  # CCᵀ = A


@pytest.fixture(scope="module")
def l_noise() -> FiniteElementNoise:
    return FiniteElementNoise(solution=solve_dirichlet_eigenproblem(Polygon(L_SHAPE), A, rtol=1e-3))


# -- an independent P2 evaluation and exact projection cdf ------------------------------------------


def p2(coeffs: np.ndarray, lam: np.ndarray) -> np.ndarray:
    l0, l1, l2 = lam.T
    phi = np.stack(
        [l0 * (2 * l0 - 1), l1 * (2 * l1 - 1), l2 * (2 * l2 - 1), 4 * l0 * l1, 4 * l1 * l2, 4 * l0 * l2]
    )
    return np.einsum("nk,kn->n", coeffs, phi)


# Dunavant's degree-4 rule (6 points) on a triangle, barycentric coordinates and weights summing to 1
_A1, _B1, _W1 = 0.445948490915965, 0.108103018168070, 0.223381589678011
_A2, _B2, _W2 = 0.091576213509771, 0.816847572980459, 0.109951743655322
RULE_BARY = np.array(
    [[_A1, _A1, _B1], [_A1, _B1, _A1], [_B1, _A1, _A1], [_A2, _A2, _B2], [_A2, _B2, _A2], [_B2, _A2, _A2]]
)
RULE_W = np.array([_W1] * 3 + [_W2] * 3)


def _mass_of_triangles(noise: FiniteElementNoise, cell: np.ndarray, tri: np.ndarray) -> float:
    """∫ u² over physical triangles ``tri`` (k, 3, 2) lying in cells ``cell`` (k,)."""
    sol = noise.solution
    verts = sol.points[sol.cells[cell]]
    jac = np.stack([verts[:, 1] - verts[:, 0], verts[:, 2] - verts[:, 0]], axis=2)
    inv = np.linalg.inv(jac)
    e1, e2 = tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]
    area = 0.5 * np.abs(e1[:, 0] * e2[:, 1] - e1[:, 1] * e2[:, 0])
    total = 0.0
    for b, w in zip(RULE_BARY, RULE_W, strict=True):
        x = np.einsum("j,kjd->kd", b, tri)
        rest = np.einsum("kij,kj->ki", inv, x - verts[:, 0])
        lam = np.column_stack([1 - rest.sum(axis=1), rest])
        total += w * float(np.sum(area * p2(sol.coefficients[cell], lam) ** 2))
    return total


def projection_cdf(noise: FiniteElementNoise, theta: np.ndarray, t: float) -> float:
    sol = noise.solution
    verts = sol.points[sol.cells]
    s = verts @ theta - t
    below = s <= 0
    count = below.sum(axis=1)
    mass = 0.0
    full = np.flatnonzero(count == 3)
    if full.size:
        mass += _mass_of_triangles(noise, full, verts[full])
    for k in (1, 2):
        idx = np.flatnonzero(count == k)
        if not idx.size:
            continue
        v, sv, b = verts[idx], s[idx], below[idx]
        # order vertices so that the lone one (below if k = 1, above if k = 2) comes first
        lone = np.argmax(b if k == 1 else ~b, axis=1)
        order = (lone[:, None] + np.arange(3)[None, :]) % 3
        v = np.take_along_axis(v, order[:, :, None], axis=1)
        sv = np.take_along_axis(sv, order, axis=1)
        p1 = v[:, 0] + (sv[:, 0] / (sv[:, 0] - sv[:, 1]))[:, None] * (v[:, 1] - v[:, 0])
        p2_ = v[:, 0] + (sv[:, 0] / (sv[:, 0] - sv[:, 2]))[:, None] * (v[:, 2] - v[:, 0])
        corner = _mass_of_triangles(noise, idx, np.stack([v[:, 0], p1, p2_], axis=1))
        if k == 1:
            mass += corner
        else:
            mass += _mass_of_triangles(noise, idx, v) - corner
    return mass


def cdf_along(noise: FiniteElementNoise, theta: np.ndarray):
    proj = noise.solution.points @ theta
    grid = np.linspace(proj.min(), proj.max(), 1500)
    values = np.array([projection_cdf(noise, theta, t) for t in grid])
    values /= values[-1]
    return interpolate.PchipInterpolator(grid, values, extrapolate=False), grid


# -- tests -------------------------------------------------------------------------------------------


def test_fisher_information_is_exact_for_the_density(l_noise: FiniteElementNoise) -> None:
    info = l_noise.fisher_information()
    assert np.trace(info @ A) == pytest.approx(4 * l_noise.solution.discrete_eigenvalue, rel=1e-10)
    est = pn.fisher.fisher_information_monte_carlo(l_noise, samples=200_000, rng=3)
    assert np.all(np.abs(est.estimate - info) < 5 * est.standard_error + 1e-9)


def test_pdf_integrates_to_one_and_vanishes_outside(l_noise: FiniteElementNoise) -> None:
    sol = l_noise.solution
    cells = np.arange(sol.cells.shape[0])
    assert _mass_of_triangles(l_noise, cells, sol.points[sol.cells]) == pytest.approx(1.0, rel=1e-10)
    # pdf at points of known cells equals the independent P2 evaluation squared
    lam = np.random.default_rng(1).dirichlet(np.ones(3), size=cells.size)
    x = np.einsum("nj,njk->nk", lam, sol.points[sol.cells])
    assert np.allclose(l_noise.pdf(x), p2(sol.coefficients, lam) ** 2, rtol=1e-9, atol=1e-12)
    assert l_noise.pdf(np.array([[1.5, 1.5], [3.0, 0.5], [-0.1, 0.2]])).tolist() == [0.0, 0.0, 0.0]


@pytest.mark.slow
def test_samples_pass_ks_along_projections(l_noise: FiniteElementNoise, assert_ks) -> None:
    x = l_noise.sample(200_000, rng=2024)
    assert np.all(Polygon(L_SHAPE).contains(x))
    for theta in (np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([1.0, 1.0]) / math.sqrt(2)):
        cdf, grid = cdf_along(l_noise, theta)
        mu = float(l_noise.mean() @ theta)

        def wrap(f, scale, mu=mu, lo=grid[0], hi=grid[-1]):
            return lambda t: np.nan_to_num(f(np.clip(mu + (t - mu) / scale, lo, hi)))

        assert_ks(x @ theta, wrap(cdf, 1.0), [wrap(cdf, 0.7), wrap(cdf, 1.3)])


@pytest.mark.slow
def test_moments_match_the_exact_quadrature(l_noise: FiniteElementNoise, assert_moments) -> None:
    assert_moments(l_noise, l_noise.sample(200_000, rng=5))


def test_score_matches_finite_differences_of_logpdf(l_noise: FiniteElementNoise) -> None:
    pts = np.array([[0.3137, 0.4271], [1.6123, 0.5419], [0.5311, 1.7057], [0.9173, 0.8861]])
    h = 1e-6
    fd = np.stack(
        [(l_noise.logpdf(pts + h * e) - l_noise.logpdf(pts - h * e)) / (2 * h) for e in np.eye(2)], axis=1
    )
    assert np.allclose(l_noise.score(pts), fd, rtol=1e-4, atol=1e-4)


def test_release_flows_through_pn_release() -> None:
    q = pn.queries.LinearQuery(np.array([[1.0, 0.5, 0.0], [0.2, 1.0, 0.3]]))
    mech = pn.fisher.optimal_noise(q, support=([-1, -1], [1, 1]))  # non-diagonal CCᵀ: finite elements
    assert isinstance(mech, FiniteElementNoise)
    rel = pn.release(np.array([1.0, 2.0, 3.0]), q, mech, rng=1)
    assert rel.guarantee.information.trace() == pytest.approx(4 * mech.solution.discrete_eigenvalue, rel=1e-9)
    assert np.all(np.abs(rel.value - q.matrix_2d @ [1.0, 2.0, 3.0]) <= 1.0)


def test_dispatch_closed_forms_and_errors() -> None:
    diag = pn.queries.LinearQuery(np.diag([1.0, 2.0]))
    assert isinstance(pn.fisher.optimal_noise(diag, support=Box([0, 0], [1, 1])), pn.mechanisms.RaisedCosine)
    q = pn.queries.LinearQuery(C)
    assert isinstance(pn.fisher.optimal_noise(q, support=Ellipsoid([0, 0], 2 * A)), EllipsoidalNoise)
    assert isinstance(pn.fisher.optimal_noise(q, support=Ball([0, 0], 1.0)), FiniteElementNoise)
    with pytest.raises(DimensionError, match="3-dimensional"):
        pn.fisher.optimal_noise(q, support=Ball([0, 0, 0], 1.0))
    with pytest.raises(InvalidParameterError, match="nonlinear"):
        pn.fisher.optimal_noise(pn.queries.variance(3), support=Ball([0, 0], 1.0))
    with pytest.raises(InvalidParameterError, match="row rank"):
        pn.fisher.optimal_noise(pn.queries.LinearQuery(np.ones((2, 2))), support=Ball([0, 0], 1.0))


# -- the matched-ellipsoid closed form ----------------------------------------------------------------


@pytest.mark.parametrize("dim", [2, 3])
def test_ellipsoidal_noise_against_finite_elements(dim: int) -> None:
    shape = np.diag([1.0, 2.0, 0.5][:dim])
    region = Ellipsoid(np.zeros(dim), 1.5 * shape)
    closed = EllipsoidalNoise(region=region)
    sol = solve_dirichlet_eigenproblem(region, shape, rtol=1e-4 if dim == 2 else 1e-2,
                                       max_unknowns=None if dim == 2 else 6_000, polynomial_bound=False)
    fem = FiniteElementNoise(solution=sol)
    lam = pn.fisher.unit_ball_eigenvalue(dim) / 1.5
    assert np.trace(closed.fisher_information() @ shape) == pytest.approx(4 * lam, rel=1e-12)
    assert sol.lower_bound <= lam <= sol.upper_bound
    assert sol.eigenvalue == pytest.approx(lam, rel=1e-4 if dim == 2 else 1e-2)
    assert np.allclose(closed.covariance(), fem.covariance(), rtol=1e-3 if dim == 2 else 3e-2, atol=1e-4)


def test_ellipsoidal_noise_density_is_normalised_and_radial_law_exact(assert_ks) -> None:
    region = Ellipsoid([1.0, -1.0], [[2.0, 0.5], [0.5, 1.0]])
    noise = EllipsoidalNoise(region=region)
    inv = np.linalg.inv(region.root)

    def dens(r: float, a: float) -> float:
        v = np.array([r * math.cos(a), r * math.sin(a)])
        return float(noise.pdf(region.center + region.root @ v)) * r * math.sqrt(np.linalg.det(region.shape))

    assert integrate.dblquad(dens, 0, 2 * math.pi, 0, 1, epsabs=1e-10)[0] == pytest.approx(1.0, abs=1e-8)
    x = noise.sample(200_000, rng=7)
    r = np.linalg.norm((x - region.center) @ inv.T, axis=1)
    j = float(special.jn_zeros(0, 1)[0])

    def radial_cdf(scale: float):
        def cdf(t: np.ndarray) -> np.ndarray:
            s = np.clip(np.asarray(t) / scale, 0, 1)
            # ∫₀^s 2ρ J₀(jρ)²/J₁(j)² dρ = s²(J₀(js)² + J₁(js)²)/J₁(j)²
            return s**2 * (special.j0(j * s) ** 2 + special.j1(j * s) ** 2) / special.j1(j) ** 2

        return cdf

    assert_ks(r, radial_cdf(1.0), [radial_cdf(0.7), radial_cdf(1.3)])


def test_ellipsoidal_noise_3d_radius_and_information() -> None:
    noise = EllipsoidalNoise(region=Ball([0, 0, 0], 2.0))
    est = pn.fisher.fisher_information_monte_carlo(noise, samples=200_000, rng=9)
    assert np.all(np.abs(est.estimate - noise.fisher_information()) < 5 * est.standard_error + 1e-9)
    x = noise.sample(100_000, rng=4)
    assert np.all(np.linalg.norm(x, axis=1) <= 2.0)
    with pytest.raises(InvalidParameterError, match="region"):
        EllipsoidalNoise(region=Box([0, 0], [1, 1]))  # type: ignore[arg-type]
