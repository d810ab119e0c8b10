"""Row conditions ``column op literal [and ...]``: one grammar and one set of rules for the query server's ``where``
clause (:mod:`privnoise.server.querylang`) and the analyst session's filters (:meth:`privnoise.Session.where`).

A condition compares a column with a literal: a number (``kwh >= 10``, ``-2.5``, ``1e3``) or a quoted string
(``region = 'north'``, ``"north"``); operators ``= != < <= > >=``; conditions are joined by ``and`` (any case).
:data:`CONDITION_GRAMMAR` is the lark fragment both parsers are built from; :func:`parse_conditions` parses a
condition list on its own. :func:`checked_condition` applies the rules to a structured condition (the JSON form of a
query, keyword filters of a session), :func:`check_literal` to a parsed one, and :func:`check_kinds` matches each
literal with its column's kind: a text column compares with a string, a numeric column with a number.

Text compares by code point (SQL's binary collation); a missing value (null, None, NaN) never satisfies a
condition, whatever the operator.

>>> parse_conditions("region = 'north' and kwh >= 10")
(Condition(column='region', op='=', value='north'), Condition(column='kwh', op='>=', value=10.0))
>>> describe_conditions(parse_conditions("kwh<-1.5 AND region != \\"east\\""))
"kwh < -1.5 and region != 'east'"
>>> checked_condition("kwh", "=>", 3)
Traceback (most recent call last):
...
privnoise.exceptions.InvalidParameterError: operator must be one of = != < <= > >=; got '=>'.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..exceptions import InvalidParameterError

__all__ = [
    "COMPARISONS",
    "CONDITION_GRAMMAR",
    "OPS",
    "Condition",
    "check_kinds",
    "check_literal",
    "checked_condition",
    "condition_of",
    "describe_conditions",
    "finite_number",
    "parse_conditions",
]

OPS = ("=", "!=", "<", "<=", ">", ">=")
#: The comparison of each operator (numpy arrays and Python values alike).
COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}
_MAX_STRING = 200

#: The lark rules and terminals of a condition (``condition``, ``signed``, ``sign`` and the terminals they use, the
#: keyword ``and`` as ``_AND``); a grammar that includes them adds its own start rule.
CONDITION_GRAMMAR = r"""
condition: NAME OP (STRING | signed)
signed: sign? NUMBER
sign: ADDOP

_AND: "and"i
ADDOP: "+" | "-"
OP: "<=" | ">=" | "!=" | "=" | "<" | ">"
NAME: /[A-Za-z_][A-Za-z0-9_]*/
NUMBER: /(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/
STRING: /'[^']*'/ | /"[^"]*"/
%ignore /\s+/
"""


@dataclass(frozen=True, slots=True)
class Condition:
    """``column op value``: a public predicate on one row."""

    column: str
    op: str
    value: float | str

    def text(self) -> str:
        """The condition as written in the query language (strings single-quoted when they can be)."""
        if isinstance(self.value, str):
            quote = '"' if "'" in self.value else "'"
            return f"{self.column} {self.op} {quote}{self.value}{quote}"
        return f"{self.column} {self.op} {self.value:g}"


def finite_number(text: str, error: type[InvalidParameterError] = InvalidParameterError) -> float:
    """The float of a NUMBER token; an error for one that overflows to infinity."""
    value = float(text)
    if not math.isfinite(value):
        raise error(f"number {str(text)!r} is not finite.")
    return value


def condition_of(column: str, op: str, value: Any) -> Condition:
    """The condition of a parsed ``condition`` rule (a STRING token loses its quotes)."""
    if isinstance(value, str) and not isinstance(value, float):
        text = str(value)
        if type(value) is not str:  # a lark Token (a str subclass): the quoted literal
            text = text[1:-1]
        return Condition(str(column), str(op), text)
    return Condition(str(column), str(op), value)


def check_literal(condition: Condition, error: type[InvalidParameterError] = InvalidParameterError) -> Condition:
    """``condition`` when its literal is allowed: a finite number, or a string of at most 200 characters without
    control characters."""
    value = condition.value
    if isinstance(value, str):
        if len(value) > _MAX_STRING:
            raise error(f"string literals are limited to {_MAX_STRING} characters.")
        if any(ch < " " or ch == "\x7f" or "\ud800" <= ch <= "\udfff" for ch in value):
            raise error("string literals must not contain control characters (NUL included).")
    elif not math.isfinite(value):
        raise error("a condition's value must be finite.")
    return condition


def checked_condition(column: Any, op: Any, value: Any,
                      error: type[InvalidParameterError] = InvalidParameterError) -> Condition:
    """A structured condition checked: a known operator, a number (not a bool) or a string literal."""
    if not isinstance(op, str) or op not in OPS:
        raise error(f"operator must be one of {' '.join(OPS)}; got {op!r}.")
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | str | np.integer | np.floating):
        raise error("a condition's value must be a number or a string.")
    if not isinstance(value, str):
        value = float(value)
    return check_literal(Condition(column, op, value), error)


def check_kinds(conditions: tuple[Condition, ...], kind_of: Callable[[str], str],
                error: type[InvalidParameterError] = InvalidParameterError) -> None:
    """Refuse a condition whose literal does not match its column's kind (``kind_of(column)``: "number" or
    "text"; another kind is refused whatever the literal: it has no comparison)."""
    for c in conditions:
        kind = kind_of(c.column)
        if kind not in ("number", "text"):
            raise error(f"column {c.column!r} holds {kind}; conditions compare numbers or text "
                        f"(operators {' '.join(OPS)}).")
        if (kind == "text") != isinstance(c.value, str):
            raise error(f"column {c.column!r} is {kind}; compare it with a {kind} literal.")


def describe_conditions(conditions: tuple[Condition, ...]) -> str:
    """The conditions as one ``… and …`` text."""
    return " and ".join(c.text() for c in conditions)


@functools.cache
def _parser() -> tuple[Any, Any]:
    import lark

    @lark.v_args(inline=True)
    class Build(lark.Transformer):
        def sign(self, op: Any) -> float:
            return -1.0 if op == "-" else 1.0

        def signed(self, *parts: Any) -> float:
            return float(parts[0] * finite_number(parts[1])) if len(parts) == 2 else finite_number(parts[0])

        def condition(self, column: Any, op: Any, value: Any) -> Condition:
            return condition_of(column, op, value)

        def start(self, *conditions: Condition) -> tuple[Condition, ...]:
            return conditions

    grammar = "start: condition (_AND condition)*\n" + CONDITION_GRAMMAR
    return lark.Lark(grammar, parser="lalr", maybe_placeholders=True), Build()


def parse_conditions(text: str, error: type[InvalidParameterError] = InvalidParameterError) -> tuple[Condition, ...]:
    """The conditions of ``column op literal [and …]`` (:data:`CONDITION_GRAMMAR`), literals checked; a syntax
    error names the position and what was found."""
    if not isinstance(text, str) or not text.strip():
        raise error(f"conditions are a non-empty string such as \"region = 'north' and kwh >= 10\"; got {text!r}.")
    import lark.exceptions

    parser, build = _parser()
    try:
        found: tuple[Condition, ...] = build.transform(parser.parse(text))
    except lark.exceptions.UnexpectedEOF:
        raise error(f"the conditions {text!r} end too early; expected a column, an operator and a literal.") from None
    except lark.exceptions.UnexpectedCharacters as exc:
        raise error(f"unexpected character at position {exc.column - 1} of {text!r}: "
                    f"{text[exc.pos_in_stream:][:10]!r}.") from None
    except lark.exceptions.UnexpectedToken as exc:
        if exc.token.type == "$END":
            raise error(f"the conditions {text!r} end too early; expected a column, an operator and a literal.") \
                from None
        raise error(f"unexpected {str(exc.token)!r} at position {exc.column - 1} of {text!r}; conditions are "
                    "`column op literal` joined by `and`.") from None
    except lark.exceptions.VisitError as exc:
        if isinstance(exc.orig_exc, InvalidParameterError):
            raise error(str(exc.orig_exc)) from None
        raise
    return tuple(check_literal(c, error) for c in found)
