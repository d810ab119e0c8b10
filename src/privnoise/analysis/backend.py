"""Where a session's aggregates are computed: one small interface, and the in-memory backend.

A session never hands data to the noise. It asks its backend for the exact aggregates of the contribution-bounded,
clamped data — one :class:`AggregateRequest` in, one :class:`Aggregates` out — and draws the noise itself, once,
centrally, from the cryptographically strong generator. A backend for another engine (a Dask data frame, a SQL
database) implements :meth:`Backend.aggregate` and nothing else; the privacy arithmetic stays in the session.

What :meth:`Backend.aggregate` must do, in this order:

1. take the rows of the request: the rows that satisfy its conditions (``where``, :mod:`privnoise.analysis.filters`;
   a missing value never does), and of those, rows whose value is missing follow the missing-value policy (dropped,
   or given the imputed constant); rows whose group key or category is not among the declared ones are dropped;
2. **bound contributions**: keep at most ``max_contributions`` rows of each privacy unit, wherever in the data they
   are, chosen uniformly at random with the given generator (all of them when a unit has no more);
3. clamp every value to the declared bounds (a value of the imputed constant as well);
4. aggregate per group: the row count, the sum of (x − centre), the sum of (x − centre)², a histogram over
   public bin edges or declared categories, or the counts of values rounded to a grid (quantile candidates).

:class:`InMemoryBackend` does this with numpy over the columns of a :class:`~privnoise.analysis.table.Table`, in
O(n) time for counts and sums (``bincount``) and O(n log n) where a unit holds more rows than the cap.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from ..core.predicates import Predicate
from ..exceptions import InvalidParameterError
from .row_masks import row_mask
from .table import KeyColumn, Table, tuple_codes

__all__ = ["AggregateRequest", "Aggregates", "Backend", "InMemoryBackend", "SchemaBackend", "bound_contributions"]

Kind = Literal["moments", "histogram", "categories", "grid"]


@dataclass(frozen=True, slots=True)
class AggregateRequest:
    """What to aggregate (every field is public: it comes from the analyst's declarations, never from the data).

    Attributes
    ----------
    kind : {"moments", "histogram", "categories", "grid"}
        Counts and sums; a histogram over ``edges``; counts of ``categories``; counts per grid point.
    column : str or None
        The value column (None: rows are only counted).
    bounds : (float, float) or None
        Values are clamped to these bounds.
    missing : "error", "drop" or float
        The missing-value policy ("error" has been checked by the session before the request is made).
    unit : str or None
        The privacy-unit column (None: every row is its own unit).
    max_contributions : int
        k: at most this many rows per unit are kept.
    group : str, tuple of str, or None
        The group-by key column, or several (keys are then tuples of their values).
    keys : tuple or None
        Declared (public) group keys (tuples for several key columns); None: every key present in the data is a
        candidate.
    centre : float
        Sums are of (x − centre) (the midpoint of the bounds halves their sensitivity).
    edges : tuple of float
        Histogram bin edges (kind "histogram").
    categories : tuple
        Declared categories of ``column`` (kind "categories").
    grid : (float, int, int)
        (Λ, j_low, j_high): values are rounded to the grid jΛ, j_low ≤ j ≤ j_high (kind "grid").
    where : tuple of Condition
        Only the rows that satisfy every condition are aggregated (applied before contribution bounding).
    """

    kind: Kind
    column: str | None = None
    bounds: tuple[float, float] | None = None
    missing: Any = "error"
    unit: str | None = None
    max_contributions: int = 1
    group: str | tuple[str, ...] | None = None
    keys: tuple[Any, ...] | None = None
    centre: float = 0.0
    edges: tuple[float, ...] = ()
    categories: tuple[Any, ...] = ()
    grid: tuple[float, int, int] = (1.0, 0, 0)
    where: tuple[Predicate, ...] = ()


@dataclass(frozen=True, slots=True)
class Aggregates:
    """Exact aggregates of the bounded data, per group (one group when there is no group-by).

    ``count``, ``sum``, ``sum_squares`` have shape (g,); ``cells`` (histogram or category counts) has shape
    (g, bins); ``grid_points``/``grid_counts`` list the occupied grid points of the first group and their counts.
    """

    keys: list[Any] | None
    count: NDArray[np.float64]
    sum: NDArray[np.float64] = field(default_factory=lambda: np.zeros(1))
    sum_squares: NDArray[np.float64] = field(default_factory=lambda: np.zeros(1))
    cells: NDArray[np.float64] = field(default_factory=lambda: np.zeros((1, 0)))
    grid_points: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    grid_counts: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))


class Backend(ABC):
    """The aggregation engine of a session (see the module docstring)."""

    @property
    @abstractmethod
    def columns(self) -> list[str]:
        """The column names."""

    @abstractmethod
    def check_column(self, name: Any, role: str) -> str:
        """``name`` if it is a column; an error naming ``role`` otherwise (no data read)."""

    @abstractmethod
    def count_missing(self, column: str) -> int:
        """How many values of ``column`` are missing (for the "error" policy, checked before any charge)."""

    def count_missing_where(self, column: str, where: tuple[Predicate, ...]) -> int:
        """How many values of ``column`` are missing among the rows that satisfy ``where`` (a backend that
        filters rows overrides this; the default refuses conditions)."""
        if where:
            raise InvalidParameterError(f"the backend {type(self).__name__} does not filter rows (`Session.where`).")
        return self.count_missing(column)

    def column_kind(self, column: str) -> str:
        """What ``column`` holds for a condition: "number", "text", or a description of another type (read from
        the column's type; a backend that filters rows overrides this, the default refuses conditions)."""
        raise InvalidParameterError(f"the backend {type(self).__name__} does not filter rows (`Session.where`).")

    @abstractmethod
    def aggregate(self, request: AggregateRequest, rng: np.random.Generator) -> Aggregates:
        """The aggregates of ``request`` (module docstring, steps 1–4), bounding with ``rng``."""


def bound_contributions(units: NDArray[np.int64], k: int, rng: np.random.Generator) -> NDArray[np.bool_] | None:
    """A mask keeping at most ``k`` rows of every unit, chosen uniformly at random (None: every row is kept).

    The rows of a unit may be anywhere. Only units with more than k rows are sorted (by unit, then by a uniform
    random key): the first k rows of each in that order are kept.

    Examples
    --------
    >>> import numpy as np
    >>> mask = bound_contributions(np.array([0, 1, 0, 0, 1]), 2, np.random.default_rng(0))
    >>> int(mask[[0, 2, 3]].sum()), bool(mask[1] and mask[4])
    (2, True)
    """
    if units.size == 0:
        return None
    per_unit = np.bincount(units)
    if int(per_unit.max()) <= k:
        return None
    over = per_unit > k
    rows = np.flatnonzero(over[units])
    order = np.lexsort((rng.random(rows.size), units[rows]))
    sorted_units = units[rows][order]
    starts = np.flatnonzero(np.r_[True, sorted_units[1:] != sorted_units[:-1]])
    rank = np.arange(rows.size) - np.repeat(starts, np.diff(np.r_[starts, rows.size]))
    mask = np.ones(units.size, dtype=bool)
    mask[rows[order[rank >= k]]] = False
    return mask


class InMemoryBackend(Backend):
    """Aggregates computed with numpy over a :class:`~privnoise.analysis.table.Table` (module docstring)."""

    def __init__(self, table: Table) -> None:
        self.table = table

    @property
    def columns(self) -> list[str]:
        return self.table.columns

    def check_column(self, name: Any, role: str) -> str:
        return self.table.check(name, role)

    def count_missing(self, column: str) -> int:
        return int(np.count_nonzero(self.table.numeric(column).missing))

    def count_missing_where(self, column: str, where: tuple[Predicate, ...]) -> int:
        missing = self.table.numeric(column).missing
        mask = row_mask(self.table, where)
        return int(np.count_nonzero(missing if mask is None else missing & mask))

    def column_kind(self, column: str) -> str:
        return self.table.kind(column)

    # -- steps ---------------------------------------------------------------------------------------------------
    def _rows(self, request: AggregateRequest) -> tuple[NDArray[np.bool_] | None, NDArray[np.float64] | None]:
        """Step 1: which rows take part (None: all) — those that satisfy the conditions, then for the value column
        the missing-value policy — and their values (None: no column)."""
        matching = row_mask(self.table, request.where)
        if request.column is None or request.kind == "categories":
            return matching, None
        column = self.table.numeric(request.column)
        missing = column.missing if matching is None else column.missing & matching
        if not missing.any():
            return matching, column.values
        if request.missing == "drop":
            return ~column.missing if matching is None else matching & ~column.missing, column.values
        if request.missing == "error":
            raise InvalidParameterError(f"column {request.column!r} has missing values (missing='error').")
        return matching, np.where(column.missing, float(request.missing), column.values)

    def _key(self, group: str | tuple[str, ...]) -> KeyColumn:
        """The codes of one key column, or of the key tuples of several."""
        if isinstance(group, str):
            return self.table.codes(group)
        return tuple_codes([self.table.codes(name) for name in group], self.table.rows)

    def _groups(self, request: AggregateRequest) -> tuple[NDArray[np.int64] | None, list[Any] | None, NDArray[np.bool_] | None]:
        """Group codes, labels, and the rows whose key is declared (None: all)."""
        if request.group is None:
            return None, None, None
        key = self._key(request.group)
        if request.keys is None:
            return key.codes, list(key.labels), None
        position = {label: i for i, label in enumerate(request.keys)}
        remap = np.array([position.get(label, -1) for label in key.labels], dtype=np.int64)
        codes = remap[key.codes] if remap.size else np.zeros(0, dtype=np.int64)
        return codes, list(request.keys), codes >= 0

    def _categories(self, request: AggregateRequest) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
        assert request.column is not None
        key = self.table.codes(request.column)
        position = {label: i for i, label in enumerate(request.categories)}
        remap = np.array([position.get(label, -1) for label in key.labels], dtype=np.int64)
        codes = remap[key.codes] if remap.size else np.zeros(0, dtype=np.int64)
        return codes, codes >= 0

    def aggregate(self, request: AggregateRequest, rng: np.random.Generator) -> Aggregates:
        keep, values = self._rows(request)
        groups, labels, declared = self._groups(request)
        cells_codes = None
        if request.kind == "categories":
            cells_codes, known = self._categories(request)
            keep = known if keep is None else keep & known
        if declared is not None and not declared.all():
            keep = declared if keep is None else keep & declared
        index = None if keep is None else np.flatnonzero(keep)

        def take(array: NDArray[Any]) -> NDArray[Any]:
            return array if index is None else array[index]

        if request.unit is not None:
            units = take(self.table.codes(request.unit).codes)
            bounded = bound_contributions(units, request.max_contributions, rng)
            if bounded is not None:
                index = np.flatnonzero(bounded) if index is None else index[bounded]
        elif request.max_contributions != 1:
            raise InvalidParameterError("`max_contributions` needs a privacy unit column.")
        count_groups = 1 if labels is None else max(len(labels), 1)
        g = np.zeros(self.table.rows if index is None else index.size, dtype=np.int64) if groups is None else take(groups)
        if request.kind == "categories":
            assert cells_codes is not None
            flat = g * len(request.categories) + take(cells_codes)
            cells = np.bincount(flat, minlength=count_groups * len(request.categories)).astype(float)
            cells = cells.reshape(count_groups, len(request.categories))
            return Aggregates(labels, cells.sum(axis=1), cells=cells)
        count = np.bincount(g, minlength=count_groups).astype(float)
        if values is None:
            return Aggregates(labels, count)
        x = take(values)
        if request.bounds is not None:
            x = np.clip(x, request.bounds[0], request.bounds[1])
        if request.kind == "histogram":
            edges = np.asarray(request.edges)
            bins = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, edges.size - 2)
            flat = g * (edges.size - 1) + bins
            cells = np.bincount(flat, minlength=count_groups * (edges.size - 1)).astype(float)
            return Aggregates(labels, count, cells=cells.reshape(count_groups, edges.size - 1))
        if request.kind == "grid":
            step, low, high = request.grid
            points = np.clip(np.rint(x / step), low, high).astype(np.int64)
            occupied, counts = np.unique(points, return_counts=True)
            return Aggregates(labels, count, grid_points=occupied, grid_counts=counts.astype(float))
        centred = x - request.centre if request.centre else x
        total = np.bincount(g, weights=centred, minlength=count_groups).astype(np.float64)
        squares = np.bincount(g, weights=centred * centred, minlength=count_groups).astype(np.float64)
        if not (np.all(np.isfinite(total)) and np.all(np.isfinite(squares))):
            raise InvalidParameterError("the sums overflow; rescale the data or the bounds.")
        return Aggregates(labels, count, total, squares)


class SchemaBackend(Backend):
    """The names of a dataset's columns and their kinds, without a value: a session over it can only dry-run
    (:mod:`privnoise.analysis.dry_run`); :meth:`aggregate` and the missing-value counts refuse.

    >>> import privnoise as pn
    >>> s = pn.Session(SchemaBackend({"kwh": "number", "region": "text"}), epsilon=1.0)
    >>> s.sum("kwh", bounds=(0, 5), epsilon=0.5, dry_run=True).cost["epsilon"]
    0.5
    """

    def __init__(self, kinds: dict[str, str]) -> None:
        self.kinds = dict(kinds)

    @property
    def columns(self) -> list[str]:
        return list(self.kinds)

    def check_column(self, name: Any, role: str) -> str:
        if not isinstance(name, str) or name not in self.kinds:
            raise InvalidParameterError(
                f"`{role}` of `Session` must be a column of the data ({', '.join(map(repr, self.kinds))}); got {name!r}."
            )
        return name

    def column_kind(self, column: str) -> str:
        return self.kinds[column]

    def count_missing(self, column: str) -> int:
        raise InvalidParameterError("a session over the columns' names only has no values: it answers dry runs only.")

    def aggregate(self, request: AggregateRequest, rng: np.random.Generator) -> Aggregates:
        raise InvalidParameterError("a session over the columns' names only has no values: it answers dry runs only.")
