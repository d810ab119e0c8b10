"""Cramér–Rao bounds (Proposition 1, eqs. (7)–(8), Proposition 5) against Monte Carlo errors of estimators."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import privnoise as pn
from privnoise import queries
from privnoise.exceptions import DimensionError, InvalidParameterError
from privnoise.fisher import cramer_rao, fisher_guarantee
from privnoise.guarantees import FisherGuarantee, FisherInformation
from privnoise.mechanisms import Gaussian, Laplace, RaisedCosine

DRAWS = 200_000


def _unbiased_error(mech, seed):
    """Monte Carlo E‖x − x̂‖² of the unbiased estimator x̂ = y − E w for the identity query."""
    w = np.asarray(mech.sample(DRAWS, rng=seed)).reshape(DRAWS, -1)
    err = ((w - np.atleast_1d(mech.mean())) ** 2).sum(axis=1)
    return err.mean(), err.std(ddof=1) / math.sqrt(DRAWS)


@pytest.mark.parametrize(
    "mech",
    [
        RaisedCosine(lower=[0.0, -1.0], upper=[1.0, 2.0]),
        Laplace(scale=[0.5, 2.0]),
    ],
    ids=["cos2", "laplace"],
)
def test_unbiased_error_exceeds_the_bound(mech):
    g = fisher_guarantee(queries.identity(2), mech)
    error, se = _unbiased_error(mech, 5)
    assert error - 5 * se > g.cramer_rao_bound
    assert g.cramer_rao_bound == pytest.approx(np.trace(np.linalg.inv(mech.fisher_information())))


def test_gaussian_attains_the_bound():
    mech = Gaussian(cov=[[2.0, 0.6], [0.6, 1.0]])
    g = fisher_guarantee(queries.identity(2), mech)
    error, se = _unbiased_error(mech, 9)
    assert abs(error - g.cramer_rao_bound) < 5 * se
    assert g.cramer_rao_bound == pytest.approx(3.0)


def test_record_bound_against_the_known_others_estimator():
    # eq. (7): with every other record known, the best unbiased estimator of x_i from y = c·x + w is
    # (y − Σ_{j≠i} c_j x_j − E w)/c_i; for Gaussian noise its error equals 1/𝓘_ii.
    c = np.array([0.2, 0.5, 0.3])
    q = pn.LinearQuery(c)
    mech = Gaussian(cov=0.04)
    g = fisher_guarantee(q, mech)
    w = mech.sample(DRAWS, rng=2)
    errors = (w / c[:, None]) ** 2
    for i in range(3):
        est, se = errors[i].mean(), errors[i].std() / math.sqrt(DRAWS)
        assert abs(est - g.record_bounds[i]) < 5 * se
    assert g.worst_record_bound == pytest.approx(0.04 / 0.25)
    assert g.trace_bound <= g.worst_record_bound  # eq. (8) is the weaker bound


def test_proposition5_and_trace_bound_on_random_matrices():
    rng = np.random.default_rng(0)
    for _ in range(50):
        a = rng.normal(size=(4, 4))
        info = a @ a.T + 0.1 * np.eye(4)
        assert cramer_rao.cramer_rao_bound(info) >= cramer_rao.jensen_bound(info) - 1e-12
        assert np.all(cramer_rao.record_bounds(info) >= cramer_rao.trace_bound(info) - 1e-15)
        # 1/𝓘_ii ≤ (𝓘⁻¹)_ii: knowing the other records can only help the adversary
        assert np.all(cramer_rao.record_bounds(info) <= np.diag(np.linalg.inv(info)) + 1e-12)


def test_biased_bound_matches_direct_formula():
    info = np.diag([4.0, 1.0])
    g = np.array([[0.5, 0.0], [0.0, 1.0]])
    bias = np.array([1.0, 0.0])
    assert cramer_rao.biased_bound(info, g, bias) == pytest.approx(0.25 * 0.25 + 1.0 + 1.0)


def test_biased_bound_against_shrinkage_estimator_monte_carlo():
    # x̂ = a·y with y = x + w, w ~ N(0, s²): E x̂ = a x, G = a, error a²s² + (1 − a)²x² — eq. (5) holds with equality.
    s, a, x = 0.7, 0.6, 1.5
    bound = cramer_rao.biased_bound([[1 / s**2]], [[a]], [x - a * x])
    w = Gaussian(cov=s**2).sample(DRAWS, rng=4)
    err = (x - a * (x + w)) ** 2
    assert abs(err.mean() - bound) < 5 * err.std() / math.sqrt(DRAWS)


def test_singular_information_gives_infinite_unbiased_bound():
    g = fisher_guarantee(queries.mean(5), Gaussian(cov=1.0))
    assert math.isinf(g.cramer_rao_bound)
    assert math.isinf(cramer_rao.cramer_rao_bound(np.ones((2, 2))))


def test_factored_information_never_builds_huge_matrices():
    n = 1_000_000
    g = fisher_guarantee(queries.mean(n), RaisedCosine(lower=0.0, upper=0.2))
    assert g.information.trace() == pytest.approx(4 * math.pi**2 / 0.04 / n)
    assert g.worst_record_bound == pytest.approx(n**2 * 0.04 / (4 * math.pi**2))
    with pytest.raises(DimensionError, match="diagonal"):
        g.information.matrix()


def test_factored_quantities_equal_dense_ones():
    rng = np.random.default_rng(3)
    f = rng.normal(size=(3, 5))
    j = np.diag([1.0, 2.0, 3.0])
    info = FisherInformation(f, j)
    dense = f.T @ j @ f
    assert info.trace() == pytest.approx(np.trace(dense))
    assert np.allclose(info.diagonal(), np.diag(dense))


def test_declared_domain_guarantee_bounds_every_database():
    n, lo, hi = 5, 0.0, 3.0
    q = queries.variance(n, bounds=(lo, hi))
    mech = RaisedCosine(lower=-0.5, upper=0.5)
    worst = fisher_guarantee(q, mech)
    assert worst.scope == "declared-domain"
    rng = np.random.default_rng(8)
    for x in rng.uniform(lo, hi, size=(500, n)):
        at = fisher_guarantee(pn.FunctionQuery(q.function, n, jacobian=q.jacobian), mech, x)
        assert at.scope == "at-data"
        assert at.worst_record_bound >= worst.worst_record_bound - 1e-12
        assert at.trace_bound >= worst.trace_bound - 1e-12


def test_nonlinear_without_bound_needs_data():
    q = pn.FunctionQuery(lambda v: float(np.sum(v**2)), 3)
    with pytest.raises(InvalidParameterError, match="x"):
        fisher_guarantee(q, RaisedCosine(lower=0.0, upper=1.0))


def test_guarantee_serialises_to_json():
    g = fisher_guarantee(queries.mean(10), RaisedCosine(lower=0.0, upper=0.2))
    text = json.dumps(g.as_dict(), allow_nan=False)
    assert '"cramer_rao_bound": "inf"' in text
    assert "Fisher-information privacy" in g.summary()


@pytest.mark.parametrize(
    "call",
    [
        lambda: cramer_rao.cramer_rao_bound([[1.0, np.nan], [np.nan, 1.0]]),
        lambda: cramer_rao.cramer_rao_bound([[1.0, 2.0], [0.0, 1.0]]),
        lambda: cramer_rao.cramer_rao_bound([[-1.0, 0.0], [0.0, 1.0]]),
        lambda: cramer_rao.trace_bound([1.0, 2.0]),
        lambda: cramer_rao.biased_bound(np.eye(2), np.eye(3), np.zeros(2)),
        lambda: FisherGuarantee(FisherInformation(np.eye(2), np.eye(2)), quality=-1.0),
        lambda: FisherInformation(np.eye(2), np.eye(3)),
    ],
)
def test_bad_inputs(call):
    with pytest.raises(InvalidParameterError):
        call()
