"""Vector answers (:mod:`privnoise.server.vectors`) and the constant-work indicators (:mod:`.indicators`) on their
own: the vector sensitivity against a brute force over neighbouring databases, the cells' labels and 0/1 tests
executed on SQLite against the comparisons they stand for (NULL counts as false), the parts of a vector answer,
and the threshold of partition selection against the Laplace tail of scipy."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from scipy import stats
from sqlalchemy import (
    Column,
    Float,
    Integer,
    MetaData,
    Table,
    Text,
    create_engine,
    func,
    insert,
    literal,
    select,
)

from privnoise.dp.hardened_calibration import hardened_laplace_for_epsilon
from privnoise.dp.profile import profile_of
from privnoise.server.cells import (
    balanced_code,
    bin_index,
    bin_tests,
    code_tests,
    flag,
    key_balance,
    key_code,
    key_index,
    key_tests,
)
from privnoise.server.config import ColumnSpec, DatasetSpec
from privnoise.server.indicators import both_ways, compare, numeric_comparison
from privnoise.server.querylang import QueryError, QuerySpec, parse_query
from privnoise.server.vectors import (
    PartitionSelection,
    cell_keys,
    declared_keys,
    vector_parts,
    vector_sensitivity,
)
from tests.server._plan_lab import OPS, largest_cell_change

REGIONS = ("north", "south", "east")
SPEC = DatasetSpec(
    "m",
    "m",
    None,
    Fraction(1),
    Fraction(0),
    {
        "x": ColumnSpec("x", "number", (10.0, 60.0)),
        "region": ColumnSpec("region", "text", categories=REGIONS),
        "free": ColumnSpec("free", "text"),
    },
    {},
)


# --- the sensitivity of a vector of disjoint cells ----------------------------------------------------------------


def _brute(g_low: float, g_high: float, norm: str, cells: int = 3) -> float:
    """max over neighbours of the change of the vector: a record adds g ∈ [g_low, g_high] to one cell; one record
    added, removed (against no record) or replaced (same cell or another)."""
    return largest_cell_change(sorted(set(np.linspace(g_low, g_high, 9).tolist())), cells, norm)


@pytest.mark.parametrize(
    ("g_low", "g_high"),
    [
        (1.0, 1.0),
        (0.0, 60.0),
        (10.0, 60.0),
        (-5.0, 3.0),
        (-60.0, -10.0),
        (-3.0, 40.0),
        (2.0, 2.5),
        (-1.0, 0.0),
    ],
)
def test_vector_sensitivity_is_the_brute_force(g_low: float, g_high: float) -> None:
    assert vector_sensitivity(g_low, g_high, "l1") == pytest.approx(
        _brute(g_low, g_high, "l1"), rel=1e-12
    )
    assert vector_sensitivity(g_low, g_high, "l2") == pytest.approx(
        _brute(g_low, g_high, "l2"), rel=1e-12
    )


def test_replacing_within_a_cell_can_be_the_largest_change() -> None:
    # g ∈ [−50, 60]: in ℓ2 one cell moving by 110 beats two cells moving by √2·60; in ℓ1 2·60 beats 110
    assert vector_sensitivity(-50.0, 60.0, "l2") == pytest.approx(110.0) == _brute(-50.0, 60.0, "l2")
    assert vector_sensitivity(-60.0, 50.0, "l2") == pytest.approx(110.0)
    assert vector_sensitivity(-50.0, 60.0, "l1") == pytest.approx(120.0) == _brute(-50.0, 60.0, "l1")
    assert vector_sensitivity(-1.0, 150.0, "l2") == pytest.approx(math.sqrt(2.0) * 150.0)


# --- the cells -----------------------------------------------------------------------------------------------------


def test_cell_keys_are_bin_labels_or_declared_categories() -> None:
    assert cell_keys(parse_query("histogram(x, bins = [0, 10.5, 20, 60])"), SPEC) == (
        "x",
        ("[0, 10.5)", "[10.5, 20)", "[20, 60]"),
    )
    assert cell_keys(parse_query("histogram(x, bins = [-1e-07, 2])"), SPEC) == ("x", ("[-1e-07, 2]",))
    assert cell_keys(parse_query("histogram(region)"), SPEC) == ("region", REGIONS)
    assert cell_keys(parse_query("sum(x) group by region"), SPEC) == ("region", REGIONS)
    assert cell_keys(QuerySpec("sum", column="x", bins=(1.0, 2.0), group_by="region"), SPEC) == (
        "region",
        REGIONS,
    )
    assert declared_keys(SPEC, "region") == REGIONS and declared_keys(SPEC, "free") is None


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (
            "histogram(x)",
            "histogram of numeric column 'x' needs its bins: histogram(x, bins = [e0, e1, ...]).",
        ),
        (
            "histogram(region, bins = [0, 1])",
            "histogram bins are for a numeric column; 'region' is not one "
            "(histogram(region) counts its declared categories).",
        ),
        (
            "histogram(free)",
            "histogram needs the public values of column 'free': declare `categories = [...]` on "
            "the text column `datasets.m.columns.free` in owner.toml.",
        ),
        (
            "count() group by free",
            "group by needs the public values of column 'free': declare `categories = [...]` "
            "on the text column `datasets.m.columns.free` in owner.toml, or set `partition_delta` on a laplace policy "
            "to select the keys by a noisy count.",
        ),
        ("count() group by x", "group by needs the public values of column 'x'"),
        ("count() group by nope", "'nope' is not a declared column of dataset 'm'."),
    ],
)
def test_cells_that_are_not_public_are_refused(query: str, message: str) -> None:
    with pytest.raises(QueryError) as info:
        cell_keys(parse_query(query), SPEC)
    assert str(info.value).startswith(message)


def test_declared_keys_refuse_numeric_and_unknown_columns() -> None:
    with pytest.raises(QueryError, match="group by a text column; 'x' is numeric."):
        declared_keys(SPEC, "x")
    with pytest.raises(QueryError, match="'nope' is not a declared column of dataset 'm'."):
        declared_keys(SPEC, "nope")


XS = [None, -5.0, 0.0, 9.999, 10.0, 10.5, 15.0, 20.0, 20.000001, 33.0, 59.9, 60.0, 61.0, 1e6]
KEYS = [None, "north", "south", "east", "west", "North", ""]


@pytest.fixture(scope="module")
def db() -> tuple[Any, Table]:
    engine = create_engine("sqlite://")
    meta = MetaData()
    table = Table("t", meta, Column("x", Float), Column("region", Text))
    meta.create_all(engine)
    with engine.begin() as conn:
        conn.execute(insert(table), [{"x": x, "region": k} for x, k in itertools.product(XS, KEYS)])
    return engine, table


def _clamped(table: Table) -> Any:
    def clamped(column: str) -> Any:
        x = func.coalesce(table.c[column], literal(10.0, Float))
        return func.max(literal(10.0, Float), func.min(literal(60.0, Float), x))

    return clamped


def _execute(db: tuple[Any, Table], terms: list[Any]) -> list[tuple[Any, ...]]:
    engine, table = db
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(select(table.c.x, table.c.region, *terms)).all()]


@pytest.mark.parametrize("edges", [(0.0, 10.5, 20.0, 60.0), (15.0, 20.0, 33.0), (12.0, 13.0), (10.0, 60.0)])
def test_bin_tests_are_the_bins_of_the_clamped_values(
    db: tuple[Any, Table], edges: tuple[float, ...]
) -> None:
    q = QuerySpec("histogram", column="x", bins=edges)
    index = bin_index(_clamped(db[1])("x"), q.bins)
    terms = [index, *bin_tests(index, len(edges) - 1, "sqlite")]
    for x, _, b, *got in _execute(db, terms):
        v = min(max(10.0 if x is None else x, 10.0), 60.0)  # the declared bounds, NULL at the lower one
        v = min(max(v, edges[0]), edges[-1])  # then the first and the last edge
        last = len(edges) - 2
        expected = [
            int(a <= v < b or (i == last and v == b)) for i, (a, b) in enumerate(itertools.pairwise(edges))
        ]
        assert got == expected and expected[b] == 1, x
        assert sum(got) == 1  # every record in exactly one bin: one comparison holds for each (.cells)


def test_bin_indices_at_edges_and_their_neighbouring_doubles() -> None:
    engine = create_engine("sqlite://")
    table = Table("v", MetaData(), Column("x", Float))
    table.metadata.create_all(engine)
    edges = (-1e100, -3.5, 0.0, 5e-324, 1e-300, 10.0, 1e100)
    values = sorted({v for e in edges for v in (e, math.nextafter(e, -math.inf), math.nextafter(e, math.inf))})
    with engine.begin() as conn:
        conn.execute(insert(table), [{"x": v} for v in values])
        got = conn.execute(select(table.c.x, bin_index(table.c.x, edges))).all()
    for x, b in got:
        expected = min(max(sum(x >= e for e in edges[1:-1]), 0), len(edges) - 2)
        assert b == expected, x


@pytest.mark.parametrize("query", ["histogram(region)", "count() group by region", "sum(x) group by region"])
def test_key_tests_match_the_key_and_never_null(db: tuple[Any, Table], query: str) -> None:
    q = parse_query(query)
    _, keys = cell_keys(q, SPEC)
    index = key_index(db[1].c.region, REGIONS, "sqlite")
    terms = key_tests([index], [REGIONS], keys, "sqlite")
    for _, k, *got in _execute(db, terms):
        assert got == [int(k == key) for key in REGIONS], k


def test_key_tests_on_several_columns_are_the_cells_of_the_product() -> None:
    engine = create_engine("sqlite://")
    table = Table("k", MetaData(), Column("a", Text), Column("b", Text))
    table.metadata.create_all(engine)
    first, second = ("n", "s", "e"), ("day", "night")
    stored = [None, *first, "zz"]
    with engine.begin() as conn:
        conn.execute(insert(table), [{"a": a, "b": b} for a in stored for b in [None, *second, "x"]])
        indices = [key_index(table.c.a, first, "sqlite"), key_index(table.c.b, second, "sqlite")]
        cells = list(itertools.product(first, second))
        rows = conn.execute(select(table.c.a, table.c.b, *key_tests(indices, [first, second], cells, "sqlite"))).all()
        code = balanced_code(indices, [first, second], "sqlite")  # the cell once, its tests in the aggregates
        inline = conn.execute(select(*code_tests(code, [first, second], cells, "sqlite"))).all()
    for (a, b, *got), again in zip(rows, inline, strict=True):
        assert got == list(again) == [int((a, b) == cell) for cell in cells], (a, b)


def test_every_record_makes_as_many_comparisons_that_hold() -> None:
    """Constant work of the cells (.cells): per record, the key equalities, the balancing tests and the cells'
    tests that hold are as many (the key columns, plus one), whether its keys are declared, not declared or NULL."""
    engine = create_engine("sqlite://")
    table = Table("h", MetaData(), Column("a", Text), Column("b", Text))
    table.metadata.create_all(engine)
    first, second = ("n", "s", "e"), ("day", "night")
    categories = [first, second]
    with engine.begin() as conn:
        conn.execute(insert(table), [{"a": a, "b": b} for a in [None, *first, "zz"] for b in [None, *second, "x"]])
        columns = [table.c.a, table.c.b]
        equalities = [flag(c.is_not_distinct_from(literal(k)), "sqlite") for c, ks in zip(columns, categories,
                                                                                         strict=True) for k in ks]
        indices = [key_index(c, ks, "sqlite") for c, ks in zip(columns, categories, strict=True)]
        cells = list(itertools.product(first, second))
        holding = [*equalities, key_balance(indices, "sqlite"),
                   *code_tests(key_code(indices, categories), categories, cells, "sqlite")]
        total = holding[0]
        for h in holding[1:]:
            total = total + h
        assert {n for (n,) in conn.execute(select(total)).all()} == {len(columns) + 1}


def test_cell_sql_of_other_dialects() -> None:
    from sqlalchemy.dialects import postgresql

    table = Table("t", MetaData(), Column("x", Float), Column("region", Text))
    index = key_index(table.c.region, REGIONS, "postgresql")
    (term, *_) = key_tests([Table("s", MetaData(), Column("i", Integer)).c.i], [REGIONS], REGIONS, "postgresql")
    text = str(term.compile(dialect=postgresql.dialect()))
    assert text.startswith("CAST(s.i = 1 AS INTEGER)") and "max(" not in text
    text = str(index.compile(dialect=postgresql.dialect()))
    assert text.count("IS NOT DISTINCT FROM") == len(REGIONS) and text.count("AS INTEGER") == len(REGIONS)
    (term,) = bin_tests(bin_index(table.c.x, (0.0, 1.0)), 1, "postgresql")
    assert "CAST(" in str(term.compile(dialect=postgresql.dialect()))


# --- the parts of a vector answer ------------------------------------------------------------------------------


def _parts(kind: str, norm: str = "l1", *, counted: bool = False) -> tuple[list[Any], Any]:
    """vector_parts on plain numbers: two cells whose tests are 1 and 0, a column whose clamped value is 7."""
    q = QuerySpec(kind, column=None if kind in ("count", "histogram") else "x", group_by="region")
    args = (q, norm, [1.0, 0.0], lambda e: ("total", e), lambda c: 7.0, lambda c: (-5.0, 3.0))
    return vector_parts(*args, counted=True) if counted else vector_parts(*args)  # sums alone by default


def _same(part: Any, expected: tuple[str, list[Any], float, dict[str, float]]) -> bool:
    name, terms, sensitivity, slopes = part
    return (name, terms, slopes) == (expected[0], expected[1], expected[3]) and sensitivity == pytest.approx(
        expected[2], rel=1e-12
    )


@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_vector_parts(norm: str) -> None:
    counts = ("count", [("total", 1.0), ("total", 0.0)], _brute(1.0, 1.0, norm), {})
    sums = ("sum", [("total", 7.0), ("total", 0.0)], _brute(-5.0, 3.0, norm), {"x": 1.0})
    for kind in ("count", "histogram"):
        parts, combine = _parts(kind, norm)
        assert len(parts) == 1 and _same(parts[0], counts)
        assert combine([np.array([-1.0, 2.0])]).tolist() == [0.0, 2.0]
    parts, combine = _parts("sum", norm)
    assert (
        len(parts) == 1 and _same(parts[0], sums) and combine([np.array([-1.0, 2.0])]).tolist() == [-1.0, 2.0]
    )
    parts, combine = _parts("sum", norm, counted=True)
    assert len(parts) == 2 and _same(parts[0], sums) and _same(parts[1], counts)
    assert combine([np.array([-1.0, 2.0]), np.array([5.0, 5.0])]).tolist() == [-1.0, 2.0]
    parts, combine = _parts("mean", norm)  # a mean's sums are of x − c, c = −1 the middle of [−5, 3]
    (name, terms, sensitivity, slopes), count_part = parts
    assert len(parts) == 2 and _same(count_part, counts)
    assert name == "sum" and slopes == {"x": 1.0} and sensitivity == pytest.approx(_brute(-4.0, 4.0, norm))
    engine = create_engine("sqlite://")
    with engine.connect() as conn:
        assert [conn.execute(select(term)).scalar() for _, term in terms] == [8.0, 0.0]  # (7 − c)·test
    means = combine([np.array([-20.0, 2.0, 6.0, 1.0, 2.0]), np.array([2.0, 0.5, 1.0, -3.0, 4.0])])
    assert means.tolist() == [-5.0, 1.0, 3.0, 0.0, -0.5]  # c + Σ/max(n, 1), clipped to [−5, 3]


# --- partition selection ---------------------------------------------------------------------------------------


def _threshold(scale: float, delta: float) -> int:
    """The smallest T ≥ 2 with P(a key of one record, 1 + W rounded, reaches T) = P(W ≥ T − 3/2) ≤ δ."""
    t = 2
    while stats.laplace.sf(t - 1.5, scale=scale) > delta:
        t += 1
    return t


@pytest.mark.parametrize(("epsilon", "delta"), [(1.0, 1e-6), (0.1, 1e-9), (3.0, 0.01)])
def test_partition_selection_threshold_and_budget(epsilon: float, delta: float) -> None:
    selection = PartitionSelection("free", epsilon, delta)
    eps0 = epsilon + math.log1p(-delta)  # ε₀ = ε − log(1/(1 − δ)), rounded down
    assert selection.count_epsilon < eps0 and selection.count_epsilon == math.nextafter(eps0, 0.0)
    assert (selection.column, selection.delta, selection.threshold) == ("free", delta, None)
    noise = hardened_laplace_for_epsilon(Fraction(selection.count_epsilon), sensitivity=2.0, dim=2)
    assert selection.calibrated(noise) is selection
    scale = float(profile_of(noise.mechanism).scale)
    assert selection.threshold == _threshold(scale, delta) + math.ceil(noise.grid)
    t = selection.threshold
    noisy = np.array([t - 0.6, t - 0.4, t, t + 5.0, -3.0, t - 1.0])
    assert selection.keep(noisy).tolist() == [False, True, True, True, False, False]


def test_keep_needs_a_threshold() -> None:
    with pytest.raises(AssertionError):
        PartitionSelection("free", 1.0, 1e-6).keep(np.array([1.0]))


# --- indicators --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("literal_value", ["north", "nort", "", "zzz"])
def test_text_comparisons_of_every_operator_count_null_as_false(
    db: tuple[Any, Table], literal_value: str
) -> None:
    table = db[1]
    terms = [compare(table.c.region, op, literal_value, False, "sqlite") for op in OPS]
    for _, k, *got in _execute(db, terms):
        assert got == [0.0 if k is None else float(OPS[op](k, literal_value)) for op in OPS], k


def test_numeric_comparisons_of_a_clamped_column(db: tuple[Any, Table]) -> None:
    table = db[1]
    x = _clamped(table)("x")
    terms = [compare(x, op, t, True, "sqlite") for t in (10.0, 20, 60.0) for op in OPS]
    for raw, _, *got in _execute(db, terms):
        v = min(max(10.0 if raw is None else raw, 10.0), 60.0)
        assert got == [float(OPS[op](v, t)) for t in (10.0, 20.0, 60.0) for op in OPS], raw


def test_both_ways_is_one_exactly_when_the_test_holds(db: tuple[Any, Table]) -> None:
    table = db[1]
    for _, k, got in _execute(db, [both_ways(table.c.region == "south")]):
        assert got == (1.0 if k == "south" else 0.0)


def test_other_dialects_compare_with_least_and_greatest() -> None:
    from sqlalchemy import column
    from sqlalchemy.dialects import postgresql

    for op, name in [(">=", "least"), (">", "greatest"), ("<=", "least"), ("<", "greatest")]:
        text = str(
            numeric_comparison(column("x"), op, 1.0, "postgresql").compile(dialect=postgresql.dialect())
        )
        assert f"{name}(" in text and "min(" not in text and "max(" not in text
