"""release(): validation before the data is read, declared-bounds policy, guarantees attached."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import privnoise as pn
from privnoise import queries
from privnoise.exceptions import DimensionError, InvalidParameterError
from privnoise.fisher import optimal_noise
from privnoise.mechanisms import Gaussian, RaisedCosine


class Exploding:
    """Data that fails the test if anyone reads it."""

    def __array__(self, *args, **kwargs):
        raise AssertionError("the data was read before the parameters were validated")


def test_release_value_and_guarantee():
    x = np.linspace(0, 4, 200)
    q = queries.mean(200, bounds=(0.0, 4.0))
    mech = optimal_noise(q, support=(-0.1, 0.1))
    values = np.array([pn.release(x, q, mech, rng=s).value for s in range(400)])
    assert np.all(np.abs(values - 2.0) < 0.1)
    assert abs(values.mean() - 2.0) < 0.01
    rel = pn.release(x, q, mech, rng=1)
    assert rel.guarantee.scope == "all-data"
    assert rel.guarantee.quality == pytest.approx(mech.second_moment())
    payload = json.loads(json.dumps(rel.as_dict(), allow_nan=False))
    assert payload["guarantee"]["notion"] == "fisher-information"
    assert "clamped_records" not in payload


def test_vector_release():
    q = pn.LinearQuery([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    mech = optimal_noise(q, quality_budget=0.5)
    rel = pn.release(np.array([1.0, 2.0, 3.0]), q, mech, rng=0)
    assert rel.value.shape == (2,)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"query": "mean"}, "query"),
        ({"mechanism": "cos2"}, "mechanism"),
        ({"mechanism": Gaussian(cov=np.eye(2))}, "mechanism"),
        ({"out_of_bounds": "ignore"}, "out_of_bounds"),
        ({"rng": -3}, "rng"),
        ({"rng": "seed"}, "rng"),
    ],
)
def test_bad_parameters_are_rejected_before_the_data_is_read(kwargs, name):
    args = {"query": queries.mean(3), "mechanism": RaisedCosine(lower=0.0, upper=1.0)} | kwargs
    with pytest.raises(InvalidParameterError) as info:
        pn.release(
            Exploding(),
            args["query"],
            args["mechanism"],
            **{k: v for k, v in kwargs.items() if k in ("out_of_bounds", "rng")},
        )
    assert name in str(info.value)


@pytest.mark.parametrize(
    "data",
    [
        [1.0, np.nan, 2.0],
        [1.0, np.inf, 2.0],
        [1.0, -np.inf, 2.0],
        [1.0, 2.0],
        [[1.0, 2.0, 3.0]],
        ["a", "b", "c"],
        [True, False, True],
    ],
)
def test_bad_data_is_rejected(data):
    with pytest.raises(InvalidParameterError):
        pn.release(data, queries.mean(3), RaisedCosine(lower=0.0, upper=1.0), rng=0)


def test_nan_message_does_not_echo_data():
    with pytest.raises(InvalidParameterError) as info:
        pn.release([1.23456789, np.nan, 2.0], queries.mean(3), RaisedCosine(lower=0.0, upper=1.0), rng=0)
    assert "1.23456789" not in str(info.value)


def test_out_of_bounds_policy():
    q = queries.mean(3, bounds=(0.0, 1.0))
    mech = RaisedCosine(lower=0.0, upper=0.01)
    with pytest.raises(InvalidParameterError, match="outside the declared bounds"):
        pn.release([0.5, 3.0, 0.2], q, mech, rng=0)
    rel = pn.release([0.5, 3.0, 0.2], q, mech, rng=0, out_of_bounds="clamp")
    assert rel.clamped_records == 1
    clamped_mean = (0.5 + 1.0 + 0.2) / 3
    assert clamped_mean <= rel.value <= clamped_mean + 0.01


def test_nonlinear_query_scopes():
    x = np.array([0.2, 0.4, 0.9, 0.5])
    with_bound = queries.variance(4, bounds=(0.0, 1.0))
    rel = pn.release(x, with_bound, optimal_noise(with_bound, support=(-0.01, 0.01)), rng=0)
    assert rel.guarantee.scope == "declared-domain"
    no_bound = pn.FunctionQuery(lambda v: float(np.var(v, ddof=1)), 4)
    rel = pn.release(x, no_bound, RaisedCosine(lower=-0.01, upper=0.01), rng=0)
    assert rel.guarantee.scope == "at-data"


def test_release_never_contains_nan_or_inf():
    q = queries.sum_query(3)
    huge = np.array([1e308, 1e308, 1e308])
    with pytest.raises(InvalidParameterError):
        pn.release(huge, q, Gaussian(cov=1.0), rng=0)


def test_default_rng_is_used_when_none():
    q = queries.mean(3)
    draws = [pn.release([1.0, 2.0, 3.0], q, Gaussian(cov=1.0)).value for _ in range(40)]
    # fresh noise each time; releases lie on a 2^k grid, so two of them may coincide now and then, not often
    assert len(set(draws)) >= 30
    values = set(draws)
    assert all(math.isfinite(v) for v in values)


def test_shape_mismatch_is_a_dimension_error():
    with pytest.raises(DimensionError):
        pn.release([1.0, 2.0], queries.identity(2), RaisedCosine(lower=0.0, upper=1.0))


def test_identical_coordinates_is_stated_only_for_laws_whose_marginals_depend_on_their_length():
    from privnoise.dp import DiscreteGaussian
    from privnoise.linalg import DiagonalForm
    from privnoise.mechanisms import Laplace

    assert Gaussian.from_std(2.0, 10).identical_coordinates
    assert not Gaussian.from_std(2.0).identical_coordinates  # a scalar law has no marginals
    assert not Gaussian(cov=DiagonalForm(np.array([1.0, 2.0]))).identical_coordinates
    assert not Gaussian(cov=[[2.0, 1.0], [1.0, 2.0]]).identical_coordinates
    assert not Gaussian.from_std(1.0, 3, loc=[0.0, 1.0, 2.0]).identical_coordinates
    assert Laplace(scale=np.broadcast_to(0.5, (4,))).identical_coordinates
    assert not Laplace(scale=[0.5, 1.0]).identical_coordinates
    assert DiscreteGaussian(sigma=1.0, dimension=3).identical_coordinates
    assert not DiscreteGaussian(sigma=1.0).identical_coordinates


def test_a_release_by_blocks_draws_each_block_from_its_own_marginal():
    """Per-record variances across blocks of records: each block's noise has its own scale (χ² variance tests at
    α = 1e-6, each with the power to reject the other block's scale)."""
    from scipy import stats

    from privnoise.linalg import DiagonalForm

    block = 1 << 18  # records per block of a release (privnoise.release.reading.BLOCK)
    n = 2 * block + 1000
    sigma = np.where(np.arange(n) < block, 1.0, 100.0)
    q = queries.identity(n, bounds=(0.0, 1.0))
    x = np.full(n, 0.5)
    error = pn.release(x, q, Gaussian(cov=DiagonalForm(sigma**2)), rng=11).value - x

    def rejects(e: np.ndarray, s: float) -> bool:
        statistic = float(np.sum(e * e)) / s**2
        return not stats.chi2.ppf(0.5e-6, e.size) < statistic < stats.chi2.ppf(1 - 0.5e-6, e.size)

    parts = ((error[:block], 1.0, 100.0), (error[block : 2 * block], 100.0, 1.0), (error[2 * block :], 100.0, 1.0))
    for part, s, wrong in parts:
        assert not rejects(part, s)
        assert rejects(part, wrong)
