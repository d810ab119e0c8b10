"""A session's aggregates computed by Spark: the rows stay on the executors, partial aggregates reach the driver.

:class:`SparkBackend` implements :class:`privnoise.analysis.Backend` over a Spark DataFrame, so that
``pn.Session(frame, privacy_unit="household", max_contributions=20, epsilon=1)`` works as it does in memory and
states the same guarantees: the session prices, charges, calibrates and draws the noise — once, on the driver,
from its cryptographically strong generator — and only the exact aggregates of the bounded data are computed by
Spark. One aggregate (:class:`~privnoise.analysis.AggregateRequest`) follows the steps of
:mod:`privnoise.analysis.backend`, each written as a Spark transformation:

1. **Rows.** The filter of a filtered session (``Session.where``) becomes one column expression with SQL's
   three-valued logic (:mod:`privnoise.spark.predicates`): a row is kept where it is true. The value column is read
   as doubles with NaN as missing (:mod:`privnoise.spark.columns`) and follows the missing-value policy: rows with a
   missing value are dropped, or take the imputed constant ("error" was checked by the session, before the charge,
   with :meth:`SparkBackend.count_missing_where`). Rows whose group key or category is not declared are dropped,
   the others numbered by the declaration (a broadcast join: :mod:`privnoise.spark.keys`).
2. **Contribution bounding** in Spark: every row gets an order key, a 64-bit hash (``xxhash64``) of a fresh key
   drawn from the session's generator for this aggregate alone, the unit id and the row's id
   (``monotonically_increasing_id``); the rows of each unit are ranked by it (a window partitioned by the unit: a
   shuffle on the unit id, wherever the unit's rows were) and the first k kept. The hash of distinct rows under a
   random key orders them uniformly at random, so the k rows kept are a uniform choice among the unit's rows, as in
   memory; and whatever the hash, a unit keeps at most k rows, chosen from its own rows only, which is all the
   sensitivity needs (so nothing rests on the key's secrecy, though it shows in Spark's query plans). A seeded
   session (research only) draws the same key, hence the same rows on the same data.
3. **Clamping** to the declared bounds, and **centring** (sums of x − c).
4. **Aggregation** per group by Spark (``groupBy``: partial aggregates per partition, merged by the executors):
   the row count, Σ(x − c), Σ(x − c)², the histogram cell (a balanced tree of comparisons with the public edges:
   the bin ``searchsorted`` gives in memory), the category, or the grid point ``clip(rint(x / Λ), j_low, j_high)``
   of the quantiles. The driver collects one row per group (and cell): numbers and the groups' keys, never a record.

Group keys: declared keys keep their declared order; without declared keys, the keys present in the data come
back sorted by :func:`privnoise.analysis.grouping.sort_key` (numbers, then text, then missing keys), the order
the session gives the keys of several columns (Spark has no row order to take a first appearance from).

Infinite values are refused as in memory (:class:`~privnoise.analysis.table.Table`): the first time a column is
read as numbers, one pass over that column alone counts its infinities (none are allowed anywhere in it); with the
"error" policy, the session's missing-value count does it in the same pass.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..analysis.backend import AggregateRequest, Aggregates, Backend
from ..analysis.table import Table
from ..core.predicates import Predicate
from ..exceptions import InvalidParameterError
from .assemble import CELL, COUNT, GROUP, POSITION, SQUARES, SUM, assemble
from .columns import functions, key, kind, missing, numeric, window
from .keys import join_positions
from .predicates import filter_column

__all__ = ["SparkBackend", "cell_column", "histogram_bin"]

_OWNER = "Session"
VALUE, UNIT, ORDER, RANK = "__pn_value", "__pn_unit", "__pn_order", "__pn_rank"
CATEGORY, CATEGORY_VALUE = "__pn_category", "__pn_category_value"


def histogram_bin(x: Any, edges: tuple[float, ...], low: int = 0, high: int | None = None) -> Any:
    """The bin j of a clamped value x, e_j ≤ x < e_{j+1} (the last bin holds its upper edge): a balanced tree of
    comparisons with the public edges, ``clip(searchsorted(edges, x, "right") − 1, 0, bins − 1)`` in memory."""
    F = functions()
    high = len(edges) - 2 if high is None else high
    if low == high:
        return F.lit(low)
    middle = (low + high + 1) // 2
    return F.when(x >= F.lit(float(edges[middle])), histogram_bin(x, edges, middle, high)).otherwise(
        histogram_bin(x, edges, low, middle - 1))


def cell_column(request: AggregateRequest, x: Any) -> Any:
    """The cell of a histogram, category count or quantile grid a row falls in (None for sums and counts)."""
    F = functions()
    if request.kind == "histogram":
        return histogram_bin(x, request.edges)
    if request.kind == "grid":
        step, low, high = request.grid
        point = F.least(F.greatest(F.rint(x / F.lit(float(step))), F.lit(float(low))), F.lit(float(high)))
        return point.cast("long")
    if request.kind == "categories":
        return F.col(CATEGORY)
    return None


class SparkBackend(Backend):
    """Aggregates of a Spark DataFrame computed by its Spark session (module docstring)."""

    def __init__(self, frame: Any) -> None:
        module = type(frame).__module__
        if not (module.startswith("pyspark.sql") and type(frame).__name__ == "DataFrame"):
            raise InvalidParameterError(
                f"`data` of `{_OWNER}` must be a Spark DataFrame for the Spark backend; got {type(frame).__name__}."
            )
        self.frame = frame
        self._types = {field.name: field.dataType for field in frame.schema.fields}
        self._names = Table({name: np.empty(0) for name in self._types})
        self._finite: set[str] = set()
        self._missing: dict[tuple[str, tuple[Predicate, ...]], int] = {}

    @property
    def columns(self) -> list[str]:
        return self._names.columns

    def check_column(self, name: Any, role: str) -> str:
        return self._names.check(name, role)

    def column_kind(self, column: str) -> str:
        """From the schema (no data read)."""
        return kind(self._types[column])

    # -- missing and infinite values ------------------------------------------------------------------------------
    def count_missing(self, column: str) -> int:
        return self.count_missing_where(column, ())

    def count_missing_where(self, column: str, where: tuple[Predicate, ...]) -> int:
        """Missing values (null, NaN) of ``column`` among the rows where the filter is true, counted by Spark in the
        pass that also checks the column has no infinite value (the first time it is read as numbers)."""
        F = functions()
        value = numeric(column, self._types[column])
        absent = missing(column, self._types[column])
        if where:
            absent = absent & filter_column(where, self._types)
        aggregates = [F.sum(F.when(absent, 1).otherwise(0)).alias("missing")]
        if column not in self._finite:
            aggregates.append(F.sum(F.when(F.abs(value) == F.lit(float("inf")), 1).otherwise(0)).alias("infinite"))
        row = self.frame.agg(*aggregates).first()
        self._refuse_infinities(column, 0 if column in self._finite else int(row["infinite"] or 0))
        found = int(row["missing"] or 0)
        self._missing[(column, where)] = found
        return found

    def _refuse_infinities(self, column: str, infinite: int) -> None:
        if infinite:
            raise InvalidParameterError(
                f"column {column!r} of `{_OWNER}` holds an infinite value; infinities are refused."
            )
        self._finite.add(column)

    def _check_finite(self, column: str) -> None:
        """One pass over ``column`` the first time it is read as numbers: an infinite value anywhere is refused.

        A pass of its own reads one column with Spark's vectorised, generated code; counting the infinities in the
        aggregate's own scan instead (an ``Observation``) interrupts that code for the whole aggregate and was
        measured slower (0.7 s against 0.1 s over 2·10⁷ rows)."""
        if column in self._finite:
            return
        F = functions()
        value = numeric(column, self._types[column])
        row = self.frame.agg(F.sum(F.when(F.abs(value) == F.lit(float("inf")), 1).otherwise(0)).alias("n")).first()
        self._refuse_infinities(column, int(row["n"] or 0))

    # -- steps ----------------------------------------------------------------------------------------------------
    def _value(self, request: AggregateRequest, frame: Any) -> tuple[Any, Any]:
        """Step 1 for the value column: the frame without the rows the missing-value policy drops, and the value
        (imputed, clamped) as an expression (None without a value column)."""
        if request.column is None or request.kind == "categories":
            return frame, None
        F = functions()
        x = numeric(request.column, self._types[request.column])
        self._check_finite(request.column)
        if request.missing == "drop":
            frame = frame.where(x.isNotNull())
        elif request.missing == "error":
            known = self._missing.get((request.column, request.where))
            if known is None:
                known = self.count_missing_where(request.column, request.where)
            if known:
                raise InvalidParameterError(f"column {request.column!r} has missing values (missing='error').")
        else:
            x = F.coalesce(x, F.lit(float(request.missing)))
        if request.bounds is not None:
            x = F.least(F.greatest(x, F.lit(float(request.bounds[0]))), F.lit(float(request.bounds[1])))
        return frame, x

    def _rows(self, request: AggregateRequest) -> tuple[Any, list[str]]:
        """Steps 1 and 3: the rows that take part, as internal columns (value, group keys or their declared
        positions, unit, category position), and the names of the group columns."""
        F = functions()
        frame = self.frame
        if request.where:
            frame = frame.where(filter_column(request.where, self._types))
        frame, x = self._value(request, frame)
        selected = [] if x is None else [x.alias(VALUE)]
        names = () if request.group is None else (request.group,) if isinstance(request.group, str) else request.group
        group = [f"{GROUP}{i}" for i in range(len(names))]
        selected += [key(name, self._types[name]).alias(g) for name, g in zip(names, group, strict=True)]
        if request.unit is not None:
            selected.append(key(request.unit, self._types[request.unit]).alias(UNIT))
        if request.kind == "categories":
            assert request.column is not None
            selected.append(key(request.column, self._types[request.column]).alias(CATEGORY_VALUE))
        rows = frame.select(*selected) if selected else frame.select(F.lit(1).alias(COUNT))
        if request.keys is not None and names:
            rows = join_positions(rows, group, [self._types[n] for n in names], request.keys,
                                  not isinstance(request.group, str), POSITION)
            group = [POSITION]
        if request.kind == "categories":
            assert request.column is not None
            rows = join_positions(rows, [CATEGORY_VALUE], [self._types[request.column]], request.categories, False,
                                  CATEGORY)
        return rows, group

    def _bounded(self, rows: Any, request: AggregateRequest, rng: np.random.Generator) -> Any:
        """Step 2: at most k rows of each unit, ranked by a keyed hash of (key, unit, row id) (module docstring)."""
        if request.unit is None:
            if request.max_contributions != 1:
                raise InvalidParameterError("`max_contributions` needs a privacy unit column.")
            return rows
        F = functions()
        secret = int(rng.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, dtype=np.int64, endpoint=True))
        order = F.xxhash64(F.lit(secret), F.col(UNIT), F.monotonically_increasing_id())
        ranked = rows.withColumn(ORDER, order).withColumn(
            RANK, F.row_number().over(window().partitionBy(UNIT).orderBy(ORDER)))
        return ranked.where(F.col(RANK) <= request.max_contributions)

    def aggregate(self, request: AggregateRequest, rng: np.random.Generator) -> Aggregates:
        F = functions()
        rows, group = self._rows(request)
        rows = self._bounded(rows, request, rng)
        has_value = request.kind != "categories" and request.column is not None
        cell = cell_column(request, F.col(VALUE) if has_value else None)
        by = [F.col(g) for g in group] + ([] if cell is None else [cell.alias(CELL)])
        aggregates = [F.count(F.lit(1)).alias(COUNT)]
        if request.kind == "moments" and has_value:
            centred = F.col(VALUE) - F.lit(float(request.centre)) if request.centre else F.col(VALUE)
            aggregates += [F.sum(centred).alias(SUM), F.sum(centred * centred).alias(SQUARES)]
        collected = rows.groupBy(*by).agg(*aggregates).collect()
        return assemble(collected, request, group)

