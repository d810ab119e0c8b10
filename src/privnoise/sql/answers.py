"""A statement's answer from its released aggregates: expressions, ``HAVING``, ``ORDER BY`` and ``LIMIT`` evaluated
on the noisy values — post-processing, which changes no guarantee — and one row per group.

An interface releases every aggregate of the statement (:attr:`~privnoise.sql.Statement.aggregates`) for the same
groups and hands :func:`assemble` a :class:`Released` per aggregate: its values per group and, where the noise law
gives one, its interval at any level. An output that is one aggregate carries that aggregate's interval; an
arithmetic expression of m aggregates carries the interval that interval arithmetic gives from theirs, each taken at
level 1 − (1 − L)/m, so that it covers with probability at least L (the union bound); a division whose denominator
interval holds 0 has the unbounded interval (−∞, ∞). A quantile has a rank accuracy, not an interval in value units:
an output that uses one has no interval columns.

>>> from privnoise.sql import parse_statement
>>> s = parse_statement("SELECT g, SUM(x) / COUNT(*) AS r FROM t GROUP BY g ORDER BY r DESC")
>>> total, count = s.aggregates
>>> answer = assemble(s, [("a",), ("b",)], {total: Released([10.0, 30.0]), count: Released([5, 10])}, {})
>>> answer.rows()
[{'g': 'b', 'r': 3.0}, {'g': 'a', 'r': 2.0}]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .statement import Aggregate, Arithmetic, Compare, Expression, KeyColumn, Number, Statement, Test

__all__ = ["Released", "SqlAnswer", "assemble"]

Interval = Callable[[float], tuple[Any, Any]]
_COMPARE: dict[str, Callable[[float, float], bool]] = {
    "=": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}


@dataclass(frozen=True, slots=True)
class Released:
    """One aggregate released for every group: ``values`` aligned with the groups, ``interval(level)`` →
    (lows, highs) where its noise law gives one."""

    values: Sequence[Any]
    interval: Interval | None = None


@dataclass
class SqlAnswer:
    """The answer to a statement: one row per group (after ``HAVING``, ``ORDER BY``, ``LIMIT``).

    Attributes
    ----------
    statement : Statement
        What was asked.
    columns : dict
        Output name → its values, row by row.
    intervals : dict
        Output name → (lows, highs) at ``level`` (outputs without an interval are absent).
    guarantee : dict
        The privacy the whole answer satisfies, as the interface states it.
    level : float
        The intervals' coverage.
    releases : dict
        Each aggregate's text → the release it came from (the interface's own object).
    """

    statement: Statement
    columns: dict[str, list[Any]]
    intervals: dict[str, tuple[list[float], list[float]]]
    guarantee: dict[str, Any]
    level: float
    releases: dict[str, Any] = field(default_factory=dict)

    def rows(self) -> list[dict[str, Any]]:
        """The answer as one mapping per row (output name → value)."""
        names = list(self.columns)
        count = len(self.columns[names[0]]) if names else 0
        return [{name: self.columns[name][i] for name in names} for i in range(count)]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: the columns, the intervals with their level, the guarantee and the statement."""
        return {
            "columns": {k: [_plain(v) for v in vs] for k, vs in self.columns.items()},
            "intervals": {k: {"low": lo, "high": hi} for k, (lo, hi) in self.intervals.items()},
            "level": self.level,
            "guarantee": self.guarantee,
            "statement": self.statement.text,
        }

    def to_frame(self) -> Any:
        """A pandas DataFrame: each output, followed by ``<name>_low`` and ``<name>_high`` where it has an interval,
        and the stated guarantee (also in ``frame.attrs["guarantee"]``)."""
        from .._optional import require

        pd = require("pandas", feature="SqlAnswer.to_frame")
        data: dict[str, Any] = {}
        for name, values in self.columns.items():
            data[name] = values
            if name in self.intervals:
                data[f"{name}_low"], data[f"{name}_high"] = self.intervals[name]
        frame = pd.DataFrame(data)
        frame["guarantee"] = self.guarantee.get("summary", "")
        frame.attrs["guarantee"] = self.guarantee
        return frame


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _aggregates(expression: Expression) -> list[Aggregate]:
    if isinstance(expression, Aggregate):
        return [expression]
    if isinstance(expression, Arithmetic):
        return list(dict.fromkeys(_aggregates(expression.left) + _aggregates(expression.right)))
    return []


def _arithmetic(op: str, a: float | None, b: float | None) -> float | None:
    if a is None or b is None:
        return None
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    return a / b if b != 0 else None  # a division by zero has no value (None), never NaN or infinity


def _value(expression: Expression, row: int, key: dict[str, Any], released: dict[Aggregate, Released]) -> Any:
    if isinstance(expression, Number):
        return expression.value
    if isinstance(expression, KeyColumn):
        return key[expression.name]
    if isinstance(expression, Aggregate):
        return _plain(released[expression].values[row])
    left = _value(expression.left, row, key, released)
    right = _value(expression.right, row, key, released)
    return _arithmetic(expression.op, None if left is None else float(left), None if right is None else float(right))


def _bounds(expression: Expression, row: int, spans: dict[Aggregate, tuple[Any, Any]]) -> tuple[float, float]:
    if isinstance(expression, Number):
        return expression.value, expression.value
    if isinstance(expression, Aggregate):
        low, high = spans[expression]
        return float(low[row]), float(high[row])
    assert isinstance(expression, Arithmetic)
    a, b = _bounds(expression.left, row, spans), _bounds(expression.right, row, spans)
    if expression.op == "+":
        return a[0] + b[0], a[1] + b[1]
    if expression.op == "-":
        return a[0] - b[1], a[1] - b[0]
    if expression.op == "/":
        if b[0] <= 0.0 <= b[1]:
            return -math.inf, math.inf
        b = (1.0 / b[1], 1.0 / b[0])
    products = [0.0 if x == 0.0 or y == 0.0 else x * y for x in a for y in b]  # 0 · ∞ = 0 for bounds
    return min(products), max(products)


def _holds(test: Test, row: int, key: dict[str, Any], released: dict[Aggregate, Released]) -> bool:
    if isinstance(test, Compare):
        left = _value(test.left, row, key, released)
        right = _value(test.right, row, key, released)
        return left is not None and right is not None and _COMPARE[test.op](left, right)
    found = [_holds(p, row, key, released) for p in test.parts]
    return (not found[0]) if test.word == "not" else all(found) if test.word == "and" else any(found)


def _sort_key(value: Any) -> Any:
    if value is None:
        return (2, 0.0, "")
    if isinstance(value, int | float | np.integer | np.floating):
        return (0, float(value), "")
    return (1, 0.0, str(value))


def assemble(statement: Statement, keys: Sequence[tuple[Any, ...]], released: dict[Aggregate, Released],
             guarantee: dict[str, Any], *, level: float = 0.95, releases: dict[str, Any] | None = None) -> SqlAnswer:
    """The answer (module docstring): ``keys`` are the groups (one value per ``GROUP BY`` column; one empty tuple
    without groups), every aggregate's values aligned with them."""
    groups = [dict(zip(statement.group_by, k, strict=True)) for k in keys]
    spans: dict[tuple[Aggregate, float], tuple[Any, Any]] = {}

    def span(aggregate: Aggregate, at: float) -> tuple[Any, Any]:
        if (aggregate, at) not in spans:
            interval = released[aggregate].interval
            assert interval is not None
            spans[aggregate, at] = interval(at)
        return spans[aggregate, at]

    rows = [i for i in range(len(keys))
            if statement.having is None or _holds(statement.having, i, groups[i], released)]
    for expression, descending in reversed(statement.order_by):
        values = {i: _sort_key(_value(expression, i, groups[i], released)) for i in rows}
        rows.sort(key=values.__getitem__, reverse=descending)
    if statement.limit is not None:
        rows = rows[: statement.limit]
    columns: dict[str, list[Any]] = {}
    intervals: dict[str, tuple[list[float], list[float]]] = {}
    for output in statement.outputs:
        e = output.expression
        columns[output.name] = [_value(e, i, groups[i], released) for i in rows]
        parts = _aggregates(e)
        if parts and all(released[a].interval is not None for a in parts):
            at = 1.0 - (1.0 - level) / len(parts)
            found = {a: span(a, at) for a in parts}
            bounds = [_bounds(e, i, {a: (np.ravel(lo), np.ravel(hi)) for a, (lo, hi) in found.items()}) for i in rows]
            intervals[output.name] = ([b[0] for b in bounds], [b[1] for b in bounds])
    return SqlAnswer(statement, columns, intervals, guarantee, level, dict(releases or {}))
