"""Query invariants: sensitivities and declared Jacobian bounds against brute force, over bounds that do not start
at 0 and may be negative.

Second method: neighbouring databases built explicitly (one record moved across its declared interval) and the
change of the answer measured; Jacobian bounds maximised over the corners of the declared box; Jacobians compared
with central differences computed here.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privnoise import queries
from privnoise.exceptions import DimensionError, InvalidParameterError
from privnoise.queries import Bounds, FunctionQuery, LinearQuery

BOUNDS = [(0.0, 1.0), (10.0, 60.0), (-30.0, -10.0), (-2.5, 4.0)]


def _brute_force_sensitivity(q: LinearQuery, norm: str, rng: np.random.Generator) -> float:
    """max over records i and databases x of ‖C x − C x'‖ with x' = x except record i moved within the bounds."""
    lo, hi = q.bounds.lower, q.bounds.upper
    c = q.matrix_2d
    worst = 0.0
    for _ in range(20):
        x = rng.uniform(lo, hi, q.n)
        for i in range(q.n):
            for value in (lo, hi):
                y = x.copy()
                y[i] = value
                z = x.copy()
                z[i] = hi + lo - value  # the other end
                diff = c @ y - c @ z
                worst = max(worst, float(np.abs(diff).sum() if norm == "l1" else np.linalg.norm(diff)))
    return worst


@pytest.mark.parametrize("bounds", BOUNDS)
@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_linear_sensitivity_is_the_largest_change_of_one_record(bounds, norm):
    rng = np.random.default_rng(4)
    c = rng.normal(size=(3, 5))
    for q in (
        LinearQuery(c, bounds=bounds),
        LinearQuery(c[0], bounds=bounds),
        queries.mean(7, bounds=bounds),
        queries.sum(4, bounds=bounds),
        queries.identity(3, bounds=bounds),
        queries.weighted_mean([1.0, 3.0, 0.5], bounds=bounds),
    ):
        assert q.sensitivity(norm) == pytest.approx(_brute_force_sensitivity(q, norm, rng), rel=1e-12)
    width = bounds[1] - bounds[0]
    assert queries.mean(7, bounds=bounds).sensitivity(norm) == pytest.approx(width / 7)
    assert queries.sum(4, bounds=bounds).sensitivity(norm) == pytest.approx(width)
    assert queries.identity(3, bounds=bounds).sensitivity(norm) == pytest.approx(width)


def test_sensitivity_default_norm_is_l1_and_unknown_norms_are_refused():
    q = LinearQuery([[1.0, -2.0], [3.0, 0.5]], bounds=(-1.0, 1.0))
    assert q.sensitivity() == q.sensitivity("l1") == pytest.approx(2.0 * 4.0)
    assert q.sensitivity("l2") == pytest.approx(2.0 * np.hypot(1.0, 3.0))
    with pytest.raises(InvalidParameterError, match="norm"):
        q.sensitivity("linf")


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(2, 6),
    lo=st.floats(-50.0, 50.0),
    width=st.floats(0.1, 40.0),
)
def test_variance_jacobian_bound_is_the_maximum_over_the_box(n, lo, width):
    hi = lo + width
    q = queries.variance(n, bounds=(lo, hi))
    bound = q.sup_jacobian()
    assert bound.shape == (1, n)
    corners = np.array(list(itertools.product((lo, hi), repeat=n)))
    worst = max(
        float(np.abs(q.jacobian_at(x)).max()) for x in corners
    )  # |∂f/∂x_i| is convex: max at a corner
    assert np.allclose(bound, worst, rtol=1e-12)
    assert q.bounds.lower == lo and q.bounds.upper == hi


@pytest.mark.parametrize("n", [2, 3, 8])
def test_variance_value_and_jacobian_by_definition(n):
    rng = np.random.default_rng(n)
    x = rng.uniform(-5, 5, n)
    q = queries.variance(n)
    mean = x.sum() / n
    assert q(x) == pytest.approx(((x - mean) ** 2).sum() / (n - 1), rel=1e-12)
    h = 1e-6
    numeric = np.array([(q(x + h * e) - q(x - h * e)) / (2 * h) for e in np.eye(n)])
    assert np.allclose(q.jacobian_at(x)[0], numeric, rtol=1e-6, atol=1e-8)
    assert q.sup_jacobian() is None  # no declared bounds: no declared-domain guarantee
    assert q.name == "variance" and q.m == 1 and q.output_shape == ()


def test_linear_queries_by_definition():
    x = np.array([2.0, -1.0, 4.0, 0.5])
    assert queries.sum(4)(x) == x.sum()
    assert queries.mean(4)(x) == pytest.approx(x.mean())
    w = np.array([1.0, 2.0, 0.0, 1.0])
    assert queries.weighted_mean(w)(x) == pytest.approx(w @ x / w.sum())
    assert np.array_equal(queries.identity(4)(x), x)
    q = LinearQuery([[1.0, 0.0, 2.0, -1.0], [0.0, 3.0, 0.0, 0.0]])
    assert np.allclose(q(x), [2.0 + 8.0 - 0.5, -3.0])
    assert np.array_equal(q.jacobian_at(x), q.matrix_2d) and np.array_equal(
        q.sup_jacobian(), np.abs(q.matrix_2d)
    )
    assert np.allclose(q.gram(), q.matrix_2d @ q.matrix_2d.T)
    assert q.is_linear and q.output_shape == (2,) and q.m == 2 and q.n == 4
    scalar = LinearQuery([1.0, 2.0])
    assert scalar.output_shape == () and scalar.m == 1 and scalar.matrix_2d.shape == (1, 2)
    assert isinstance(scalar(np.array([1.0, 1.0])), float)


def test_describe_names_bounds_but_never_data():
    q = queries.mean(3, bounds=(-1.0, 2.0))
    assert q.describe() == {"kind": "linear", "name": "mean", "n": 3, "m": 1, "bounds": [-1.0, 2.0]}
    f = queries.variance(3, bounds=(-1.0, 2.0))
    assert f.describe() == {"kind": "function", "name": "variance", "n": 3, "m": 1, "bounds": [-1.0, 2.0]}
    assert "bounds" not in queries.sum(2).describe() and "bounds" not in FunctionQuery(np.sum, 2).describe()


def test_function_query_declared_bound_shapes():
    vector = FunctionQuery(lambda v: np.array([v[0] * v[1], v[1]]), 2, jacobian_bound=3.0, bounds=(-1.0, 1.0))
    assert vector.output_shape == (2,)
    assert np.array_equal(vector.sup_jacobian(), np.full((2, 2), 3.0))
    scalar = FunctionQuery(lambda v: float(v.sum()), 3, jacobian_bound=[1.0, 2.0, 3.0])
    assert np.array_equal(scalar.sup_jacobian(), [[1.0, 2.0, 3.0]])
    full = FunctionQuery(lambda v: np.array([v[0], v[1]]), 2, jacobian_bound=[[1.0, 0.0], [0.0, 1.0]])
    assert np.array_equal(full.sup_jacobian(), np.eye(2))
    with pytest.raises(DimensionError, match="jacobian_bound"):
        FunctionQuery(lambda v: np.array([v[0], v[1]]), 2, jacobian_bound=[[1.0, 0.0, 0.0]])
    assert FunctionQuery(np.sum, 2, jacobian_bound=0.0).sup_jacobian().max() == 0.0  # zero is allowed


def test_function_query_jacobians_by_finite_differences():
    def f(v: np.ndarray) -> np.ndarray:
        return np.array([np.sin(v[0]) * v[1], v[0] ** 2 - 3.0 * v[2]])

    q = FunctionQuery(f, 3, bounds=(-2.0, 2.0))
    x = np.array([0.3, -1.2, 1.7])
    exact = np.array([[np.cos(0.3) * -1.2, np.sin(0.3), 0.0], [0.6, 0.0, -3.0]])
    assert np.allclose(q.jacobian_at(x), exact, rtol=1e-7, atol=1e-8)  # the default central differences
    big = np.array([1e6, 2.0, -3e5])
    q2 = FunctionQuery(lambda v: float(v[0] * v[1] + v[2]), 3)
    assert np.allclose(q2.jacobian_at(big), [[2.0, 1e6, 1.0]], rtol=1e-6)  # steps scale with |x|
    with pytest.raises(DimensionError, match="jacobian"):
        FunctionQuery(f, 3, jacobian=lambda v: np.ones((3, 3))).jacobian_at(x)
    with pytest.raises(InvalidParameterError, match="jacobian"):
        FunctionQuery(f, 3, jacobian=lambda v: np.full((2, 3), np.nan)).jacobian_at(x)
    with pytest.raises(DimensionError, match="function"):
        FunctionQuery(lambda v: np.ones((2, 2)), 3)


def test_function_query_output_shape_is_fixed_at_the_middle_of_the_bounds():
    seen = []

    def f(v: np.ndarray) -> float:
        seen.append(v.copy())
        return float(v.sum())

    FunctionQuery(f, 2, bounds=(10.0, 20.0))
    assert np.array_equal(seen[0], [15.0, 15.0])
    changing = FunctionQuery(lambda v: np.ones(2) if v[0] > 0 else 1.0, 2, bounds=(1.0, 2.0))
    with pytest.raises(DimensionError, match="shape"):
        changing(np.array([-1.0, 0.0]))


def test_overflowing_values_are_refused():
    q = queries.sum(2)
    with pytest.raises(InvalidParameterError, match="finite"):
        q(np.array([1.7e308, 1.7e308]))
    v = queries.variance(2)
    with pytest.raises(InvalidParameterError):
        v(np.array([-1e308, 1e308]))


def test_bounds_are_declared_values():
    b = Bounds(-3, 5)
    assert (b.lower, b.upper, b.width) == (-3.0, 5.0, 8.0) and isinstance(b.lower, float)
    assert Bounds.coerce(None) is None and Bounds.coerce(b) is b
    for bad in ((2.0, 1.0), (0.0, np.inf), ("a", 1.0)):
        with pytest.raises(InvalidParameterError):
            Bounds(*bad)
    with pytest.raises(InvalidParameterError, match="bounds"):
        Bounds.coerce(3.0)
    weights = queries.weighted_mean([2.0, 2.0], bounds=(-1.0, 1.0))
    assert np.allclose(weights.matrix, [0.5, 0.5]) and weights.name == "weighted_mean"
    with pytest.raises(InvalidParameterError, match="weights"):
        queries.weighted_mean([])


def test_queries_do_not_alias_the_callers_arrays():
    c = np.array([[1.0, 2.0], [3.0, 4.0]])
    q = LinearQuery(c, bounds=(0.0, 1.0))
    c[0, 0] = 100.0  # the caller keeps a writable array, and changing it does not change the query
    assert q.matrix[0, 0] == 1.0 and c.flags.writeable
    assert not q.matrix.flags.writeable
    assert LinearQuery([5.0]).n == 1 and LinearQuery([5.0])(np.array([2.0])) == 10.0  # one record is a query
    w = np.array([1.0, 3.0])
    wq = queries.weighted_mean(w)
    w[0] = 7.0
    assert np.allclose(wq.matrix, [0.25, 0.75])
    assert queries.weighted_mean([4.0]).matrix.tolist() == [1.0]
    with pytest.raises(InvalidParameterError, match="weights"):
        queries.weighted_mean([[1.0, 2.0]])


def test_data_must_be_one_record_per_entry():
    q = queries.mean(3)
    for bad in (np.ones((3, 1)), np.ones((1, 3)), np.ones(()) * 2.0):
        with pytest.raises(InvalidParameterError, match="x"):
            q(bad)
        with pytest.raises(InvalidParameterError, match="x"):
            q.jacobian_at(bad)
    with pytest.raises(InvalidParameterError, match="mean"):
        q(np.ones(4))  # the message names the query


def test_cancelling_overflow_is_refused_without_warnings():
    q = LinearQuery([1.0, 1.0, -1.0, -1.0])
    with pytest.raises(InvalidParameterError, match="finite"):
        q(np.full(4, 1.7e308))  # inf − inf: refused, never NaN, and no RuntimeWarning on the way


def test_factories_are_named_and_typed():
    assert queries.sum(3).name == "sum" and queries.identity(2).name == "identity"
    assert queries.mean(2).name == "mean" and queries.weighted_mean([1.0]).name == "weighted_mean"
    integer = FunctionQuery(lambda v: np.array([1, 2]), 2, jacobian=lambda v: np.eye(2, dtype=int))
    assert integer(np.zeros(2)).dtype == np.float64
    x = np.array([0.3, -1.2, 2.5, 0.0])
    exact = 2 * (x - x.mean()) / 3
    assert np.allclose(
        queries.variance(4).jacobian_at(x)[0], exact, rtol=1e-15, atol=0
    )  # exact, not numerical


def _brute_force_block_sensitivity(c: np.ndarray, bounds: tuple[float, float], block: int | None, norm: str) -> float:
    """max over records i of the norm of C e_i (hi − lo): moving one record changes Cx by (hi − lo) C e_i exactly,
    measured here in ℓ1, ℓ2 or Σ over output blocks of their ℓ2 norms."""
    width = bounds[1] - bounds[0]
    worst = 0.0
    for i in range(c.shape[1]):
        change = width * c[:, i]
        if norm == "l1":
            size = float(np.abs(change).sum())
        elif norm == "l2":
            size = float(np.linalg.norm(change))
        else:
            size = float(sum(np.linalg.norm(part) for part in change.reshape(-1, block)))
        worst = max(worst, size)
    return worst


@pytest.mark.parametrize("bounds", [(0.0, 1.0), (-2.5, 4.0)])
def test_every_factory_has_the_sensitivity_of_its_matrix(bounds):
    from scipy import sparse

    rng = np.random.default_rng(11)
    c = rng.normal(size=(4, 3))
    w = np.array([0.5, -2.0, 1.5])
    cases = [
        (queries.linear(c, bounds=bounds), c),
        (queries.linear(sparse.csr_matrix(c), bounds=bounds), c),
        (queries.diagonal(w, bounds=bounds), np.diag(w)),
        (queries.weighted_sum(w, bounds=bounds), w[None, :]),
        (queries.identity(3, bounds=bounds, scale=2.5), 2.5 * np.eye(3)),
    ]
    x = rng.uniform(*bounds, size=3)
    for q, matrix in cases:
        assert np.allclose(np.atleast_1d(q(x)), matrix @ x, rtol=1e-13)  # the query is Cx
        for norm in ("l1", "l2"):
            expected = _brute_force_block_sensitivity(matrix, bounds, None, norm)
            assert q.sensitivity(norm) == pytest.approx(expected, rel=1e-13)
        if matrix.shape[0] % 2 == 0:
            expected = _brute_force_block_sensitivity(matrix, bounds, 2, "l1-l2")
            assert q.sensitivity("l1-l2", block=2) == pytest.approx(expected, rel=1e-13)


def test_sensitivity_of_a_function_query_from_its_declared_jacobian_bound():
    # f(x) = sin(Cx) has |∂f_k/∂x_i| ≤ |C_ki|: by the mean value theorem a record moves f by at most
    # (hi − lo)·‖|C| e_i‖, the bound the query states; brute force on the linear map |C| itself attains it
    rng = np.random.default_rng(12)
    c = rng.normal(size=(4, 3))
    bounds = (-1.0, 3.0)
    q = FunctionQuery(lambda x: np.sin(c @ x), 3, bounds=bounds, jacobian_bound=np.abs(c))
    for norm in ("l1", "l2"):
        assert q.sensitivity(norm) == pytest.approx(_brute_force_block_sensitivity(np.abs(c), bounds, None, norm))
    assert q.sensitivity() == q.sensitivity("l1")
    assert q.sensitivity("l1-l2", block=2) == pytest.approx(
        _brute_force_block_sensitivity(np.abs(c), bounds, 2, "l1-l2")
    )
    # and no record moves f by more (sampled pairs of neighbours)
    for _ in range(200):
        x = rng.uniform(*bounds, size=3)
        y = x.copy()
        y[rng.integers(3)] = rng.uniform(*bounds)
        assert np.abs(np.sin(c @ x) - np.sin(c @ y)).sum() <= q.sensitivity("l1") * (1 + 1e-12)
    with pytest.raises(InvalidParameterError, match="`bounds` of"):
        FunctionQuery(lambda x: np.sin(c @ x), 3, jacobian_bound=np.abs(c)).sensitivity()
    with pytest.raises(InvalidParameterError, match="`jacobian_bound` of"):
        FunctionQuery(lambda x: np.sin(c @ x), 3, bounds=bounds).sensitivity()


@pytest.mark.parametrize("bounds", [(-3.0, 3.0), (-2.0, 5.0), (1.0, 4.0)])
def test_output_bound_bounds_every_answer_over_the_declared_box(bounds):
    c = np.array([[1.0, -2.0, 0.5], [0.25, 0.0, -1.0]])
    q = queries.linear(c, bounds=bounds)
    corners = np.array(list(itertools.product(bounds, repeat=3)))  # |Cx| is largest at a corner of the box
    largest = float(np.abs(corners @ c.T).max())
    assert q.output_bound() >= largest * (1 - 1e-15)
    reach = max(abs(bounds[0]), abs(bounds[1]))
    if bounds[0] == -bounds[1]:  # a symmetric box attains Σ|C_ki|·reach
        assert q.output_bound() == pytest.approx(largest, rel=1e-15)
    assert q.output_bound() == pytest.approx(np.abs(c).sum(axis=1).max() * reach, rel=1e-15)


def test_weighted_mean_refuses_a_matrix_of_weights():
    with pytest.raises(DimensionError, match="`weights` of `weighted_mean`"):
        queries.weighted_mean([[1.0, 2.0], [3.0, 4.0]])
