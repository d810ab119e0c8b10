"""What a Fisher floor covers: answers that are differentiable in a record's value, never step functions of it.

A column's ``fisher_floor`` (owner.toml, or a querier's own floor) promises that after any sequence of answers
no unbiased estimate of a record's value of that column has variance below the floor. The server keeps that
promise through the Cramér–Rao bound (Farokhi & Sandberg, eq. (7)): an answer y = f(x) + w, with f
differentiable in the record's value x_i and |∂f/∂x_i| ≤ s, carries at most s²·𝓘_w of Fisher information about
x_i, the information adds over answers (Proposition 1), and a release that would push 1/Σ𝓘 below the floor is
refused (:mod:`.budgets`).

That bound needs a differentiable answer. A count with a filter on the column (``count() where kwh >= m``),
a histogram's bins over it, a quantile of it (the exponential mechanism scores candidates by counting the
records on either side) and a group-by key on it are **step functions** of x_i: they jump where x_i crosses a
threshold and are flat elsewhere. Their Fisher information about x_i is zero almost everywhere and unbounded at
the jump, so no per-answer charge bounds what they reveal; bisecting the threshold pins a record's value to any
precision after a few dozen answers per record, while the information counted stays 0.

So a step construct on a column that has a floor is **refused before any charge** (:class:`StepQueryRefused`,
422), unless the owner declares the column open to them with ``step_queries = "allow"`` under
``[datasets.<name>.columns.<column>]``; that column's floor then bounds the differentiable answers only, and the
budget views say so. A querier given a floor of its own (``fisher_floor`` when it was added) keeps it: step
answers on a floored column are refused to that querier even where the column allows them.

The constructs, found from the query's structure (:func:`step_constructs`): every test of its ``where`` (any
operator, ``IN``, ``IS NULL``, ``LIKE``, however ``NOT``, ``AND`` and ``OR`` join them), every ``group by`` key
column, and the column arguments of every kind not in :data:`DIFFERENTIABLE_KINDS` (``histogram``, ``quantile``,
and any kind added later until it is declared differentiable here).

>>> from privnoise.server.querylang import parse_query
>>> step_constructs(parse_query("count() where hid = 7 and kwh >= 3"))
(('hid', 'a `where` condition on it (hid = …)'), ('kwh', 'a `where` condition on it (kwh >= …)'))
>>> step_constructs(parse_query("mean(kwh) where region = 'north'"))
(('region', 'a `where` condition on it (region = …)'),)
>>> step_constructs(parse_query("sum(kwh)"))
()
"""

from __future__ import annotations

from ..core.conditions import Condition
from ..core.predicates import InList, IsNull, Like, atoms_of
from .config import STEP_QUERIES, ColumnSpec, DatasetSpec
from .querylang import QueryError, QuerySpec

__all__ = [
    "ALLOW",
    "DIFFERENTIABLE_KINDS",
    "REFUSE",
    "STEP_QUERIES",
    "StepQueryRefused",
    "floored_steps",
    "querier_refusal",
    "step_constructs",
    "step_entry",
]

#: The values of a column's ``step_queries`` key (:data:`~.config.STEP_QUERIES`); refuse is the default.
REFUSE, ALLOW = STEP_QUERIES

#: The kinds whose answer is a differentiable function, with a bounded slope, of every record's value of the
#: columns in its arguments (the slope the planner charges). Any other kind is a step function of them.
DIFFERENTIABLE_KINDS = frozenset({"count", "sum", "mean", "weighted_mean", "variance", "linear", "identity"})

_KIND_STEPS = {
    "histogram": "histogram bins over it",
    "quantile": "a quantile of it",
}


class StepQueryRefused(QueryError):
    """A step function of a record's value of a floored column was asked for; nothing was charged."""


def step_constructs(query: QuerySpec) -> tuple[tuple[str, str], ...]:
    """The (column, construct) pairs of ``query`` that are step functions of a record's value of the column."""
    out: list[tuple[str, str]] = [(a.column, f"a `where` condition on it ({_test(a)} …)") for a in atoms_of(query.where)]
    out.extend((column, "a `group by` key on it") for column in query.key_columns())  # each key column
    if query.kind not in DIFFERENTIABLE_KINDS:
        what = _KIND_STEPS.get(query.kind, f"{query.kind} of it (not a differentiable function of it)")
        arguments = [query.column, query.weights, *(c for c, _ in query.coefficients)]
        out.extend((c, what) for c in dict.fromkeys(arguments) if c is not None)
    return tuple(out)


def _test(atom: Condition | InList | IsNull | Like) -> str:
    """A test's column and operator: ``kwh >=``, ``region in``, ``region is null``, ``region like``."""
    if isinstance(atom, Condition):
        return f"{atom.column} {atom.op}"
    negated = "not " if atom.negated else ""
    if isinstance(atom, IsNull):
        return f"{atom.column} is {negated}null"
    return f"{atom.column} {negated}{'in' if isinstance(atom, InList) else 'like'}"


def _reason(column: str, what: str) -> str:
    return (
        f"column {column!r} has a Fisher floor: {what} is a step function of a record's {column}, whose Fisher "
        "information is unbounded, so the Cramér–Rao floor cannot hold"
    )


def floored_steps(query: QuerySpec, spec: DatasetSpec) -> tuple[tuple[str, str], ...]:
    """The step constructs of ``query`` on columns of ``spec`` that have a Fisher floor, all of them on columns
    the owner opened with ``step_queries = "allow"``; raise :class:`StepQueryRefused` for any other.

    Call it after the query's columns were checked to be declared columns of the dataset.
    """
    out = []
    for column, what in step_constructs(query):
        col = spec.columns[column]
        if col.fisher_floor is None:
            continue
        if col.step_queries != ALLOW:
            raise StepQueryRefused(
                f"{_reason(column, what)}; the owner can declare the column open to such queries with "
                f'`step_queries = "allow"` under [datasets.{spec.name}.columns.{column}] in owner.toml (its floor '
                "then bounds the differentiable answers only)."
            )
        out.append((column, what))
    return tuple(out)


def querier_refusal(steps: tuple[tuple[str, str], ...], querier_floor: float | None) -> StepQueryRefused | None:
    """The refusal of allowed step constructs ``steps`` (:func:`floored_steps`) to a querier with a floor of
    its own (None when it has none: the column's allowance applies)."""
    if querier_floor is None or not steps:
        return None
    column, what = steps[0]
    return StepQueryRefused(
        f"{_reason(column, what)}; this querier has a Fisher floor of its own (`fisher_floor` {querier_floor:g}), "
        f'which `step_queries = "allow"` on the column does not lift.'
    )


def step_entry(col: ColumnSpec, querier_floor: float | None = None) -> dict[str, str]:
    """What a budget view says of the step answers on floored column ``col`` (for a querier with its own floor
    ``querier_floor``, or for the dataset with None)."""
    if col.step_queries != ALLOW or querier_floor is not None:
        return {"step_queries": "refused"}
    return {
        "step_queries": "allowed",
        "floor_covers": "differentiable answers only: the owner allows filters, histogram bins, quantiles and "
        f"group-by keys on {col.name} (step_queries = \"allow\"), whose Fisher information is unbounded and not "
        "counted; the floor and the record bound do not bound what they reveal",
    }
