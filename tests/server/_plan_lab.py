"""A small dataset for the planner's unit tests: declared columns, policies built per test, and a SQLite table in
memory holding NULLs and values outside the declared bounds (the plan's SQL must clamp them).

The references here are computed from the rows and the declared bounds alone: clamping, filters, brute-force
sensitivities over neighbouring databases and slopes by finite differences over a grid of the declared box.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import stats
from sqlalchemy import MetaData, Table, create_engine, insert
from sqlalchemy.engine import Engine

from privnoise.server.config import ColumnSpec, DatasetSpec, PolicySpec
from privnoise.server.db import data_table

F = Fraction
REGIONS = ("north", "south", "east", "west")
BOUNDS: dict[str, tuple[float, float]] = {
    "x": (10.0, 60.0),  # a positive lower bound: adding a record at 60 moves a sum by 60
    "y": (-5.0, 3.0),  # across 0
    "z": (-60.0, -10.0),  # negative
    "w": (0.5, 2.0),  # weights
    "u": (0.0, 4.0),  # weights from 0
    "v": (-1.0, 2.0),  # weights that may be negative (refused as weights)
    "s": (-0.5, 0.5),  # squares below 1
    "t": (-4.0, 0.0),  # an upper bound at 0
    "f": (0.0, 10.0),  # floored, step queries allowed
    "g": (0.0, 10.0),  # floored, step queries refused
}
OPS: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def _row(i: int) -> dict[str, Any]:
    return {
        "pn_row": i,
        "x": None if i == 4 else 3.0 + 6.5 * i,  # 3 and 74.5 lie outside [10, 60]
        "y": None if i == 7 else -7.0 + 1.25 * i,
        "z": -70.0 + 6.0 * i,
        "w": 0.25 * i,
        "u": 0.5 * i - 1.0,
        "v": 0.3 * i - 1.5,
        "s": 0.125 * i - 0.7,
        "t": 0.5 - 0.75 * i,
        "f": float(i),
        "g": float(i % 5),
        "region": [*REGIONS[:3], None, "zz"][i % 5],  # no "west" record, a NULL and an undeclared value
        "free": [None, "b", "a", "c", "a", "b"][i % 6],
    }


ROWS = [_row(i) for i in range(12)]
COLUMNS = {
    **{c: ColumnSpec(c, "number", b) for c, b in BOUNDS.items()},
    "f": ColumnSpec("f", "number", BOUNDS["f"], fisher_floor=0.01, step_queries="allow"),
    "g": ColumnSpec("g", "number", BOUNDS["g"], fisher_floor=0.01),
    "region": ColumnSpec("region", "text", categories=REGIONS),
    "free": ColumnSpec("free", "text"),
}
KINDS = ("count", "sum", "mean", "variance", "linear", "weighted_mean", "identity", "histogram", "quantile")


HALF, MICRO = F(1, 2), F(1, 10**6)


def laplace(kind: str, epsilon: Fraction = HALF, **extra: Any) -> PolicySpec:
    return PolicySpec(kind, "laplace", epsilon=epsilon, **extra)


def gaussian(kind: str, epsilon: Fraction = HALF, delta: Fraction = MICRO, **extra: Any) -> PolicySpec:
    return PolicySpec(kind, "gaussian", epsilon=epsilon, delta=delta, **extra)


def dataset(
    policy: Callable[[str], PolicySpec],
    *,
    engine: str = "sql",
    name: str = "d",
    kinds: tuple[str, ...] = KINDS,
) -> DatasetSpec:
    policies = {
        k: (PolicySpec(k, "exponential", epsilon=F(3, 4)) if k == "quantile" else policy(k)) for k in kinds
    }
    return DatasetSpec(name, name, None, F(10), F(1, 1000), dict(COLUMNS), policies, engine=engine)


def database() -> tuple[Engine, Table]:
    engine = create_engine("sqlite://")
    meta = MetaData()
    table = data_table("d", {c: s.type for c, s in COLUMNS.items()}, meta)
    meta.create_all(engine)
    with engine.begin() as conn:
        conn.execute(insert(table), ROWS)
    return engine, table


def clamp(v: float | None, column: str) -> float:
    lo, hi = BOUNDS[column]
    return lo if v is None else min(max(float(v), lo), hi)


def selected(row: dict[str, Any], where: list[tuple[str, str, Any]]) -> bool:
    """Whether ``row`` passes every condition (numbers clamped first; a NULL text fails every test)."""
    for column, op, value in where:
        if column in BOUNDS:
            if not OPS[op](clamp(row[column], column), float(value)):
                return False
        elif row[column] is None or not OPS[op](row[column], value):
            return False
    return True


def execute(engine: Engine, plan: Any) -> list[tuple[Any, ...]]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.exec_driver_sql(plan.sql, plan.parameters).all()]


# --- neighbouring databases ------------------------------------------------------------------------------------


def grid(columns: tuple[str, ...], points: int = 21) -> Iterator[dict[str, float]]:
    """Records over the declared box of ``columns``: an even grid, its corners and 0 where declared."""
    axes = []
    for c in columns:
        lo, hi = BOUNDS[c]
        axis = set(np.linspace(lo, hi, points).tolist()) | ({0.0} if lo <= 0.0 <= hi else set())
        axes.append(sorted(axis))
    for values in itertools.product(*axes):
        yield dict(zip(columns, values, strict=True))


def scalar_sensitivity(g: Callable[[dict[str, float]], float], columns: tuple[str, ...]) -> float:
    """max over neighbours of |Σ g|: a record added or removed (|g(r)|; a filtered-out record adds 0) or replaced
    (|g(r) − g(r′)|), every record in the declared box."""
    values = [g(r) for r in grid(columns)] + [0.0]
    return max(values) - min(values)


def vector_sensitivity(
    g: Callable[[dict[str, float]], float], columns: tuple[str, ...], cells: int, norm: str
) -> float:
    """max over neighbours of the ℓ1 or ℓ2 change of a vector of ``cells`` disjoint cells, a record adding g to one
    cell or to none: enumerated over (cell, record) pairs for add, remove and replace."""
    return largest_cell_change(sorted({g(r) for r in grid(columns, 11)}), cells, norm)


def largest_cell_change(values: list[float], cells: int, norm: str) -> float:
    """max over neighbours of the ℓ1 or ℓ2 change of ``cells`` disjoint cells, a record adding one of ``values`` to
    one cell: one record added, removed (against no record) or replaced (same cell or another)."""
    records = [(None, 0.0)] + [(k, v) for k in range(cells) for v in values]
    best = 0.0
    for (k1, v1), (k2, v2) in itertools.product(records, records):
        change = np.zeros(cells)
        if k1 is not None:
            change[k1] -= v1
        if k2 is not None:
            change[k2] += v2
        size = float(np.abs(change).sum()) if norm == "l1" else float(np.sqrt((change**2).sum()))
        best = max(best, size)
    return best


def slopes(g: Callable[[dict[str, float]], float], columns: tuple[str, ...]) -> dict[str, float]:
    """sup over the declared box of |∂g/∂c| per column (central differences: exact for polynomials of degree ≤ 2);
    columns where g does not depend on c left out."""
    out = {}
    for c in columns:
        h = (BOUNDS[c][1] - BOUNDS[c][0]) / 64.0
        best = 0.0
        for r in grid(columns, 9):
            up, down = dict(r), dict(r)
            up[c] += h
            down[c] -= h
            best = max(best, abs(g(up) - g(down)) / (2.0 * h))
        if best > 0.0:
            out[c] = best
    return out


# --- the noise --------------------------------------------------------------------------------------------------


def laplace_epsilon(scale: float, sensitivity: float) -> float:
    """ε of continuous Laplace noise of scale b at ℓ1 sensitivity Δ: Δ/b."""
    return sensitivity / scale


def gaussian_delta(sigma: float, sensitivity: float, epsilon: float) -> float:
    """δ(ε) of Gaussian noise at ℓ2 sensitivity Δ (Balle & Wang's analytic Gaussian mechanism)."""
    a, b = sensitivity / (2.0 * sigma), epsilon * sigma / sensitivity
    return float(stats.norm.cdf(a - b) - math.exp(epsilon) * stats.norm.cdf(-a - b))


def selection_threshold(scale: float, delta: float) -> int:
    """The smallest integer T ≥ 2 with P(1 + W rounds to ≥ T) = P(W ≥ T − 3/2) ≤ δ, W ~ Laplace(scale)."""
    t = 2
    while stats.laplace.sf(t - 1.5, scale=scale) > delta:
        t += 1
    return t
