"""Sensitivities of :mod:`privnoise.core.adjacency` against brute force over neighbouring databases: every way of
adding, removing or replacing a record (or adding or removing a unit of up to k rows), with per-row values on a grid
of the range that holds its ends (and 0 when inside), in up to three cells."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from privnoise.core import Bounds, RecordReplaced, UnitAddedOrRemoved
from privnoise.exceptions import InvalidParameterError

RANGES = [(10.0, 60.0), (-60.0, -10.0), (-5.0, 3.0), (0.0, 1.0), (1.0, 1.0), (-2.0, 2.0), (0.25, 0.5), (0.0, 0.0)]
CELLS = 3


def _values(low: float, high: float) -> list[float]:
    grid = {low, high, low + (high - low) / 3.0}
    if low < 0.0 < high:
        grid.add(0.0)
    return sorted(grid)


def _norm(change: np.ndarray, norm: str) -> float:
    return float(np.abs(change).sum()) if norm == "l1" else float(np.sqrt((change * change).sum()))


def _record_changes(low: float, high: float, cells: int):
    """f(D') − f(D) for every neighbour: a record (value, cell) added or removed, or replaced by another."""
    rows = [(g, c) for g in _values(low, high) for c in range(cells)]
    for g, c in rows:  # added (removed is the negative)
        change = np.zeros(cells)
        change[c] += g
        yield change
    for (g, c), (g2, c2) in itertools.product(rows, rows):
        change = np.zeros(cells)
        change[c] -= g
        change[c2] += g2
        yield change


def _unit_changes(low: float, high: float, cells: int, k: int):
    """f(D') − f(D) for a unit of 1..k rows added (removed is the negative)."""
    rows = [(g, c) for g in _values(low, high) for c in range(cells)]
    for size in range(1, k + 1):
        for unit in itertools.product(rows, repeat=size):
            change = np.zeros(cells)
            for g, c in unit:
                change[c] += g
            yield change


@pytest.mark.parametrize(("low", "high"), RANGES)
def test_record_replaced_sensitivities_are_the_largest_change_over_neighbours(low: float, high: float) -> None:
    adjacency = RecordReplaced()
    scalar = max(abs(float(d[0])) for d in _record_changes(low, high, 1))
    assert adjacency.sum(low, high) == pytest.approx(scalar, rel=1e-15, abs=0.0)
    for norm in ("l1", "l2"):
        brute = max(_norm(d, norm) for d in _record_changes(low, high, CELLS))
        assert adjacency.cells(low, high, norm) == pytest.approx(brute, rel=1e-15, abs=0.0)
    assert adjacency.count() == max(abs(float(d[0])) for d in _record_changes(1.0, 1.0, 1)) == 1.0


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize(("low", "high"), RANGES)
def test_unit_sensitivities_are_the_largest_change_over_neighbours(low: float, high: float, k: int) -> None:
    adjacency = UnitAddedOrRemoved(k)
    scalar = max(abs(float(d[0])) for d in _unit_changes(low, high, 1, k))
    assert adjacency.sum(low, high) == pytest.approx(scalar, rel=1e-14, abs=0.0)
    for norm in ("l1", "l2"):
        brute = max(_norm(d, norm) for d in _unit_changes(low, high, CELLS, k))
        assert adjacency.cells(low, high, norm) == pytest.approx(brute, rel=1e-14, abs=0.0)
    assert adjacency.count() == k


def test_bounds_state_their_centre_half_and_magnitude() -> None:
    b = Bounds(-5.0, 3.0)
    assert (b.centre, b.half, b.magnitude) == (-1.0, 4.0, 5.0)
    assert Bounds(10.0, 60.0).magnitude == 60.0


@pytest.mark.parametrize("k", [0, -1, 1.5, True, "2"])
def test_a_unit_cap_is_a_positive_integer(k) -> None:
    with pytest.raises(InvalidParameterError, match="`k` of `UnitAddedOrRemoved` must be an integer ≥ 1"):
        UnitAddedOrRemoved(k)


@pytest.mark.parametrize(("low", "high"), [(1.0, 0.0), (math.nan, 1.0), (0.0, math.inf)])
def test_a_per_row_range_is_finite_and_ordered(low: float, high: float) -> None:
    for call in (lambda: RecordReplaced().sum(low, high), lambda: UnitAddedOrRemoved(2).cells(low, high, "l2")):
        with pytest.raises(InvalidParameterError, match="finite with low ≤ high"):
            call()


def test_the_neighbours_are_described() -> None:
    assert RecordReplaced().describe() == "one record added, removed or replaced"
    assert UnitAddedOrRemoved(4).describe() == "one unit added or removed (at most 4 rows used)"


@pytest.mark.parametrize("norm", ["L2", "linf", None])
def test_a_norm_is_l1_or_l2(norm) -> None:
    for adjacency in (RecordReplaced(), UnitAddedOrRemoved(2)):
        with pytest.raises(InvalidParameterError, match="norm must be 'l1' or 'l2'"):
            adjacency.cells(0.0, 1.0, norm)
