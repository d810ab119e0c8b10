"""Private SQL: standard ``SELECT`` statements read by sqlglot and answered with noise.

:func:`parse_statement` reads a statement in the caller's dialect into a :class:`Statement` (the aggregates to
release, the filter, the groups, the post-processing), refusing what cannot be answered privately before any data
is read. The Session (:meth:`privnoise.Session.sql`), the command line (``privnoise sql``) and the query server
(``{"sql": ...}``) answer it. :func:`parse_predicate` reads a ``WHERE`` condition alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

# Names load their module on first use (PEP 562): reading the statement's structure does not import sqlglot.
_EXPORTS: dict[str, str] = {
    "predicate_of": "filters",
    "OPTION_NAMES": "options",
    "read_options": "options",
    "DIALECTS": "parsing",
    "parse_statement": "parsing",
    **{name: "statement" for name in ("Aggregate", "Arithmetic", "Compare", "Connective", "KeyColumn", "Number",
                                      "Output", "SqlError", "Statement")},
}

if TYPE_CHECKING:
    from .filters import predicate_of
    from .options import OPTION_NAMES, read_options
    from .parsing import DIALECTS, parse_statement
    from .statement import (
        Aggregate,
        Arithmetic,
        Compare,
        Connective,
        KeyColumn,
        Number,
        Output,
        SqlError,
        Statement,
    )
else:
    from .statement import SqlError


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())


__all__ = [
    "DIALECTS",
    "OPTION_NAMES",
    "Aggregate",
    "Arithmetic",
    "Compare",
    "Connective",
    "KeyColumn",
    "Number",
    "Output",
    "SqlError",
    "Statement",
    "parse_predicate",
    "parse_statement",
    "predicate_of",
    "read_options",
]


def parse_predicate(text: str, *, dialect: str | None = None) -> object:
    """The row predicate of a SQL condition (what follows ``WHERE``), e.g. ``"kwh > 0 and region in ('n', 's')"``.

    >>> parse_predicate("kwh between 1 and 2 or region is null")
    AnyOf(parts=(AllOf(parts=(Condition(column='kwh', op='>=', value=1.0), Condition(column='kwh', op='<=', value=2.0))), IsNull(column='region', negated=False)))
    """
    if not isinstance(text, str) or not text.strip() or "\n" in text:
        raise SqlError(f"a condition is a non-empty line of SQL; got {text!r}")
    from .parsing import parse_statement

    prefix = "SELECT COUNT(*) FROM t WHERE "
    try:
        statement = parse_statement(prefix + text, dialect=dialect)
    except SqlError as exc:  # positions in the condition itself
        column = None if exc.column is None else max(exc.column - len(prefix), 1)
        raise SqlError(exc.reason, exc.line if column is not None else None, column) from None
    if len(statement.where) != 1 or statement.group_by or statement.limit is not None or statement.having \
            or statement.order_by or statement.options:
        raise SqlError(f"{text!r} is not one condition")
    return statement.where[0]
