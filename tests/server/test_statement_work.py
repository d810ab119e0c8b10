"""SECURITY.md requirement 16, counted rather than timed: on SQLite, the number of virtual-machine instructions the
server's statement executes does not depend on which records its filter selects.

The latency tests (``test_constant_work.py``) compare times with a margin; here SQLite's progress handler, called
after every instruction, counts them exactly. Within each group below the queries differ only in their literals, so
that their filters select every record, none or some: the statements are one text with other parameters, and must
execute the same number of instructions on a table holding NULLs, values outside the declared bounds and a key
outside the declared categories (:mod:`tests.server._plan_lab`). The power check: a plain ``WHERE`` statement's
count changes with its literal.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("sqlalchemy")

from sqlalchemy import Table  # noqa: E402
from sqlalchemy.engine import Engine  # noqa: E402

from privnoise.core.predicates import AnyOf, InList, IsNull, Like, Not  # noqa: E402
from privnoise.server.planner import make_plan  # noqa: E402
from privnoise.server.querylang import QuerySpec, parse_query  # noqa: E402
from tests.server._plan_lab import ROWS, database, dataset, laplace  # noqa: E402


def _compound(kind: str, column: str, values: tuple[float, ...], pattern: str, **extra: Any) -> QuerySpec:
    where = (AnyOf((InList("x", values), Like("region", pattern))), Not(IsNull("y")))
    return QuerySpec(kind, column=column, where=where, **extra)


GROUPS: list[list[str | QuerySpec]] = [
    # a numeric literal inside the declared bounds [10, 60] of x (the weight from the stored values) ...
    ["sum(x) where x > 12", "sum(x) where x > 59.5", "sum(x) where x > 10.5", "sum(x) where x > 40"],
    # ... and at a bound (the weight from the clamped values)
    ["sum(x) where x >= 10", "sum(x) where x >= 60"],
    ["mean(y) where region = 'north'", "mean(y) where region = 'nxrth'", "mean(y) where region = 'east'"],
    ["count() where region = 'north' and y <= 1", "count() where region = 'q' and y <= -4.5",
     "count() where region = 'east' and y <= 2.5"],
    ["variance(y) where x < 50", "variance(y) where x < 10.5", "variance(y) where x < 59.5"],
    ["mean(z) where x < 50 group by region", "mean(z) where x < 10.5 group by region",
     "mean(z) where x < 59.5 group by region"],
    ["mean(z) where region = 'east' group by region", "mean(z) where region = 'qq' group by region"],
    ["count() where region != 'east' group by region", "count() where region != 'qq' group by region",
     "count() where region != 'north' group by region"],
    ["sum(y) where x >= 30 group by region", "sum(y) where x >= 59.5 group by region",
     "sum(y) where x >= 10.5 group by region"],
    ["histogram(x, bins = [10, 20, 40, 60]) where region = 'south'",
     "histogram(x, bins = [10, 20, 40, 60]) where region = 'qq'",
     "histogram(x, bins = [10, 20, 40, 60]) where region = 'north'"],
    ["histogram(region) where y > 0", "histogram(region) where y > 2.9", "histogram(region) where y > -4.9"],
    [_compound("sum", "y", (16.0, 22.5), "n%"), _compound("sum", "y", (11.0, 12.0), "q%"),
     _compound("sum", "y", (16.0, 22.5), "%")],
    [_compound("mean", "z", (16.0, 22.5), "n%", group_by="region"),
     _compound("mean", "z", (11.0, 12.0), "q%", group_by="region")],
]


@pytest.fixture(scope="module")
def db() -> Iterator[tuple[Engine, Table, sqlite3.Connection]]:
    engine, table = database()
    raw: Any = engine.raw_connection()
    connection = raw.driver_connection
    connection.execute("SELECT count(*) FROM d").fetchall()  # the schema read once, before any count
    yield engine, table, connection
    raw.close()
    engine.dispose()


def _instructions(connection: sqlite3.Connection, sql: str, parameters: Any) -> int:
    """The virtual-machine instructions SQLite executes for ``sql``."""
    counted = [0]

    def tick() -> int:
        counted[0] += 1
        return 0

    connection.set_progress_handler(tick, 1)
    try:
        connection.execute(sql, parameters).fetchall()
    finally:
        connection.set_progress_handler(None, 1)
    return counted[0]


@pytest.mark.parametrize("group", GROUPS, ids=[str(g[0])[:60] for g in GROUPS])
def test_a_statement_executes_as_many_instructions_whatever_its_filter_selects(
    db: tuple[Engine, Table, sqlite3.Connection], group: list[str | QuerySpec]
) -> None:
    engine, table, connection = db
    spec = dataset(laplace)
    plans = [make_plan(parse_query(q) if isinstance(q, str) else q, spec, table, records=len(ROWS),
                       dialect=engine.dialect) for q in group]
    assert len({p.sql for p in plans}) == 1, "the queries of a group must give one statement text"
    counts = [_instructions(connection, p.sql, p.parameters) for p in plans]
    seen = dict(zip(map(str, group), counts, strict=True))
    assert len(set(counts)) == 1, f"instructions depend on the selection: {seen}"


def test_the_count_sees_a_where_statement(db: tuple[Engine, Table, sqlite3.Connection]) -> None:
    _, _, connection = db
    sql = "SELECT coalesce(sum(max(10.0, min(60.0, coalesce(x, 10.0)))), 0.0), count(*) FROM d WHERE x > ?"
    assert _instructions(connection, sql, (12.0,)) != _instructions(connection, sql, (59.5,))
