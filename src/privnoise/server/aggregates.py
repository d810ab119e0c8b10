"""The scalar components of an aggregate query (:mod:`.planner`): each component's SQL sum over the row source,
its sensitivity and its slopes, and how the noisy components combine into the answer (the planner's module
docstring gives the sensitivities)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import Float, literal

from .config import PolicySpec
from .querylang import QueryError, QuerySpec
from .vectors import NEIGHBOURS

__all__ = ["Part", "range_product", "scalar_parts", "sensitivity"]

#: (name, SQL — a list of cells for a vector —, sensitivity, slopes per column)
Part = tuple[str, Any, float, dict[str, float]]


def range_product(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    """The range of the product of a value in ``a`` and one in ``b``."""
    p = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
    return min(p), max(p)


def sensitivity(lo: float, hi: float) -> float:
    """max(hi − lo, |lo|, |hi|): one record replaced, or added or removed (:class:`~privnoise.core.RecordReplaced`)."""
    return NEIGHBOURS.sum(lo, hi)


def scalar_parts(
    query: QuerySpec, policy: PolicySpec, records: int, bounds: Callable[[str], tuple[float, float]],
    clamped: Callable[[str], Any], total: Callable[[Any], Any],
) -> tuple[list[Part], Callable[[list[Any]], Any], bool, bool]:
    """(the parts, how they combine, whether the answer is the records' values (``identity``), whether it uses the
    number of records) of a scalar ``query``; ``clamped(column)`` is a column clamped to its declared bounds,
    ``total(expr)`` the sum of ``expr`` over the records, each weighted by its filter."""
    parts: list[Part] = []
    count: Part = ("count", total(literal(1.0, Float)), 1.0, {})
    identity = False
    uses_records = False
    combine: Callable[[list[Any]], Any]
    kind = query.kind
    if kind == "count":
        parts = [count]

        def combine(v: list[Any]) -> Any:
            return max(v[0], 0.0)
    elif kind == "linear":
        g_lo = g_hi = 0.0
        expr: Any = literal(0.0, Float)
        coefficient: dict[str, float] = {}
        for column, a in query.coefficients:
            lo, hi = bounds(column)
            g_lo += min(a * lo, a * hi)
            g_hi += max(a * lo, a * hi)
            expr = expr + literal(a, Float) * clamped(column)
            coefficient[column] = coefficient.get(column, 0.0) + a
        parts = [("sum", total(expr), sensitivity(g_lo, g_hi), {c: abs(a) for c, a in coefficient.items()})]

        def combine(v: list[Any]) -> Any:
            return v[0]
    elif kind == "weighted_mean":
        assert query.column is not None and query.weights is not None
        lo, hi = bounds(query.column)
        wlo, whi = bounds(query.weights)
        if wlo < 0:
            raise QueryError(f"weight column {query.weights!r} must have bounds ≥ 0.")
        x, w = clamped(query.column), clamped(query.weights)
        big_x, big_w = max(abs(lo), abs(hi)), max(abs(wlo), abs(whi))
        parts = [
            (
                "weighted_sum",
                total(w * x),
                sensitivity(*range_product((lo, hi), (wlo, whi))),
                {query.column: big_w, query.weights: big_x},
            ),
            ("weight_sum", total(w), sensitivity(wlo, whi), {query.weights: 1.0}),
        ]

        def combine(v: list[Any]) -> Any:
            return (lo + hi) / 2.0 if v[1] <= 0 else min(max(v[0] / v[1], lo), hi)
    else:
        assert query.column is not None
        column = query.column
        lo, hi = bounds(column)
        x = clamped(column)
        total_sum = ("sum", total(x), sensitivity(lo, hi), {column: 1.0})
        if kind == "sum":
            parts = [total_sum]

            def combine(v: list[Any]) -> Any:
                return v[0]
        elif kind == "mean" and policy.is_fisher:
            uses_records = True
            n = max(records, 1)
            parts = [("mean", total(x) / literal(float(n), Float), (hi - lo) / n, {column: 1.0 / n})]

            def combine(v: list[Any]) -> Any:
                return v[0]
        elif kind == "mean":  # Σ(x − c) and the count: c + Ŝ/N̂ (the Session's design)
            centre, half = (lo + hi) / 2.0, (hi - lo) / 2.0
            centred = total(x - literal(centre, Float))
            parts = [("sum", centred, sensitivity(-half, half), {column: 1.0}), count]

            def combine(v: list[Any]) -> Any:
                return min(max(centre + v[0] / max(v[1], 1.0), lo), hi)
        elif kind == "variance":  # Σ(x − c), Σ(x − c)² ∈ [0, h²] and the count: the variance is shift-invariant
            centre, half = (lo + hi) / 2.0, (hi - lo) / 2.0
            shifted = x - literal(centre, Float)
            parts = [
                ("sum", total(shifted), sensitivity(-half, half), {column: 1.0}),
                ("sum_of_squares", total(shifted * shifted), sensitivity(0.0, half * half), {column: 2.0 * half}),
                count,
            ]
            top = half * half

            def combine(v: list[Any]) -> Any:
                m = max(v[2], 2.0)
                mu = v[0] / m
                return min(max((v[1] - m * mu * mu) / (m - 1.0), 0.0), top)
        elif kind == "identity":
            identity = uses_records = True
            parts = [("values", x, hi - lo, {column: 1.0})]

            def combine(v: list[Any]) -> Any:
                return v[0]
        else:  # pragma: no cover - the parser knows no other kind
            raise QueryError(f"unknown query kind {kind!r}.")

    return parts, combine, identity, uses_records
