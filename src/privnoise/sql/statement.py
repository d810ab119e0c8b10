"""A private SQL statement as privnoise reads it: aggregates to release, the expressions computed from them, the
filter, the groups and the post-processing (``HAVING``, ``ORDER BY``, ``LIMIT``).

:func:`privnoise.sql.parse_statement` builds a :class:`Statement` from SQL text; an interface (the Session, the
command line, the query server) releases its :attr:`Statement.aggregates` with noise and evaluates the rest on the
noisy values. Only the aggregates touch the data; every expression, ``HAVING`` test, order and limit is
post-processing of released values and changes no guarantee.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core.predicates import Predicate
from ..exceptions import InvalidParameterError

__all__ = [
    "Aggregate",
    "Arithmetic",
    "Compare",
    "Connective",
    "Expression",
    "KeyColumn",
    "Number",
    "Output",
    "SqlError",
    "Statement",
    "Test",
]


class SqlError(InvalidParameterError):
    """A statement that cannot be answered privately, or does not parse: the construct, where it is, and why.

    Attributes
    ----------
    line, column : int or None
        The position (1-based) of the construct in the statement, where known.
    """

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        where = f" (line {line}, column {column})" if line is not None and column is not None else ""
        super().__init__(message + where)
        self.reason, self.line, self.column = message, line, column


#: The aggregates a statement may release, by kind (see :class:`Aggregate`).
AGGREGATE_KINDS = ("count", "count_distinct", "sum", "mean", "variance", "stddev", "quantile")


@dataclass(frozen=True, slots=True)
class Aggregate:
    """One released aggregate: ``kind`` (:data:`AGGREGATE_KINDS`) of ``column`` (None: ``COUNT(*)``); ``q`` the
    level of a quantile (``MEDIAN``, ``PERCENTILE_CONT``, ``MIN`` = 0, ``MAX`` = 1); ``text`` as written."""

    kind: str
    column: str | None
    q: float | None = None
    text: str = field(default="", compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class KeyColumn:
    """A ``GROUP BY`` column in the select list."""

    name: str


@dataclass(frozen=True, slots=True)
class Number:
    value: float


@dataclass(frozen=True, slots=True)
class Arithmetic:
    """``left op right`` with op one of ``+ - * /`` (a unary minus is ``0 - x``)."""

    op: str
    left: Expression
    right: Expression


Expression = Aggregate | KeyColumn | Number | Arithmetic


@dataclass(frozen=True, slots=True)
class Compare:
    """``left op right`` of a ``HAVING`` clause (op one of ``= != < <= > >=``)."""

    op: str
    left: Expression
    right: Expression


@dataclass(frozen=True, slots=True)
class Connective:
    """``AND`` / ``OR`` of ``HAVING`` tests, or ``NOT`` of one (``parts`` of one test)."""

    word: str
    parts: tuple[Test, ...]


Test = Compare | Connective


@dataclass(frozen=True, slots=True)
class Output:
    """A column of the answer: its name (the alias, the column, or the expression as written) and expression."""

    name: str
    expression: Expression


@dataclass(frozen=True, slots=True)
class Statement:
    """A parsed private SQL statement (module docstring).

    Attributes
    ----------
    table : str
        The table of the ``FROM`` clause.
    outputs : tuple of Output
        The select list, in order.
    group_by : tuple of str
        The ``GROUP BY`` columns (empty: one row).
    where : tuple of Predicate
        The ``WHERE`` filter, as predicates that must all hold.
    having : Test or None
        The ``HAVING`` test on released values.
    order_by : tuple of (Expression, bool)
        Sort keys, each with True for descending.
    limit : int or None
        At most so many rows.
    options : dict
        ``WITH DIFFERENTIAL_PRIVACY OPTIONS(...)``: epsilon, delta, privacy_unit_column, max_groups_contributed.
    text : str
        The statement as given.
    """

    table: str
    outputs: tuple[Output, ...]
    group_by: tuple[str, ...] = ()
    where: tuple[Predicate, ...] = ()
    having: Test | None = None
    order_by: tuple[tuple[Expression, bool], ...] = ()
    limit: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    text: str = ""

    @property
    def aggregates(self) -> tuple[Aggregate, ...]:
        """The distinct aggregates to release, in order of appearance (select list, ``HAVING``, ``ORDER BY``)."""
        found: dict[Aggregate, None] = {}
        for output in self.outputs:
            _collect(output.expression, found)
        if self.having is not None:
            _collect_test(self.having, found)
        for expression, _ in self.order_by:
            _collect(expression, found)
        return tuple(found)


def _collect(expression: Expression, found: dict[Aggregate, None]) -> None:
    if isinstance(expression, Aggregate):
        found.setdefault(expression)
    elif isinstance(expression, Arithmetic):
        _collect(expression.left, found)
        _collect(expression.right, found)


def _collect_test(test: Test, found: dict[Aggregate, None]) -> None:
    if isinstance(test, Compare):
        _collect(test.left, found)
        _collect(test.right, found)
    else:
        for part in test.parts:
            _collect_test(part, found)
