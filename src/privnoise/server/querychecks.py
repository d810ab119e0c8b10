"""The rules every parsed query obeys, whatever its form (text, :mod:`.querylang`, JSON, :mod:`.queryjson`, or a
SQL statement's aggregates, :mod:`.sqlspecs`): at most so many tests in its ``where`` (comparisons, ``IN``,
``IS NULL``, ``LIKE``, however ``NOT``, ``AND`` and ``OR`` join them), nested at most so deep, ``IN`` lists of at
most so many values, at most so many numbers and ``group by`` key columns, names that are identifiers, the
arguments and clauses its kind takes (:data:`~.queryspec.ARGUMENTS`), quantile levels in [0, 1], increasing
histogram bins, and literals and coefficients within the server's ranges.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ..core.conditions import Condition, check_literal
from ..core.predicates import AllOf, AnyOf, InList, Like, Not, Predicate, atoms_of
from ..exceptions import InvalidParameterError
from .checks import checked_coefficient
from .limits import MAX_KEY_COLUMNS
from .queryspec import ARGUMENTS, GROUPED_KINDS, QueryError, QuerySpec

__all__ = ["checked_spec", "key_columns"]

_MAX_CONDITIONS = 8  # tests of a `where`: comparisons, IN, IS NULL, LIKE (however NOT, AND, OR join them)
_MAX_DEPTH = 8  # NOT, AND, OR nested at most so deep
_MAX_IN_VALUES = 64  # values of one IN list (the parameter bound, limits.parameter_bound, counts every one)
_MAX_NUMBERS = 64
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


def key_columns(names: list[Any]) -> str | tuple[str, ...]:
    """The ``group_by`` of a spec: one key column as its name, several as a tuple (checked by :func:`checked_spec`)."""
    if not names:
        raise QueryError("`group_by` must name one key column or a non-empty list of key columns.")
    return names[0] if len(names) == 1 else tuple(names)


def checked_spec(spec: QuerySpec) -> QuerySpec:
    """``spec`` when it obeys the rules of its kind and the server's limits; else :class:`~.queryspec.QueryError`."""
    atoms = atoms_of(spec.where)
    if len(atoms) > _MAX_CONDITIONS:
        raise QueryError(f"at most {_MAX_CONDITIONS} conditions; got {len(atoms)}.")
    if any(_depth(p) > _MAX_DEPTH for p in spec.where):
        raise QueryError(f"a `where` nests NOT, AND and OR at most {_MAX_DEPTH} deep.")
    for name in spec.columns() | ({spec.dataset} if spec.dataset else set()):
        if not isinstance(name, str) or not _IDENT.match(name):
            raise QueryError(f"{name!r} is not a column or dataset name.")
    syntax = ARGUMENTS[spec.kind]
    for argument in syntax.arguments:
        if not argument.optional and not getattr(spec, argument.field):
            raise QueryError(f"{spec.kind} needs a {argument.label.split(',')[0]}.")
    if spec.where and not syntax.where:
        raise QueryError(f"{spec.kind} ({syntax.summary}) takes no where clause.")
    if spec.group_by is not None and not syntax.group_by:
        raise QueryError(f"{spec.kind} takes no group by clause; {', '.join(GROUPED_KINDS)} do.")
    keys = spec.key_columns()
    if len(keys) > MAX_KEY_COLUMNS:
        raise QueryError(f"a group by takes at most {MAX_KEY_COLUMNS} key columns (the limit); got {len(keys)}.")
    if len(set(keys)) != len(keys):
        raise QueryError(f"the group by names a key column twice: {', '.join(keys)}.")
    for field in ("levels", "bins"):
        numbers = getattr(spec, field)
        if len(numbers) > _MAX_NUMBERS:
            raise QueryError(f"at most {_MAX_NUMBERS} {field}; got {len(numbers)}.")
        if not all(isinstance(v, float) and math.isfinite(v) for v in numbers):
            raise QueryError(f"the {field} of {spec.kind} must be finite numbers.")
    for field, owner in (("levels", "quantile"), ("bins", "histogram")):
        if getattr(spec, field) and spec.kind != owner:
            raise QueryError(f"{spec.kind} takes no {field} (only {owner} does).")
    if spec.levels and not all(0.0 <= q <= 1.0 for q in spec.levels):
        raise QueryError(f"quantile levels must lie in [0, 1]; got {list(spec.levels)}.")
    if spec.bins and (len(spec.bins) < 2 or any(b >= c for b, c in zip(spec.bins, spec.bins[1:], strict=False))):
        raise QueryError(f"histogram bins must be at least two strictly increasing edges; got {list(spec.bins)}.")
    for a in atoms:
        _check_atom(a)
    for name, coef in spec.coefficients:
        try:
            checked_coefficient(coef, f"coefficient of {name}", "query")
        except InvalidParameterError as exc:
            raise QueryError(str(exc)) from None
    return spec


def _depth(predicate: Predicate) -> int:
    if isinstance(predicate, Not):
        return 1 + _depth(predicate.part)
    if isinstance(predicate, AllOf | AnyOf):
        return 1 + max(_depth(p) for p in predicate.parts)
    return 0


def _check_atom(atom: Any) -> None:
    """The literals of one test within the server's ranges (their kinds are checked against the columns when the
    query is planned)."""
    if isinstance(atom, Condition):
        check_literal(atom, QueryError)
    elif isinstance(atom, InList):
        if not 0 < len(atom.values) <= _MAX_IN_VALUES:
            raise QueryError(f"an IN list holds 1 to {_MAX_IN_VALUES} values; got {len(atom.values)}.")
        for v in atom.values:
            check_literal(Condition(atom.column, "=", v), QueryError)
    elif isinstance(atom, Like):
        check_literal(Condition(atom.column, "=", atom.pattern), QueryError)
