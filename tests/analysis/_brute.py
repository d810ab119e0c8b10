"""Independent references for the Session's privacy tests: sensitivities by brute force over the rows one privacy
unit can hold, each released part's ε (or ρ) from the noise actually drawn, and quantile scores recomputed here.

Every aggregate a Session releases is a sum over rows (a count, a sum of clamped values, a sum of centred values or
of their squares, a vector of per-cell or per-group counts or sums), so adding or removing one unit changes it by
exactly that unit's own aggregate. The sensitivity is therefore the largest norm of the aggregate of one unit's
rows: at most k rows (contribution bounding keeps k), every value anywhere (clamped to the declared bounds by the
aggregate itself), every row in any cell or group.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

Row = tuple[float, int]  # (value, cell or group index)


def unit_rows(k: int, values: Sequence[float], cells: int) -> list[tuple[Row, ...]]:
    """Every multiset of 1..k rows (value, cell) one unit may contribute."""
    items = [(float(v), c) for v in values for c in range(cells)]
    return [combo for m in range(1, k + 1) for combo in itertools.combinations_with_replacement(items, m)]


def sensitivity(aggregate: Callable[[Sequence[Row]], Any], k: int, values: Sequence[float], cells: int = 1,
                norm: int = 1) -> float:
    """max over one unit's rows of ‖aggregate(rows)‖ (ℓ1 or ℓ2)."""
    best = 0.0
    for rows in unit_rows(k, values, cells):
        vector = np.atleast_1d(np.asarray(aggregate(rows), dtype=float))
        best = max(best, float(np.abs(vector).sum() if norm == 1 else np.sqrt((vector**2).sum())))
    return best


def moves_one_coordinate(aggregate: Callable[[Sequence[Row]], Any], k: int, values: Sequence[float],
                         cells: int = 1) -> bool:
    """Whether every unit changes a single coordinate of a vector aggregate (then a scalar pair is exact)."""
    return all(np.count_nonzero(np.atleast_1d(aggregate(rows))) <= 1 for rows in unit_rows(k, values, cells))


def values_around(low: float, high: float) -> tuple[float, ...]:
    """Values below, at, inside and above the declared bounds (clamping happens in the aggregate)."""
    return (low - 3.0, low, (3 * low + high) / 4, (low + high) / 2, high, high + 2.5)


def clamp(x: float, low: float, high: float) -> float:
    return min(max(x, low), high)


# -- the aggregates of one unit's rows, as the Session's documentation defines them -----------------------------
def count(rows: Sequence[Row]) -> float:
    return float(len(rows))


def total(low: float, high: float) -> Callable[[Sequence[Row]], float]:
    return lambda rows: sum(clamp(v, low, high) for v, _ in rows)


def centred(low: float, high: float) -> Callable[[Sequence[Row]], float]:
    c = (low + high) / 2
    return lambda rows: sum(clamp(v, low, high) - c for v, _ in rows)


def centred_squares(low: float, high: float) -> Callable[[Sequence[Row]], float]:
    c = (low + high) / 2
    return lambda rows: sum((clamp(v, low, high) - c) ** 2 for v, _ in rows)


def per_cell(cells: int, value: Callable[[float], float] = lambda v: 1.0) -> Callable[[Sequence[Row]], np.ndarray]:
    def aggregate(rows: Sequence[Row]) -> np.ndarray:
        out = np.zeros(cells)
        for v, c in rows:
            out[c] += value(v)
        return out

    return aggregate


# -- the privacy of each part, from its noise -------------------------------------------------------------------
def scale_of(noise: dict[str, Any]) -> float:
    return float(noise.get("b", noise.get("t", noise.get("sigma"))))


def epsilon_of(delta1: float, noise: dict[str, Any]) -> Fraction:
    """ε = Δ₁/b of Laplace noise of scale b (or Δ/t of discrete Laplace noise on ℤ), exactly."""
    assert noise["family"] in ("laplace", "discrete-laplace"), noise
    return Fraction(delta1) / Fraction(scale_of(noise))


def rho_of(delta2: float, noise: dict[str, Any]) -> Fraction:
    """ρ = Δ₂²/(2σ²) of Gaussian noise of standard deviation σ, exactly."""
    assert noise["family"] == "gaussian", noise
    return Fraction(delta2) ** 2 / (2 * Fraction(scale_of(noise)) ** 2)


# -- quantile scores ---------------------------------------------------------------------------------------------
def quantile_scores(values: np.ndarray, q: float, grid: np.ndarray) -> np.ndarray:
    """s(c) = |(1 − q)·#{x < c} − q·#{x > c}| at every grid point c (values already rounded to the grid)."""
    below = np.array([np.count_nonzero(values < c) for c in grid], dtype=float)
    above = np.array([np.count_nonzero(values > c) for c in grid], dtype=float)
    return np.abs((1.0 - q) * below - q * above)


def score_sensitivity(values: np.ndarray, q: float, grid: np.ndarray, k: int) -> float:
    """The largest change of any candidate's score when one unit of ≤ k rows (anywhere on the grid) is added to
    (or removed from) ``values``."""
    base = quantile_scores(values, q, grid)
    best = 0.0
    for m in range(1, k + 1):
        for extra in itertools.combinations_with_replacement(grid, m):
            changed = quantile_scores(np.concatenate([values, extra]), q, grid)
            best = max(best, float(np.max(np.abs(changed - base))))
    return best


# -- one row replaced (a session with neighbours="replaced", the query server's neighbours) ----------------------
def replaced_sensitivity(aggregate: Callable[[Sequence[Row]], Any], values: Sequence[float], cells: int = 1,
                         norm: int = 1) -> float:
    """max ‖aggregate(after) − aggregate(before)‖ over one row added, removed, or replaced by any other row."""
    rows = [(float(v), c) for v in values for c in range(cells)]
    changes = [aggregate([r]) for r in rows]  # added or removed
    changes += [np.asarray(aggregate([b]), dtype=float) - np.asarray(aggregate([a]), dtype=float)
                for a in rows for b in rows]  # replaced
    best = 0.0
    for change in changes:
        vector = np.atleast_1d(np.asarray(change, dtype=float))
        best = max(best, float(np.abs(vector).sum() if norm == 1 else np.sqrt((vector**2).sum())))
    return best


def replaced_score_sensitivity(values: np.ndarray, q: float, grid: np.ndarray) -> float:
    """The largest change of any candidate's score when one row of ``values`` is replaced by any grid point, or one
    row is added or removed."""
    base = quantile_scores(values, q, grid)
    best = 0.0
    for i in range(values.size):
        best = max(best, float(np.max(np.abs(quantile_scores(np.delete(values, i), q, grid) - base))))
        for g in grid:
            changed = values.copy()
            changed[i] = g
            best = max(best, float(np.max(np.abs(quantile_scores(changed, q, grid) - base))))
    for g in grid:
        best = max(best, float(np.max(np.abs(quantile_scores(np.append(values, g), q, grid) - base))))
    return best
