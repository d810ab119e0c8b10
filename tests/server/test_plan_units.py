"""The planner on its own (:func:`privnoise.server.planner.make_plan`), on a SQLite table in memory.

For every kind of query, against references computed from the declared bounds and the rows alone:

* each component's sensitivity is the brute-force largest change of its value over neighbouring databases (one
  record added, removed or replaced, every record in the declared box; ℓ1 or ℓ2 for vectors), and its slopes the
  sup of |∂g/∂x| over the box by finite differences;
* the noise is calibrated to the component's share of the policy's (ε, δ) at that sensitivity (Laplace: Δ/b;
  Gaussian: Balle & Wang's analytic δ(ε)), and the Fisher information charged is Σ slope²·𝓘 of that noise (1/b²,
  1/σ², 1/Q, π²/h²);
* the charge is the policy's (ε, δ) once (plus the δ of partition selection), whatever the number of components;
* the SQL the plan computes, executed, equals the filtered, clamped sums over the rows; the answer's combination
  and its stated accuracy equal their closed forms (scipy's quantiles of the noise's law);
* what is refused, before any charge.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from scipy import stats
from sqlalchemy import Column, Float, Integer, MetaData, Table, create_engine, insert
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Engine

from privnoise.dp import DiscreteLaplace
from privnoise.dp.profile import profile_of
from privnoise.server.config import PolicySpec
from privnoise.server.planner import make_plan
from privnoise.server.querylang import QueryError, QuerySpec, parse_query, spec_from_json
from privnoise.server.steps import StepQueryRefused
from tests.server._plan_lab import (
    BOUNDS,
    REGIONS,
    ROWS,
    clamp,
    database,
    dataset,
    gaussian,
    gaussian_delta,
    laplace,
    scalar_sensitivity,
    selected,
    selection_threshold,
    slopes,
    vector_sensitivity,
)

F = Fraction
N = len(ROWS)
LEVEL = 0.95
G = Callable[[dict[str, float]], float]


@pytest.fixture(scope="module")
def db() -> tuple[Engine, Table]:
    return database()


def _plan(db: tuple[Engine, Table], query: str | QuerySpec, spec: Any, records: int = N) -> Any:
    engine, table = db
    q = parse_query(query) if isinstance(query, str) else query
    return make_plan(q, spec, table, records=records, dialect=engine.dialect)


def _rows(db: tuple[Engine, Table], plan: Any) -> list[tuple[Any, ...]]:
    with db[0].connect() as conn:
        return [tuple(r) for r in conn.exec_driver_sql(plan.sql, plan.parameters).all()]


def _clamped(row: dict[str, Any]) -> dict[str, float]:
    return {c: clamp(row[c], c) for c in BOUNDS}


def _where(q: QuerySpec) -> list[tuple[str, str, Any]]:
    return [(c.column, c.op, c.value) for c in q.where]


def _sorted_json(text: str) -> Any:
    """The JSON value of ``text``, whose every object has its keys in sorted order (as the ledger stores them)."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in items]
        assert keys == sorted(keys), text
        return dict(items)

    return json.loads(text, object_pairs_hook=pairs)


def _scale(noise: Any) -> float:
    return float(profile_of(noise.mechanism).scale)


def _check_noise(noise: Any, mechanism: str, sensitivity: float, epsilon: float, delta: float) -> float:
    """The noise gives (ε, δ) at ``sensitivity`` and is at most 2 % heavier than needed; its Fisher information."""
    scale = _scale(noise)
    if mechanism == "laplace":
        assert sensitivity / scale <= epsilon
        assert sensitivity / (scale / 1.02) > epsilon
        return 1.0 / scale**2
    assert gaussian_delta(scale, sensitivity, epsilon) <= delta
    assert gaussian_delta(scale / 1.02, sensitivity, epsilon) > delta
    return 1.0 / scale**2


def _x(c: str) -> G:
    return lambda r: r[c]


def _one(r: dict[str, float]) -> float:
    return 1.0


def _centred(c: str, power: int = 1) -> G:
    """(x − m)^power, m the middle of the declared bounds: the sums of a mean and a variance are centred."""
    middle = sum(BOUNDS[c]) / 2.0
    return lambda r: (r[c] - middle) ** power


# (name, g(record), columns) of each component, in the documented order
SCALAR: dict[str, list[tuple[str, G, tuple[str, ...]]]] = {
    "count()": [("count", _one, ())],
    "count() where region = 'north' and y <= 1": [("count", _one, ())],
    "sum(x)": [("sum", _x("x"), ("x",))],
    "sum(y) where x >= 30 and region != 'south'": [("sum", _x("y"), ("y",))],
    "sum(z) where x < 40": [("sum", _x("z"), ("z",))],
    "mean(x) where y > 0": [("sum", _centred("x"), ("x",)), ("count", _one, ())],
    "mean(z) where x = 29": [("sum", _centred("z"), ("z",)), ("count", _one, ())],
    "variance(y)": [
        ("sum", _centred("y"), ("y",)),
        ("sum_of_squares", _centred("y", 2), ("y",)),
        ("count", _one, ()),
    ],
    "variance(x) where region = 'east'": [
        ("sum", _centred("x"), ("x",)),
        ("sum_of_squares", _centred("x", 2), ("x",)),
        ("count", _one, ()),
    ],
    "variance(s) where t > -3": [
        ("sum", _centred("s"), ("s",)),
        ("sum_of_squares", _centred("s", 2), ("s",)),
        ("count", _one, ()),
    ],
    "variance(z)": [
        ("sum", _centred("z"), ("z",)),
        ("sum_of_squares", _centred("z", 2), ("z",)),
        ("count", _one, ()),
    ],
    "linear(2*x - 3*y)": [("sum", lambda r: 2 * r["x"] - 3 * r["y"], ("x", "y"))],
    "linear(-0.5*z + y) where z != -34": [("sum", lambda r: -0.5 * r["z"] + r["y"], ("y", "z"))],
    "linear(x + 0.25*x)": [("sum", lambda r: 1.25 * r["x"], ("x",))],
    "weighted_mean(x, w)": [
        ("weighted_sum", lambda r: r["w"] * r["x"], ("x", "w")),
        ("weight_sum", _x("w"), ("w",)),
    ],
    "weighted_mean(y, u) where x > 20": [
        ("weighted_sum", lambda r: r["u"] * r["y"], ("u", "y")),
        ("weight_sum", _x("u"), ("u",)),
    ],
    "weighted_mean(z, w)": [
        ("weighted_sum", lambda r: r["w"] * r["z"], ("w", "z")),
        ("weight_sum", _x("w"), ("w",)),
    ],
}


@pytest.mark.parametrize("family", ["laplace", "gaussian"])
@pytest.mark.parametrize("text", list(SCALAR))
def test_scalar_plans_against_brute_force_and_the_rows(
    db: tuple[Engine, Table], text: str, family: str
) -> None:
    spec = dataset(laplace if family == "laplace" else gaussian)
    q = parse_query(text)
    plan = _plan(db, q, spec)
    policy = spec.policies[q.kind]
    expected = SCALAR[text]
    share = len(expected)
    eps, delta = float(policy.epsilon) / share, float(policy.delta or 0) / share
    assert [c.name for c in plan.components] == [name for name, _, _ in expected]
    information: dict[str, float] = {}
    for component, (_, g, columns) in zip(plan.components, expected, strict=True):
        assert component.dim == 1
        sensitivity = scalar_sensitivity(g, columns)
        assert component.noise.sensitivity == pytest.approx(sensitivity, rel=1e-12)
        assert component.slopes == pytest.approx(slopes(g, columns), rel=1e-9)
        info = _check_noise(component.noise, family, sensitivity, eps, delta)
        if text.startswith(("count", "histogram")) and family == "laplace":  # a released count: discrete Laplace on ℤ
            assert isinstance(component.noise.mechanism, DiscreteLaplace) and component.noise.grid == 1.0
            assert component.information is None and not component.slopes  # it reads no column
            continue
        assert component.information == pytest.approx(info, rel=1e-12)
        for c, s in component.slopes.items():
            information[c] = information.get(c, 0.0) + s * s * info
    # one charge of the policy's (ε, δ); the information per column, never below the exact sum
    assert plan.charge.epsilon == policy.epsilon and plan.charge.delta == (policy.delta or 0)
    assert plan.charge.label == family
    assert set(plan.charge.information) == set(information)
    for c, value in information.items():
        assert float(plan.charge.information[c]) == pytest.approx(value, rel=1e-12)
    floats = {c: float(v) for c, v in plan.charge.information.items()}
    assert plan.charged == {
        "epsilon": str(policy.epsilon),
        "delta": str(policy.delta or 0),
        "fisher_information": floats,
    }
    assert _sorted_json(plan.ledger_information) == floats
    assert (
        plan.query == q.on("d")
        and plan.query_dict == {**q.on("d").as_dict()}
        and plan.query_dict["dataset"] == "d"
    )
    assert _sorted_json(plan.ledger_query) == plan.query_dict
    assert plan.policy is policy and plan.spec is spec
    assert (plan.records, plan.identity, plan.inline, plan.keys, plan.selection, plan.quantile) == (
        None,
        False,
        True,
        None,
        None,
        None,
    )
    guarantee = plan.guarantee()
    assert guarantee["epsilon"] == float(policy.epsilon) and guarantee["delta"] == float(policy.delta or 0)
    assert guarantee["adjacency"] == "one record added, removed or replaced"
    assert guarantee["composition"].startswith(f"{share} hardened")
    assert guarantee["per_record_information"] == floats
    # the statement: Σ over the records passing the filter of g(clamped record), and the number of records
    rows = [_clamped(r) for r in ROWS if selected(r, _where(q))]
    truth = [sum(g(r) for r in rows) for _, g, _ in expected]
    (got,) = _rows(db, plan)
    assert got[-1] == N
    assert list(got[:-1]) == pytest.approx(truth, rel=1e-12, abs=1e-9)
    assert plan.split(list(got[:-1])) == pytest.approx(truth, rel=1e-12, abs=1e-9)


def test_duplicate_coefficients_add_up(db: tuple[Engine, Table]) -> None:
    # a spec with a column twice (the parser merges them; a QuerySpec need not): the slope adds up, and the
    # sensitivity is the interval arithmetic of the terms (each term's own range), at least the brute force
    q = QuerySpec("linear", coefficients=(("x", 2.0), ("y", -1.0), ("x", -0.5)))
    plan = _plan(db, q, dataset(laplace))
    (component,) = plan.components

    def g(r: dict[str, float]) -> float:
        return 1.5 * r["x"] - r["y"]

    def terms(r: dict[str, float]) -> float:  # the two x terms at independent values of the box
        return 2.0 * r["x"] - r["y"] - 0.5 * r["w2"]

    assert component.noise.sensitivity >= scalar_sensitivity(g, ("x", "y"))
    BOUNDS["w2"] = BOUNDS["x"]
    try:
        assert component.noise.sensitivity == pytest.approx(
            scalar_sensitivity(terms, ("x", "y", "w2")), rel=1e-12
        )
    finally:
        del BOUNDS["w2"]
    assert component.slopes == pytest.approx({"x": 1.5, "y": 1.0}, rel=1e-12)
    (got,) = _rows(db, plan)
    assert got[0] == pytest.approx(sum(g(_clamped(r)) for r in ROWS), rel=1e-12)


def test_a_weight_column_from_zero_is_accepted_and_below_zero_refused(db: tuple[Engine, Table]) -> None:
    spec = dataset(laplace)
    assert [c.name for c in _plan(db, "weighted_mean(x, u)", spec).components] == [
        "weighted_sum",
        "weight_sum",
    ]
    with pytest.raises(QueryError, match="bounds ≥ 0"):
        _plan(db, "weighted_mean(x, v)", spec)


# --- combination of the noisy components -----------------------------------------------------------------------


def test_combinations_of_exact_components_are_the_statistics_of_the_rows(db: tuple[Engine, Table]) -> None:
    spec = dataset(laplace)
    xs = [clamp(r["x"], "x") for r in ROWS]
    ys = [clamp(r["y"], "y") for r in ROWS]
    ws = [clamp(r["w"], "w") for r in ROWS]

    def answer(text: str) -> Any:
        plan = _plan(db, text, spec)
        (got,) = _rows(db, plan)
        return plan.combine(plan.split(list(got[:-1])))

    assert answer("count()") == N
    assert answer("sum(y)") == pytest.approx(sum(ys))
    assert answer("linear(2*x - 3*y)") == pytest.approx(2 * sum(xs) - 3 * sum(ys))
    assert answer("mean(x)") == pytest.approx(np.mean(xs))
    assert answer("variance(y)") == pytest.approx(np.var(ys, ddof=1))
    assert answer("variance(x)") == pytest.approx(np.var(xs, ddof=1))
    assert answer("weighted_mean(x, w)") == pytest.approx(np.average(xs, weights=ws))


def test_combinations_clip_to_what_the_answer_can_be(db: tuple[Engine, Table]) -> None:
    spec = dataset(laplace)

    def combine(text: str) -> Callable[[list[Any]], Any]:
        return _plan(db, text, spec).combine

    assert combine("count()")([-3.0]) == 0.0 and combine("count()")([0.0]) == 0.0
    assert combine("count()")([2.5]) == 2.5
    assert combine("sum(z)")([-7.5]) == -7.5 and combine("linear(2*x - y)")([-1.25]) == -1.25
    mean = combine("mean(x)")  # c + Σ(x − c)/N̂, c = 35 the middle of x's declared [10, 60]
    assert mean([-15.0, 3.0]) == 30.0
    assert mean([-5.0, 0.5]) == 30.0 and mean([-5.0, -2.0]) == 30.0  # the count is at least 1
    assert mean([-5.0, 1.0]) == 30.0 and mean([-7.5, 1.5]) == 30.0
    assert mean([1000.0, 2.0]) == 60.0 and mean([-100.0, 2.0]) == 10.0  # clipped to the declared bounds
    variance = combine("variance(y)")  # the declared range [-5, 3]: a variance in [0, 16]
    s1, s2 = 2.0, 14.0
    for n in (2.0, 3.0, 7.5):
        assert variance([s1, s2, n]) == pytest.approx((s2 - s1 * s1 / n) / (n - 1.0))
    for n in (1.9, 1.0, -4.0):  # the count is at least 2
        assert variance([s1, s2, n]) == pytest.approx(s2 - s1 * s1 / 2.0)
    assert variance([0.0, -5.0, 4.0]) == 0.0 and variance([0.0, 500.0, 4.0]) == 16.0
    assert variance([0.0, 48.0, 4.0]) == 16.0 and variance([0.0, 47.0, 4.0]) == pytest.approx(47.0 / 3.0)
    weighted = combine("weighted_mean(x, w)")
    assert weighted([50.0, 2.0]) == 25.0 and weighted([50.0, 0.5]) == 60.0 and weighted([1.0, 0.5]) == 10.0
    assert weighted([50.0, 0.0]) == 35.0 and weighted([50.0, -1.0]) == 35.0  # no weight: the centre
    assert weighted([5.0, 1e-3]) == 60.0


# --- identity and Fisher policies -------------------------------------------------------------------------------


def _fisher(mechanism: str) -> Callable[[str], PolicySpec]:
    if mechanism == "fisher-gaussian":
        return lambda kind: PolicySpec(kind, mechanism, quality=0.5)
    return lambda kind: PolicySpec(kind, mechanism, half_width=0.75)


def _fisher_information(mechanism: str) -> float:
    """𝓘 of one coordinate: Gaussian of variance Q, 1/Q; cos² on [−h, h], π²/h²."""
    return 1.0 / 0.5 if mechanism == "fisher-gaussian" else math.pi**2 / 0.75**2


@pytest.mark.parametrize("family", ["laplace", "gaussian"])
def test_identity_releases_every_clamped_record_in_order(db: tuple[Engine, Table], family: str) -> None:
    spec = dataset(laplace if family == "laplace" else gaussian)
    plan = _plan(db, "identity(y)", spec)
    (component,) = plan.components
    lo, hi = BOUNDS["y"]
    # neighbours replace one record: one coordinate moves by at most hi − lo
    assert component.name == "values" and component.noise.sensitivity == hi - lo and component.dim == 1
    # Laplace: one scalar law per record (the exact sum snapped); Gaussian: the hardened σ²·I over the records
    assert component.noise.shape == ((N,) if family == "gaussian" else ()) and component.slopes == {"y": 1.0}
    policy = spec.policies["identity"]
    info = _check_noise(component.noise, family, hi - lo, float(policy.epsilon), float(policy.delta or 0))
    assert float(plan.charge.information["y"]) == pytest.approx(info, rel=1e-12)
    assert plan.charge.epsilon == policy.epsilon
    assert (plan.identity, plan.records) == (True, N)
    assert plan.guarantee()["adjacency"] == "one record replaced"
    got = _rows(db, plan)
    assert [v for (v,) in got] == [clamp(r["y"], "y") for r in sorted(ROWS, key=lambda r: r["pn_row"])]
    assert plan.combine([np.array([1.0, 2.0])]).tolist() == [1.0, 2.0]


@pytest.mark.parametrize("family", ["laplace", "gaussian"])
def test_identity_noise_pays_the_rounding_of_one_record_not_of_every_record(db: tuple[Engine, Table],
                                                                            family: str) -> None:
    # a replaced record moves one coordinate: its rounding to the grid adds one Λ to the sensitivity, whatever the
    # number of records (noise calibrated for 10⁵ moved coordinates would be tens of times heavier); Laplace noise
    # is added to the exact value and the sum snapped, which adds no rounding term at all
    spec = dataset(laplace if family == "laplace" else gaussian)
    (component,) = _plan(db, "identity(y)", spec, records=100_000).components
    lo, hi = BOUNDS["y"]
    policy = spec.policies["identity"]
    if family == "gaussian":
        assert component.noise.shape == (100_000,) and component.noise.coordinates == 1
    else:
        assert component.noise.shape == () and component.noise.privacy_profile().epsilon_fraction(hi - lo) == F(
            hi - lo) / F(float(component.noise.mechanism.scale))
    _check_noise(component.noise, family, hi - lo, float(policy.epsilon), float(policy.delta or 0))


def test_identity_of_no_records_is_refused(db: tuple[Engine, Table]) -> None:
    with pytest.raises(QueryError, match="no records"):
        _plan(db, "identity(y)", dataset(laplace), records=0)
    assert _plan(db, "identity(y)", dataset(laplace), records=1).records == 1


@pytest.mark.parametrize("mechanism", ["fisher-gaussian", "fisher-cosine"])
def test_fisher_plans_charge_slope_squared_information_and_no_epsilon(
    db: tuple[Engine, Table], mechanism: str
) -> None:
    spec = dataset(_fisher(mechanism), kinds=("sum", "mean", "linear", "identity"))
    info = _fisher_information(mechanism)
    lo, hi = BOUNDS["x"]
    for records in (N, 40):
        plan = _plan(db, "mean(x)", spec, records=records)
        (component,) = plan.components
        # n public: neighbours replace one record, the mean moves by at most (hi − lo)/n, its slope is 1/n
        assert component.name == "mean" and component.dim == 1
        assert component.noise.sensitivity == pytest.approx((hi - lo) / records, rel=1e-12)
        assert component.slopes == pytest.approx({"x": 1.0 / records}, rel=1e-12)
        assert component.information == pytest.approx(info, rel=1e-9)
        assert (plan.charge.epsilon, plan.charge.delta, plan.charge.label) == (0, 0, mechanism)
        assert float(plan.charge.information["x"]) == pytest.approx(info / records**2, rel=1e-9)
        assert plan.records == records and plan.guarantee()["notion"] == "fisher-information"
        (got,) = _rows(db, plan)
        assert got[0] == pytest.approx(sum(clamp(r["x"], "x") for r in ROWS) / records, rel=1e-12)
        assert plan.combine([7.5]) == 7.5
    plan = _plan(db, "mean(x)", spec, records=0)  # no records: n counts as 1
    assert plan.components[0].noise.sensitivity == hi - lo and plan.records == 0
    plan = _plan(db, "linear(2*x - y)", spec)
    assert float(plan.charge.information["x"]) == pytest.approx(4 * info, rel=1e-9)
    assert float(plan.charge.information["y"]) == pytest.approx(info, rel=1e-9)
    assert _plan(db, "sum(z)", spec).records is None
    plan = _plan(db, "identity(z)", spec)
    assert plan.components[0].noise.shape == (N,) and float(plan.charge.information["z"]) == pytest.approx(
        info
    )
    with pytest.raises(QueryError, match="unfiltered"):
        _plan(db, "sum(x) where y > 0", spec)


# --- refusals -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("sum(nope)", "not a declared column"),
        ("count() where nope = 1", "not a declared column"),
        ("sum(region)", "not a declared numeric column"),
        ("count() where region = 3", "compare it with a text literal"),
        ("count() where x = 'a'", "compare it with a number literal"),
        ("count() where free < 'b' and x > 'a'", "compare it with a number literal"),
    ],
)
def test_malformed_queries_are_refused(db: tuple[Engine, Table], text: str, message: str) -> None:
    with pytest.raises(QueryError, match=message):
        _plan(db, text, dataset(laplace))


def test_a_kind_without_a_policy_is_refused(db: tuple[Engine, Table]) -> None:
    spec = dataset(laplace, kinds=("count",))
    with pytest.raises(QueryError, match="does not answer sum queries"):
        _plan(db, "sum(x)", spec)


@pytest.mark.parametrize(
    "text", ["histogram(x, bins = [10, 20])", "count() group by region", "quantile(x, 0.5)"]
)
def test_vectors_and_quantiles_are_refused_on_dask(db: tuple[Engine, Table], text: str) -> None:
    with pytest.raises(QueryError, match="computed on Dask"):
        _plan(db, text, dataset(laplace, engine="dask"))


def test_scalar_answers_on_dask_are_never_inline(db: tuple[Engine, Table]) -> None:
    assert _plan(db, "sum(x)", dataset(laplace, engine="dask")).inline is False
    assert _plan(db, "sum(x)", dataset(laplace), records=5000).inline is True
    assert _plan(db, "sum(x)", dataset(laplace), records=5001).inline is False


@pytest.mark.parametrize("text", ["histogram(x, bins = [10, 20])", "sum(x) group by region"])
def test_vectors_need_laplace_or_gaussian_noise(db: tuple[Engine, Table], text: str) -> None:
    spec = dataset(lambda k: PolicySpec(k, "custom", epsilon=F(1), factory="tests.server._failing:build"))
    with pytest.raises(QueryError, match="answered with gaussian, laplace noise"):
        _plan(db, text, spec)


@pytest.mark.parametrize(
    "text",
    ["count() where g > 3", "histogram(g, bins = [0, 5, 10])", "quantile(g, 0.5)", "sum(x) where g = 1"],
)
def test_step_queries_on_a_floored_column_are_refused(db: tuple[Engine, Table], text: str) -> None:
    with pytest.raises(StepQueryRefused, match="column 'g' has a Fisher floor"):
        _plan(db, text, dataset(laplace))


def test_allowed_step_queries_are_kept_in_the_plan(db: tuple[Engine, Table]) -> None:
    spec = dataset(laplace)
    assert _plan(db, "count() where f > 3", spec).steps == (("f", "a `where` condition on it (f > …)"),)
    assert _plan(db, "quantile(f, 0.5)", spec).steps == (("f", "a quantile of it"),)
    assert _plan(db, "histogram(f, bins = [0, 5, 10])", spec).steps == (("f", "histogram bins over it"),)
    assert _plan(db, "sum(f)", spec).steps == ()


# --- vectors --------------------------------------------------------------------------------------------------


def _cells(column: str, keys: list[Any], where: list[tuple[str, str, Any]]) -> list[list[dict[str, float]]]:
    """The clamped records of each cell (a key of a text column, or a bin [a, b) of a numeric column, the last
    closed, values clamped to the declared bounds, then to the first and last edges), among the records passing
    ``where``."""
    out: list[list[dict[str, float]]] = [[] for _ in keys]
    first, last_edge = (keys[0][0], keys[-1][1]) if isinstance(keys[0], tuple) else (None, None)
    for row in ROWS:
        if not selected(row, where):
            continue
        for i, key in enumerate(keys):
            if isinstance(key, tuple):
                a, b, last = key
                v = min(max(clamp(row[column], column), first), last_edge)
                inside = a <= v <= b if last else a <= v < b
            else:
                inside = row[column] == key
            if inside:
                out[i].append(_clamped(row))
    return out


VECTORS: dict[str, tuple[str, list[Any], list[tuple[str, G, tuple[str, ...]]]]] = {
    "histogram(x, bins = [0, 20, 35, 50])": (
        "x",
        [(0.0, 20.0, False), (20.0, 35.0, False), (35.0, 50.0, True)],
        [("count", _one, ())],
    ),
    "histogram(y, bins = [-5, 0, 3]) where region != 'east'": (
        "y",
        [(-5.0, 0.0, False), (0.0, 3.0, True)],
        [("count", _one, ())],
    ),
    "histogram(x, bins = [0, 10, 35, 70])": (  # an edge at the lower bound: bins of the clamped value
        "x",
        [(0.0, 10.0, False), (10.0, 35.0, False), (35.0, 70.0, True)],
        [("count", _one, ())],
    ),
    "histogram(region) where x <= 50": ("region", list(REGIONS), [("count", _one, ())]),
    "count() where y >= -2 group by region": ("region", list(REGIONS), [("count", _one, ())]),
    "sum(y) group by region": ("region", list(REGIONS), [("sum", _x("y"), ("y",))]),
    "sum(x) group by region": ("region", list(REGIONS), [("sum", _x("x"), ("x",))]),
    "mean(z) where x < 50 group by region": (
        "region",
        list(REGIONS),
        [("sum", _centred("z"), ("z",)), ("count", _one, ())],
    ),
}
LABELS = {
    "histogram(x, bins = [0, 20, 35, 50])": ("[0, 20)", "[20, 35)", "[35, 50]"),
    "histogram(y, bins = [-5, 0, 3]) where region != 'east'": ("[-5, 0)", "[0, 3]"),
    "histogram(x, bins = [0, 10, 35, 70])": ("[0, 10)", "[10, 35)", "[35, 70]"),
}


@pytest.mark.parametrize("family", ["laplace", "gaussian"])
@pytest.mark.parametrize("text", list(VECTORS))
def test_vector_plans_against_brute_force_and_the_rows(
    db: tuple[Engine, Table], text: str, family: str
) -> None:
    spec = dataset(laplace if family == "laplace" else gaussian)
    q = parse_query(text)
    plan = _plan(db, q, spec)
    policy = spec.policies[q.kind]
    column, keys, expected = VECTORS[text]
    share = len(expected)
    eps, delta = float(policy.epsilon) / share, float(policy.delta or 0) / share
    assert plan.keys == LABELS.get(text, tuple(keys)) and plan.selection is None
    assert [c.name for c in plan.components] == [name for name, _, _ in expected]
    information: dict[str, float] = {}
    for component, (_, g, columns) in zip(plan.components, expected, strict=True):
        assert component.dim == len(keys)
        if family == "gaussian":  # hardened: the rounding of the two cells a replaced record moves is paid
            assert component.noise.shape == (len(keys),) and component.noise.coordinates == min(len(keys), 2)
        else:  # the exact sum snapped: one scalar law per cell, no rounding term
            assert component.noise.shape == ()
        norm = "l1" if family == "laplace" else "l2"
        sensitivity = vector_sensitivity(g, columns, len(keys), norm)
        assert component.noise.sensitivity == pytest.approx(sensitivity, rel=1e-12)
        assert component.slopes == pytest.approx(slopes(g, columns), rel=1e-9)
        info = _check_noise(component.noise, family, sensitivity, eps, delta)
        if text.startswith(("count", "histogram")) and family == "laplace":  # a released count: discrete Laplace on ℤ
            assert isinstance(component.noise.mechanism, DiscreteLaplace) and component.noise.grid == 1.0
            assert component.information is None and not component.slopes  # it reads no column
            continue
        assert component.information == pytest.approx(info, rel=1e-12)
        for c, s in component.slopes.items():
            information[c] = information.get(c, 0.0) + s * s * info
    assert plan.charge.epsilon == policy.epsilon and plan.charge.delta == (policy.delta or 0)
    assert {c: float(v) for c, v in plan.charge.information.items()} == pytest.approx(information, rel=1e-12)
    assert plan.guarantee()["composition"].startswith(f"{share} hardened")
    cells = _cells(column, keys, [(c.column, c.op, c.value) for c in q.where])
    truth = [[sum(g(r) for r in cell) for cell in cells] for _, g, _ in expected]
    (got,) = _rows(db, plan)
    assert got[-1] == N
    values = plan.split(list(got[:-1]))
    for v, t in zip(values, truth, strict=True):
        assert v.tolist() == pytest.approx(t, rel=1e-12, abs=1e-9)
    answer = plan.combine(values)
    if q.kind == "mean":
        centre = sum(BOUNDS["z"]) / 2.0  # the sums are of z − c
        means = [
            min(max(centre + s / max(n, 1.0), BOUNDS["z"][0]), BOUNDS["z"][1]) for s, n in zip(*truth, strict=True)
        ]
        assert answer.tolist() == pytest.approx(means)
    else:
        assert answer.tolist() == pytest.approx(truth[0])


def test_vector_combinations_clip(db: tuple[Engine, Table]) -> None:
    spec = dataset(laplace)
    counts = _plan(db, "histogram(region)", spec).combine([np.array([-2.0, 0.0, 3.5, 1.0])])
    assert counts.tolist() == [0.0, 0.0, 3.5, 1.0]
    means = _plan(db, "mean(x) group by region", spec).combine(
        [np.array([-15.0, -5.0, -30.0, -7.5]), np.array([3.0, 0.2, 1.0, 1.5])]  # Σ(x − 35) per cell
    )
    assert means.tolist() == [30.0, 30.0, 10.0, 30.0]


# --- group by undeclared keys: partition selection --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "names", "counted_share"),
    [
        ("count() group by free", ["count"], 1),
        ("sum(x) where y > -3 group by free", ["sum", "count"], 2),
        ("mean(y) group by free", ["sum", "count"], 2),
    ],
)
def test_partition_selection_plans(
    db: tuple[Engine, Table], text: str, names: list[str], counted_share: int
) -> None:
    epsilon, delta, partition = F(1), F(1, 10**7), F(1, 10**6)
    spec = dataset(lambda k: laplace(k, epsilon, delta=delta, partition_delta=partition))
    q = parse_query(text)
    plan = _plan(db, q, spec)
    selection = plan.selection
    assert selection is not None and selection.column == "free" and plan.keys is None
    assert [c.name for c in plan.components] == names
    # the counts use ε₀ = ε/k − log(1/(1 − δ)) (k: 1 for a count, 2 when sums come too), two cells change at most
    eps0 = float(epsilon) / counted_share + math.log1p(-float(partition))
    assert selection.count_epsilon == pytest.approx(eps0, rel=1e-12) and selection.count_epsilon < eps0
    assert selection.delta == float(partition)
    for component in plan.components:
        assert component.noise.shape == () and component.dim == 2  # one scalar law per cell (the exact sum snapped)
        if component.name == "count":
            assert component.noise.sensitivity == 2.0
            _check_noise(component.noise, "laplace", 2.0, selection.count_epsilon, 0.0)
            count_noise = component.noise
        else:
            lo, hi = BOUNDS[q.column or ""]
            top = (hi - lo) / 2.0 if q.kind == "mean" else max(abs(lo), abs(hi))  # a mean's sums are centred
            assert component.noise.sensitivity == 2.0 * top
            _check_noise(component.noise, "laplace", 2.0 * top, float(epsilon) / 2, 0.0)
    assert selection.threshold == selection_threshold(_scale(count_noise), float(partition)) + math.ceil(
        count_noise.grid
    )
    assert plan.charge.epsilon == epsilon and plan.charge.delta == delta + partition
    assert plan.charged["delta"] == str(delta + partition)
    # one row per stored key (NULL too), each aggregating its records with the filter as a weight
    got = _rows(db, plan)
    where = _where(q)
    keys = sorted({r["free"] for r in ROWS}, key=lambda k: (k is not None, k or ""))
    assert sorted(got, key=lambda r: (r[0] is not None, r[0] or "")) == [
        (
            key,
            *(
                (
                    [
                        sum(
                            clamp(r[q.column], q.column) - (sum(BOUNDS[q.column]) / 2.0 if q.kind == "mean" else 0.0)
                            for r in ROWS
                            if r["free"] == key and selected(r, where)
                        )
                    ]
                    if q.column
                    else []
                )
                + ([float(sum(1 for r in ROWS if r["free"] == key and selected(r, where)))])
            ),
            sum(1 for r in ROWS if r["free"] == key),
        )
        for key in keys
    ]


def test_partition_selection_without_a_delta_of_its_own(db: tuple[Engine, Table]) -> None:
    spec = dataset(lambda k: laplace(k, F(1), partition_delta=F(1, 10**6)))
    plan = _plan(db, "count() group by free", spec)
    assert plan.charge.delta == F(1, 10**6)
    # declared keys need no selection, and charge no partition δ
    plan = _plan(db, "count() group by region", spec)
    assert plan.selection is None and plan.keys == REGIONS and plan.charge.delta == 0
    with pytest.raises(QueryError, match="declare `categories"):
        _plan(db, "count() group by free", dataset(laplace))


# --- quantiles ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("short", "long"),
    [("median(y)", "quantile(y, 0.5)"), ("MEDIAN(x) where y < 1", "quantile(x, 0.5) where y < 1")],
)
def test_a_median_is_planned_as_the_quantile_at_one_half(db: tuple[Engine, Table], short: str, long: str) -> None:
    spec = dataset(laplace)
    median, quantile = _plan(db, short, spec), _plan(db, long, spec)
    assert median.query == quantile.query and median.charge == quantile.charge and median.sql == quantile.sql
    assert vars(median.quantile) == vars(quantile.quantile) and median.guarantee() == quantile.guarantee()
    assert spec_from_json({"kind": "median", "column": "y"}) == parse_query("quantile(y, 0.5)")


@pytest.mark.parametrize("text", ["median(y, 0.3)", "median()", "median(q = 0.5)", "median(*)"])
def test_a_median_takes_its_column_alone(text: str) -> None:
    with pytest.raises(QueryError, match="median takes one argument"):
        parse_query(text)
    with pytest.raises(QueryError, match="`levels` is fixed"):
        spec_from_json({"kind": "median", "column": "y", "levels": [0.3]})


@pytest.mark.parametrize(
    ("text", "levels"), [("quantile(y, 0.5)", 1), ("quantile(x, [0.1, 0.5, 0.9]) where y < 1", 3)]
)
def test_quantile_plans(db: tuple[Engine, Table], text: str, levels: int) -> None:
    spec = dataset(laplace)
    q = parse_query(text)
    plan = _plan(db, q, spec)
    release = plan.quantile
    lo, hi = BOUNDS[q.column or ""]
    # Λ: the largest power of two with at least 2^14 steps across the bounds; the grid points inside them
    step = 2.0 ** math.floor(math.log2((hi - lo) / 2**14))
    candidates = math.floor(hi / step) - math.ceil(lo / step) + 1
    assert (release.step, release.candidates, release.levels) == (step, candidates, q.levels)
    assert release.epsilon_each == pytest.approx(0.75 / levels, rel=1e-15)
    assert (plan.charge.epsilon, plan.charge.delta, plan.charge.information) == (F(3, 4), 0, {})
    assert plan.charge.label == "exponential"
    assert plan.components == [] and plan.combine(1.5) == 1.5 and plan.query == q.on("d")
    assert plan.spec is spec and plan.policy is spec.policies["quantile"]
    assert (plan.inline, plan.records, plan.identity, plan.steps) == (False, None, False, ())
    assert plan.charged == {"epsilon": "3/4", "delta": "0", "fisher_information": {}}
    assert plan.ledger_information == "{}"
    assert _sorted_json(plan.ledger_query) == q.on("d").as_dict()
    assert plan.query_dict == q.on("d").as_dict()
    guarantee = plan.guarantee()
    assert guarantee == {
        "notion": "differential-privacy",
        "epsilon": 0.75,
        "delta": 0.0,
        "epsilon_exact": "3/4",
        "delta_exact": "0",
        "adjacency": "one record added, removed or replaced",
        "composition": f"{levels} exponential-mechanism selection(s), ε split evenly",
        "mechanism": {
            "family": "exponential",
            "grid": step,
            "candidates": candidates,
            "epsilon_each": 0.75 / levels,
            "score_sensitivity": 1.0,
        },
        "per_record_information": {},
    }
    # the rank radius: 2Δ/ε · log((C − 1)/(1 − level)) with Δ = 1 (one record added, removed or replaced)
    radius = 2.0 / (0.75 / levels) * math.log((candidates - 1) / (1 - LEVEL))
    accuracy = plan.stated_accuracy(None)
    assert accuracy["level"] == LEVEL
    assert accuracy["rank_radius"] == (
        pytest.approx(radius) if levels == 1 else pytest.approx([radius] * levels)
    )
    # every record's clamped value and its filter weight
    where = _where(q)
    got = _rows(db, plan)
    assert got == [(clamp(r[q.column], q.column), float(selected(r, where))) for r in ROWS]


# --- accuracy -----------------------------------------------------------------------------------------------------


def _radius(noise: Any, family: str) -> float:
    """The 95 % radius of the noise's error: the continuous law's quantile plus the grid step (two roundings)."""
    scale = _scale(noise)
    law = stats.laplace(scale=scale) if family == "laplace" else stats.norm(scale=scale)
    return float(law.ppf(0.5 + LEVEL / 2)) + noise.grid


@pytest.mark.parametrize("family", ["laplace", "gaussian"])
def test_stated_intervals_are_the_noise_quantiles_cut_to_the_range(
    db: tuple[Engine, Table], family: str
) -> None:
    spec = dataset(laplace if family == "laplace" else gaussian)

    def interval(text: str, noisy: list[Any]) -> tuple[Any, Any, float]:
        plan = _plan(db, text, spec)
        r = _radius(plan.components[0].noise, family)
        out = plan.stated_accuracy(noisy)
        assert out["level"] == LEVEL and out["coverage"] == LEVEL
        return out["low"], out["high"], r

    low, high, r = interval("count()", [20.0])
    assert (low, high) == (pytest.approx(20.0 - r), pytest.approx(20.0 + r))
    low, high, r = interval("count()", [5.0])
    assert (low, high) == (0.0, pytest.approx(5.0 + r)) and 5.0 - r < 0  # cut at 0
    low, high, r = interval("count()", [-1000.0])
    assert (low, high) == (0.0, 0.0)
    low, high, r = interval("sum(x)", [-2.0])  # a sum of x ∈ [10, 60] is ≥ 0
    assert (low, high) == (0.0, pytest.approx(r - 2.0))
    low, high, r = interval("sum(u)", [-2.0])  # u ∈ [0, 4]: ≥ 0 still
    assert (low, high) == (0.0, pytest.approx(r - 2.0))
    low, high, r = interval("sum(z)", [2.0])  # z ∈ [−60, −10]: ≤ 0
    assert (low, high) == (pytest.approx(2.0 - r), 0.0)
    low, high, r = interval("sum(y)", [2.0])  # y ∈ [−5, 3]: no cut
    assert (low, high) == (pytest.approx(2.0 - r), pytest.approx(2.0 + r))
    low, high, r = interval("linear(2*x - y)", [-3.0])
    assert (low, high) == (pytest.approx(-3.0 - r), pytest.approx(-3.0 + r))
    low, high, r = interval("identity(y)", [np.array([-100.0, 0.0] + [2.5] * (N - 2))])
    for i, v in enumerate([-100.0, 0.0, 2.5]):  # cut to the declared bounds [−5, 3]
        assert (low[i], high[i]) == (
            pytest.approx(min(max(v - r, -5.0), 3.0)),
            pytest.approx(min(max(v + r, -5.0), 3.0)),
        )
    low, high, r = interval("histogram(region)", [np.array([-1000.0, 1.0, 2.0, 3.0])])
    assert low == [
        0.0,
        pytest.approx(max(1.0 - r, 0.0)),
        pytest.approx(max(2.0 - r, 0.0)),
        pytest.approx(max(3.0 - r, 0.0)),
    ]
    assert high == [0.0, pytest.approx(1.0 + r), pytest.approx(2.0 + r), pytest.approx(3.0 + r)]


def test_sum_intervals_cut_at_zero_exactly_when_a_bound_is_zero(db: tuple[Engine, Table]) -> None:
    spec = dataset(laplace)
    for column, noisy, cut in [("t", 1.0, (None, 0.0)), ("s", 1.0, (None, None)), ("s", -1.0, (None, None))]:
        plan = _plan(db, f"sum({column})", spec)  # t ∈ [−4, 0]: a sum ≤ 0; s ∈ [−0.5, 0.5]: no cut
        r = _radius(plan.components[0].noise, "laplace")
        out = plan.stated_accuracy([noisy])
        low = noisy - r if cut[0] is None else cut[0]
        high = noisy + r if cut[1] is None else cut[1]
        assert (out["low"], out["high"]) == (pytest.approx(low), pytest.approx(high))


def test_ratio_and_variance_intervals_lie_in_the_declared_range(db: tuple[Engine, Table]) -> None:
    spec = dataset(laplace)
    for text, column in [("mean(x)", "x"), ("weighted_mean(y, w)", "y"), ("mean(z) group by region", "z")]:
        plan = _plan(db, text, spec)
        lo, hi = BOUNDS[column]
        s, n = (
            (np.array([300.0, 20.0, 5e4, -2e4]), np.array([10.0, 0.5, 1e3, 1e3]))
            if "group" in text
            else (300.0 * (1 if column == "x" else -0.05), 10.0)
        )
        out = plan.stated_accuracy([s, n])
        assert out["level"] == LEVEL
        low, high = np.asarray(out["low"]), np.asarray(out["high"])
        assert np.all(lo <= low) and np.all(low <= high) and np.all(high <= hi)
        centre = (lo + hi) / 2.0 if text.startswith("mean") else 0.0  # a mean's sums are centred
        ratio = np.clip(centre + np.asarray(s) / np.asarray(n), lo, hi)
        assert np.all(low <= ratio) and np.all(ratio <= high)
    plan = _plan(db, "variance(y)", spec)
    top = (BOUNDS["y"][1] - BOUNDS["y"][0]) ** 2 / 4.0
    out = plan.stated_accuracy([-6.0, 120.0, 12.0])
    assert 0.0 <= out["low"] <= out["high"] <= top
    assert _plan(db, "variance(y)", spec).stated_accuracy([0.0, 0.0, 0.5]) == {**out, "low": 0.0, "high": top}


@pytest.mark.parametrize("mechanism", ["fisher-gaussian", "fisher-cosine"])
def test_fisher_mean_intervals_are_cut_to_the_declared_bounds(
    db: tuple[Engine, Table], mechanism: str
) -> None:
    spec = dataset(_fisher(mechanism), kinds=("mean", "sum"))
    plan = _plan(db, "mean(x)", spec)
    out = plan.stated_accuracy([35.0])
    if mechanism == "fisher-cosine":
        assert out["available"] is False
        return
    sigma = math.sqrt(0.5) * (BOUNDS["x"][1] - BOUNDS["x"][0]) / N  # Q per record, scaled to the sensitivity
    assert _scale(plan.components[0].noise) > 0
    r = _radius(plan.components[0].noise, "gaussian")
    assert sigma > 0 and (out["low"], out["high"]) == (
        pytest.approx(max(35.0 - r, 10.0)),
        pytest.approx(min(35.0 + r, 60.0)),
    )
    out = plan.stated_accuracy([5.0])
    assert (out["low"], out["high"]) == (10.0, 10.0)


# --- the statement ------------------------------------------------------------------------------------------------


def test_an_empty_table_gives_zero_sums(db: tuple[Engine, Table]) -> None:
    engine = create_engine("sqlite://")
    meta = MetaData()
    table = db[1].to_metadata(meta)
    meta.create_all(engine)
    spec = dataset(laplace)
    for text, cells in [
        ("count() where x > 3", 1),
        ("mean(y) where region = 'north'", 2),
        ("linear(2*x - y)", 1),
        ("histogram(x, bins = [0, 20, 60])", 2),
        ("sum(x) group by region", 4),
    ]:
        plan = make_plan(parse_query(text), spec, table, records=0, dialect=engine.dialect)
        (got,) = _rows((engine, table), plan)
        assert got == (0.0,) * cells + (0,), text


@pytest.mark.parametrize(
    "text", ["count() where x > 3 and y <= 1", "mean(y) where f != 2", "histogram(x, bins = [0, 20, 60])"]
)
def test_numeric_conditions_do_the_same_work_either_way(db: tuple[Engine, Table], text: str) -> None:
    # constant work (indicators): a numeric condition is a sign() of a difference, never a CASE that jumps
    plan = _plan(db, text, dataset(laplace))
    assert "sign(" in plan.sql and "CASE" not in plan.sql.upper()
    with_text = _plan(
        db, text.replace("where", "where region = 'east' and") if "where" in text else text, dataset(laplace)
    )
    assert ("CASE" in with_text.sql.upper()) == ("where" in text)


def test_bins_inside_the_bounds_are_found_on_the_stored_value(db: tuple[Engine, Table]) -> None:
    # SQLite: internal edges strictly inside the declared bounds give the bins of the clamped value without
    # clamping (.cells; the rows of both are checked by test_vector_plans_against_brute_force_and_the_rows)
    inside = _plan(db, "histogram(x, bins = [0, 20, 35, 50])", dataset(laplace))
    at_bound = _plan(db, "histogram(x, bins = [0, 10, 35, 70])", dataset(laplace))
    assert "min(" not in inside.sql and "coalesce(" in inside.sql and "min(" in at_bound.sql
    pg = postgresql.psycopg.dialect()
    assert "least(" in make_plan(parse_query("histogram(x, bins = [0, 20, 35, 50])"), dataset(laplace), db[1],
                                 records=N, dialect=pg).sql


@pytest.mark.parametrize(
    "text",
    [
        "count() where x > 3",
        "variance(y)",
        "identity(x)",
        "quantile(x, 0.5) where y < 1",
        "sum(x) group by free",
        "histogram(x, bins = [0, 10, 60])",  # an edge at a bound: the value is clamped (.cells)
    ],
)
def test_the_statement_is_compiled_for_the_dialect(db: tuple[Engine, Table], text: str) -> None:
    engine, table = db
    spec = dataset(lambda k: laplace(k, partition_delta=F(1, 10**6)))
    plan = _plan(db, text, spec)
    # SQLite: positional ? parameters, the scalar max/min; the statement kept is the one compiled
    assert isinstance(plan.parameters, tuple) and "?" in plan.sql and "max(" in plan.sql
    assert str(plan.statement.compile(dialect=engine.dialect)) == plan.sql
    pg = postgresql.psycopg.dialect()
    plan = make_plan(parse_query(text), spec, table, records=N, dialect=pg)
    assert isinstance(plan.parameters, dict) and "%(" in plan.sql and "?" not in plan.sql
    assert "greatest(" in plan.sql and "max(" not in plan.sql
    assert str(plan.statement.compile(dialect=pg)) == plan.sql


def test_identity_is_in_record_order_whatever_the_storage_order() -> None:
    engine = create_engine("sqlite://")
    meta = MetaData()
    table = Table(
        "o", meta, Column("id", Integer, primary_key=True), Column("pn_row", Integer), Column("y", Float)
    )
    meta.create_all(engine)
    order = [3, 0, 4, 2, 1]
    with engine.begin() as conn:
        conn.execute(insert(table), [{"pn_row": i, "y": float(i) - 2.5} for i in order])
    plan = make_plan(parse_query("identity(y)"), dataset(laplace), table, records=5, dialect=engine.dialect)
    assert [v for (v,) in _rows((engine, table), plan)] == [-2.5, -1.5, -0.5, 0.5, 1.5]


def test_partition_selection_counts_use_the_pure_share() -> None:
    # a δ large enough that ε₀ = ε/2 − log(1/(1 − δ)) is 10 % below ε/2: the counts use ε₀, the sums ε/2
    engine, table = database()
    spec = dataset(lambda k: laplace(k, F(1), partition_delta=F(1, 20)))
    plan = make_plan(parse_query("mean(x) group by free"), spec, table, records=N, dialect=engine.dialect)
    sums, counts = plan.components
    eps0 = 0.5 + math.log1p(-0.05)
    _check_noise(counts.noise, "laplace", 2.0, eps0, 0.0)
    _check_noise(sums.noise, "laplace", 50.0, 0.5, 0.0)  # Σ(x − 35) per cell, x ∈ [10, 60]: max(50, 2·25)
    assert plan.charge.epsilon == 1 and plan.charge.delta == F(1, 20)
    plan = make_plan(parse_query("count() group by free"), spec, table, records=N, dialect=engine.dialect)
    _check_noise(plan.components[0].noise, "laplace", 2.0, 1.0 + math.log1p(-0.05), 0.0)
