"""The parsed query: its kinds (:data:`ARGUMENTS`), the :class:`QuerySpec` that both forms of a query give, and
:class:`QueryError`.

:data:`ARGUMENTS` is the one description of the kinds: their arguments in order (a column, a linear combination
of columns, a list of numbers) and whether they take a ``where`` or a ``group by`` clause. The parser of the text
form (:mod:`.querylang`), the JSON form (:mod:`.queryjson`), the rules every query obeys (:mod:`.querychecks`)
and the console's query form read it. :data:`ALIASES` are the other names of some kinds.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..core.conditions import Condition
from ..core.predicates import Predicate, columns_of, describe_predicate
from ..exceptions import InvalidParameterError

__all__ = [
    "ALIASES",
    "SHORTHANDS",
    "ARGUMENTS",
    "GROUPED_KINDS",
    "KINDS",
    "Argument",
    "KindSyntax",
    "QueryError",
    "QuerySpec",
    "where_entry",
]

#: Other names of some kinds (``wmean``, ``var``, ``avg``), in both forms of a query.
ALIASES = {"wmean": "weighted_mean", "var": "variance", "avg": "mean"}
#: Shorthands for a kind with one argument fixed: ``median(c)`` is ``quantile(c, 0.5)``.
SHORTHANDS: dict[str, tuple[str, str, tuple[float, ...]]] = {"median": ("quantile", "levels", (0.5,))}


@dataclass(frozen=True, slots=True)
class Argument:
    """One argument of a query kind: the :class:`QuerySpec` field it fills, its form and a label for people.

    Forms: ``"column"`` (the name of a column), ``"terms"`` (a linear combination of numeric columns,
    ``2*kwh + 0.5*weight``) and ``"numbers"`` (one number, several numbers separated by commas, or a list
    ``[0.25, 0.5]``). An ``optional`` argument may be left out.
    """

    field: str
    form: str
    label: str
    optional: bool = False


@dataclass(frozen=True, slots=True)
class KindSyntax:
    """How a kind is written: ``kind(arguments…)``, and whether a ``where`` or ``group by`` clause may follow."""

    arguments: tuple[Argument, ...] = ()
    where: bool = True
    summary: str = ""
    group_by: bool = False


_COLUMN = Argument("column", "column", "column")
ARGUMENTS: dict[str, KindSyntax] = {
    "count": KindSyntax((), summary="the number of records", group_by=True),
    "sum": KindSyntax((_COLUMN,), summary="the sum of a column", group_by=True),
    "mean": KindSyntax((_COLUMN,), summary="the mean of a column (noisy sum / noisy count)", group_by=True),
    "weighted_mean": KindSyntax(
        (_COLUMN, Argument("weights", "column", "weight column")), summary="Σ w·x / Σ w"
    ),
    "variance": KindSyntax((_COLUMN,), summary="the variance of a column"),
    "linear": KindSyntax(
        (Argument("coefficients", "terms", "linear combination, e.g. 2*kwh + 0.5*weight"),),
        summary="the sum over records of a linear combination of columns",
    ),
    "identity": KindSyntax((_COLUMN,), where=False, summary="every record of a column, in record order"),
    "histogram": KindSyntax(
        (_COLUMN, Argument("bins", "numbers", "bin edges, e.g. 0, 10, 20, 60 (none: declared categories)", True)),
        summary="row counts per public bin, or per declared category of a text column",
    ),
    "quantile": KindSyntax(
        (_COLUMN, Argument("levels", "numbers", "levels, e.g. 0.25, 0.5, 0.75")),
        summary="quantiles by the exponential mechanism over the declared bounds",
    ),
}
#: The query kinds, in the order of :data:`ARGUMENTS`.
KINDS = tuple(ARGUMENTS)
#: The kinds that take a ``group by`` clause.
GROUPED_KINDS = tuple(k for k, s in ARGUMENTS.items() if s.group_by)


class QueryError(InvalidParameterError):
    """A query is malformed (the message says where; it never depends on the data)."""


@dataclass(frozen=True, slots=True)
class QuerySpec:
    kind: str
    column: str | None = None
    weights: str | None = None
    coefficients: tuple[tuple[str, float], ...] = ()
    where: tuple[Predicate, ...] = ()  # comparisons (both forms); compound predicates come from SQL (.sqlspecs)
    dataset: str | None = None
    levels: tuple[float, ...] = ()  # quantile levels
    bins: tuple[float, ...] = ()  # histogram bin edges (empty: the declared categories)
    group_by: str | tuple[str, ...] | None = None  # one key column, or a tuple of several

    def key_columns(self) -> tuple[str, ...]:
        """The key columns of the ``group by`` clause, in order (none without one)."""
        if self.group_by is None:
            return ()
        return (self.group_by,) if isinstance(self.group_by, str) else tuple(self.group_by)

    def columns(self) -> set[str]:
        out = {c for c, _ in self.coefficients} | set(columns_of(self.where)) | set(self.key_columns())
        return out | {c for c in (self.column, self.weights) if c is not None}

    def on(self, dataset: str | None) -> QuerySpec:
        """The same query on ``dataset``."""
        return dataclasses.replace(self, dataset=dataset)

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind}
        if self.column is not None:
            d["column"] = self.column
        if self.weights is not None:
            d["weights"] = self.weights
        if self.coefficients:
            d["coefficients"] = dict(self.coefficients)
        if self.levels:
            d["levels"] = list(self.levels)
        if self.bins:
            d["bins"] = list(self.bins)
        if self.where:
            d["where"] = [where_entry(p) for p in self.where]
        if self.group_by is not None:
            d["group_by"] = self.group_by if isinstance(self.group_by, str) else list(self.group_by)
        if self.dataset is not None:
            d["dataset"] = self.dataset
        return d


def where_entry(predicate: Predicate) -> dict[str, Any] | str:
    """One predicate of a ``where`` in a query's JSON description: a comparison as ``{"column", "op", "value"}``
    (the structured form), a compound predicate (``IN``, ``IS NULL``, ``LIKE``, ``NOT``, ``AND``, ``OR``) as its
    SQL text."""
    if isinstance(predicate, Condition):
        return {"column": predicate.column, "op": predicate.op, "value": predicate.value}
    return describe_predicate(predicate)
