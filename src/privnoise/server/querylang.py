"""The query language: ``agg(arguments) [from dataset] [where col op literal [and ...]] [group by col [, col ...]]``,
and its JSON form, parsed by a `lark <https://lark-parser.readthedocs.io>`_ LALR(1) grammar (:data:`GRAMMAR`).

Aggregates: ``count()`` (or ``count(*)``), ``sum(c)``, ``mean(c)``, ``weighted_mean(c, w)``, ``variance(c)``,
``linear(2*c + 0.5*d - e)`` (the sum over records of a linear combination of declared columns),
``identity(c)`` (every record of a column, in record order), ``histogram(c, bins = [0, 10, 60])`` (row counts
per public bin; ``histogram(c)`` counts per declared category of a text column) and ``quantile(c, 0.5)`` or
``quantile(c, [0.25, 0.5, 0.75])`` (the exponential mechanism; ``median(c)`` is ``quantile(c, 0.5)``). ``count``, ``sum`` and ``mean`` take a
``group by`` clause on one key column or several (at most :data:`MAX_KEY_COLUMNS`, ``group by region, tariff``:
the cells are the key tuples). Operators: ``= != < <= > >=``; literals are numbers or quoted strings. The parser builds
a :class:`QuerySpec`; the server turns it into SQLAlchemy expressions with bound parameters — no SQL text is
ever built from user input.

:data:`ARGUMENTS` is the one description of the kinds: their arguments in order (a column, a linear combination
of columns, a list of numbers) and whether they take a ``where`` or a ``group by`` clause. The parser reads its
arguments from it, and the console builds its query form from it, so a kind added here is parsed and offered
without other changes.

The kinds and :class:`QuerySpec` are declared in :mod:`.queryspec`, the rules every query obeys in
:mod:`.querychecks` and the JSON form in :mod:`.queryjson`; this module parses the text form.

>>> parse_query("mean(kwh) where region = 'north' and kwh < 40")
QuerySpec(kind='mean', column='kwh', weights=None, coefficients=(), where=(Condition(column='region', op='=', value='north'), Condition(column='kwh', op='<', value=40.0)), dataset=None, levels=(), bins=(), group_by=None)
>>> parse_query("quantile(kwh, [0.25, 0.75]) from meters").levels
(0.25, 0.75)
>>> parse_query("mean(kwh) from meters group by region").group_by
'region'
>>> parse_query("count() group by region, tariff").group_by
('region', 'tariff')
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from ..core.conditions import CONDITION_GRAMMAR, OPS, Condition, condition_of, finite_number
from .limits import MAX_KEY_COLUMNS
from .querychecks import checked_spec, key_columns
from .queryjson import spec_from_json
from .queryspec import (
    ALIASES,
    ARGUMENTS,
    GROUPED_KINDS,
    KINDS,
    SHORTHANDS,
    Argument,
    KindSyntax,
    QueryError,
    QuerySpec,
)

__all__ = [
    "ARGUMENTS",
    "GRAMMAR",
    "GROUPED_KINDS",
    "KINDS",
    "MAX_KEY_COLUMNS",
    "OPS",
    "Argument",
    "Condition",
    "KindSyntax",
    "QueryError",
    "QuerySpec",
    "parse_query",
    "spec_from_json",
]

_MAX_TEXT = 1000

#: The grammar of the text form (lark, LALR(1)); keywords are case-insensitive. Its conditions are
#: :data:`privnoise.core.conditions.CONDITION_GRAMMAR`, shared with the analyst session's filters.
GRAMMAR = r"""
start: call from_clause? where_clause? group_clause?
call: NAME "(" [arguments] ")"
arguments: argument ("," argument)*
?argument: expression
         | bracket
         | "*"                         -> star
         | NAME "=" (bracket | signed) -> named
expression: sign? item (ADDOP item)*
?item: NUMBER "*" NAME -> scaled
     | NAME             -> bare
     | NUMBER           -> constant
bracket: "[" [signed ("," signed)*] "]"
from_clause: _FROM NAME
where_clause: _WHERE condition (_AND condition)*
group_clause: _GROUP _BY NAME ("," NAME)*

_FROM: "from"i
_WHERE: "where"i
_GROUP: "group"i
_BY: "by"i
""" + CONDITION_GRAMMAR


def _finite(text: str) -> float:
    return finite_number(text, QueryError)


@dataclass(frozen=True, slots=True)
class _Terms:
    """A parsed expression argument: signed (coefficient, column or None for a constant) items."""

    items: tuple[tuple[float, str | None], ...]
    plain: bool  # a lone name, unsigned and unscaled

    def number(self) -> float | None:
        if len(self.items) == 1 and self.items[0][1] is None:
            return self.items[0][0]
        return None


@dataclass(frozen=True, slots=True)
class _Named:
    name: str
    value: Any


class _Star:
    """``count(*)``."""


@v_args(inline=True)
class _Build(Transformer[Token, Any]):
    """Parse tree → a :class:`QuerySpec` (the arguments are matched to the kind's :data:`ARGUMENTS`)."""

    def sign(self, op: Token) -> float:
        return -1.0 if op == "-" else 1.0

    def signed(self, *parts: Any) -> float:
        return float(parts[0] * _finite(parts[1])) if len(parts) == 2 else _finite(parts[0])

    def bracket(self, *values: Any) -> list[float]:
        return [v for v in values if v is not None]

    def star(self) -> _Star:
        return _Star()

    def named(self, name: Token, value: Any) -> _Named:
        return _Named(str(name).lower(), value)

    def scaled(self, number: Token, name: Token) -> tuple[float, str | None, bool]:
        return _finite(number), str(name), False

    def bare(self, name: Token) -> tuple[float, str | None, bool]:
        return 1.0, str(name), True

    def constant(self, number: Token) -> tuple[float, str | None, bool]:
        return _finite(number), None, False

    def expression(self, *parts: Any) -> _Terms:
        sign, signed = 1.0, False
        items = []
        for part in parts:
            if isinstance(part, float):  # the leading sign
                sign, signed = part, True
            elif isinstance(part, Token):  # + or - before the next item
                sign = -1.0 if part == "-" else 1.0
            else:
                items.append((sign * part[0], part[1]))
                sign = 1.0
        plain = len(parts) == 1 and isinstance(parts[0], tuple) and parts[0][2] and not signed
        return _Terms(tuple(items), plain)

    def arguments(self, *args: Any) -> list[Any]:
        return list(args)

    def call(self, name: Token, args: list[Any] | None) -> tuple[str, list[Any]]:
        return str(name), args or []

    def from_clause(self, name: Token) -> tuple[str, str]:
        return "dataset", str(name)

    def condition(self, column: Token, op: Token, value: Any) -> Condition:
        return condition_of(column, op, value)  # a quoted string loses its quotes

    def where_clause(self, *conditions: Condition) -> tuple[str, tuple[Condition, ...]]:
        return "where", conditions

    def group_clause(self, *names: Token) -> tuple[str, str | tuple[str, ...]]:
        return "group_by", key_columns([str(n) for n in names])

    def start(self, call: tuple[str, list[Any]], *clauses: Any) -> QuerySpec:
        return _spec_of(call[0], call[1], dict(c for c in clauses if c is not None))


def _numbers(value: Any, what: str) -> tuple[float, ...]:
    if isinstance(value, list):
        return tuple(value)
    if isinstance(value, _Terms) and value.number() is not None:
        return (float(value.number()),)  # type: ignore[arg-type]
    if isinstance(value, float):
        return (value,)
    raise QueryError(f"{what} must be numbers (one, several separated by commas, or a list [a, b, …]).")


def _spec_of(name: str, args: list[Any], clauses: dict[str, Any]) -> QuerySpec:
    """Match the parsed arguments of ``name(args…)`` to its kind's :data:`ARGUMENTS`."""
    shorthand = SHORTHANDS.get(name.lower())
    if shorthand is not None:  # median(c): quantile(c, 0.5)
        kind, _, fixed = shorthand
        if len(args) != 1 or isinstance(args[0], _Named | _Star):
            raise QueryError(f"{name.lower()} takes one argument, the column: {name.lower()}(column).")
        return _spec_of(kind, [args[0], *fixed], clauses)
    kind = ALIASES.get(name.lower(), name.lower())
    if kind not in KINDS:
        raise QueryError(f"unknown aggregate {kind!r}; choose among {', '.join(KINDS)}.")
    syntax = ARGUMENTS[kind]
    if kind == "count" and len(args) == 1 and isinstance(args[0], _Star):
        args = []
    named = {a.name: a.value for a in args if isinstance(a, _Named)}
    positional = [a for a in args if not isinstance(a, _Named)]
    first_named = next((i for i, a in enumerate(args) if isinstance(a, _Named)), len(args))
    if len(positional) != first_named:
        raise QueryError(f"{kind}: named arguments (name = value) come after the others.")
    values: dict[str, Any] = {}
    for i, argument in enumerate(syntax.arguments):
        if argument.field in named:
            raw = named.pop(argument.field)
        elif i < len(positional):
            raw = positional[i] if argument.form != "numbers" else positional[i:]
            if argument.form == "numbers":
                positional = positional[:i]
        elif argument.optional:
            continue
        else:
            shown = ", ".join(a.label.split(",")[0] for a in syntax.arguments)
            raise QueryError(f"expected ',' and the {argument.label.split(',')[0]}: {kind} takes ({shown}).")
        if argument.form == "column":
            if not (isinstance(raw, _Terms) and raw.plain):
                raise QueryError(f"the {argument.label} of {kind} must be a column name.")
            values[argument.field] = raw.items[0][1]
        elif argument.form == "terms":
            if not isinstance(raw, _Terms):
                raise QueryError(f"the argument of {kind} must be a {argument.label}.")
            terms: dict[str, float] = {}
            for coef, column in raw.items:
                if column is None:
                    raise QueryError(f"the {argument.label.split(',')[0]} of {kind} has no constant term; "
                                     "write coefficient*column.")
                terms[column] = terms.get(column, 0.0) + coef
            values[argument.field] = tuple(terms.items())
        else:
            flat: list[float] = []
            for part in raw if isinstance(raw, list) and not all(isinstance(v, float) for v in raw) else [raw]:
                flat.extend(_numbers(part, f"the {argument.label.split(',')[0]} of {kind}"))
            values[argument.field] = tuple(flat)
    if named:
        raise QueryError(f"{kind} takes no argument named {next(iter(named))!r}.")
    if len(positional) > len(syntax.arguments):
        raise QueryError(f"{kind} takes {len(syntax.arguments)} argument(s); got {len(positional)}.")
    return QuerySpec(
        kind,
        values.get("column"),
        values.get("weights"),
        values.get("coefficients", ()),
        clauses.get("where", ()),
        clauses.get("dataset"),
        values.get("levels", ()),
        values.get("bins", ()),
        clauses.get("group_by"),
    )


_PARSER = Lark(GRAMMAR, parser="lalr", maybe_placeholders=True)


def _syntax_error(text: str, exc: UnexpectedInput) -> QueryError:
    """A lark error as a message naming the position and what was found and expected."""
    if isinstance(exc, UnexpectedEOF) or (isinstance(exc, UnexpectedToken) and exc.token.type == "$END"):
        expected = sorted(getattr(exc, "expected", ()) or ())
        return QueryError(f"the query ends too early; expected {_expected(expected)}.")
    if isinstance(exc, UnexpectedCharacters):
        return QueryError(f"unexpected character at position {exc.column - 1}: {text[exc.pos_in_stream:][:10]!r}.")
    assert isinstance(exc, UnexpectedToken)
    return QueryError(
        f"unexpected {str(exc.token)!r} at position {exc.column - 1}; expected {_expected(sorted(exc.expected))}."
    )


_SHOWN = {"LPAR": "'('", "RPAR": "')'", "COMMA": "','", "LSQB": "'['", "RSQB": "']'", "STAR": "'*'",
          "EQUAL": "'='", "ADDOP": "'+' or '-'", "NAME": "a name", "NUMBER": "a number", "STRING": "a string",
          "OP": "an operator", "_FROM": "'from'", "_WHERE": "'where'", "_AND": "'and'", "_GROUP": "'group'",
          "_BY": "'by'", "$END": "the end"}


def _expected(names: list[str]) -> str:
    shown = sorted({_SHOWN.get(n, n) for n in names})
    return " or ".join(shown) if shown else "more"


def parse_query(text: str, *, dataset: str | None = None) -> QuerySpec:
    """Parse the text form of a query (:data:`GRAMMAR`); errors name the position and what was expected."""
    if not isinstance(text, str) or not text.strip() or len(text) > _MAX_TEXT:
        raise QueryError(f"a query is a non-empty string of at most {_MAX_TEXT} characters.")
    if dataset is not None and not isinstance(dataset, str):
        raise QueryError("`dataset` must be a string.")
    return _parsed(text, dataset)


@functools.lru_cache(maxsize=4096)
def _parsed(text: str, dataset: str | None) -> QuerySpec:
    """:func:`parse_query` of checked arguments, kept per (text, dataset): a spec is immutable, errors are not kept."""
    try:
        spec = _Build().transform(_PARSER.parse(text))
    except UnexpectedInput as exc:
        raise _syntax_error(text, exc) from None
    except VisitError as exc:
        if isinstance(exc.orig_exc, QueryError):
            raise exc.orig_exc from None
        raise
    spec = checked_spec(spec)
    if dataset is not None:
        if spec.dataset is not None and spec.dataset != dataset:
            raise QueryError("the query names two different datasets.")
        spec = spec.on(dataset)
    return checked_spec(spec)

