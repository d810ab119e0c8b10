"""The row source of the server's aggregate statements: each record's clamped values, filter weight and cell (bin
or declared keys) computed once, so that the aggregates sum products of columns instead of evaluating the same
expressions again inside every sum (:mod:`.planner`).

Two subqueries over the table: ``pn_values`` clamps every numeric column the query reads (its aggregates, its
``where``, its bins) and indexes the record's declared keys (:func:`.cells.key_index`); ``pn_rows`` computes, from
those, the filter weight (:mod:`.weights`), the bin index (:func:`.cells.bin_index`) and the tests of the key cells
(:func:`.cells.key_tests`), or the record's cell when each test is read once (:func:`.cells.balanced_code`). On
SQLite, when the filter's literals lie strictly inside the declared bounds, ``pn_values`` computes the weight from
the stored columns instead (:func:`_stored_filter`), and a group-by multiplies it into its cells once per record.
Neither SQLite nor PostgreSQL shares a subexpression, and both merge a subquery into the query around it (its
expressions are then evaluated once per reference); a subquery is kept from being merged (:func:`fenced`) exactly
when one of its computed columns would otherwise be evaluated more than once per record (:func:`fences_needed`), so
that a statement reads each expression once and pays for no pass it does not need. The work per record is still
the same whatever the filter selects: every record goes through the same expressions (SECURITY.md requirement 16,
tested in tests/server/test_constant_work.py, and counted in SQLite's instructions in
tests/server/test_statement_work.py).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from sqlalchemy import Float, Table, func, literal, literal_column, select
from sqlalchemy.sql import visitors
from sqlalchemy.sql.elements import ColumnClause

from ..core.predicates import InList, IsNull, Like, atoms_of
from .cells import (
    balanced_code,
    bin_index,
    bin_tests,
    code_tests,
    key_index,
    key_tests,
    weighted_code,
)
from .config import DatasetSpec
from .querylang import QueryError, QuerySpec
from .weights import row_weight

__all__ = ["Rows", "fenced", "fences_needed", "numeric_columns", "row_source"]


def numeric_columns(query: QuerySpec, spec: DatasetSpec) -> list[str]:
    """The numeric columns an aggregate of ``query`` reads (its column, weights, linear coefficients)."""
    named = [query.column, query.weights, *(c for c, _ in (query.coefficients or ()))]
    return list(dict.fromkeys(c for c in named if c is not None and spec.columns[c].type == "number"))


def fenced(statement: Any, dialect: str) -> Any:
    """``statement`` kept from being merged into the query around it: ``LIMIT -1`` (SQLite), ``OFFSET 0``
    (PostgreSQL)."""
    return statement.limit(literal_column("-1")) if dialect == "sqlite" else statement.offset(literal_column("0"))


@dataclasses.dataclass(frozen=True)
class Rows:
    """A row source: ``source`` for the aggregate statement's ``FROM``, each record's filter ``weight`` (None when
    the cell ``tests`` carry it), its clamped aggregate columns (``clamped(name)``, and ``centred(name, c)``: the
    clamped value minus c) and its cell ``tests``; ``layers`` are the two subqueries with the names of the columns
    each computes (:func:`fences_needed`)."""

    source: Any
    weight: Any
    clamped: Callable[[str], Any]
    tests: list[Any]
    layers: tuple[tuple[Any, frozenset[str]], tuple[Any, frozenset[str]]]
    centred: Callable[[str, float], Any]


def _cell_columns(query: QuerySpec) -> tuple[str, ...]:
    """The text columns whose declared categories are the cells: the group-by's keys, or a histogram's column."""
    if query.group_by is not None:
        return query.key_columns()
    return (query.column,) if query.kind == "histogram" and query.column is not None else ()


def _unclamped_bins(query: QuerySpec, spec: DatasetSpec, dialect: str) -> float | None:
    """The lower bound of a histogram's column when its bins can be found on the stored value, NULL as that bound,
    without clamping it (None otherwise): on SQLite (whose stored doubles are never NaN), every internal edge
    strictly inside the declared bounds, so that a value beyond them falls in the bin of the bound it would be
    clamped to (:mod:`.cells`)."""
    col = spec.numeric(query.column) if query.column is not None else None
    if dialect != "sqlite" or col is None or col.bounds is None:
        return None
    lo, hi = col.bounds
    return lo if all(lo < e < hi for e in query.bins[1:-1]) else None


def _stored_filter(query: QuerySpec, spec: DatasetSpec, dialect: str) -> dict[str, float] | None:
    """The lower bound of each numeric column of the filter when the filter's weight can be found on the stored
    values, NULL as that bound, without clamping them (None otherwise): on SQLite (whose stored doubles are never
    NaN), every literal the filter compares a numeric column with strictly inside the column's declared bounds.
    A stored value v beyond a bound then compares with each literal t as the bound it is clamped to does:
    sign(v − t) = sign(bound − t) (as for bins, :func:`_unclamped_bins`), so that the weight is the same 0/1
    value, by the same constant-work indicators (:mod:`.indicators`), computed in the first subquery from the
    stored columns (a text column is then read from the table, never copied out of a subquery)."""
    if dialect != "sqlite":
        return None
    lows: dict[str, float] = {}
    for atom in atoms_of(query.where):
        col = spec.numeric(atom.column)
        if col is None:
            continue
        if col.bounds is None:
            return None
        lo, hi = col.bounds
        if isinstance(atom, Like):  # pragma: no cover - refused on a number (check_predicate_kinds)
            return None
        literals = () if isinstance(atom, IsNull) else atom.values if isinstance(atom, InList) else (atom.value,)
        if not all(lo < float(t) < hi for t in literals):
            return None
        lows[atom.column] = lo
    return lows


def row_source(table: Table, query: QuerySpec, spec: DatasetSpec, clamp: Callable[[str], Any],
               keys: tuple[Any, ...] | None, carried: tuple[str, ...], dialect: str, *,
               fences: tuple[bool, bool] = (True, True), inline_cells: bool = False,
               centre: float | None = None) -> Rows:
    """The row source of an aggregate ``query`` on ``table`` (module docstring): ``clamp(name)`` clamps a stored
    numeric column, ``keys`` are the declared cells of a vector answer (None for a scalar one or a partition
    selection), ``carried`` the key columns of a partition selection (passed through to its ``GROUP BY``);
    ``fences`` keeps ``pn_values`` and ``pn_rows`` from being merged; ``inline_cells``: each cell's test is read
    by one term of the statement only, so that the tests of declared keys are made in the aggregates on the
    record's cell computed once (:func:`.cells.balanced_code`); ``centre``: the aggregated column is read as its
    clamped value minus ``centre`` only (a mean per cell), computed once per record.

    When the filter's weight is computed from the stored columns (:func:`_stored_filter`), a group-by over declared
    keys multiplies it into the cells once per record in ``pn_rows`` — into each cell's test when the tests are
    columns (the same product, w·t, every record computes for every cell whatever the filter selects), into the
    record's cell otherwise (:func:`.cells.weighted_code`: a record filtered out is in no cell, and a balancing
    comparison holds for it instead of a cell's) — and the sums read the tests alone. (A histogram's bins keep the
    weight in the sums: folding it into the bin costs as many instructions as it saves for a few bins.)"""
    atoms = atoms_of(query.where)
    numeric = numeric_columns(query, spec)
    binned = keys is not None and query.group_by is None and bool(query.bins)
    stored = _stored_filter(query, spec, dialect) if query.where else None  # the weight from the table's columns
    where_atoms = [] if stored is not None else atoms
    where_numeric = [a.column for a in where_atoms if spec.columns[a.column].type == "number"]
    binned_column = [query.column] if binned and query.column is not None else []
    lowest = _unclamped_bins(query, spec, dialect) if binned and query.column not in where_numeric else None
    read = [c for c in dict.fromkeys([*numeric, *where_numeric, *binned_column])
            if lowest is None or c != query.column]
    named = {c: f"pn_x{i}" for i, c in enumerate(read)}
    text = [a.column for a in where_atoms if spec.columns[a.column].type != "number"]
    if lowest is not None:  # the stored value is carried, its bin found without clamping it
        text.extend(binned_column)
    cells = () if keys is None or binned else _cell_columns(query)
    categories = [spec.columns[c].categories or () for c in cells]
    first = [*(clamp(c).label(named[c]) for c in read), *(table.c[c] for c in dict.fromkeys([*text, *carried]))]
    first.extend(key_index(table.c[c], k, dialect).label(f"pn_i{i}")
                 for i, (c, k) in enumerate(zip(cells, categories, strict=True)))
    if stored is not None:

        def stored_of(name: str) -> tuple[Any, bool]:
            if name in stored:
                return func.coalesce(table.c[name], literal(stored[name], Float)), True
            return table.c[name], False

        first.append(row_weight(query.where, stored_of, dialect).label("pn_w"))
    values: Any = table  # no subquery when the query reads no computed value (a count without a filter)
    if first:
        values_select = select(*first).select_from(table)
        values = (fenced(values_select, dialect) if fences[0] else values_select).subquery("pn_values")

    def column_of(name: str) -> tuple[Any, bool]:
        return (values.c[named[name]], True) if name in named else (values.c[name], False)

    second: list[Any] = []
    # the weight a column of pn_values and each cell's test a column of pn_rows: the weight multiplied into the
    # tests once per record (each test then carries it), not into every sum that reads them
    folded = stored is not None and bool(cells)
    if stored is not None and not folded:
        second.append(values.c.pn_w)
    elif query.where and not folded:
        second.append(row_weight(query.where, column_of, dialect).label("pn_w"))
    aggregated = numeric if query.kind != "histogram" else []  # a histogram counts: its column gives the bins
    shifted = centre is not None and query.column in aggregated
    second.extend(values.c[named[c]] if not (shifted and c == query.column)
                  else (values.c[named[c]] - literal(centre, Float)).label("pn_m") for c in aggregated)
    if binned:
        assert query.column is not None and query.bins
        value = (values.c[named[query.column]] if lowest is None
                 else func.coalesce(values.c[query.column], literal(lowest, Float)))
        second.append(bin_index(value, query.bins).label("pn_b"))
    if cells:
        indices = [values.c[f"pn_i{i}"] for i in range(len(cells))]
        if inline_cells:  # the cell once, its tests in the aggregates (.cells)
            code = (weighted_code(indices, categories, values.c.pn_w, dialect) if folded
                    else balanced_code(indices, categories, dialect))
            second.append(code.label("pn_c"))
        else:
            second.extend((values.c.pn_w * t if folded else t).label(f"pn_k{j}")
                          for j, t in enumerate(key_tests(indices, categories, keys or (), dialect)))
    second.extend(values.c[c] for c in dict.fromkeys(carried))
    rows: Any = values
    if second:
        rows_select = select(*second).select_from(values)
        rows = (fenced(rows_select, dialect) if fences[1] else rows_select).subquery("pn_rows")

    def clamped(name: str) -> Any:
        if name not in aggregated or (shifted and name == query.column):  # pragma: no cover - never asked
            raise QueryError(f"column {name!r} is not read by this query.")
        return rows.c[named[name]]

    def centred(name: str, at: float) -> Any:
        if shifted and name == query.column and at == centre:
            return rows.c.pn_m
        return clamped(name) - literal(at, Float)

    tests: list[Any] = []
    if binned:
        assert query.bins
        tests = bin_tests(rows.c.pn_b, len(query.bins) - 1, dialect)
    elif cells and inline_cells:
        tests = code_tests(rows.c.pn_c, categories, keys or (), dialect)
    elif cells:
        tests = [rows.c[f"pn_k{j}"] for j in range(len(keys or ()))]
    weight = None if folded else rows.c.pn_w if query.where else literal(1.0, Float)
    computed_values = frozenset([*named.values(), *(f"pn_i{i}" for i in range(len(cells))),
                                 *(["pn_w"] if stored is not None else [])])
    computed_rows = frozenset(c.name for c in second if c.name.startswith(("pn_w", "pn_b", "pn_c", "pn_k", "pn_m"))
                              and not (stored is not None and c.name == "pn_w"))
    layers = ((values, computed_values if first else frozenset()), (rows, computed_rows if second else frozenset()))
    return Rows(rows, weight, clamped, tests, layers, centred)


def _references(expressions: Iterable[Any], source: Any) -> Counter[str]:
    """How many times ``expressions`` read each column of ``source``."""
    counts: Counter[str] = Counter()
    for expression in expressions:
        for element in visitors.iterate(expression):
            if isinstance(element, ColumnClause) and element.table is source:
                counts[element.name] += 1
    return counts


def fences_needed(rows: Rows, terms: list[Any]) -> tuple[bool, bool]:
    """Which of the two subqueries of ``rows`` must be kept from being merged so that none of their computed columns
    is evaluated more than once per record by the statement selecting ``terms`` from ``rows.source`` (a merged
    subquery's column is evaluated once per reference; a kept one's once)."""
    (values, computed_values), (outer_rows, computed_rows) = rows.layers
    outer = _references(terms, outer_rows)
    keep_rows = any(outer[name] > 1 for name in computed_rows)
    if outer_rows is values:  # one layer at most: the statement reads it directly
        return any(outer[name] > 1 for name in computed_values), False
    inner: Counter[str] = Counter()
    for column in outer_rows.element.selected_columns:
        times = 1 if keep_rows else outer[column.name]
        for name, n in _references([column], values).items():
            inner[name] += n * times
    return any(inner[name] > 1 for name in computed_values), keep_rows
