"""``group by`` on several key columns in the query server.

* the language: text and JSON forms (a name or a list of names), the JSON round trip, one column unchanged, the
  limits (key columns, cells) and repeated or unknown columns refused;
* declared keys: the cells are the product of the columns' categories; the plan's SQL, run on SQLite, gives the
  per-cell aggregates pandas gives grouping on the clamped, filtered rows;
* keys not declared: partition selection over the stored tuples, its threshold against an independent computation,
  a tuple of one record released with probability ≤ δ (fixed seed, α = 1e-6, with a power check);
* the sensitivity of the plan's own SQL over neighbouring databases (one record added, removed or replaced);
* the charge is the one-key charge; the statement's shape does not depend on the data; each key column is a step
  construct of the Fisher floor rule;
* through the app: keys as lists with the key column names, refusals before any charge, one key unchanged.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

pytest.importorskip("fastapi")
pytest.importorskip("lark")
pd = pytest.importorskip("pandas")

from sqlalchemy import MetaData, Table, create_engine, insert  # noqa: E402
from sqlalchemy.engine import Engine  # noqa: E402

from privnoise.dp.profile import profile_of  # noqa: E402
from privnoise.server import limits  # noqa: E402
from privnoise.server.answers import check_size, spec_of  # noqa: E402
from privnoise.server.config import ColumnSpec, DatasetSpec, PolicySpec  # noqa: E402
from privnoise.server.db import data_table  # noqa: E402
from privnoise.server.planner import make_plan  # noqa: E402
from privnoise.server.querylang import QueryError, QuerySpec, parse_query, spec_from_json  # noqa: E402
from privnoise.server.steps import StepQueryRefused, floored_steps, step_constructs  # noqa: E402
from privnoise.server.vectors import MAX_CELLS, cell_count, stored_keys  # noqa: E402
from tests.server._lab import DatasetDef, Lab, NoiseSpy  # noqa: E402
from tests.server._plan_lab import selection_threshold  # noqa: E402

F = Fraction
ALPHA = 1e-6
REGIONS = ("north", "south", "east", "west")
TARIFFS = ("day", "night", "peak")
SIZES = ("s", "l")
BOUNDS = {"x": (10.0, 60.0), "y": (-5.0, 3.0), "g": (0.0, 10.0)}
COLUMNS = {
    "x": ColumnSpec("x", "number", BOUNDS["x"]),
    "y": ColumnSpec("y", "number", BOUNDS["y"]),
    "g": ColumnSpec("g", "number", BOUNDS["g"], fisher_floor=0.01),  # floored, step queries refused
    "region": ColumnSpec("region", "text", categories=REGIONS),
    "tariff": ColumnSpec("tariff", "text", categories=TARIFFS),
    "size": ColumnSpec("size", "text", categories=SIZES),
    "free": ColumnSpec("free", "text"),  # no categories: partition selection
    "loose": ColumnSpec("loose", "text"),
}
TEXTS = ("region", "tariff", "size", "free", "loose")


def _rows(n: int, seed: int) -> list[dict[str, Any]]:
    """Rows with NULLs, values outside the declared bounds and keys outside the declared categories."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        out.append({
            "pn_row": i,
            "x": None if i % 11 == 4 else float(rng.uniform(0.0, 75.0)),
            "y": None if i % 13 == 7 else float(rng.uniform(-8.0, 6.0)),
            "g": float(i % 10),
            "region": [*REGIONS[:3], None, "zz"][int(rng.integers(5))],  # no "west", a NULL, an undeclared key
            "tariff": [*TARIFFS, None][int(rng.integers(4))],
            "size": SIZES[int(rng.integers(2))],
            "free": ["a", "b", "c", None][int(rng.integers(4))],
            "loose": ["p", "q", None][int(rng.integers(3))],
        })
    return out


ROWS = _rows(300, 1)


def _spec(policy: Any, *, kinds: tuple[str, ...] = ("count", "sum", "mean", "variance")) -> DatasetSpec:
    return DatasetSpec("d", "d", None, F(10), F(1, 1000), dict(COLUMNS), {k: policy(k) for k in kinds})


HALF = F(1, 2)


def _laplace(epsilon: Fraction = HALF, **extra: Any) -> Any:
    return lambda kind: PolicySpec(kind, "laplace", epsilon=epsilon, **extra)


def _gaussian(kind: str) -> PolicySpec:
    return PolicySpec(kind, "gaussian", epsilon=F(1, 2), delta=F(1, 10**6))


def _database(rows: list[dict[str, Any]]) -> tuple[Engine, Table]:
    engine = create_engine("sqlite://")
    meta = MetaData()
    table = data_table("d", {c: s.type for c, s in COLUMNS.items()}, meta)
    meta.create_all(engine)
    if rows:
        with engine.begin() as conn:
            conn.execute(insert(table), rows)
    return engine, table


@pytest.fixture(scope="module")
def db() -> tuple[Engine, Table]:
    return _database(ROWS)


def _plan(db: tuple[Engine, Table], query: str | QuerySpec, spec: DatasetSpec, records: int = len(ROWS)) -> Any:
    engine, table = db
    q = parse_query(query) if isinstance(query, str) else query
    return make_plan(q, spec, table, records=records, dialect=engine.dialect)


def _execute(engine: Engine, plan: Any) -> list[tuple[Any, ...]]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.exec_driver_sql(plan.sql, plan.parameters).all()]


def _frame(rows: list[dict[str, Any]]) -> Any:
    frame = pd.DataFrame(rows)
    for column, (lo, hi) in BOUNDS.items():
        frame[column] = frame[column].astype(float).fillna(lo).clip(lo, hi)  # NULL counts as the lower bound
    return frame


# --- the language -----------------------------------------------------------------------------------------------


def test_text_and_json_forms_and_their_round_trip() -> None:
    q = parse_query("mean(x) from d where y < 1 group by region, tariff")
    assert q.group_by == ("region", "tariff") and q.key_columns() == ("region", "tariff")
    assert q.as_dict()["group_by"] == ["region", "tariff"]
    assert spec_from_json(q.as_dict()) == q
    assert parse_query("count() GROUP BY region ,tariff,size").group_by == ("region", "tariff", "size")
    assert spec_from_json({"kind": "count", "group_by": ["region", "tariff"]}).group_by == ("region", "tariff")
    assert q.columns() == {"x", "y", "region", "tariff"}
    # one column: a name, as always, in the spec and in its JSON form; a list of one is that name
    one = parse_query("mean(x) from d group by region")
    assert one.group_by == "region" and one.as_dict() == {"kind": "mean", "column": "x", "group_by": "region",
                                                          "dataset": "d"}
    assert spec_from_json({"kind": "mean", "column": "x", "group_by": ["region"], "dataset": "d"}) == one
    assert spec_of({"kind": "mean", "column": "x", "group_by": ["region"], "dataset": "d"}) == one


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({"query": "count() group by a, b, c, d, e"}, "at most 4 key columns (the limit); got 5"),
        ({"kind": "count", "group_by": ["a", "b", "c", "d", "e"]}, "at most 4 items"),
        ({"query": "count() group by region, region"}, "names a key column twice"),
        ({"kind": "count", "group_by": ["tariff", "tariff"]}, "names a key column twice"),
        ({"query": "variance(x) group by region, tariff"}, "variance takes no group by"),
        ({"query": "count() group by region,"}, "ends too early"),
        ({"kind": "count", "group_by": []}, "at least 1 item"),
        ({"kind": "count", "group_by": ["region", "no-name"]}, "should match pattern"),
    ],
)
def test_malformed_key_lists_are_refused(body: dict[str, Any], problem: str) -> None:
    with pytest.raises(Exception, match=re.escape(problem)):
        spec_of(body)
    with pytest.raises(QueryError, match="at most 4 key columns"):
        spec_from_json({"kind": "count", "group_by": ["a", "b", "c", "d", "e"]})
    with pytest.raises(QueryError, match="a column name or a list"):
        spec_from_json({"kind": "count", "group_by": ["a", 3]})


# --- declared keys: product cells, exact aggregates -------------------------------------------------------------

EXACT = [
    ("count() group by region, tariff", ("region", "tariff"), []),
    ("count() where x > 30 and tariff != 'peak' group by region, tariff", ("region", "tariff"), []),
    ("sum(x) group by tariff, region", ("tariff", "region"), ["x"]),
    ("sum(y) where y >= -2 group by region, tariff, size", ("region", "tariff", "size"), ["y"]),
    ("mean(x) where region != 'north' group by size, region", ("size", "region"), ["x", None]),
]


def _filtered(frame: Any, query: QuerySpec) -> Any:
    keep = np.ones(len(frame), dtype=bool)
    ops = {"=": "__eq__", "!=": "__ne__", "<": "__lt__", "<=": "__le__", ">": "__gt__", ">=": "__ge__"}
    for c in query.where:
        column = frame[c.column]
        keep &= np.asarray(getattr(column, ops[c.op])(c.value).fillna(False), dtype=bool)
    return frame[keep]


@pytest.mark.parametrize(("text", "columns", "values"), EXACT)
def test_declared_products_give_the_pandas_groupby_of_every_cell(
    db: tuple[Engine, Table], text: str, columns: tuple[str, ...], values: list[str | None]
) -> None:
    engine, _ = db
    q = parse_query(text)
    plan = _plan(db, q, _spec(_laplace()))
    declared = [COLUMNS[c].categories for c in columns]
    assert plan.keys == tuple(itertools.product(*declared)) and plan.selection is None
    assert [c.dim for c in plan.components] == [math.prod(len(d) for d in declared)] * len(plan.components)
    ((*flat, found),) = _execute(engine, plan)
    assert found == len(ROWS)
    got = plan.split([float(v) for v in flat])
    frame = _filtered(_frame(ROWS), q)
    groups = frame.groupby(list(columns), dropna=True)
    index = pd.MultiIndex.from_tuples(plan.keys, names=list(columns))
    counts = groups.size().reindex(index, fill_value=0).to_numpy(dtype=float)
    expected = [counts] if not values else [groups[values[0]].sum().reindex(index, fill_value=0.0).to_numpy()]
    if values and (values[-1] is None):
        expected.append(counts)
    if q.kind == "mean":  # a mean's sums are centred on the middle of the declared bounds: Σ(x − c) = Σx − c·N
        expected[0] = expected[0] - sum(BOUNDS[values[0]]) / 2.0 * counts
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-9)
    assert counts.sum() > 0 and (counts == 0).any()  # cells both full and empty ("west", undeclared keys)
    # records with a NULL or an undeclared key are in no cell
    assert counts.sum() < len(frame)


# --- keys not declared: partition selection over tuples ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "columns", "names", "share"),
    [
        ("count() group by region, free", ("region", "free"), ["count"], 1),
        ("sum(x) where y > -3 group by free, loose", ("free", "loose"), ["sum", "count"], 2),
        ("mean(y) group by loose, tariff, free", ("loose", "tariff", "free"), ["sum", "count"], 2),
    ],
)
def test_undeclared_keys_select_the_stored_tuples(
    db: tuple[Engine, Table], text: str, columns: tuple[str, ...], names: list[str], share: int
) -> None:
    engine, _ = db
    epsilon, delta, partition = F(1), F(1, 10**7), F(1, 10**6)
    q = parse_query(text)
    plan = _plan(db, q, _spec(_laplace(epsilon, delta=delta, partition_delta=partition)))
    selection = plan.selection
    assert selection is not None and selection.columns == columns and plan.keys is None
    assert [c.name for c in plan.components] == names
    assert selection.count_epsilon == pytest.approx(float(epsilon) / share + math.log1p(-float(partition)))
    count_noise = next(c.noise for c in plan.components if c.name == "count")
    low, high = BOUNDS[q.column or "x"]
    # a sum's values are in [low, high]; a mean's sums are centred (x − c ∈ [−h, h])
    top = (high - low) / 2.0 if q.kind == "mean" else max(abs(low), abs(high))
    assert all(c.dim == 2 and c.noise.sensitivity == 2.0 * (1.0 if c.name == "count" else top)
               for c in plan.components)
    scale = float(profile_of(count_noise.mechanism).scale)
    assert selection.threshold == selection_threshold(scale, float(partition)) + math.ceil(count_noise.grid)
    # one charge: ε and δ of the policy, and the partition δ once
    assert plan.charge.epsilon == epsilon and plan.charge.delta == delta + partition
    # one GROUP BY over every record of the key columns; the stored tuples, NULL or undeclared keys aside, sorted
    assert "GROUP BY" in plan.sql.upper() and " WHERE " not in plan.sql.upper()
    rows = _execute(engine, plan)
    assert sum(r[-1] for r in rows) == len(ROWS)
    keys, values = stored_keys(rows, plan.spec, columns)
    frame = _filtered(_frame(ROWS), q)
    whole = _frame(ROWS)
    for c in columns:
        if COLUMNS[c].categories:
            whole = whole[whole[c].isin(COLUMNS[c].categories)]
    present = whole.dropna(subset=list(columns)).groupby(list(columns)).size()
    assert keys == [list(k) for k in present.index]
    groups = frame.groupby(list(columns), dropna=True)
    index = pd.MultiIndex.from_tuples([tuple(k) for k in keys], names=list(columns))
    counts = groups.size().reindex(index, fill_value=0).to_numpy(dtype=float)
    np.testing.assert_allclose([v[-2] for v in values], counts)  # the count component, then the record count
    if q.column is not None:
        sums = groups[q.column].sum().reindex(index, fill_value=0.0).to_numpy()
        if q.kind == "mean":
            sums = sums - (low + high) / 2.0 * counts
        np.testing.assert_allclose([v[0] for v in values], sums, rtol=1e-12, atol=1e-9)


def test_a_tuple_of_one_record_is_released_with_probability_at_most_the_partition_delta(
    db: tuple[Engine, Table],
) -> None:
    """200 000 releases of the plan's own count noise on a tuple held by one record: the release frequency is at
    most δ = 1/20 up to the binomial quantile at α = 1e-6; with the threshold lowered by 2 it is above (power)."""
    delta = F(1, 20)
    plan = _plan(db, "count() group by free, loose", _spec(_laplace(F(1), partition_delta=delta)))
    selection, (component,) = plan.selection, plan.components
    runs = 200_000
    rng = np.random.default_rng(20)
    noisy = np.asarray(component.noise.release(np.ones((runs // 2, 2)), rng=rng), dtype=float).reshape(-1)
    limit = stats.binom.isf(ALPHA, runs, float(delta)) / runs
    assert (selection.keep(noisy)).mean() <= limit
    assert (np.rint(noisy) >= selection.threshold - 2).mean() > limit


def test_a_tuple_of_one_record_is_left_out_of_the_answer(db: tuple[Engine, Table]) -> None:
    engine, _ = db
    rows = [*ROWS, {**ROWS[0], "pn_row": len(ROWS), "free": "lonely", "loose": "alone"}]
    local = _database(rows)
    plan = _plan(local, "count() group by free, loose", _spec(_laplace(F(10), partition_delta=F(1, 10**6))))
    keys, values = stored_keys(_execute(local[0], plan), plan.spec, ("free", "loose"))
    assert ["lonely", "alone"] in keys
    counts = np.array([v[0] for v in values])
    noisy = plan.components[0].add(counts, np.random.default_rng(4))
    kept = [k for k, keep in zip(keys, plan.selection.keep(noisy), strict=True) if keep]
    assert ["lonely", "alone"] not in kept and len(kept) >= 1


# --- sensitivity, charge, constant work -------------------------------------------------------------------------


def _candidates() -> list[dict[str, Any]]:
    """Records for neighbours: every key of the key columns (declared, undeclared, NULL) and values on a grid."""
    out = []
    for region, tariff, x, y in itertools.product(
        [*REGIONS, "zz", None], [*TARIFFS, None], [None, 0.0, 10.0, 35.0, 60.0, 80.0], [-6.0, -1.0, 3.0]
    ):
        out.append({"pn_row": 0, "x": x, "y": y, "g": 0.0, "region": region, "tariff": tariff, "size": "s",
                    "free": "a", "loose": "p"})
    return out


@pytest.mark.parametrize("policy", [_laplace(), _gaussian], ids=["laplace", "gaussian"])
@pytest.mark.parametrize("text", ["count() group by region, tariff", "sum(x) where y < 0 group by region, tariff",
                                  "mean(x) group by tariff, region"])
def test_the_sensitivity_is_the_brute_force_over_neighbours(policy: Any, text: str) -> None:
    """Each candidate record's cell vectors from the plan's own SQL on a table of that record alone; neighbours add
    or remove one record (its vector) or replace one by another (the difference): the largest ℓ1 (laplace) or ℓ2
    (gaussian) change of each component is its noise's sensitivity."""
    spec = _spec(policy)
    engine, table = local = _database([])
    plan = _plan(local, text, spec, records=1)
    vectors = []
    with engine.begin() as conn:
        for record in _candidates():
            conn.execute(table.delete())
            conn.execute(insert(table), [record])
            ((*flat, _),) = conn.exec_driver_sql(plan.sql, plan.parameters).all()
            vectors.append(plan.split([float(v) for v in flat]))
    order = 1 if plan.policy.mechanism == "laplace" else 2
    for i, component in enumerate(plan.components):
        single = np.array([v[i] for v in vectors])
        assert (np.count_nonzero(single, axis=1) <= 1).all()  # a record is in one cell at most
        added = np.linalg.norm(single, ord=order, axis=1).max()
        replaced = np.linalg.norm(single[:, None, :] - single[None, :, :], ord=order, axis=2).max()
        assert component.noise.sensitivity == pytest.approx(max(added, replaced), rel=1e-12)


@pytest.mark.parametrize("policy", [_laplace(), _gaussian], ids=["laplace", "gaussian"])
@pytest.mark.parametrize("kind", ["count()", "sum(x)", "mean(x)"])
def test_the_charge_is_the_one_key_charge(db: tuple[Engine, Table], policy: Any, kind: str) -> None:
    spec = _spec(policy)
    one = _plan(db, f"{kind} group by region", spec)
    several = _plan(db, f"{kind} group by region, tariff, size", spec)
    # (ε, δ) once, whatever the number of cells (the hardened noise's grid, and so the Fisher information each
    # release carries, depends on the vector's dimension, as for a histogram of more bins)
    assert (several.charge.epsilon, several.charge.delta) == (one.charge.epsilon, one.charge.delta)
    assert (several.charge.epsilon, several.charge.delta) == (spec.policies[several.query.kind].epsilon,
                                                              spec.policies[several.query.kind].delta or 0)
    assert {k: several.charged[k] for k in ("epsilon", "delta")} == {k: one.charged[k] for k in ("epsilon", "delta")}
    assert [c.noise.sensitivity for c in several.components] == [c.noise.sensitivity for c in one.components]
    selecting = _spec(_laplace(F(1), delta=F(1, 10**7), partition_delta=F(1, 10**6)))
    tuples = _plan(db, f"{kind} group by free, loose", selecting)
    keys = _plan(db, f"{kind} group by free", selecting)  # the same calibration: two cells change at most
    assert tuples.charge == keys.charge and tuples.charge.delta == F(1, 10**7) + F(1, 10**6)


def test_the_statement_does_not_depend_on_the_data(db: tuple[Engine, Table]) -> None:
    spec = _spec(_laplace())
    other = _database(_rows(7, 99))
    for text in ["count() group by region, tariff", "mean(x) where y > 0 group by region, tariff, size"]:
        plan = _plan(db, text, spec)
        again = _plan(other, text, spec, records=7)
        assert (plan.sql, plan.parameters) == (again.sql, again.parameters)
        q = parse_query(text)
        cells = math.prod(len(COLUMNS[c].categories or ()) for c in q.key_columns())
        sql = plan.sql.upper()
        assert " WHERE " not in sql and "GROUP BY" not in sql
        # one term per cell and component, and the record count; every record compares each key column with each
        # of its declared keys once and has one test per cell (the row source computes each once; the sums
        # multiply them); a text condition of the filter is tested both ways
        assert len(plan.statement.selected_columns) == len(plan.components) * cells + 1
        assert sql.count(" IS ?") == sum(len(COLUMNS[c].categories or ()) for c in q.key_columns())
        tests = sql.count("PN_ROWS.PN_C = ") if q.kind == "count" else sum(f" AS PN_K{j}" in sql for j in range(cells))
        assert tests == cells  # a count reads each test once: made on the record's cell in the sums (.cells)
        assert sql.count("CASE WHEN") == 2 * sum(COLUMNS[c.column].type == "text" for c in q.where)
        assert len(plan.parameters) <= limits.parameter_bound(q, cells)


def test_each_key_column_is_a_step_construct(db: tuple[Engine, Table]) -> None:
    q = parse_query("count() group by region, g")
    assert step_constructs(q) == (("region", "a `group by` key on it"), ("g", "a `group by` key on it"))
    with pytest.raises(StepQueryRefused, match="column 'g' has a Fisher floor: a `group by` key on it"):
        floored_steps(q, _spec(_laplace()))
    with pytest.raises(StepQueryRefused, match="'g'"):
        _plan(db, "count() group by tariff, region, g", _spec(_laplace()))


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("count() group by region, x", "group by a text column; 'x' is numeric"),
        ("count() group by region, nope", "'nope' is not a declared column"),
        ("count() group by region, free", "declare `categories = [...]` on the text column `datasets.d.columns.free`"),
    ],
)
def test_key_columns_that_cannot_be_cells_are_refused(db: tuple[Engine, Table], text: str, problem: str) -> None:
    with pytest.raises(QueryError, match=re.escape(problem)):
        _plan(db, text, _spec(_laplace()))


def test_the_cells_are_limited(db: tuple[Engine, Table]) -> None:
    many = {f"k{i}": ColumnSpec(f"k{i}", "text", categories=tuple(f"v{j}" for j in range(7))) for i in range(3)}
    spec = DatasetSpec("d", "d", None, F(10), F(1, 1000), {**COLUMNS, **many}, {"count": _laplace()("count")})
    assert cell_count(spec, ("k0", "k1", "k2")) == 343 > MAX_CELLS and cell_count(spec, ("k0", "free")) is None
    service = type("S", (), {"config": type("C", (), {"datasets": {"d": spec}})()})()
    with pytest.raises(QueryError, match=f"343 cells .* more than the limit of {MAX_CELLS}"):
        check_size(service, parse_query("count() from d group by k0, k1, k2"))  # type: ignore[arg-type]
    check_size(service, parse_query("count() from d group by k0, k1"))  # type: ignore[arg-type]
    meta = MetaData()
    table = data_table("d", {c: s.type for c, s in spec.columns.items()}, meta)
    with pytest.raises(QueryError, match=f"more than the limit of {MAX_CELLS}"):
        make_plan(parse_query("count() group by k0, k1, k2"), spec, table, records=1, dialect=db[0].dialect)


# --- through the app --------------------------------------------------------------------------------------------

LAB_ROWS = [
    {"x": float((i * 7) % 50) + 10.0, "region": REGIONS[i % 3], "tariff": TARIFFS[(i // 3) % 3], "free": "ab"[i % 2]}
    for i in range(240)
]
POLICIES = """
[policies.count]
mechanism = "laplace"
epsilon = "2"
partition_delta = "1/1000000"
[policies.sum]
mechanism = "gaussian"
epsilon = "1/10"
delta = "1/1000000"
[policies.mean]
mechanism = "laplace"
epsilon = "1/5"
partition_delta = "1/1000000"
"""


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    texts: dict[str, tuple[str, ...] | None] = {
        "tariff": TARIFFS, "free": None, **{f"k{i}": tuple("abcdefg") for i in range(3)}
    }
    rows = [{**r, **{f"k{i}": "a" for i in range(3)}} for r in LAB_ROWS]
    dataset = DatasetDef("m", rows, {"x": BOUNDS["x"]}, POLICIES, "laplace", categories=REGIONS, texts=texts,
                         fisher_floor={"x": 0.01})
    with Lab(tmp_path, [dataset]) as lab:
        lab.add_querier("q", epsilon="10", delta="1/1000")
        yield lab


def _state(lab: Lab) -> tuple[Any, Any]:
    ledger = lab.get("admin", "/v1/admin/ledger", limit=500, outcome="charged").json()["ledger"]
    return len(ledger), lab.get("q", "/v1/budget").json()


def test_answers_name_their_key_columns_and_give_keys_as_lists(lab: Lab) -> None:
    spy = NoiseSpy()
    frame = pd.DataFrame(LAB_ROWS)
    with spy.installed():
        r = lab.post("q", {"query": "mean(x) from m group by region, tariff"})
        assert r.status_code == 200, r.text
        (_, sums), (_, counts) = spy.take()
    body = r.json()
    assert body["key_columns"] == ["region", "tariff"] and body["query"]["group_by"] == ["region", "tariff"]
    assert body["keys"] == [list(k) for k in itertools.product(REGIONS, TARIFFS)]
    assert len(body["value"]) == len(body["keys"]) == len(body["accuracy"]["low"]) == 12
    index = pd.MultiIndex.from_tuples(itertools.product(REGIONS, TARIFFS))
    groups = frame.groupby(["region", "tariff"])
    np.testing.assert_array_equal(counts, groups.size().reindex(index, fill_value=0).to_numpy(dtype=float))
    centred = groups["x"].sum().reindex(index, fill_value=0.0).to_numpy() - sum(BOUNDS["x"]) / 2.0 * counts
    np.testing.assert_allclose(sums, centred, rtol=1e-12, atol=1e-9)  # Σ(x − c) per cell
    assert Fraction(body["charged"]["epsilon"]) == Fraction(1, 5) and body["charged"]["delta"] == "0"
    # the structured form gives the same answer's shape; keys not declared are selected
    r = lab.post("q", {"kind": "count", "group_by": ["tariff", "region"], "dataset": "m"})
    assert r.status_code == 200 and r.json()["keys"][0] == ["day", "north"], r.text
    r = lab.post("q", {"query": "count() from m group by free, tariff"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["key_columns"] == ["free", "tariff"] and body["charged"]["delta"] == "1/1000000"
    assert body["query"]["group_by"] == ["free", "tariff"]
    # six tuples of 40 records each, far above the threshold (about 15 at ε = 2, δ = 1e-6)
    assert body["keys"] == [[f, t] for f in "ab" for t in sorted(TARIFFS)]
    assert len(body["value"]) == len(body["accuracy"]["low"]) == 6


def test_one_key_column_answers_as_before(lab: Lab) -> None:
    r = lab.post("q", {"query": "mean(x) from m group by region"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert list(body) == ["dataset", "query", "value", "keys", "accuracy", "guarantee", "charged", "remaining",
                          "ledger_id"]
    assert body["keys"] == list(REGIONS) and body["query"] == {"kind": "mean", "column": "x", "group_by": "region",
                                                               "dataset": "m"}
    service: Any = lab.app.state.service
    one = service.plan(parse_query("mean(x) from m group by region"))
    listed = service.plan(spec_of({"kind": "mean", "column": "x", "group_by": ["region"], "dataset": "m"}))
    assert (one.sql, one.parameters, one.keys, one.ledger_query) == (
        listed.sql, listed.parameters, listed.keys, listed.ledger_query
    )


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({"query": "count() from m group by region, tariff, free, k0, k1"}, "at most 4 key columns (the limit)"),
        ({"query": "count() from m group by k0, k1, k2"}, f"343 cells (the product of its key columns' declared "
                                                          f"categories), more than the limit of {MAX_CELLS}"),
        ({"query": "count() from m group by region, nope"}, "'nope' is not a declared column"),
        ({"query": "count() from m group by region, x"}, "column 'x' has a Fisher floor: a `group by` key on it"),
        ({"query": "sum(x) from m group by region, free"}, "declare `categories"),
        ({"query": "sum(x) from m group by region, region"}, "names a key column twice"),
    ],
)
def test_refusals_come_before_any_charge(lab: Lab, body: dict[str, Any], problem: str) -> None:
    before = _state(lab)
    r = lab.post("q", body)
    assert r.status_code == 422, r.text
    assert problem in r.json()["error"], r.json()
    assert _state(lab) == before
    r = lab.post("q", {"kind": "count", "group_by": ["a", "b", "c", "d", "e"], "dataset": "m"})
    assert r.status_code == 422 and "at most 4 items" in r.text, r.text
    assert _state(lab) == before


def test_the_console_shows_one_row_per_key_with_its_key_columns(lab: Lab) -> None:
    from privnoise.server.console.querier import _cells
    from privnoise.server.console.queryform import describe_query

    body = lab.post("q", {"query": "count() from m group by region, tariff"}).json()
    cells = _cells(body)
    assert cells is not None and cells["columns"] == ["region", "tariff"]
    assert [key for key, _ in cells["rows"]] == [list(k) for k in itertools.product(REGIONS, TARIFFS)]
    assert [v for _, v in cells["rows"]] == body["value"]
    assert describe_query(body["query"]) == "count() from m group by region, tariff"
    one = _cells(lab.post("q", {"query": "mean(x) from m group by region"}).json())
    assert one is not None and one["columns"] == ["region"] and one["rows"][0][0] == ["north"]
    assert _cells(lab.post("q", {"query": "sum(x) from m"}).json()) is None
    from privnoise.server.console.render import environment

    body = lab.post("q", {"query": "sum(x) from m group by tariff, region"}).json()
    html = environment().get_template("answer.html").render(
        session=None, path="/console/answers/1", status=200, text="sum(x) from m group by tariff, region",
        answer=body, created="now", values=body["value"], cells=_cells(body), preview=20, extra={},
    )
    assert '<th scope="col" data-key-column="tariff">tariff</th>' in html
    assert "<tr><td>day</td><td>north</td><td data-value=" in html
