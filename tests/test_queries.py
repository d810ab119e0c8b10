"""Queries: values, Jacobians (against finite differences), declared bounds, validation."""

from __future__ import annotations

import numpy as np
import pytest

from privnoise import queries
from privnoise.exceptions import DimensionError, InvalidParameterError
from privnoise.queries import Bounds, FunctionQuery, LinearQuery


def test_factories_evaluate():
    x = np.array([1.0, 2.0, 3.0, 7.0])
    assert queries.sum(4)(x) == 13.0
    assert queries.mean(4)(x) == pytest.approx(3.25)
    assert queries.weighted_mean([1, 1, 2, 0])(x) == pytest.approx((1 + 2 + 6) / 4)
    assert queries.variance(4)(x) == pytest.approx(np.var(x, ddof=1))
    assert np.array_equal(queries.identity(4)(x), x)


def test_weighted_mean_sums_to_one():
    q = queries.weighted_mean([3.0, 1.0, 4.0])
    assert q.matrix.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("n", [2, 5, 30])
def test_variance_jacobian_matches_finite_differences(n):
    rng = np.random.default_rng(n)
    x = rng.normal(size=n)
    q = queries.variance(n)
    numeric = FunctionQuery(lambda v: float(np.var(v, ddof=1)), n).jacobian_at(x)
    assert np.allclose(q.jacobian_at(x), numeric, rtol=1e-6, atol=1e-8)


def test_variance_declared_jacobian_bound_is_a_true_bound():
    n, lo, hi = 6, 0.0, 2.0
    q = queries.variance(n, bounds=(lo, hi))
    bound = q.sup_jacobian()
    rng = np.random.default_rng(0)
    worst = 0.0
    for x in rng.uniform(lo, hi, size=(2000, n)):
        worst = max(worst, np.abs(q.jacobian_at(x)).max())
    corner = np.array([lo] * (n - 1) + [hi])
    worst = max(worst, np.abs(q.jacobian_at(corner)).max())
    assert worst <= bound.max() + 1e-12
    assert worst == pytest.approx(bound.max())  # attained at a corner: the bound is tight


def test_function_query_vector_output_and_shape_checks():
    q = FunctionQuery(lambda v: np.array([v.sum(), v.max()]), 3)
    assert q.output_shape == (2,)
    assert q.jacobian_at(np.array([1.0, 5.0, 2.0])).shape == (2, 3)
    with pytest.raises(DimensionError, match="x"):
        q(np.ones(4))


def test_linear_query_sensitivity():
    q = LinearQuery([[0.5, 0.25], [0.0, 1.0]], bounds=(0.0, 2.0))
    assert q.sensitivity("l1") == pytest.approx(2.0 * 1.25)
    assert q.sensitivity("l2") == pytest.approx(2.0 * np.hypot(0.25, 1.0))
    with pytest.raises(InvalidParameterError, match="bounds"):
        LinearQuery([1.0, 1.0]).sensitivity()


@pytest.mark.parametrize(
    "build, name",
    [
        (lambda: LinearQuery([[1.0, np.nan]]), "matrix"),
        (lambda: LinearQuery([[1.0, np.inf]]), "matrix"),
        (lambda: LinearQuery([0.0, 0.0]), "matrix"),
        (lambda: LinearQuery("abc"), "matrix"),
        (lambda: LinearQuery(np.ones((2, 2, 2))), "matrix"),
        (lambda: queries.mean(0), "n"),
        (lambda: queries.mean(2.5), "n"),
        (lambda: queries.variance(1), "n"),
        (lambda: queries.weighted_mean([1.0, -1.0]), "weights"),
        (lambda: queries.mean(3, bounds=(1.0, 1.0)), "upper"),
        (lambda: queries.mean(3, bounds=(0.0, np.nan)), "upper"),
        (lambda: queries.mean(3, bounds=(0.0,)), "bounds"),
        (lambda: FunctionQuery(42, 3), "function"),
        (lambda: FunctionQuery(np.sum, 3, jacobian=5), "jacobian"),
        (lambda: FunctionQuery(np.sum, 3, jacobian_bound=-1.0), "jacobian_bound"),
    ],
)
def test_bad_parameters_are_named(build, name):
    with pytest.raises(InvalidParameterError) as info:
        build()
    assert name in str(info.value)


@pytest.mark.parametrize(
    "bad", [[1.0, np.nan, 2.0], [1.0, np.inf, 2.0], [[1.0, 2.0, 3.0]], [1.0, 2.0], "abc"]
)
def test_bad_data_is_rejected(bad):
    with pytest.raises(InvalidParameterError):
        queries.mean(3)(bad)


def test_function_returning_nan_is_refused():
    q = FunctionQuery(lambda v: float(np.log(v[0])), 2)
    with pytest.raises(InvalidParameterError, match="NaN"):
        q(np.array([-1.0, 1.0]))


def test_bounds_value_object():
    b = Bounds(-1.0, 3.0)
    assert b.width == 4.0
    assert Bounds.coerce((0, 1)).upper == 1.0
