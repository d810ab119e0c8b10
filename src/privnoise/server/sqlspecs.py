"""A SQL statement as the server's own queries: one :class:`~.queryspec.QuerySpec` per distinct aggregate, each
planned, charged and answered exactly as the same query of the query language (the same :class:`~.plans.Plan`).

The statement is read by :func:`privnoise.sql.parse_statement` (sqlglot, in the request's dialect); its ``FROM``
names the dataset. Each distinct aggregate becomes one query:

============================================================  ==================================================
SQL                                                            the server's query
============================================================  ==================================================
``COUNT(*)``                                                   ``count()``
``SUM(c)``, ``AVG(c)``                                         ``sum(c)``, ``mean(c)``
``VAR_POP(c)``, ``VARIANCE(c)``, ``STDDEV(c)``                 ``variance(c)`` (post-processed: :mod:`.sqlreleases`)
``PERCENTILE_CONT(p) WITHIN GROUP (ORDER BY c)``, ``MEDIAN``,  ``quantile(c, p)`` (p = 0.5, 0, 1)
``MIN``, ``MAX``
``WHERE``                                                      its ``where`` (compound predicates: :mod:`.weights`)
``GROUP BY k1, …``                                             its ``group by`` (``count``, ``sum``, ``mean``)
============================================================  ==================================================

A ``WHERE`` of conditions joined by ``AND`` (or ``BETWEEN``) is the ``where`` of that many conditions, as the query
language writes it, so that ``SELECT AVG(x) FROM d WHERE a > 1 AND b = 'n'`` and ``mean(x) from d where a > 1 and
b = 'n'`` are one query with one plan. Refused before anything is planned, each with its position in the statement:
``COUNT(col)`` and ``COUNT(DISTINCT …)`` (the server's datasets protect records: no unit to count), aggregates
other than ``COUNT(*)``, ``SUM`` and ``AVG`` with ``GROUP BY``, more than :data:`MAX_AGGREGATES` aggregates, and a
``FROM`` that names no dataset the querier may query. The statement's options (``WITH DIFFERENTIAL_PRIVACY
OPTIONS(...)``) never change a plan: :func:`check_options` refuses those the owner's policies do not grant.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Collection
from dataclasses import dataclass
from fractions import Fraction

import sqlglot
from sqlglot import exp

from ..core.predicates import AllOf, Predicate
from ..sql import Aggregate, SqlError, Statement, parse_statement, read_options
from ..sql.positions import where_in
from .budgets import text as exact_text
from .plans import Plan
from .querychecks import checked_spec, key_columns
from .queryspec import GROUPED_KINDS, QueryError, QuerySpec

__all__ = [
    "MAX_AGGREGATES",
    "StatementSpecs",
    "base_of",
    "check_options",
    "plan_error",
    "position_of",
    "read_statement",
    "specs_of",
    "where_of",
]

log = logging.getLogger("privnoise.server")

#: The most distinct aggregates one statement may release (each is planned before the charge).
MAX_AGGREGATES = 8
_KINDS = {"count": "count", "sum": "sum", "mean": "mean", "variance": "variance", "stddev": "variance",
          "quantile": "quantile"}


@dataclass(frozen=True)
class StatementSpecs:
    """A statement, its dataset, and the query of each distinct base aggregate (:func:`base_of`), in order."""

    statement: Statement
    dataset: str
    specs: dict[Aggregate, QuerySpec]


def base_of(aggregate: Aggregate) -> Aggregate:
    """The aggregate whose query answers ``aggregate``: the variance of a ``STDDEV``, the aggregate itself else."""
    if aggregate.kind == "stddev":
        return Aggregate("variance", aggregate.column, text=aggregate.text)
    return aggregate


@functools.lru_cache(maxsize=1024)
def read_statement(text: str, dialect: str | None) -> Statement:
    """The statement of ``text`` (kept per text and dialect; errors are not kept). The parser's own failures on
    malformed text are refusals (:class:`~privnoise.sql.SqlError`), never server errors."""
    try:
        return parse_statement(text, dialect=dialect)
    except SqlError:
        raise
    except RecursionError:
        raise SqlError("the statement nests too deeply") from None
    except Exception as exc:  # noqa: BLE001 - whatever the parser raises on malformed text is the text's fault
        log.info("a statement the SQL parser could not read: %s", type(exc).__name__)
        raise SqlError(f"the statement does not parse ({type(exc).__name__})") from None


def position_of(text: str, pattern: str) -> tuple[int | None, int | None]:
    """(line, column), 1-based, of the first match of ``pattern`` (case-insensitive) in ``text`` — of its first
    group, if it has one; (None, None) when there is none."""
    found = re.search(pattern, text, re.IGNORECASE)
    if found is None:
        return None, None
    start = found.start(1) if found.re.groups else found.start()
    return text.count("\n", 0, start) + 1, start - (text.rfind("\n", 0, start) + 1) + 1


def _aggregate_at(text: str, aggregate: Aggregate, dialect: str | None) -> tuple[int | None, int | None]:
    """Where ``aggregate`` is written: the first node of the statement that is it, as the parser reads it; else
    (no offsets) its function's first call that names its column inside its parentheses, or after them
    (``WITHIN GROUP (ORDER BY c)``), or its first call."""
    try:
        tree = sqlglot.parse_one(read_options(text)[0], read=dialect)
        for node in tree.walk():
            if isinstance(node, exp.Func | exp.WithinGroup) and node.sql(dialect=dialect) == aggregate.text:
                found = where_in(text, node)
                if found[0] is not None:
                    return found
    except Exception:  # noqa: BLE001 - the statement parsed once already; a position is a courtesy
        pass
    name = re.escape(aggregate.text.split("(")[0].strip() or "count")
    column = re.escape(aggregate.column or "*")
    for pattern in (rf"\b{name}\s*\((?=[^()]*?(?<![\w.]){column}(?!\w))",
                    rf"\b{name}\s*\((?=[^;]{{0,200}}?(?<![\w.]){column}(?!\w))", rf"\b{name}\s*\("):
        found = position_of(text, pattern)
        if found[0] is not None:
            return found
    return None, None


def _table_at(text: str, table: str) -> tuple[int | None, int | None]:
    return position_of(text, rf"\bFROM\s+(?:[\w`\"\[\]]+\.)*[`\"\[]?({re.escape(table)})(?![\w])")


def where_of(statement: Statement) -> tuple[Predicate, ...]:
    """The statement's ``WHERE`` as the predicates of a query's ``where``: a conjunction is its parts."""
    return tuple(p for w in statement.where for p in (w.parts if isinstance(w, AllOf) else (w,)))


def specs_of(statement: Statement, datasets: Collection[str], dialect: str | None = None) -> StatementSpecs:
    """The queries of ``statement`` (module docstring), read in ``dialect``; ``datasets`` are those the querier
    may query."""
    text, name = statement.text, statement.table
    if name not in datasets:
        raise SqlError(f"FROM {name}: unknown dataset {name!r} (the datasets you may query are those of "
                       "GET /v1/budget)", *_table_at(text, name))
    where, group = where_of(statement), statement.group_by
    clauses = [("WHERE", r"\b(WHERE)\b", QuerySpec("count", where=where, dataset=name))]
    if group:
        clauses.append(("GROUP BY", r"\b(GROUP)\s+BY\b", QuerySpec("count", dataset=name, group_by=tuple(group))))
    for word, pattern, clause in clauses:  # the limits of the clauses every query shares, at their position
        try:
            checked_spec(clause)
        except QueryError as exc:
            raise SqlError(f"{word}: {exc}", *position_of(text, pattern)) from None
    specs: dict[Aggregate, QuerySpec] = {}
    for aggregate in statement.aggregates:
        base = base_of(aggregate)
        if base in specs:
            continue
        at = _aggregate_at(text, aggregate, dialect)
        if aggregate.kind == "count_distinct" or (aggregate.kind == "count" and aggregate.column is not None):
            raise SqlError(f"{aggregate.text} is not answered by the server: its datasets protect single records "
                           "(no privacy-unit column), and a count of records is COUNT(*)", *at)
        kind = _KINDS[aggregate.kind]
        if group and kind not in GROUPED_KINDS:
            raise SqlError(f"{aggregate.text} with GROUP BY is not answered by the server: per group it answers "
                           "COUNT(*), SUM and AVG (ask the others with a WHERE per group)", *at)
        if len(specs) == MAX_AGGREGATES:
            raise SqlError(f"a statement releases at most {MAX_AGGREGATES} distinct aggregates", *at)
        levels = (float(aggregate.q),) if aggregate.q is not None else ()
        spec = QuerySpec(kind, aggregate.column, where=where, dataset=name, levels=levels,
                         group_by=key_columns(list(group)) if group else None)
        try:
            specs[base] = checked_spec(spec)
        except QueryError as exc:
            raise SqlError(f"{aggregate.text}: {exc}", *at) from None
    return StatementSpecs(statement, name, specs)


def plan_error(statement: Statement, aggregate: Aggregate, exc: QueryError, dialect: str | None) -> SqlError:
    """A refusal of an aggregate's query by the configuration, at the aggregate's position."""
    return SqlError(f"{aggregate.text}: {exc}", *_aggregate_at(statement.text, aggregate, dialect))


def _exact(value: float) -> Fraction:
    return Fraction(repr(float(value)))


def check_options(statement: Statement, plans: list[Plan]) -> None:
    """Refuse options the owner's policies do not grant: a ``privacy_unit_column`` (the server's datasets protect
    single records), a ``max_groups_contributed`` other than 1, and an ``epsilon`` or ``delta`` other than what the
    policies charge for the statement in all (Σ over its queries): more asks for what no policy grants, less for
    a charge below the policies' own."""
    options, text = statement.options, statement.text
    if not options:
        return
    at = position_of(text, r"\bOPTIONS\s*\(")
    unit = options.get("privacy_unit_column")
    if unit is not None:
        raise SqlError(f"OPTIONS(privacy_unit_column = {unit}): dataset {statement.table!r} protects single records "
                       "(one record added, removed or replaced); it declares no privacy-unit column", *at)
    cap = options.get("max_groups_contributed")
    if cap is not None and cap != 1:
        raise SqlError(f"OPTIONS(max_groups_contributed = {cap}): each record of dataset {statement.table!r} "
                       "contributes to one group; the server answers max_groups_contributed = 1 only", *at)
    charged = {"epsilon": sum((p.charge.epsilon or Fraction(0) for p in plans), Fraction(0)),
               "delta": sum((p.charge.delta or Fraction(0) for p in plans), Fraction(0))}
    for name, total in charged.items():
        if name not in options:
            continue
        asked = _exact(options[name])
        if asked > total:
            raise SqlError(f"OPTIONS({name} = {options[name]:g}) asks for more than the owner's policies grant: they "
                           f"answer this statement's {len(plans)} quer{'y' if len(plans) == 1 else 'ies'} with "
                           f"{name} = {exact_text(total)} in all (each at its policy's own); give that, or leave "
                           f"{name} out", *at)
        if asked < total:
            raise SqlError(f"OPTIONS({name} = {options[name]:g}) is below what the owner's policies charge for this "
                           f"statement's {len(plans)} quer{'y' if len(plans) == 1 else 'ies'}: {name} = "
                           f"{exact_text(total)} in all (each policy fixes its own); ask fewer aggregates, or leave "
                           f"{name} out", *at)
