"""Vector answers: ``histogram`` and ``group by`` over public cells, each answered by one noisy vector, charged once.

Cells are public, so that which cells exist never depends on the data: the bins a histogram query gives
(``histogram(kwh, bins = [0, 10, 20, 60])``: values clamped to [first, last] edge, cell i = [e_i, e_{i+1}), the last
cell closed) or the categories the owner declared for a text column (``categories = [...]`` in owner.toml;
``histogram(region)`` and ``... group by region``; records of other values are in no cell). A group-by on several
key columns (``... group by region, tariff``) has one cell per tuple of the product of the columns' declared
categories, in the order of :func:`itertools.product`; a record is in the cell of its tuple, or in none when one of
its keys is not declared (or NULL). At most :data:`MAX_CELLS` cells.

**Sensitivity and charge (parallel composition over disjoint cells).** Neighbouring databases differ by one record
added, removed or replaced (the server's privacy unit). A record adds g ∈ [g̲, ḡ] to exactly one cell (g = 1 for
counts, the clamped value for sums), and no other cell depends on it. Adding or removing it moves one coordinate by
at most M = max(|g̲|, |ḡ|); replacing it moves one coordinate by at most ḡ − g̲, or two coordinates (it changes cell)
by at most M each. So the vector's sensitivity is

* ℓ1: Δ₁ = max(ḡ − g̲, 2M) = 2M (Laplace noise): 2 for counts, 2·max(|lo|, |hi|) for sums;
* ℓ2: Δ₂ = max(ḡ − g̲, √2·M) (Gaussian noise): √2 for counts;

whatever the number k of cells. The whole vector is one hardened release of the policy's (ε, δ) calibrated to that
sensitivity, so a group-by over k keys, or a histogram of k bins, charges the policy's (ε, δ) once — not k times
(what sequential composition would charge) — and a group-by mean splits it over its two vectors (sums and counts)
exactly as a mean does.

**Keys not declared: partition selection.** ``... group by c`` on a text column without declared categories, under a
laplace policy with ``partition_delta = δ``: the cells are the values of c present in the stored table (NULL aside),
sorted (on several key columns of which one at least is not declared: the tuples present in the table, none of
their keys NULL and every key of a declared column among its categories, sorted; a tuple is a cell like a key and
a record is in one cell at most, so what follows holds for tuples word for word); every cell gets a noisy count, rounded to an integer, and the cell is released only when that count reaches
a threshold T (:mod:`privnoise.dp.partition`). A replacement changes at most two cells' counts by one each (ℓ1 = 2),
and may make one key disappear and another appear, each holding one record. With the shared cells' counts
calibrated to ε₀ = ε_count − log(1/(1 − δ)) (:func:`~privnoise.dp.partition.pure_budget_share`) and T the smallest
integer with P(a key of one record is released) ≤ δ (:func:`~privnoise.dp.partition.laplace_partition_threshold`,
k = 1), the conditioning argument of :mod:`privnoise.dp.partition` gives P[M(D) ∈ S] ≤ e^{ε₀}/(1 − δ)·P[M(D′) ∈ S] + δ:
the query is (ε, δ)-DP and charges the policy's ε and δ = ``partition_delta`` once. The grid noise of the hardened
release is no heavier-tailed than the continuous noise shifted by its grid step Λ (see :mod:`.accuracy`), so T is
raised by ⌈Λ⌉. Noise is calibrated for a vector of two cells (only two coordinates ever change) and drawn
independently for each cell, so the number of cells need not be known before the data are read. The work of such
a query depends on the number of distinct values of c in the stored table (one ``GROUP BY`` over every record, the
filter applied as a weight, never as ``WHERE``), not on what a filter selects; owners to whom that number matters
declare the categories.

**Constant work** (SECURITY.md, requirements 13 and 16). Every cell is one term, its value times a 0/1 test of
the record being in the cell, of the same single statement over the whole table, multiplied by the record's filter
weight: every record is evaluated against every cell whatever the data, so the latency does not depend on how many
records a group or a bin holds. The record's bin, or the indices of its keys, are computed once per record and each
cell's test is one comparison with them; the comparisons that hold are as many for every record (:mod:`.cells`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import Float, literal

from ..core import RecordReplaced
from ..core.adjacency import Norm
from ..dp.partition import laplace_partition_threshold, pure_budget_share, select_partitions
from ..dp.profile import profile_of
from ..mechanisms.hardening import HardenedMechanism
from .config import DatasetSpec
from .limits import MAX_CELLS
from .querylang import QueryError, QuerySpec

__all__ = [
    "MAX_CELLS",
    "NEIGHBOURS",
    "PartitionSelection",
    "cell_count",
    "check_cells",
    "cell_keys",
    "mean_centre",
    "declared_keys",
    "group_keys",
    "stored_keys",
    "vector_parts",
    "vector_sensitivity",
]

#: The server's neighbouring databases: one record added, removed or replaced.
NEIGHBOURS = RecordReplaced()


def vector_sensitivity(g_low: float, g_high: float, norm: Norm) -> float:
    """Δ₁ (``norm`` "l1", Laplace noise) or Δ₂ ("l2", Gaussian noise) of a vector whose cells each sum g ∈ [g_low, g_high] over disjoint
    records (module docstring).

    Examples
    --------
    >>> vector_sensitivity(1.0, 1.0, "l1"), round(vector_sensitivity(1.0, 1.0, "l2"), 6)
    (2.0, 1.414214)
    >>> vector_sensitivity(0.0, 60.0, "l1"), vector_sensitivity(0.0, 60.0, "l2")
    (120.0, 84.8528137423857)
    """
    return NEIGHBOURS.cells(g_low, g_high, norm)


def _categories(spec: DatasetSpec, column: str, what: str) -> tuple[str, ...]:
    col = spec.columns.get(column)
    if col is None:
        raise QueryError(f"{column!r} is not a declared column of dataset {spec.name!r}.")
    if col.type != "text" or not col.categories:
        raise QueryError(
            f"{what} needs the public values of column {column!r}: declare `categories = [...]` on the text "
            f"column `datasets.{spec.name}.columns.{column}` in owner.toml"
            + (", or set `partition_delta` on a laplace policy to select the keys by a noisy count."
               if what == "group by" else ".")
        )
    return col.categories


class PartitionSelection:
    """The keys of a group-by over undeclared keys (module docstring): ε₀ for the counts, and the threshold.
    ``column`` is the key column, or a tuple of several (``columns`` is always the tuple)."""

    def __init__(self, column: str | tuple[str, ...], count_epsilon: float, delta: float) -> None:
        self.column = column
        self.columns: tuple[str, ...] = (column,) if isinstance(column, str) else tuple(column)
        self.delta = delta
        self.count_epsilon = pure_budget_share(count_epsilon, delta)
        self.threshold: int | None = None

    def calibrated(self, count_noise: HardenedMechanism) -> PartitionSelection:
        """Set T from the count noise's scale and grid."""
        scale = float(profile_of(count_noise.mechanism).scale)
        self.threshold = laplace_partition_threshold(scale, self.delta, max_contributions=1) + math.ceil(
            count_noise.grid
        )
        return self

    def keep(self, noisy_counts: NDArray[np.float64]) -> NDArray[np.bool_]:
        assert self.threshold is not None
        return select_partitions(np.rint(noisy_counts), self.threshold)


def mean_centre(lo: float, hi: float) -> tuple[float, float]:
    """(centre, half-width) of the declared bounds [lo, hi]: a mean per cell sums x − centre."""
    return (lo + hi) / 2.0, (hi - lo) / 2.0


def declared_keys(spec: DatasetSpec, column: str) -> tuple[str, ...] | None:
    """The declared categories of a text column (None when it has none: partition selection)."""
    col = spec.columns.get(column)
    if col is None:
        raise QueryError(f"{column!r} is not a declared column of dataset {spec.name!r}.")
    if col.type != "text":
        raise QueryError(f"group by a text column; {column!r} is numeric.")
    return col.categories


def cell_count(spec: DatasetSpec, columns: Sequence[str]) -> int | None:
    """The number of cells of a group-by on ``columns`` of ``spec``: the product of their numbers of declared
    categories (None when one of them is not a text column with categories, or not a column)."""
    count = 1
    for column in columns:
        col = spec.columns.get(column)
        if col is None or col.type != "text" or not col.categories:
            return None
        count *= len(col.categories)
    return count


def check_cells(cells: int) -> None:
    """Refuse a group-by of more than :data:`MAX_CELLS` cells."""
    if cells > MAX_CELLS:
        raise QueryError(f"the group by has {cells} cells (the product of its key columns' declared categories), "
                         f"more than the limit of {MAX_CELLS}; group by fewer columns.")


def cell_keys(query: QuerySpec, spec: DatasetSpec) -> tuple[str | tuple[str, ...], tuple[Any, ...]]:
    """(the column the cells are made of, the cells' keys): bins as "[a, b)" labels, or declared categories; on
    several key columns, (their names, the tuples of the product of their declared categories).

    >>> from privnoise.server.config import ColumnSpec
    >>> spec = DatasetSpec("m", "m", None, 1, 0, {"r": ColumnSpec("r", "text", categories=("n", "s")),
    ...                    "t": ColumnSpec("t", "text", categories=("day", "night"))}, {})
    >>> cell_keys(QuerySpec("count", group_by=("r", "t")), spec)
    (('r', 't'), (('n', 'day'), ('n', 'night'), ('s', 'day'), ('s', 'night')))
    """
    if isinstance(query.group_by, tuple):
        declared = [_categories(spec, column, "group by") for column in query.group_by]
        check_cells(math.prod(len(d) for d in declared))
        return query.group_by, tuple(itertools.product(*declared))
    if query.group_by is not None:
        return query.group_by, _categories(spec, query.group_by, "group by")
    assert query.column is not None
    if query.bins:
        if spec.numeric(query.column) is None:
            raise QueryError(f"histogram bins are for a numeric column; {query.column!r} is not one "
                             f"(histogram({query.column}) counts its declared categories).")
        edges = query.bins
        last = len(edges) - 2
        return query.column, tuple(
            f"[{a:g}, {b:g}{']' if i == last else ')'}" for i, (a, b) in enumerate(zip(edges, edges[1:], strict=False))
        )
    if spec.numeric(query.column) is not None:
        raise QueryError(f"histogram of numeric column {query.column!r} needs its bins: "
                         f"histogram({query.column}, bins = [e0, e1, ...]).")
    return query.column, _categories(spec, query.column, "histogram")


def group_keys(
    query: QuerySpec, spec: DatasetSpec, policy: Any
) -> tuple[tuple[Any, ...] | None, PartitionSelection | None]:
    """(the declared cells, None) of a group-by whose key columns all have declared categories, or (None, the
    partition selection) when one of them has none and ``policy`` sets ``partition_delta`` (module docstring);
    a key column that is not a text column, or too many cells, is refused here."""
    columns = query.key_columns()
    undeclared = [c for c in columns if declared_keys(spec, c) is None]
    if undeclared and policy.partition_delta:
        assert policy.epsilon is not None
        share = policy.epsilon / (1 if query.kind == "count" else 2)
        return None, PartitionSelection(query.group_by, float(share), float(policy.partition_delta))  # type: ignore[arg-type]
    return cell_keys(query, spec)[1], None


def stored_keys(
    rows: list[Any], spec: DatasetSpec, columns: tuple[str, ...]
) -> tuple[list[Any], list[Any]]:
    """(the keys, the rows) of a partition selection's ``GROUP BY`` over ``columns`` (each row its keys first),
    sorted: rows with a NULL key are in no cell, and on several columns so are rows with a key of a declared
    column outside its categories; keys are strings, or lists of strings on several columns."""
    declared = [declared_keys(spec, c) for c in columns]
    k = len(columns)
    kept = [
        r for r in rows
        if all(v is not None and (d is None or str(v) in d) for v, d in zip(r[:k], declared, strict=True))
    ]
    kept.sort(key=lambda r: tuple(str(v) for v in r[:k]))
    keys = [str(r[0]) if k == 1 else [str(v) for v in r[:k]] for r in kept]
    return keys, [r[k:] for r in kept]


def vector_parts(
    query: QuerySpec, norm: Norm, tests: list[Any], total: Callable[[Any], Any], clamped: Callable[[str], Any],
    bounds: Callable[[str], tuple[float, float]], *, counted: bool = False,
    centred: Callable[[str, float], Any] | None = None,
) -> tuple[list[tuple[str, Any, float, dict[str, float]]], Callable[[list[Any]], Any]]:
    """The vector components of a histogram or a group-by (:mod:`.vectors`: one cell per bin or key, the
    sensitivity of the whole vector for one record added, removed or replaced) and how they combine; ``counted``:
    a group sum also gets the counts that select its keys; ``centred(column, c)``: the clamped value minus c (by
    default ``clamped(column) - c``). Parts are (name, one SQL term per cell, sensitivity, slopes per column), as
    the planner's (:mod:`.planner`)."""
    counts: tuple[str, Any, float, dict[str, float]] = (
        "count", [total(t) for t in tests], vector_sensitivity(1.0, 1.0, norm), {}
    )
    if query.kind in ("histogram", "count"):

        def combine(v: list[Any]) -> Any:
            return np.maximum(v[0], 0.0)

        return [counts], combine
    assert query.column is not None
    lo, hi = bounds(query.column)
    if query.kind == "sum":
        x = clamped(query.column)
        sums = ("sum", [total(t * x) for t in tests], vector_sensitivity(lo, hi, norm), {query.column: 1.0})
        return ([sums, counts] if counted else [sums]), lambda v: v[0]
    centre, half = mean_centre(lo, hi)  # a mean per cell: c + Σ(x − c)/N, as the scalar mean
    shifted = (centred(query.column, centre) if centred is not None
               else clamped(query.column) - literal(centre, Float))
    sums = ("sum", [total(t * shifted) for t in tests], vector_sensitivity(-half, half, norm), {query.column: 1.0})

    def ratio(v: list[Any]) -> Any:
        return np.clip(centre + v[0] / np.maximum(v[1], 1.0), lo, hi)

    return [sums, counts], ratio
