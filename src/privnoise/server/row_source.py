"""The row source of the server's aggregate statements: each record's filter weight, clamped values and cell
indicators computed once, in subqueries, so that the aggregates sum products of columns instead of evaluating the
same expressions again inside every sum (:mod:`.planner`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import Table, literal_column, select

from .config import DatasetSpec
from .querylang import QueryError, QuerySpec

__all__ = ["fenced", "numeric_columns", "row_source"]


def numeric_columns(query: QuerySpec, spec: DatasetSpec) -> list[str]:
    """The numeric columns an aggregate of ``query`` reads (its column, weights, linear coefficients)."""
    named = [query.column, query.weights, *(c for c, _ in (query.coefficients or ()))]
    return list(dict.fromkeys(c for c in named if c is not None and spec.columns[c].type == "number"))


def fenced(statement: Any, dialect: str) -> Any:
    """``statement`` kept from being merged into the query around it: ``LIMIT -1`` (SQLite), ``OFFSET 0``
    (PostgreSQL)."""
    return statement.limit(literal_column("-1")) if dialect == "sqlite" else statement.offset(literal_column("0"))


def row_source(table: Table, weight: Any, clamped: Callable[[str], Any], columns: list[str], text: list[str],
                tests_of: Callable[[Any, Callable[[str], Any]], list[Any]], key_columns: tuple[str, ...],
                dialect: str, *, binned: bool) -> tuple[Any, Any, Callable[[str], Any], list[Any]]:
    """Subqueries giving, for each record, its filter weight, its clamped columns and its cell indicators, each
    computed once; the aggregates are then sums of products of these. Bins of a numeric column (``binned``) are
    tested on the clamped value in a second subquery, so that the clamping is done once too.

    Written inline, the weight, the clamping and the indicators would be evaluated again inside every sum (neither
    SQLite nor PostgreSQL shares subexpressions), several times the work of the statement. Each subquery is kept
    from being merged back (:func:`_fenced`). The work per record is still the same whatever the filter selects:
    every record goes through both with the same expressions (SECURITY.md requirement 16, tested in
    tests/server/test_constant_work.py). ``tests_of(source, clamped)`` builds the cell indicators on the first
    subquery (its ``c`` holds the ``text`` columns; ``clamped`` gives its clamped numeric columns).
    """
    named = {c: f"pn_x{i}" for i, c in enumerate(columns)}
    if not binned:  # the indicators read stored text only: one subquery (a second would only add a pass)
        tests = tests_of(table, clamped)
        rows = fenced(select(weight.label("pn_w"), *(clamped(c).label(named[c]) for c in columns),
                              *(t.label(f"pn_k{j}") for j, t in enumerate(tests)),
                              *(table.c[c] for c in key_columns)).select_from(table), dialect).subquery("pn_rows")

        def clamped_one(name: str) -> Any:
            if name not in named:  # pragma: no cover - _numeric_columns names every column an aggregate reads
                raise QueryError(f"column {name!r} is not read by this query.")
            return rows.c[named[name]]

        return rows, rows.c.pn_w, clamped_one, [rows.c[f"pn_k{j}"] for j in range(len(tests))]
    carried = list(dict.fromkeys([*text, *key_columns]))
    values = fenced(select(weight.label("pn_w"), *(clamped(c).label(named[c]) for c in columns),
                            *(table.c[c] for c in carried)).select_from(table), dialect).subquery("pn_values")

    def clamped_value(name: str) -> Any:
        if name not in named:  # pragma: no cover - _numeric_columns names every column an aggregate reads
            raise QueryError(f"column {name!r} is not read by this query.")
        return values.c[named[name]]

    tests = tests_of(values, clamped_value)
    if not tests:
        return values, values.c.pn_w, clamped_value, []
    rows = fenced(select(values.c.pn_w, *(values.c[named[c]] for c in columns),
                          *(t.label(f"pn_k{j}") for j, t in enumerate(tests)),
                          *(values.c[c] for c in key_columns)).select_from(values), dialect).subquery("pn_rows")

    def clamped_row(name: str) -> Any:
        clamped_value(name)
        return rows.c[named[name]]

    return rows, rows.c.pn_w, clamped_row, [rows.c[f"pn_k{j}"] for j in range(len(tests))]
