"""``WHERE`` clauses as row predicates (:mod:`privnoise.core.predicates`): comparisons of a column with a literal,
``IN``, ``BETWEEN``, ``IS [NOT] NULL``, ``LIKE`` on text, joined by ``AND``, ``OR`` and ``NOT``.

A filter is public and row by row, so it changes no sensitivity (:mod:`privnoise.analysis.filters`). What it may
not do: compare two columns with each other (``a < b``), call a function, or hold a subquery — each is refused with
its position.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from ..core.conditions import Condition
from ..core.predicates import AllOf, AnyOf, InList, IsNull, Like, Not, Predicate
from .positions import refuse

__all__ = ["predicate_of"]

_FLIPPED = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_OPS: dict[type, str] = {exp.EQ: "=", exp.NEQ: "!=", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}


def literal_of(text: str, node: Any) -> float | str:
    """The number or string of a literal node (a negative number is ``-`` of a literal)."""
    inner = node.this if isinstance(node, exp.Paren) else node
    if isinstance(inner, exp.Neg) and isinstance(inner.this, exp.Literal) and not inner.this.is_string:
        return -float(inner.this.this)
    if isinstance(inner, exp.Literal):
        if inner.is_string:
            return str(inner.this)
        try:
            number = float(inner.this)
        except ValueError:
            raise refuse(text, node, f"{inner.sql()!r} is not a number") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise refuse(text, node, f"number {inner.this!r} is not finite")
        return number
    raise refuse(text, node, f"{node.sql()!r} is not a literal: a filter compares a column with a number or a "
                             "quoted string")


def column_of(text: str, node: Any, table: str, alias: str | None) -> str:
    """The column a node names (``t.x`` qualified by the table or its alias, or ``x``)."""
    inner = node.this if isinstance(node, exp.Paren) else node
    if not isinstance(inner, exp.Column) or isinstance(inner.this, exp.Star):
        raise refuse(text, node, f"{node.sql()!r} is not a column: a filter tests one column against literals")
    qualifier = inner.table
    if qualifier and qualifier not in (table, alias):
        raise refuse(text, node, f"column {inner.sql()!r} names table {qualifier!r}; the statement reads {table!r}")
    return str(inner.name)


def predicate_of(text: str, node: Any, table: str, alias: str | None = None) -> Predicate:
    """The predicate of a ``WHERE`` expression (module docstring)."""

    def walk(n: Any) -> Predicate:
        if isinstance(n, exp.Paren):
            return walk(n.this)
        if isinstance(n, exp.And | exp.Or):
            parts = [walk(n.this), walk(n.expression)]
            kind = AllOf if isinstance(n, exp.And) else AnyOf
            flat: list[Predicate] = []
            for p in parts:
                flat.extend(p.parts if isinstance(p, kind) else (p,))
            return kind(tuple(flat))
        if isinstance(n, exp.Not):
            inner = walk(n.this)
            if isinstance(inner, IsNull | InList | Like):
                return type(inner)(**{**_fields(inner), "negated": not inner.negated})
            return Not(inner)
        negate = bool(n.args.get("negate"))
        if type(n) in _OPS:
            op = _OPS[type(n)]
            left, right = n.this, n.expression
            if _is_column(right) and not _is_column(left):
                left, right, op = right, left, _FLIPPED[op]
            if _is_column(right):
                raise refuse(text, n, f"{n.sql()!r} compares two columns; a filter compares a column with a literal")
            found: Predicate = Condition(column_of(text, left, table, alias), op, literal_of(text, right))
        elif isinstance(n, exp.In):
            if n.args.get("query") is not None or n.args.get("field") is not None:
                raise refuse(text, n, "IN (SELECT ...): a subquery reads records; list the values instead")
            values = tuple(literal_of(text, v) for v in n.expressions)
            if len({type(v) for v in values}) > 1:
                raise refuse(text, n, "an IN list mixes numbers and strings")
            found = InList(column_of(text, n.this, table, alias), values)
        elif isinstance(n, exp.Between):
            column = column_of(text, n.this, table, alias)
            found = AllOf((Condition(column, ">=", literal_of(text, n.args["low"])),
                           Condition(column, "<=", literal_of(text, n.args["high"]))))
        elif isinstance(n, exp.Is):
            if not isinstance(n.expression, exp.Null):
                raise refuse(text, n, f"{n.sql()!r}: IS tests NULL only ({n.expression.sql()!r} is not answered)")
            found = IsNull(column_of(text, n.this, table, alias))
        elif isinstance(n, exp.Like):
            if n.args.get("escape") is not None:
                raise refuse(text, n, "LIKE ... ESCAPE is not answered; % and _ are always wildcards")
            pattern = literal_of(text, n.expression)
            if not isinstance(pattern, str):
                raise refuse(text, n, "LIKE takes a quoted pattern")
            found = Like(column_of(text, n.this, table, alias), pattern)
        elif isinstance(n, exp.Escape):
            raise refuse(text, n, "LIKE ... ESCAPE is not answered; % and _ are always wildcards")
        elif isinstance(n, exp.Subquery | exp.Select | exp.Exists):
            raise refuse(text, n, "a subquery in WHERE reads records of the table; filters are public tests of one "
                                  "row")
        else:
            raise refuse(text, n, f"{n.sql()!r} is not a filter privnoise answers: compare a column with a literal "
                                  "(= != < <= > >=), IN, BETWEEN, IS [NOT] NULL, LIKE, joined by AND, OR, NOT")
        return Not(found) if negate else found

    return walk(node)


def _is_column(node: Any) -> bool:
    inner = node.this if isinstance(node, exp.Paren) else node
    return isinstance(inner, exp.Column)


def _fields(p: Any) -> dict[str, Any]:
    return {name: getattr(p, name) for name in p.__dataclass_fields__}
