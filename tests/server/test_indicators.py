"""The constant-work indicators of :mod:`privnoise.server.indicators` equal the comparisons they replace, on SQLite
and PostgreSQL, at ties, neighbouring doubles, subnormal differences and the ±1e100 bound limit; text comparisons
count NULL as false."""

from __future__ import annotations

import math
import operator

import numpy as np
import pytest

pytest.importorskip("sqlalchemy")

from sqlalchemy import Column, Float, MetaData, String, Table, create_engine, insert, select  # noqa: E402

from privnoise.server.indicators import compare, numeric_comparison  # noqa: E402

OPS = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
TINY = 5e-324
LITERALS = [0.0, 10.0, -3.5, 1e-300, TINY, -TINY, 1e100, -1e100, 1e308, -1e308]


def _values() -> list[float]:
    values = {-1e100, 1e100, 0.0, -0.0, TINY, -TINY, 2 * TINY, 10.0, -3.5, 1e-300}
    for t in LITERALS:
        values.update({t, math.nextafter(t, math.inf), math.nextafter(t, -math.inf)})
    values.update(np.random.default_rng(3).uniform(-20, 20, 40).tolist())
    return sorted(v for v in values if abs(v) <= 1e100)


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path) -> object:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'indicators.db'}"
    else:
        from tests.server._harness import _fresh_postgres_database

        url = _fresh_postgres_database(str(request.getfixturevalue("_postgres_url")))
    engine = create_engine(url)
    yield engine
    engine.dispose()


def _table(engine: object, rows: list[dict[str, object]]) -> Table:
    meta = MetaData()
    table = Table("t", meta, Column("x", Float(precision=53)), Column("k", String))
    meta.create_all(engine)
    with engine.begin() as conn:  # type: ignore[attr-defined]
        conn.execute(insert(table), rows)
    return table


def test_numeric_indicators_equal_the_comparisons(engine: object) -> None:
    values = _values()
    table = _table(engine, [{"x": v, "k": None} for v in values])
    dialect = engine.dialect.name  # type: ignore[attr-defined]
    columns = [numeric_comparison(table.c.x, op, t, dialect) for t in LITERALS for op in OPS]
    with engine.connect() as conn:  # type: ignore[attr-defined]
        rows = conn.execute(select(table.c.x, *columns)).all()
    assert len(rows) == len(values)
    for x, *got in rows:
        expected = [float(OPS[op](x, t)) for t in LITERALS for op in OPS]
        assert [float(g) for g in got] == expected, x


def test_text_indicators_count_null_as_false(engine: object) -> None:
    keys = ["north", "south", "nort", "northx", None, ""]
    table = _table(engine, [{"x": 0.0, "k": k} for k in keys])
    dialect = engine.dialect.name  # type: ignore[attr-defined]
    literals = ["north", "", "nort"]
    ops = ["=", "!="]
    with engine.connect() as conn:  # type: ignore[attr-defined]
        rows = conn.execute(select(table.c.k, *[compare(table.c.k, op, v, False, dialect)
                                                for v in literals for op in ops])).all()
    for k, *got in rows:
        expected = [0.0 if k is None else float(OPS[op](k, v)) for v in literals for op in ops]
        assert [float(g) for g in got] == expected, k


def test_an_unknown_operator_is_refused() -> None:
    from sqlalchemy import column

    with pytest.raises(ValueError, match="unknown comparison '<>'"):
        numeric_comparison(column("x"), "<>", 1.0, "sqlite")
    with pytest.raises(ValueError, match="unknown comparison '=='"):
        compare(column("k"), "==", "a", False, "sqlite")
