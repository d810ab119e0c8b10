"""The driver's side of a Spark aggregate: the collected rows (one per group and cell) as
:class:`~privnoise.analysis.Aggregates`, shaped as the in-memory backend shapes them.

Spark returns one row per group present in the bounded data (and per cell: histogram bin, category, grid point),
with the row count and, for sums, Σ(x − c) and Σ(x − c)². :func:`assemble` puts them where
:class:`~privnoise.analysis.InMemoryBackend` would:

* without a group-by, one group; with declared keys, one group per declared key in the declared order (a key
  absent from the data has zeros); otherwise the keys present, sorted by
  :func:`~privnoise.analysis.grouping.sort_key` (tuples of values for several key columns);
* ``count``, ``sum``, ``sum_squares`` per group, at least one group (as in memory); ``cells`` per group and bin or
  category; the occupied grid points in increasing order with their counts;
* sums that overflow are refused, as in memory.

>>> request = AggregateRequest("moments", "kwh", (0.0, 10.0), group="region")
>>> rows = [{"__pn_group0": "south", "__pn_count": 2, "__pn_sum": 3.0, "__pn_squares": 5.0},
...         {"__pn_group0": "north", "__pn_count": 1, "__pn_sum": 1.0, "__pn_squares": 1.0}]
>>> found = assemble(rows, request, ["__pn_group0"])
>>> found.keys, found.count.tolist(), found.sum.tolist()
(['north', 'south'], [1.0, 2.0], [1.0, 3.0])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..analysis.backend import AggregateRequest, Aggregates
from ..analysis.grouping import sort_key
from ..exceptions import InvalidParameterError

__all__ = ["CELL", "COUNT", "GROUP", "POSITION", "SQUARES", "SUM", "assemble"]

#: The names of the collected columns: group keys (GROUP0, GROUP1, …) or their declared positions, the cell, and
#: the aggregates.
GROUP, POSITION, CELL = "__pn_group", "__pn_position", "__pn_cell"
COUNT, SUM, SQUARES = "__pn_count", "__pn_sum", "__pn_squares"


def _groups(rows: Sequence[Any], request: AggregateRequest, group: list[str]) -> tuple[list[Any] | None,
                                                                                        Callable[[Any], int]]:
    """The group labels and each collected row's group."""
    if request.group is None:
        return None, lambda row: 0
    if group == [POSITION]:
        return list(request.keys or ()), lambda row: int(row[POSITION])

    def label(row: Any) -> Any:
        return row[group[0]] if len(group) == 1 and isinstance(request.group, str) else tuple(row[g] for g in group)

    labels = sorted({label(row) for row in rows}, key=sort_key)
    position = {lb: i for i, lb in enumerate(labels)}
    return labels, lambda row: position[label(row)]


def assemble(rows: Sequence[Any], request: AggregateRequest, group: list[str]) -> Aggregates:
    """The aggregates of the collected ``rows`` (module docstring); ``group`` names their group columns."""
    labels, group_of = _groups(rows, request, group)
    size = 1 if labels is None else max(len(labels), 1)
    index = np.fromiter((group_of(row) for row in rows), dtype=np.int64, count=len(rows))
    counts = np.fromiter((row[COUNT] for row in rows), dtype=np.float64, count=len(rows))
    count = np.bincount(index, weights=counts, minlength=size).astype(np.float64)
    if request.kind == "grid":
        points = np.fromiter((row[CELL] for row in rows), dtype=np.int64, count=len(rows))
        occupied, where = np.unique(points, return_inverse=True)
        total = np.bincount(where.reshape(-1), weights=counts, minlength=occupied.size).astype(np.float64)
        return Aggregates(labels, count, grid_points=occupied, grid_counts=total)
    if request.kind in ("histogram", "categories"):
        width = len(request.edges) - 1 if request.kind == "histogram" else len(request.categories)
        cells = np.zeros(size * width)
        flat = index * width + np.fromiter((row[CELL] for row in rows), dtype=np.int64, count=len(rows))
        np.add.at(cells, flat, counts)
        return Aggregates(labels, count, cells=cells.reshape(size, width))
    if request.column is None:
        return Aggregates(labels, count)
    sums = np.bincount(index, weights=[float(row[SUM] or 0.0) for row in rows], minlength=size).astype(np.float64)
    squares = np.bincount(index, weights=[float(row[SQUARES] or 0.0) for row in rows], minlength=size)
    if not (np.all(np.isfinite(sums)) and np.all(np.isfinite(squares))):
        raise InvalidParameterError("the sums overflow; rescale the data or the bounds.")
    return Aggregates(labels, count, sums, squares.astype(np.float64))
