"""Compound row predicates: ``IN``, ``IS NULL``, ``LIKE``, ``NOT``, ``AND`` and ``OR`` over the comparisons of
:mod:`privnoise.core.conditions`, with SQL's three-valued logic, evaluated the same way by every backend.

A filter is a tuple of predicates that must all hold (the conjunction a session's ``where`` builds). Besides a
comparison (:class:`~privnoise.core.conditions.Condition`), a predicate is

* :class:`InList` — ``column [NOT] IN (v₁, …)``, literals of the column's kind;
* :class:`IsNull` — ``column IS [NOT] NULL`` (a missing value: null, None, NaN);
* :class:`Like` — ``column [NOT] LIKE 'pattern'`` on text, ``%`` any run of characters, ``_`` one character;
* :class:`Not`, :class:`AllOf`, :class:`AnyOf` — negation, conjunction and disjunction of predicates.

A predicate on a row is true, false or unknown, as in SQL: a comparison, ``IN`` or ``LIKE`` of a missing value is
unknown, ``IS NULL`` never is; ``NOT`` keeps unknown unknown; ``AND`` is false when a part is false, true when all
are true; ``OR`` is true when a part is true, false when all are false. A row is kept when the filter is true, so a
missing value satisfies no comparison and no negation of one (``NOT kwh > 3`` keeps no row whose kwh is missing),
exactly as a SQL ``WHERE`` does.

:func:`truth` carries the logic once for any representation of a truth value: a backend gives the (true, false)
pair of each atom in its own algebra — numpy masks in memory, constant-work 0/1 SQL expressions in the query
server — and how two pairs meet (:class:`Logic`).

>>> import numpy as np
>>> from privnoise.core.conditions import Condition
>>> p = AnyOf((Condition("kwh", ">", 3.0), IsNull("region")))
>>> describe_predicate(p)
'(kwh > 3 or region is null)'
>>> sorted(columns_of((p, Not(InList("region", ("a", "b"))))))
['kwh', 'region']
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ..exceptions import InvalidParameterError
from .conditions import Condition, check_literal

__all__ = [
    "AllOf",
    "AnyOf",
    "InList",
    "IsNull",
    "Like",
    "Logic",
    "Not",
    "Predicate",
    "atoms_of",
    "check_predicate_kinds",
    "columns_of",
    "describe_filter",
    "describe_predicate",
    "like_regex",
    "truth",
]

#: At most this many values in one ``IN`` list.
MAX_IN_VALUES = 1000


@dataclass(frozen=True, slots=True)
class InList:
    """``column IN (values)`` (``negated``: ``NOT IN``)."""

    column: str
    values: tuple[float | str, ...]
    negated: bool = False


@dataclass(frozen=True, slots=True)
class IsNull:
    """``column IS NULL`` (``negated``: ``IS NOT NULL``)."""

    column: str
    negated: bool = False


@dataclass(frozen=True, slots=True)
class Like:
    """``column LIKE pattern`` on text (``negated``: ``NOT LIKE``); ``%`` any run, ``_`` one character."""

    column: str
    pattern: str
    negated: bool = False


@dataclass(frozen=True, slots=True)
class Not:
    """``NOT part``."""

    part: Predicate


@dataclass(frozen=True, slots=True)
class AllOf:
    """``part₁ AND part₂ AND …``."""

    parts: tuple[Predicate, ...]


@dataclass(frozen=True, slots=True)
class AnyOf:
    """``part₁ OR part₂ OR …``."""

    parts: tuple[Predicate, ...]


Predicate = Condition | InList | IsNull | Like | Not | AllOf | AnyOf

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Logic(Generic[T]):
    """How two truth values meet in a backend's algebra: ``both`` (and) and ``either`` (or) of two values that are
    each "certainly so" indicators (a numpy mask, a 0/1 SQL expression)."""

    both: Callable[[T, T], T]
    either: Callable[[T, T], T]


def truth(predicate: Predicate, atom: Callable[[Any], tuple[T, T]], logic: Logic[T]) -> tuple[T, T]:
    """(true, false) of ``predicate`` on every row: ``atom(p)`` gives them for a comparison, ``IN``, ``IS NULL`` or
    ``LIKE``; a row is unknown where it is neither (module docstring)."""
    if isinstance(predicate, Not):
        t, f = truth(predicate.part, atom, logic)
        return f, t
    if isinstance(predicate, AllOf | AnyOf):
        pairs = [truth(p, atom, logic) for p in predicate.parts]
        t, f = pairs[0]
        for t2, f2 in pairs[1:]:
            if isinstance(predicate, AllOf):
                t, f = logic.both(t, t2), logic.either(f, f2)
            else:
                t, f = logic.either(t, t2), logic.both(f, f2)
        return t, f
    return atom(predicate)


def atoms_of(predicates: Iterable[Predicate]) -> list[Condition | InList | IsNull | Like]:
    """The comparisons, ``IN``, ``IS NULL`` and ``LIKE`` tests of ``predicates``, in order."""
    found: list[Condition | InList | IsNull | Like] = []
    for p in predicates:
        if isinstance(p, Not):
            found.extend(atoms_of((p.part,)))
        elif isinstance(p, AllOf | AnyOf):
            found.extend(atoms_of(p.parts))
        else:
            found.append(p)
    return found


def columns_of(predicates: Iterable[Predicate]) -> list[str]:
    """The distinct columns the predicates read, in order."""
    return list(dict.fromkeys(a.column for a in atoms_of(predicates)))


def _literal(value: float | str) -> str:
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return f"{value:g}"


def describe_predicate(predicate: Predicate) -> str:
    """The predicate in SQL words (strings single-quoted, a quote doubled)."""
    if isinstance(predicate, Condition):
        return predicate.text()
    if isinstance(predicate, InList):
        inner = ", ".join(_literal(v) for v in predicate.values)
        return f"{predicate.column} {'not in' if predicate.negated else 'in'} ({inner})"
    if isinstance(predicate, IsNull):
        return f"{predicate.column} is {'not null' if predicate.negated else 'null'}"
    if isinstance(predicate, Like):
        return f"{predicate.column} {'not like' if predicate.negated else 'like'} {_literal(predicate.pattern)}"
    if isinstance(predicate, Not):
        return f"not {describe_predicate(predicate.part)}"
    word = " and " if isinstance(predicate, AllOf) else " or "
    return "(" + word.join(describe_predicate(p) for p in predicate.parts) + ")"


def describe_filter(predicates: Iterable[Predicate]) -> str:
    """A filter's predicates as one ``… and …`` text."""
    return " and ".join(describe_predicate(p) for p in predicates)


def like_regex(pattern: str) -> re.Pattern[str]:
    """The regular expression of a SQL ``LIKE`` pattern (whole string; ``%`` any run, ``_`` one character)."""
    parts = ("." * (ch == "_") + ".*" * (ch == "%") if ch in "%_" else re.escape(ch) for ch in pattern)
    return re.compile("".join(parts), re.DOTALL)


def check_predicate_kinds(predicates: Iterable[Predicate], kind_of: Callable[[str], str],
                          error: type[InvalidParameterError] = InvalidParameterError) -> None:
    """Refuse a test whose literals do not match its column's kind ("number" or "text"), a ``LIKE`` on a number,
    an empty or too long ``IN`` list, and literals :func:`~privnoise.core.conditions.check_literal` refuses.
    ``IS NULL`` applies to a column of any kind."""
    for a in atoms_of(predicates):
        if isinstance(a, IsNull):
            continue
        kind = kind_of(a.column)
        if kind not in ("number", "text"):
            raise error(f"column {a.column!r} holds {kind}; conditions compare numbers or text "
                        "(operators = != < <= > >=, IN, LIKE on text; IS NULL tests any column).")
        if isinstance(a, Like):
            if kind != "text":
                raise error(f"column {a.column!r} is a number; LIKE matches text.")
            check_literal(Condition(a.column, "=", a.pattern), error)
            continue
        values = a.values if isinstance(a, InList) else (a.value,)
        if isinstance(a, InList) and not 0 < len(values) <= MAX_IN_VALUES:
            raise error(f"an IN list of column {a.column!r} holds 1 to {MAX_IN_VALUES} values; got {len(values)}.")
        for v in values:
            if (kind == "text") != isinstance(v, str):
                raise error(f"column {a.column!r} is {kind}; compare it with a {kind} literal.")
            check_literal(Condition(a.column, "=", v), error)
