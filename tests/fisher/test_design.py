"""optimal_noise: closed forms checked against numerical optimisers and the PDE of Theorem 2."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize

import privnoise as pn
from privnoise import queries
from privnoise.exceptions import DimensionError, InvalidParameterError, SolverError
from privnoise.fisher import gram_sqrt, optimal_noise, problem3_objective
from privnoise.mechanisms import Gaussian, RaisedCosine

C23 = np.array([[1.0, 0.5, -0.3], [0.2, -1.0, 0.7]])


def _chol(params: np.ndarray, m: int) -> np.ndarray:
    lower = np.zeros((m, m))
    lower[np.tril_indices(m)] = params
    lower[np.diag_indices(m)] = np.exp(lower[np.diag_indices(m)])
    return lower @ lower.T


def _minimise_over_gaussians(objective, m, *, constraint=None):
    x0 = np.zeros(m * (m + 1) // 2)
    cons = [] if constraint is None else [{"type": "ineq", "fun": lambda p: constraint(_chol(p, m))}]
    method = "SLSQP" if cons else "BFGS"
    res = optimize.minimize(
        lambda p: objective(_chol(p, m)),
        x0,
        method=method,
        constraints=cons,
        options={"maxiter": 2000} | ({"ftol": 1e-14} if cons else {"gtol": 1e-10}),
    )
    return _chol(res.x, m), res.fun


@pytest.mark.parametrize("rho", [0.5, 4.0, 25.0])
def test_problem3_optimum_matches_numerical_optimiser(rho):
    q = pn.LinearQuery(C23)
    mech = optimal_noise(q, quality_weight=rho)
    sigma_num, best = _minimise_over_gaussians(lambda s: problem3_objective(q, s, rho), 2)
    assert problem3_objective(q, mech.covariance(), rho) == pytest.approx(best, rel=1e-7)
    assert np.allclose(mech.covariance(), sigma_num, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("theta", [0.01, 1.0, 7.5])
def test_problem4_optimum_matches_constrained_optimiser(theta):
    q = pn.LinearQuery(C23)
    mech = optimal_noise(q, quality_budget=theta)
    assert np.trace(mech.covariance()) == pytest.approx(theta)
    fisher_trace = lambda s: float(np.trace(np.linalg.solve(s, q.gram())))  # noqa: E731
    _, best = _minimise_over_gaussians(fisher_trace, 2, constraint=lambda s: theta - np.trace(s))
    assert fisher_trace(mech.covariance()) == pytest.approx(best, rel=1e-5)
    # closed form of the optimal value: Tr((CCᵀ)^{1/2})² / ϑ
    assert fisher_trace(mech.covariance()) == pytest.approx(np.trace(gram_sqrt(q)) ** 2 / theta, rel=1e-12)


def test_gram_sqrt_squares_back():
    q = pn.LinearQuery(C23)
    root = gram_sqrt(q)
    assert np.allclose(root @ root, q.gram())
    assert np.all(np.linalg.eigvalsh(root) > 0)


def test_scalar_mean_problem4_is_variance_theta():
    mech = optimal_noise(queries.mean(500), quality_budget=0.01)
    assert isinstance(mech, Gaussian) and mech.shape == ()
    assert mech.covariance() == pytest.approx(0.01)


@pytest.mark.parametrize("query", [queries.mean(10), queries.weighted_mean([1, 5, 2]), queries.variance(4)])
def test_bounded_scalar_queries_get_the_same_cos2(query):
    mech = optimal_noise(query, support=(0.1, 0.7))
    assert isinstance(mech, RaisedCosine)
    assert float(mech.lower) == 0.1 and float(mech.upper) == 0.7


def test_identity_box_is_product_cos2_and_solves_the_pde():
    q = queries.identity(2)
    mech = optimal_noise(q, support=([0.0, -1.0], [1.0, 2.0]))
    assert mech.shape == (2,)
    # u = sqrt(γ) satisfies ∇²u + μu = 0 inside, u = 0 on the boundary (Appendix D): check by finite differences.
    lo, hi = np.array([0.0, -1.0]), np.array([1.0, 2.0])
    pts = lo + (hi - lo) * np.array([[0.3, 0.6], [0.5, 0.5], [0.81, 0.2]])
    h = 1e-4
    u = lambda p: np.sqrt(mech.pdf(p))  # noqa: E731
    lap = sum((u(pts + h * e) - 2 * u(pts) + u(pts - h * e)) / h**2 for e in np.eye(2))
    mu = -lap / u(pts)
    assert np.allclose(mu, mu[0], rtol=1e-5)
    assert mu[0] == pytest.approx(np.sum((np.pi / (hi - lo)) ** 2), rel=1e-5)
    edge = np.array([[0.0, 0.5], [1.0, 0.5], [0.5, -1.0], [0.5, 2.0]])
    assert np.all(mech.pdf(edge) == 0.0)


@pytest.mark.parametrize("a, b", [(3.0, 3.0), (4.0, 2.5)])
def test_raised_cosine_beats_other_densities_in_fisher_information(a, b):
    # Problem 2 on [0, 1]: cos² has 4π²; other smooth densities vanishing at the ends have more. For Beta(a, b),
    # a, b > 2, the location information is (a+b−1)(a+b−2)[1/(a−2) + 1/(b−2)] (from E[w⁻²], E[(1−w)⁻²],
    # E[1/(w(1−w))]); both quadratures (exact and numerical derivative) must reproduce it.
    from scipy import stats

    beta = stats.beta(a, b)
    closed = (a + b - 1) * (a + b - 2) * (1 / (a - 2) + 1 / (b - 2))

    def derivative(w):
        return beta.pdf(w) * ((a - 1) / w - (b - 1) / (1 - w))

    exact_derivative = pn.fisher.fisher_information_quadrature(beta.pdf, (0.0, 1.0), derivative=derivative)
    numeric_derivative = pn.fisher.fisher_information_quadrature(beta.pdf, (0.0, 1.0), rtol=1e-8)
    assert exact_derivative == pytest.approx(closed, rel=1e-8)
    assert numeric_derivative == pytest.approx(closed, rel=1e-5)
    assert closed > RaisedCosine(lower=0.0, upper=1.0).fisher_information()


def test_infinite_information_is_reported_not_returned():
    from scipy import stats

    with pytest.raises(SolverError, match="infinite"):
        pn.fisher.fisher_information_quadrature(stats.beta(2, 2).pdf, (0.0, 1.0))


def test_non_diagonal_box_is_solved_by_finite_elements_up_to_three_outputs():
    pytest.importorskip("skfem")
    noise = optimal_noise(pn.LinearQuery(C23), support=(0.0, 1.0))  # 2 outputs, CCᵀ not diagonal
    assert type(noise).__name__ == "FiniteElementNoise"
    c4 = np.eye(4) + 0.3 * np.eye(4, k=1)  # 4 outputs: no solver on a 4-D box
    with pytest.raises(SolverError, match="Theorem 2"):
        optimal_noise(pn.LinearQuery(c4), support=(0.0, 1.0))


def test_nonlinear_unbounded_is_refused():
    with pytest.raises(InvalidParameterError, match="linear"):
        optimal_noise(queries.variance(5), quality_budget=1.0)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({}, "exactly one goal"),
        ({"support": (0, 1), "quality_budget": 1.0}, "exactly one goal"),
        ({"support": (1, 0)}, "support"),
        ({"support": (0, np.nan)}, "support"),
        ({"support": 3}, "support"),
        ({"quality_budget": -1.0}, "quality_budget"),
        ({"quality_budget": np.inf}, "quality_budget"),
        ({"quality_weight": 0.0}, "quality_weight"),
        ({"quality_weight": np.nan}, "quality_weight"),
        ({"output_range": (2, 1)}, "output_range"),
    ],
)
def test_bad_goals_are_named(kwargs, name):
    with pytest.raises(InvalidParameterError) as info:
        optimal_noise(queries.mean(3), **kwargs)
    assert name in str(info.value)


def test_rank_deficient_c_is_refused_for_unbounded_noise():
    with pytest.raises(InvalidParameterError, match="full row rank"):
        optimal_noise(pn.LinearQuery([[1.0, 1.0], [2.0, 2.0]]), quality_budget=1.0)


def test_support_shape_mismatch():
    with pytest.raises(DimensionError):
        optimal_noise(queries.identity(2), support=([0, 0, 0], [1, 1, 1]))


def test_not_a_query():
    with pytest.raises(InvalidParameterError, match="query"):
        optimal_noise("mean", support=(0, 1))


def test_output_constrained_release_stays_in_range_and_carries_no_information():
    q = queries.mean(4, bounds=(0.0, 10.0))
    policy = optimal_noise(q, output_range=(1.0, 3.0))
    x = np.array([2.0, 9.0, 0.5, 4.0])
    values = np.array([pn.release(x, q, policy, rng=s).value for s in range(300)])
    assert np.all((values > 1.0) & (values < 3.0))
    g = pn.release(x, q, policy, rng=0).guarantee
    assert g.information.trace() == 0.0 and math.isinf(g.worst_record_bound)
    assert g.scope == "at-data"
    # quality = var of cos² on Y + (centre − f(x))²
    expected = (math.pi**2 - 6) * 4 / (12 * math.pi**2) + (2.0 - q(x)) ** 2
    assert g.quality == pytest.approx(expected)
