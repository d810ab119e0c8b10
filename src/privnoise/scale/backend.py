"""A session's aggregates computed by Dask: partial aggregates per partition, added up by the driver.

:class:`DaskBackend` implements :class:`privnoise.analysis.Backend` over a Dask DataFrame (for instance
:func:`privnoise.io.dask_parquet`), so that ``pn.Session(frame, ...)`` works as it does in memory and states the
same guarantees: the session prices, charges, calibrates and draws the noise — once, centrally, from its
cryptographically strong generator — and only the aggregation runs on the cluster.

One aggregate (:class:`~privnoise.analysis.AggregateRequest`) is computed as follows.

1. **Contribution bounding across partitions.** With a privacy unit, the rows are first shuffled on the unit id
   (``DataFrame.shuffle(on=unit)``), so that every row of a unit lands in one partition, wherever the unit's rows
   were before. Without one, nothing moves.
2. **Per partition**, the in-memory aggregation itself (:class:`~privnoise.analysis.InMemoryBackend`) runs on the
   partition: the conditions of a filtered session (``Session.where``), the missing-value policy, declared keys and categories, then at most k rows per unit chosen
   uniformly at random with the partition's own AES-CTR stream (keys drawn from the session's generator for this
   aggregate alone: :mod:`privnoise.scale.streams`), then clamping, then counts, sums, sums of squares, histogram
   cells, category counts or grid counts per group. The per-row rules are the in-memory ones by construction, and
   so is the law of the rows kept: a uniform choice of k among the unit's rows.
3. **The driver** adds the partial aggregates up by group key (keys in order of first appearance) — the only data
   that reaches it: a few numbers per group and partition (per occupied grid point for quantiles).

What crosses the network: with a privacy unit, the shuffle moves the rows of the columns the query reads between
workers (never to the driver); then, and without a unit, only the partial aggregates travel to the driver.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._optional import require
from ..analysis.backend import AggregateRequest, Aggregates, Backend, InMemoryBackend
from ..analysis.table import Table
from ..core.predicates import Predicate, columns_of
from ..exceptions import InvalidParameterError
from .streams import partition_generator, partition_keys

__all__ = ["DaskBackend", "aggregate_partition", "combine", "count_missing_partition"]


def aggregate_partition(part: Any, request: AggregateRequest, key: np.ndarray) -> Aggregates:
    """The aggregates of one partition (a pandas DataFrame), bounded with the partition's own stream."""
    return InMemoryBackend(Table(part)).aggregate(request, partition_generator(key))


def count_missing_partition(part: Any, column: str, where: tuple[Predicate, ...] = ()) -> int:
    """Missing values of ``column`` in one partition among the rows that satisfy ``where`` (the in-memory rule:
    null, None, NaN)."""
    return InMemoryBackend(Table(part)).count_missing_where(column, where)


def _columns(*names: Any) -> list[str]:
    """The distinct column names among ``names`` (a name, a tuple of names, conditions, or None), in order."""
    out: list[str] = []
    for name in names:
        if isinstance(name, str):
            out.append(name)
        elif isinstance(name, tuple):
            out.extend(_columns(*name))
        elif name is not None:  # a filter's predicate
            out.extend(columns_of((name,)))
    return list(dict.fromkeys(out))


def _rows(values: np.ndarray, groups: int) -> np.ndarray:
    """The first ``groups`` rows of a per-group array (a partition without keys reports one row of zeros)."""
    return values[:groups]


def combine(partials: list[Aggregates], request: AggregateRequest) -> Aggregates:
    """The aggregates of the whole data from those of its partitions (group keys matched by value)."""
    if request.kind == "grid":
        points = np.concatenate([p.grid_points for p in partials])
        counts = np.concatenate([p.grid_counts for p in partials])
        occupied, where = np.unique(points, return_inverse=True)
        total = np.bincount(where.reshape(-1), weights=counts, minlength=occupied.size).astype(np.float64)
        rows = np.asarray(np.sum([p.count for p in partials], axis=0), dtype=np.float64)
        return Aggregates(None, rows, grid_points=occupied, grid_counts=total)
    labels: list[Any] | None = None
    position: dict[Any, int] = {}
    if request.group is not None:
        for partial in partials:
            for label in partial.keys or []:
                position.setdefault(label, len(position))
        labels = list(position)
    size = max(len(position), 1)
    count = np.zeros(size)
    has_sums = request.kind == "moments" and request.column is not None
    sums, squares = np.zeros(size), np.zeros(size)
    width = partials[0].cells.shape[1] if partials else 0
    cells = np.zeros((size, width))
    for partial in partials:
        if labels is None:
            index: Any = slice(0, 1)
        else:
            names = partial.keys or []
            if not names:
                continue
            index = np.array([position[name] for name in names], dtype=np.int64)
        groups = 1 if labels is None else len(partial.keys or [])
        count[index] += _rows(partial.count, groups)
        if has_sums:
            sums[index] += _rows(partial.sum, groups)
            squares[index] += _rows(partial.sum_squares, groups)
        if width:
            cells[index] += _rows(partial.cells, groups)
    if has_sums and not (np.all(np.isfinite(sums)) and np.all(np.isfinite(squares))):
        raise InvalidParameterError("the sums overflow; rescale the data or the bounds.")
    if has_sums:
        return Aggregates(labels, count, sums, squares)
    if width:
        return Aggregates(labels, count, cells=cells)
    return Aggregates(labels, count)


class DaskBackend(Backend):
    """Aggregates of a Dask DataFrame computed on its cluster (module docstring).

    The computations run on the current Dask scheduler: the ``distributed.Client`` made last in this process
    (``Client("tcp://scheduler:8786")``, or ``Client()`` for a ``LocalCluster``), else Dask's threads.
    """

    def __init__(self, frame: Any) -> None:
        dd = require("dask.dataframe", feature="sessions over Dask data frames")
        if not isinstance(frame, dd.DataFrame):
            raise InvalidParameterError(
                f"`data` of `Session` must be a Dask DataFrame (pn.io.dask_parquet) for the Dask backend; got "
                f"{type(frame).__name__}."
            )
        self.frame = frame
        self._names = Table({str(name): np.empty(0) for name in frame.columns})

    @property
    def columns(self) -> list[str]:
        return self._names.columns

    def check_column(self, name: Any, role: str) -> str:
        return self._names.check(name, role)

    def _compute(self, tasks: list[Any]) -> list[Any]:
        dask = require("dask", feature="sessions over Dask data frames")
        return list(dask.compute(*tasks))

    def count_missing(self, column: str) -> int:
        return self.count_missing_where(column, ())

    def count_missing_where(self, column: str, where: tuple[Predicate, ...]) -> int:
        dask = require("dask", feature="sessions over Dask data frames")
        parts = self.frame[_columns(column, where)].to_delayed()
        return int(sum(self._compute([dask.delayed(count_missing_partition)(p, column, where) for p in parts])))

    def column_kind(self, column: str) -> str:
        """From the frame's dtypes (no data read): a column of objects or strings is text (a value in it that is not
        a string never satisfies a condition)."""
        pd = require("pandas", feature="sessions over Dask data frames")
        dtype = self.frame.dtypes[column]
        if pd.api.types.is_bool_dtype(dtype):
            return "booleans"
        if pd.api.types.is_numeric_dtype(dtype):
            return "number"
        if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype) or \
                isinstance(dtype, pd.CategoricalDtype):
            return "text"
        return f"values of type {dtype}"

    def aggregate(self, request: AggregateRequest, rng: np.random.Generator) -> Aggregates:
        dask = require("dask", feature="sessions over Dask data frames")
        read = _columns(request.column, request.unit, request.group, request.where)
        frame = self.frame[read or [self.columns[0]]]
        if request.unit is not None:
            frame = frame.shuffle(on=request.unit)
        parts = frame.to_delayed()
        keys = partition_keys(rng, len(parts))
        partials = self._compute([
            dask.delayed(aggregate_partition, pure=False)(part, request, keys[i]) for i, part in enumerate(parts)
        ])
        return combine(partials, request)
