"""Structured queries and noise give the dense path's guarantees and designs, and scale to 10⁸–10⁹ records."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

import privnoise as pn
from privnoise.fisher import fisher_guarantee, optimal_noise
from privnoise.linalg import Diagonal, Identity, IsotropicForm, Kronecker, KroneckerForm, Row
from privnoise.mechanisms import Gaussian, Laplace, RaisedCosine


def dense_twin(query):
    return pn.LinearQuery(np.array(query.matrix), bounds=(0.0, 2.0))  # 1-d for a scalar query


def structured_queries(rng):
    n = 6
    return [
        pn.queries.identity(n, bounds=(0.0, 2.0), scale=1.7),
        pn.queries.diagonal(rng.uniform(0.5, 2.0, n), bounds=(0.0, 2.0)),
        pn.LinearQuery(Row(rng.normal(size=n)), bounds=(0.0, 2.0)),
        pn.queries.mean(n, bounds=(0.0, 2.0)),
        pn.queries.linear(sparse.random(8, n, density=0.4, random_state=1) + sparse.eye(8, n), bounds=(0.0, 2.0)),
        pn.queries.linear(Kronecker(Identity(2), np.array([[1.0, 0.5, 0.0], [0.0, 1.0, 2.0]])), bounds=(0.0, 2.0)),
    ]


@pytest.mark.parametrize("index", range(6))
def test_guarantees_and_designs_equal_the_dense_path(index):
    rng = np.random.default_rng(index)
    query = structured_queries(rng)[index]
    dense = dense_twin(query)
    m = query.m
    shape = query.output_shape
    noises = [RaisedCosine(lower=np.full(shape, -0.3), upper=np.full(shape, 0.5)) if shape else RaisedCosine(lower=-0.3, upper=0.5)]
    noises.append(Laplace(scale=rng.uniform(0.5, 2.0, m) if shape else 0.7))
    a = rng.normal(size=(m, m))
    noises.append(Gaussian(cov=a @ a.T + m * np.eye(m)) if shape else Gaussian(cov=0.3))
    for noise in noises:
        s, d = fisher_guarantee(query, noise), fisher_guarantee(dense, noise)
        for attribute in ("worst_record_bound", "trace_bound", "cramer_rao_bound", "quality"):
            np.testing.assert_allclose(getattr(s, attribute), getattr(d, attribute), rtol=1e-12, atol=0)
        np.testing.assert_allclose(s.record_bounds, d.record_bounds, rtol=1e-12)
        assert query.sensitivity("l1") == pytest.approx(dense.sensitivity("l1"), rel=1e-12)
        assert query.sensitivity("l2") == pytest.approx(dense.sensitivity("l2"), rel=1e-12)
        assert query.output_bound() == pytest.approx(dense.output_bound(), rel=1e-12)
    if np.linalg.matrix_rank(np.atleast_2d(dense.matrix)) == m:
        for goal in ({"quality_budget": 0.5}, {"quality_weight": 3.0}):
            np.testing.assert_allclose(
                np.atleast_2d(optimal_noise(query, **goal).covariance()),
                np.atleast_2d(optimal_noise(dense, **goal).covariance()),
                rtol=1e-11, atol=1e-14,
            )


def test_identity_of_a_billion_records_is_designed_and_guaranteed_in_constant_memory():
    n = 10**9
    q = pn.queries.identity(n, bounds=(0.0, 60.0))
    mech = optimal_noise(q, quality_budget=2.0 * n)  # σ² = 2 per household
    assert isinstance(mech.covariance_form(), IsotropicForm)
    g = mech.guarantee_for(q)
    assert g.worst_record_bound == pytest.approx(2.0) and g.cramer_rao_bound == pytest.approx(2.0 * n)
    assert g.information.trace() == pytest.approx(n / 2.0)
    assert q.sensitivity("l1") == 60.0 and pn.queries.mean(n, bounds=(0, 60)).sensitivity() == pytest.approx(6e-8)
    lap = pn.dp.laplace_for_epsilon(1.0, sensitivity=q.sensitivity("l1"), dim=n)
    assert lap.scale.strides == (0,) and lap.guarantee_for(q).epsilon == 1.0


def test_gaussian_with_a_kronecker_covariance(assert_moments):
    form = KroneckerForm(IsotropicForm(3, 2.0), pn.linalg.DenseForm([[1.0, 0.4], [0.4, 0.5]]))
    g = Gaussian(cov=form)
    assert g.shape == (6,) and g.second_moment() == pytest.approx(3 * 2.0 * 1.5)
    assert_moments(g, np.asarray(g.sample(200_000, rng=4)))
    np.testing.assert_allclose(g.fisher_information(), np.linalg.inv(form.dense()), rtol=1e-12)
    assert g.marginal(0, 2) is not None and g.marginal(0, 3) is None  # blocks of 2 are independent, halves not


def test_diagonal_identity_release_in_blocks_matches_the_dense_release():
    n = 150_000
    x = np.random.default_rng(0).uniform(0.0, 1.0, n)
    weights = np.linspace(0.5, 2.0, n)
    q = pn.queries.diagonal(weights, bounds=(0.0, 1.0))
    noise = Laplace(scale=np.full(n, 0.25))
    rel = pn.release(x, q, noise, rng=3)
    raw = pn.release(x, q, noise, rng=3, harden=False)
    np.testing.assert_allclose(rel.value, raw.value, atol=rel.grid)
    assert rel.guarantee.epsilon == pytest.approx(2.0 / 0.25)  # ℓ1 sensitivity max wᵢ·(b − a) = 2
    assert isinstance(q.operator, Diagonal)
