"""The query language: ``agg(column) [from dataset] [where col op literal [and ...]]``, and its JSON form.

Aggregates: ``count()`` (or ``count(*)``), ``sum(c)``, ``mean(c)``, ``weighted_mean(c, w)``, ``variance(c)``,
``linear(2*c + 0.5*d - e)`` (the sum over records of a linear combination of declared columns) and
``identity(c)`` (every record of a column, in record order). Operators: ``= != < <= > >=``; literals are numbers
or quoted strings. The parser builds a :class:`QuerySpec`; the server turns it into SQLAlchemy expressions with
bound parameters — no SQL text is ever built from user input.

:data:`ARGUMENTS` is the one description of the kinds: their arguments in order (a column, a linear combination
of columns) and whether they take a ``where`` clause. The parser reads its arguments from it, and the console
builds its query form from it, so a kind added here is parsed and offered without other changes.

>>> parse_query("mean(kwh) where region = 'north' and kwh < 40")
QuerySpec(kind='mean', column='kwh', weights=None, coefficients=(), where=(Condition(column='region', op='=', value='north'), Condition(column='kwh', op='<', value=40.0)), dataset=None)
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from ..exceptions import InvalidParameterError
from .checks import checked_coefficient

__all__ = [
    "ARGUMENTS",
    "KINDS",
    "OPS",
    "Argument",
    "Condition",
    "KindSyntax",
    "QueryError",
    "QuerySpec",
    "parse_query",
    "spec_from_json",
]

OPS = ("=", "!=", "<", "<=", ">", ">=")
_ALIASES = {"wmean": "weighted_mean", "var": "variance", "avg": "mean"}


@dataclass(frozen=True, slots=True)
class Argument:
    """One argument of a query kind: the :class:`QuerySpec` field it fills, its form and a label for people.

    Forms: ``"column"`` (the name of a numeric column) and ``"terms"`` (a linear combination of numeric columns,
    ``2*kwh + 0.5*weight``).
    """

    field: str
    form: str
    label: str


@dataclass(frozen=True, slots=True)
class KindSyntax:
    """How a kind is written: ``kind(arguments…)``, and whether a ``where`` clause may follow."""

    arguments: tuple[Argument, ...] = ()
    where: bool = True
    summary: str = ""


_COLUMN = Argument("column", "column", "column")
ARGUMENTS: dict[str, KindSyntax] = {
    "count": KindSyntax((), summary="the number of records"),
    "sum": KindSyntax((_COLUMN,), summary="the sum of a column"),
    "mean": KindSyntax((_COLUMN,), summary="the mean of a column (noisy sum / noisy count)"),
    "weighted_mean": KindSyntax(
        (_COLUMN, Argument("weights", "column", "weight column")), summary="Σ w·x / Σ w"
    ),
    "variance": KindSyntax((_COLUMN,), summary="the variance of a column"),
    "linear": KindSyntax(
        (Argument("coefficients", "terms", "linear combination, e.g. 2*kwh + 0.5*weight"),),
        summary="the sum over records of a linear combination of columns",
    ),
    "identity": KindSyntax((_COLUMN,), where=False, summary="every record of a column, in record order"),
}
#: The query kinds, in the order of :data:`ARGUMENTS`.
KINDS = tuple(ARGUMENTS)
_MAX_CONDITIONS = 8
_MAX_TEXT = 1000
_TOKEN = re.compile(
    r"\s*(?:(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<str>'[^']*'|\"[^\"]*\")|(?P<op><=|>=|!=|=|<|>)|(?P<punct>[(),*+-]))"
)
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


class QueryError(InvalidParameterError):
    """A query is malformed (the message says where; it never depends on the data)."""


@dataclass(frozen=True, slots=True)
class Condition:
    column: str
    op: str
    value: float | str


@dataclass(frozen=True, slots=True)
class QuerySpec:
    kind: str
    column: str | None = None
    weights: str | None = None
    coefficients: tuple[tuple[str, float], ...] = ()
    where: tuple[Condition, ...] = ()
    dataset: str | None = None

    def columns(self) -> set[str]:
        out = {c for c, _ in self.coefficients} | {c.column for c in self.where}
        return out | {c for c in (self.column, self.weights) if c is not None}

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind}
        if self.column is not None:
            d["column"] = self.column
        if self.weights is not None:
            d["weights"] = self.weights
        if self.coefficients:
            d["coefficients"] = dict(self.coefficients)
        if self.where:
            d["where"] = [{"column": c.column, "op": c.op, "value": c.value} for c in self.where]
        if self.dataset is not None:
            d["dataset"] = self.dataset
        return d


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise QueryError(f"unexpected character at position {pos}: {text[pos : pos + 10]!r}.")
        kind = m.lastgroup
        assert kind is not None
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, kind: str | None = None, value: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (kind and tok[0] != kind) or (value and tok[1].lower() != value):
            want = value or kind or "a token"
            got = "the end" if tok is None else repr(tok[1])
            raise QueryError(f"expected {want!r} but found {got}.")
        self.i += 1
        return tok[1]

    def at(self, value: str) -> bool:
        tok = self.peek()
        return tok is not None and tok[1].lower() == value

    def number(self) -> float:
        text = self.take("num")
        value = float(text)
        if not math.isfinite(value):
            raise QueryError(f"number {text!r} is not finite.")
        return value

    def linear(self) -> tuple[tuple[str, float], ...]:
        terms: dict[str, float] = {}
        sign = 1.0
        while True:
            if self.at("-"):
                self.take()
                sign = -sign
            elif self.at("+"):
                self.take()
            coef = 1.0
            if self.peek() is not None and self.peek()[0] == "num":  # type: ignore[index]
                coef = self.number()
                self.take("punct", "*")
            name = self.take("name")
            terms[name] = terms.get(name, 0.0) + sign * coef
            sign = 1.0
            if self.at("+") or self.at("-"):
                continue
            return tuple(terms.items())

    def parse(self) -> QuerySpec:
        agg = self.take("name").lower()
        agg = _ALIASES.get(agg, agg)
        if agg not in KINDS:
            raise QueryError(f"unknown aggregate {agg!r}; choose among {', '.join(KINDS)}.")
        self.take("punct", "(")
        values: dict[str, Any] = {}
        if agg == "count" and self.at("*"):
            self.take()
        for i, argument in enumerate(ARGUMENTS[agg].arguments):
            if i:
                self.take("punct", ",")
            values[argument.field] = self.linear() if argument.form == "terms" else self.take("name")
        column, weights = values.get("column"), values.get("weights")
        coefficients: tuple[tuple[str, float], ...] = values.get("coefficients", ())
        self.take("punct", ")")
        dataset = None
        if self.at("from"):
            self.take()
            dataset = self.take("name")
        where: list[Condition] = []
        if self.at("where"):
            self.take()
            while True:
                col = self.take("name")
                op = self.take("op")
                tok = self.peek()
                if tok is not None and tok[0] == "str":
                    self.i += 1
                    value: float | str = tok[1][1:-1]
                elif self.at("-"):
                    self.take()
                    value = -self.number()
                else:
                    value = self.number()
                where.append(Condition(col, op, value))
                if not self.at("and"):
                    break
                self.take()
        if self.peek() is not None:
            raise QueryError(f"unexpected {self.peek()[1]!r} after the query.")  # type: ignore[index]
        return _checked(QuerySpec(agg, column, weights, coefficients, tuple(where), dataset))


def _checked(spec: QuerySpec) -> QuerySpec:
    if len(spec.where) > _MAX_CONDITIONS:
        raise QueryError(f"at most {_MAX_CONDITIONS} conditions; got {len(spec.where)}.")
    for name in spec.columns() | ({spec.dataset} if spec.dataset else set()):
        if not _IDENT.match(name):
            raise QueryError(f"{name!r} is not a column or dataset name.")
    syntax = ARGUMENTS[spec.kind]
    for argument in syntax.arguments:
        if not getattr(spec, argument.field):
            raise QueryError(f"{spec.kind} needs a {argument.label.split(',')[0]}.")
    if spec.where and not syntax.where:
        raise QueryError(f"{spec.kind} ({syntax.summary}) takes no where clause.")
    for c in spec.where:
        if isinstance(c.value, str):
            if len(c.value) > 200:
                raise QueryError("string literals are limited to 200 characters.")
            if any(ch < " " or ch == "\x7f" or "\ud800" <= ch <= "\udfff" for ch in c.value):
                raise QueryError("string literals must not contain control characters (NUL included).")
        elif not math.isfinite(c.value):
            raise QueryError("a condition's value must be finite.")
    for name, coef in spec.coefficients:
        try:
            checked_coefficient(coef, f"coefficient of {name}", "query")
        except InvalidParameterError as exc:
            raise QueryError(str(exc)) from None
    return spec


def parse_query(text: str, *, dataset: str | None = None) -> QuerySpec:
    """Parse the text form of a query."""
    if not isinstance(text, str) or not text.strip() or len(text) > _MAX_TEXT:
        raise QueryError(f"a query is a non-empty string of at most {_MAX_TEXT} characters.")
    spec = _Parser(text).parse()
    if dataset is not None:
        if spec.dataset is not None and spec.dataset != dataset:
            raise QueryError("the query names two different datasets.")
        spec = QuerySpec(spec.kind, spec.column, spec.weights, spec.coefficients, spec.where, dataset)
    return _checked(spec)


def spec_from_json(body: dict[str, Any]) -> QuerySpec:
    """The structured form: ``{"kind", "column", "weights", "coefficients", "where", "dataset"}``."""
    kind = body.get("kind")
    kind = _ALIASES.get(kind, kind) if isinstance(kind, str) else kind
    if kind not in KINDS:
        raise QueryError(f"`kind` must be one of {', '.join(KINDS)}; got {kind!r}.")
    where = []
    for c in body.get("where") or []:
        if c["op"] not in OPS:
            raise QueryError(f"operator must be one of {' '.join(OPS)}; got {c['op']!r}.")
        value = c["value"]
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise QueryError("a condition's value must be a number or a string.")
        if isinstance(value, int | float):
            value = float(value)
            if not math.isfinite(value):
                raise QueryError("a condition's value must be finite.")
        where.append(Condition(c["column"], c["op"], value))
    coefficients = []
    for name, coef in (body.get("coefficients") or {}).items():
        if isinstance(coef, bool) or not isinstance(coef, int | float) or not math.isfinite(coef):
            raise QueryError(f"coefficient of {name!r} must be a finite number.")
        coefficients.append((name, float(coef)))
    spec = QuerySpec(
        kind, body.get("column"), body.get("weights"), tuple(coefficients), tuple(where), body.get("dataset")
    )
    return _checked(spec)
