"""Fisher information invariants: declared-domain bounds of vector queries, and the information of released
components against a second method (the at-data information at every database of a grid, Monte Carlo of the score
computed by finite differences of the log-density, and quadrature).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import privnoise as pn
from privnoise.fisher.information import (
    fisher_guarantee,
    fisher_information_monte_carlo,
    fisher_information_quadrature,
    query_information,
)
from privnoise.guarantees import FisherInformation
from privnoise.mechanisms import Gaussian, Laplace, MultiUserLaplace, RaisedCosine

LOWER, UPPER = -1.0, 1.0


def _two_output_query(declared: bool) -> pn.FunctionQuery:
    """f(x) = (x₀²/2 + x₁, x₀ − x₁²/2) on [−1, 1]²: Jacobian [[x₀, 1], [1, −x₁]], entries of either sign."""

    def f(x: np.ndarray) -> np.ndarray:
        return np.array([x[0] ** 2 / 2 + x[1], x[0] - x[1] ** 2 / 2])

    def jac(x: np.ndarray) -> np.ndarray:
        return np.array([[x[0], 1.0], [1.0, -x[1]]])

    bound = np.ones((2, 2)) if declared else None
    return pn.FunctionQuery(f, 2, jacobian=jac, bounds=(LOWER, UPPER), jacobian_bound=bound, name="pair")


CORRELATED = [
    Gaussian(cov=[[1.0, 0.8], [0.8, 1.0]]),  # information with negative off-diagonal entries
    Gaussian(cov=[[1.0, -0.6], [-0.6, 2.0]]),  # and with positive ones
    Gaussian(cov=np.diag([0.5, 2.0])),
]


@pytest.mark.parametrize("noise", CORRELATED)
def test_declared_domain_bounds_the_information_at_every_database(noise):
    worst_info, scope = query_information(_two_output_query(declared=True), noise)
    assert scope == "declared-domain"
    worst = fisher_guarantee(_two_output_query(declared=True), noise)
    exact = _two_output_query(declared=False)
    j = np.asarray(noise.fisher_information_matrix())
    largest_diagonal = np.zeros(2)
    largest_trace = 0.0
    grid = np.linspace(LOWER, UPPER, 21)
    for x in itertools.product(grid, grid):
        x = np.asarray(x)
        info, at_scope = query_information(exact, noise, x)
        assert at_scope == "at-data"
        f = exact.jacobian(x)
        dense = f.T @ j @ f  # second method: the definition 𝓘 = Fᵀ J F at this database
        assert np.allclose(info.matrix(), dense)
        assert np.all(np.diag(dense) <= worst_info.diagonal() * (1 + 1e-12))
        assert np.trace(dense) <= worst_info.trace() * (1 + 1e-12)
        largest_diagonal = np.maximum(largest_diagonal, np.diag(dense))
        largest_trace = max(largest_trace, float(np.trace(dense)))
        at = fisher_guarantee(exact, noise, x)
        assert at.worst_record_bound >= worst.worst_record_bound * (1 - 1e-12)
        assert at.trace_bound >= worst.trace_bound * (1 - 1e-12)
    # the entrywise bound is attained at a corner of the domain (where the signs line up with J's)
    assert np.allclose(largest_diagonal, worst_info.diagonal())
    assert worst.cramer_rao_bound is None  # an entrywise Jacobian bound does not bound Tr 𝓘⁻¹


def test_declared_domain_uses_the_absolute_noise_information():
    noise = CORRELATED[0]
    info, _ = query_information(_two_output_query(declared=True), noise)
    j = np.asarray(noise.fisher_information_matrix())
    assert np.any(j < 0)
    assert np.array_equal(info.noise_information, np.abs(j))
    assert info.trace() == pytest.approx(np.abs(j).sum() * 2)  # Bᵀ|J|B with B the all-ones matrix


def test_linear_query_information_is_exact_for_every_database():
    c = np.array([[1.0, -2.0, 0.5], [0.0, 1.0, 1.0]])
    noise = CORRELATED[0]
    q = pn.LinearQuery(c, bounds=(LOWER, UPPER))
    info, scope = query_information(q, noise)
    assert scope == "all-data"
    j = np.asarray(noise.fisher_information_matrix())
    assert np.allclose(info.matrix(), c.T @ j @ c)  # signed: no absolute value for an exact Jacobian
    g = fisher_guarantee(q, noise)
    assert g.quality == pytest.approx(noise.second_moment())


def test_fisher_information_quadrature_and_monte_carlo_agree_with_closed_forms():
    for mech, density, support, breakpoints in (
        (Laplace(scale=1.7), lambda w: np.exp(-np.abs(w) / 1.7) / 3.4, (-np.inf, np.inf), (0.0,)),
        (RaisedCosine(lower=-0.3, upper=0.5), None, (-0.3, 0.5), ()),
    ):
        pdf = density if density is not None else mech.pdf
        quad = fisher_information_quadrature(pdf, support, breakpoints=breakpoints)
        assert quad == pytest.approx(float(mech.fisher_information()), rel=1e-6)
        mc = fisher_information_monte_carlo(mech, samples=200_000, rng=17)
        assert abs(mc.estimate[0, 0] - quad) < 6 * mc.standard_error[0, 0] + 1e-9 * quad


def _finite_difference_score(mech: MultiUserLaplace, w: np.ndarray) -> np.ndarray:
    """∂ log g/∂w_k by central differences of the log-density (not the mechanism's own score)."""
    h = 1e-6
    score = np.empty_like(w)
    for k in range(w.shape[1]):
        step = np.zeros(w.shape[1])
        step[k] = h
        score[:, k] = (mech.logpdf(w + step) - mech.logpdf(w - step)) / (2 * h)
    return score


@pytest.mark.parametrize("epsilon, users, user_dim", [(1.5, 3, 2), (0.7, 2, 3), (2.0, 4, 1)])
def test_multi_user_laplace_fisher_information_by_monte_carlo(epsilon, users, user_dim):
    mech = MultiUserLaplace(epsilon=epsilon, users=users, user_dim=user_dim)
    n = 60_000
    w = mech.sample(n, rng=23)
    score = _finite_difference_score(mech, w)
    products = score[:, :, None] * score[:, None, :]
    estimate = products.mean(axis=0)
    error = products.std(axis=0) / np.sqrt(n)
    closed = np.asarray(mech.fisher_information())
    assert closed.shape == (mech.dim, mech.dim)
    assert np.all(np.abs(estimate - closed) < 6 * error + 1e-6 * epsilon**2)
    # power: the information of another block size (ε²/dim, ε²/users) is rejected
    for wrong in {mech.dim, users} - {user_dim}:
        assert np.any(np.abs(np.diag(estimate) - epsilon**2 / wrong) > 6 * np.diag(error))
    assert np.allclose(np.diag(closed), epsilon**2 / user_dim)
    # each block is an L2Laplace: the same information as the block's own law
    assert np.allclose(closed[:user_dim, :user_dim], mech.block().fisher_information())
    assert mech.fisher_information_matrix().shape == (mech.dim, mech.dim)
    assert FisherInformation(np.eye(mech.dim), closed).trace() == pytest.approx(users * epsilon**2)


def test_monte_carlo_standard_error_is_the_score_products_spread():
    # Gaussian N(0, σ²): the score is w/σ², so (score)² = w²/σ⁴ has mean 1/σ² and variance 2/σ⁴
    sigma = 1.5
    n = 100_000
    mc = fisher_information_monte_carlo(Gaussian(cov=sigma**2), samples=n, rng=29)
    assert mc.samples == n and mc.estimate.shape == (1, 1) and mc.standard_error.shape == (1, 1)
    assert mc.standard_error[0, 0] == pytest.approx(np.sqrt(2.0) / sigma**2 / np.sqrt(n), rel=0.02)
    assert abs(mc.estimate[0, 0] - 1 / sigma**2) < 5 * mc.standard_error[0, 0]
    # the same seed gives the same estimate; another seed another one
    again = fisher_information_monte_carlo(Gaussian(cov=sigma**2), samples=n, rng=29)
    assert np.array_equal(again.estimate, mc.estimate)
    vector = fisher_information_monte_carlo(Gaussian(cov=[[1.0, 0.5], [0.5, 2.0]]), samples=50_000, rng=3)
    assert vector.estimate.shape == (2, 2) and np.allclose(vector.estimate, vector.estimate.T)


def test_quadrature_with_a_numerical_derivative_and_breakpoints():
    # N(0, s²) on a finite range holding all its mass: information 1/s², the derivative taken numerically
    s = 1.3
    normal = lambda w: np.exp(-(w**2) / (2 * s**2)) / (s * np.sqrt(2 * np.pi))  # noqa: E731
    assert fisher_information_quadrature(normal, (-15.0, 15.0)) == pytest.approx(1 / s**2, rel=1e-6)
    # cos² on [a, c]: information 4π²/(c − a)², with the derivative taken numerically up to the edges
    a, c = -0.3, 0.9
    cos2 = RaisedCosine(lower=a, upper=c)
    assert fisher_information_quadrature(cos2.pdf, (a, c), rtol=1e-9) == pytest.approx(
        4 * np.pi**2 / (c - a) ** 2, rel=1e-6
    )
    # Laplace(b) with its exact derivative: g′²/g = g/b², information 1/b²; the kink at 0 is a breakpoint (and
    # a breakpoint outside the range is ignored)
    b = 0.8
    pdf = lambda w: np.exp(-np.abs(w) / b) / (2 * b)  # noqa: E731
    exact = fisher_information_quadrature(
        pdf, (-60.0, 60.0), derivative=lambda w: -np.sign(w) * pdf(w) / b, breakpoints=(99.0, 0.0)
    )
    assert exact == pytest.approx(1 / b**2, rel=1e-9)
