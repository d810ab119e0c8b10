"""A record's filter weight: the 0/1 value of a ``where`` clause of compound predicates, as one SQL expression that
does the same work whatever the record holds (SECURITY.md, requirements 13 and 16).

A ``where`` is a tuple of predicates that must all hold (:mod:`privnoise.core.predicates`): comparisons, ``IN``,
``IS [NOT] NULL``, ``LIKE`` on text, joined by ``NOT``, ``AND`` and ``OR``. Each test is a pair of 0/1 indicators
(true, false) built from the constant-work indicators of :mod:`.indicators`; a record where neither is 1 is unknown,
as in SQL. The pairs are combined by :func:`privnoise.core.predicates.truth` in SQL arithmetic — and: a·b, or:
1 − (1 − a)(1 − b) (= a + b − ab, each operand written once, so that the expression grows linearly with the
clause) — and the weight is the product of the "true" indicators of the clause's predicates: 1 where the clause is
true, 0 where it is false or unknown. No ``CASE`` chooses between branches of different work, no ``OR`` or ``AND``
short-circuits: every indicator of the clause is evaluated for every record.

The server's semantics of a missing value:

* a **numeric** column is clamped to its declared bounds and a missing value (NULL) counts as the lower bound
  (:mod:`.planner`), so a number is never missing here: a comparison or ``IN`` is true or false (false = 1 − true),
  ``x IS NULL`` is false and ``x IS NOT NULL`` true for every record; comparisons and ``IN`` compare the clamped
  value;
* a **text** value may be missing: a comparison, ``IN`` or ``LIKE`` of a missing text is unknown — true is
  ``both_ways(test)``, false ``both_ways(NOT test)`` (a NULL fails both) — and ``IS NULL`` is true or false.
  ``IN`` is the sum of one constant-work equality per listed value (a list's own ``IN`` may stop at the first
  match), false the record's text being present and not among them. ``LIKE`` is case-sensitive on every database
  (SQLite: the pattern as a ``GLOB``; PostgreSQL: ``LIKE`` with its escape character written literally), ``%`` any
  run of characters and ``_`` one character, as :func:`privnoise.core.predicates.like_regex` reads them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import Float, literal

from ..core.conditions import Condition
from ..core.predicates import InList, IsNull, Like, Logic, Predicate, truth
from .indicators import both_ways, numeric_comparison

__all__ = ["SQL_LOGIC", "glob_pattern", "row_weight"]

#: How two (true or false) 0/1 indicators meet in SQL arithmetic.
SQL_LOGIC: Logic[Any] = Logic(
    both=lambda a, b: a * b,
    either=lambda a, b: literal(1.0, Float) - (literal(1.0, Float) - a) * (literal(1.0, Float) - b),
)

_TESTS: dict[str, Callable[[Any, Any], Any]] = {
    "=": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}


def glob_pattern(pattern: str) -> str:
    """A ``LIKE`` pattern as SQLite's case-sensitive ``GLOB``: ``%`` → ``*``, ``_`` → ``?``, and the GLOB
    wildcards of the pattern's text (``*``, ``?``, ``[``) matched literally.

    >>> glob_pattern("n%t_[a]*?")
    'n*t?[[]a][*][?]'
    """
    special = {"%": "*", "_": "?", "*": "[*]", "?": "[?]", "[": "[[]"}
    return "".join(special.get(ch, ch) for ch in pattern)


def _like(column: Any, pattern: str, dialect: str) -> Any:
    if dialect == "sqlite":
        return column.op("GLOB", is_comparison=True)(literal(glob_pattern(pattern)))
    return column.like(literal(pattern.replace("\\", "\\\\")))  # PostgreSQL: a backslash escapes by default


def _flip(pair: tuple[Any, Any], negated: bool) -> tuple[Any, Any]:
    return (pair[1], pair[0]) if negated else pair


def _text_pair(test: Any) -> tuple[Any, Any]:
    return both_ways(test), both_ways(~test)


def _atom(column_of: Callable[[str], tuple[Any, bool]], dialect: str) -> Callable[[Any], tuple[Any, Any]]:
    one, zero = literal(1.0, Float), literal(0.0, Float)

    def atom(p: Condition | InList | IsNull | Like) -> tuple[Any, Any]:
        x, numeric = column_of(p.column)
        if isinstance(p, IsNull):  # a clamped number is never missing
            missing = (zero, one) if numeric else (both_ways(x.is_(None)), both_ways(x.is_not(None)))
            return _flip(missing, p.negated)
        if isinstance(p, Like):
            return _flip(_text_pair(_like(x, p.pattern, dialect)), p.negated)
        if isinstance(p, InList):
            values = list(dict.fromkeys(p.values))  # distinct: at most one equality holds
            if numeric:
                hit = numeric_comparison(x, "=", float(values[0]), dialect)
                for v in values[1:]:
                    hit = hit + numeric_comparison(x, "=", float(v), dialect)
                return _flip((hit, one - hit), p.negated)
            hit = both_ways(x == literal(values[0]))
            for v in values[1:]:
                hit = hit + both_ways(x == literal(v))
            return _flip((hit, both_ways(x.is_not(None)) - hit), p.negated)
        if numeric:
            true = numeric_comparison(x, p.op, float(p.value), dialect)
            return true, one - true
        return _text_pair(_TESTS[p.op](x, literal(p.value)))

    return atom


def row_weight(where: tuple[Predicate, ...], column_of: Callable[[str], tuple[Any, bool]], dialect: str) -> Any:
    """The 0/1 weight of a record under ``where`` (module docstring): ``column_of(name)`` gives the column's SQL
    expression (a numeric column clamped, NULL as its lower bound) and whether it is numeric.

    A plain comparison's indicator is :func:`~.indicators.compare`'s, so a ``where`` of comparisons alone gives
    the statement it always did.

    Examples
    --------
    >>> from sqlalchemy import column
    >>> from privnoise.core.predicates import AnyOf
    >>> where = (AnyOf((Condition("x", ">", 1.0), IsNull("t"))),)
    >>> w = row_weight(where, lambda c: (column(c), c == "x"), "sqlite")
    >>> "max(0.0, sign(x - 1.0))" in str(w.compile(compile_kwargs={"literal_binds": True}))
    True
    """
    weight: Any = literal(1.0, Float)
    atom = _atom(column_of, dialect)
    for predicate in where:
        weight = weight * truth(predicate, atom, SQL_LOGIC)[0]
    return weight
