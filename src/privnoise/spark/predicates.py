"""A session's filter as one Spark column expression, with SQL's three-valued logic.

A filter (:mod:`privnoise.analysis.filters`) is a tuple of predicates that must all hold: comparisons
(:mod:`privnoise.core.conditions`) and the compound predicates of :mod:`privnoise.core.predicates` — ``IN``,
``IS NULL``, ``LIKE``, ``NOT``, ``AND``, ``OR``. Spark SQL evaluates ``NOT``, ``AND`` and ``OR`` with the same
three-valued (Kleene) logic as :func:`privnoise.core.predicates.truth`, and ``DataFrame.where`` keeps a row only where
the expression is true, so each predicate translates to the Spark operator of the same name, provided every atom
is unknown (null) exactly where the in-memory atom is:

* a comparison, ``IN`` or ``LIKE`` of a missing value is null: a numeric column is read by
  :func:`~privnoise.spark.columns.numeric`, which turns NaN into null (Spark would otherwise order NaN above every
  number and make ``NaN = NaN`` true);
* ``IS NULL`` is never null: true on null, and on NaN in a floating-point column
  (:func:`~privnoise.spark.columns.missing`);
* text compares by code point: Spark's default (binary) collation compares UTF-8 bytes, which orders as code
  points;
* ``LIKE`` takes ``%`` and ``_`` as wildcards and every other character literally: Spark's backslash escape is
  itself escaped (``\\`` in a pattern matches a backslash, as in memory).

The kinds of the literals were checked by the session (:func:`~privnoise.core.predicates.check_predicate_kinds`):
a number literal meets a numeric column, a text literal a text column.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Mapping
from typing import Any

from ..core.conditions import COMPARISONS, Condition
from ..core.predicates import AllOf, AnyOf, InList, IsNull, Like, Not, Predicate
from .columns import column, functions, missing, numeric

__all__ = ["filter_column", "like_pattern", "predicate_column"]


def like_pattern(pattern: str) -> str:
    """A ``LIKE`` pattern for Spark: ``%`` and ``_`` stay wildcards, a backslash is matched literally.

    Examples
    --------
    >>> like_pattern("a\\\\b%")
    'a\\\\\\\\b%'
    """
    return pattern.replace("\\", "\\\\")


def _value(name: str, schema: Mapping[str, Any], literal: Any) -> Any:
    """The column read for a test against ``literal``: as numbers for a number, as text for a string."""
    return column(name) if isinstance(literal, str) else numeric(name, schema[name])


def _atom(p: Condition | InList | IsNull | Like, schema: Mapping[str, Any]) -> Any:
    F = functions()
    if isinstance(p, IsNull):
        found = missing(p.column, schema[p.column])
        return ~found if p.negated else found
    if isinstance(p, Like):
        found = column(p.column).like(like_pattern(p.pattern))
        return ~found if p.negated else found
    if isinstance(p, InList):
        values = list(p.values)
        value = _value(p.column, schema, values[0])
        found = value.isin([v if isinstance(v, str) else float(v) for v in values])
        return ~found if p.negated else found
    literal = p.value if isinstance(p.value, str) else float(p.value)
    return COMPARISONS[p.op](_value(p.column, schema, p.value), F.lit(literal))


def predicate_column(predicate: Predicate, schema: Mapping[str, Any]) -> Any:
    """The Spark expression of one predicate: true, false, or null where the in-memory predicate is unknown."""
    if isinstance(predicate, Not):
        return ~predicate_column(predicate.part, schema)
    if isinstance(predicate, AllOf | AnyOf):
        parts = [predicate_column(p, schema) for p in predicate.parts]
        return functools.reduce(operator.and_ if isinstance(predicate, AllOf) else operator.or_, parts)
    return _atom(predicate, schema)


def filter_column(predicates: tuple[Predicate, ...], schema: Mapping[str, Any]) -> Any:
    """The conjunction of ``predicates`` (a session's filter) as one Spark expression; rows where it is true are
    kept (``DataFrame.where``)."""
    return functools.reduce(operator.and_, (predicate_column(p, schema) for p in predicates))
