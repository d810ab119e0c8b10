"""Compound ``where`` clauses in the server (:mod:`privnoise.server.weights`): the records a clause's constant-work
weight selects, on SQLite and PostgreSQL, are those the standard library's SQLite selects when it evaluates the
same clause itself (random clauses, hypothesis) over the values as the server reads them — numbers clamped to their
declared bounds with NULL as the lower bound, text as stored (NULL included), ``LIKE`` case-sensitive.

A clause of plain comparisons gives the statement it always did, and every kind of test and connective reaches the
planner's statement, the ledger's text and the query's JSON description."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("sqlalchemy")

from sqlalchemy import Column, Float, Integer, MetaData, String, Table, create_engine, insert, literal, select  # noqa: E402

from privnoise.core.conditions import Condition  # noqa: E402
from privnoise.core.predicates import AnyOf, InList, IsNull, Like, Not  # noqa: E402
from privnoise.server.indicators import compare  # noqa: E402
from privnoise.server.limits import filter_size, parameter_bound  # noqa: E402
from privnoise.server.planner import _clamp  # noqa: E402
from privnoise.server.querychecks import checked_spec  # noqa: E402
from privnoise.server.queryspec import QueryError, QuerySpec  # noqa: E402
from privnoise.server.steps import step_constructs  # noqa: E402
from privnoise.server.weights import glob_pattern, row_weight  # noqa: E402
from privnoise.sql import parse_predicate  # noqa: E402

ROWS = 80
LOW, HIGH = -2.0, 2.0
_rng = np.random.default_rng(11)
NUMBERS = [None if u < 0.15 else float(v) for u, v in zip(_rng.random(ROWS), _rng.integers(-4, 5, ROWS), strict=True)]
WORDS = [None if u < 0.15 else str(w) for u, w in zip(_rng.random(ROWS), _rng.choice(
    ["north", "North", "south", "east", "n_x", "n%", "a*b", "[x]", "b\\s", "?"], ROWS), strict=True)]


def _server_value(x: float | None) -> float:
    return min(max(LOW if x is None else x, LOW), HIGH)


def _reference(where: str) -> set[int]:
    """The records SQLite keeps for ``WHERE <where>`` on the values as the server reads them."""
    db = sqlite3.connect(":memory:")
    db.execute("PRAGMA case_sensitive_like = ON")
    db.execute("CREATE TABLE t (i INTEGER, x REAL, w TEXT)")
    db.executemany("INSERT INTO t VALUES (?, ?, ?)",
                   [(i, _server_value(x), w) for i, (x, w) in enumerate(zip(NUMBERS, WORDS, strict=True))])
    return {row[0] for row in db.execute(f"SELECT i FROM t WHERE {where}")}


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def stored(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Table]]:
    """The records as a server stores them (raw: NULLs and values outside the bounds), on SQLite or PostgreSQL."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('where') / 'where.db'}"
    else:
        from tests.server._harness import _fresh_postgres_database

        url = _fresh_postgres_database(str(request.getfixturevalue("_postgres_url")))
    engine = create_engine(url)
    meta = MetaData()
    # byte order for text comparisons on PostgreSQL too, as SQLite's reference compares
    text = String(collation="C") if request.param == "postgresql" else String()
    table = Table("t", meta, Column("i", Integer), Column("x", Float(precision=53)), Column("w", text))
    meta.create_all(engine)
    with engine.begin() as conn:
        conn.execute(insert(table), [{"i": i, "x": x, "w": w} for i, (x, w) in enumerate(zip(NUMBERS, WORDS,
                                                                                             strict=True))])
    yield engine, table
    engine.dispose()


def _selected(stored: tuple[Any, Table], where: str) -> set[int]:
    engine, table = stored
    dialect = engine.dialect.name

    def column_of(name: str) -> tuple[Any, bool]:
        if name == "x":
            return _clamp(table.c.x, LOW, HIGH, dialect), True
        return table.c[name], False

    weight = row_weight((parse_predicate(where),), column_of, dialect)
    with engine.connect() as conn:
        rows = conn.execute(select(table.c.i, weight)).all()
    assert {float(w) for _, w in rows} <= {0.0, 1.0}
    return {int(i) for i, w in rows if float(w) == 1.0}


number = st.integers(-4, 4).map(str)
word = st.sampled_from(["'north'", "'North'", "'south'", "'zz'", "'n_x'", "'a*b'", "'[x]'", "'b\\s'"])
pattern = st.sampled_from(["'n%'", "'%th'", "'_o%'", "'%'", "'n_x'", "'a*%'", "'[%'", "'?'", "'b\\%'", "'%*%'"])
atom = st.one_of(
    st.tuples(st.sampled_from(["=", "!=", "<", "<=", ">", ">="]), number).map(lambda t: f"x {t[0]} {t[1]}"),
    st.tuples(st.sampled_from(["=", "!=", "<", ">="]), word).map(lambda t: f"w {t[0]} {t[1]}"),
    st.lists(number, min_size=1, max_size=3).map(lambda v: f"x IN ({', '.join(v)})"),
    st.lists(word, min_size=1, max_size=3).map(lambda v: f"w IN ({', '.join(v)})"),
    st.lists(word, min_size=1, max_size=3).map(lambda v: f"w NOT IN ({', '.join(v)})"),
    st.tuples(number, number).map(lambda t: f"x BETWEEN {t[0]} AND {t[1]}"),
    st.sampled_from(["x IS NULL", "x IS NOT NULL", "w IS NULL", "w IS NOT NULL"]),
    st.tuples(st.sampled_from(["LIKE", "NOT LIKE"]), pattern).map(lambda t: f"w {t[0]} {t[1]}"),
)
predicate = st.recursive(atom, lambda inner: st.one_of(
    st.tuples(inner, st.sampled_from(["AND", "OR"]), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
    inner.map(lambda p: f"NOT ({p})"),
), max_leaves=6)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(predicate)
def test_random_where_clauses_select_the_records_sqlite_selects(stored: tuple[Any, Table], where: str) -> None:
    assert _selected(stored, where) == _reference(where), where


@pytest.mark.parametrize("where", ["w LIKE 'n%'", "w LIKE 'N%'", "w LIKE 'a*b'", "w LIKE '[x]'", "w LIKE 'b\\s'",
                                   "w LIKE '?'", "w NOT LIKE '%'", "NOT w IS NULL", "x IS NULL", "x >= 3"])
def test_edge_clauses(stored: tuple[Any, Table], where: str) -> None:
    assert _selected(stored, where) == _reference(where)


def test_like_is_case_sensitive_and_a_glob_wildcard_in_the_text_is_literal() -> None:
    assert glob_pattern("a*b?[c]%_") == "a[*]b[?][[]c]*?"
    assert _reference("w LIKE 'n%'") != _reference("w LIKE 'N%'")


def test_a_clause_of_comparisons_gives_the_statement_it_always_did() -> None:
    from sqlalchemy import column
    from sqlalchemy.dialects import sqlite

    x, w = _clamp(column("x"), LOW, HIGH, "sqlite"), column("w")
    where = (Condition("x", ">=", 1.0), Condition("w", "=", "north"))
    weight = row_weight(where, lambda c: (x, True) if c == "x" else (w, False), "sqlite")
    before = literal(1.0, Float) * compare(x, ">=", 1.0, True, "sqlite") * compare(w, "=", "north", False, "sqlite")
    dialect = sqlite.dialect()
    assert str(weight.compile(dialect=dialect)) == str(before.compile(dialect=dialect))


def test_a_query_describes_and_checks_its_compound_where() -> None:
    where = (AnyOf((Condition("x", ">", 1.0), IsNull("w"))), Not(InList("w", ("a", "b"))), Like("w", "n%"))
    spec = checked_spec(QuerySpec("sum", "x", where=where, dataset="d"))
    assert spec.columns() == {"x", "w"}
    assert spec.as_dict()["where"] == ["(x > 1 or w is null)", "not w in ('a', 'b')", "w like 'n%'"]
    assert [c for c, _ in step_constructs(spec)] == ["x", "w", "w", "w"]
    assert "(w in …)" in step_constructs(spec)[2][1]
    assert filter_size(where) > filter_size((Condition("x", ">", 1.0),)) * 3
    assert parameter_bound(spec) > parameter_bound(QuerySpec("sum", "x", dataset="d"))
    with pytest.raises(QueryError, match="at most 8 conditions"):
        checked_spec(QuerySpec("count", where=(AnyOf(tuple(Condition("x", ">", float(i)) for i in range(9))),)))
    deep: Any = Condition("x", ">", 1.0)
    for _ in range(9):
        deep = Not(deep)
    with pytest.raises(QueryError, match="nests"):
        checked_spec(QuerySpec("count", where=(deep,)))
    with pytest.raises(QueryError, match="IN list holds"):
        checked_spec(QuerySpec("count", where=(InList("x", tuple(float(i) for i in range(65))),)))
    with pytest.raises(QueryError, match="control characters"):
        checked_spec(QuerySpec("count", where=(Like("w", "a\x00"),)))


def test_the_parameter_bound_holds_for_compound_clauses(tmp_path: Path) -> None:
    """The statement's parameters stay below :func:`~privnoise.server.limits.parameter_bound` for every kind of
    test and connective."""
    from sqlalchemy.dialects import sqlite

    from privnoise.server.config import load_config
    from privnoise.server.planner import make_plan

    (tmp_path / "d.csv").write_text("x,w\n1.0,north\n", encoding="utf-8")
    (tmp_path / "owner.toml").write_text(
        '[server]\ndatabase = "sqlite"\n[datasets.d]\nsource = "d.csv"\nepsilon = 10\ndelta = 0.5\n'
        "[datasets.d.columns.x]\nbounds = [-2.0, 2.0]\n[datasets.d.columns.w]\ntype = \"text\"\n"
        '[datasets.d.policies.sum]\nmechanism = "laplace"\nepsilon = 1\n', encoding="utf-8")
    config = load_config(tmp_path / "owner.toml")
    meta = MetaData()
    table = Table("d", meta, Column("pn_row", Integer), Column("x", Float), Column("w", String))
    clauses = ["x IN (1, 2, 3) OR NOT (w LIKE 'n%' AND w IS NULL)", "w NOT IN ('a', 'b', 'c', 'd') AND x IS NULL",
               "NOT (NOT (x > 1 OR x < -1) AND (w = 'a' OR w != 'b'))"]
    for where in clauses:
        spec = checked_spec(QuerySpec("sum", "x", where=(parse_predicate(where),), dataset="d"))
        plan = make_plan(spec, config.datasets["d"], table, records=1, dialect=sqlite.dialect())
        assert len(plan.parameters) <= parameter_bound(spec), where


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(predicate)
def test_a_dask_partition_selects_the_records_sqlite_selects(where: str) -> None:
    """The Dask engine's partition task (numpy masks, :mod:`privnoise.server.dask_engine`) counts the records of
    the reference."""
    pd = pytest.importorskip("pandas")
    from privnoise.server import dask_engine

    part = pd.DataFrame({"x": pd.array(NUMBERS, dtype="Float64"), "w": pd.Series(WORDS, dtype=object)})
    columns = {"x": ("number", LOW, HIGH), "w": ("text", 0.0, 0.0)}
    job = dask_engine.Evaluation(columns, (parse_predicate(where),), (("count", ()),))
    out = dask_engine.evaluate_partition(part, dask_engine.pack(job))
    assert out[0] == len(_reference(where)), where
