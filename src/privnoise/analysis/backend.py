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
   are, chosen uniformly at random with the given generator (all of them when a unit has no more) — the session
   passes a generator of its own, and a backend may draw the choice once for it and keep it across its queries
   (:mod:`privnoise.analysis.bounding` says why the privacy is that of a fresh draw per query);
3. clamp every value to the declared bounds (a value of the imputed constant as well);
4. aggregate per group: the row count, the sum of (x − centre), the sum of (x − centre)², a histogram over
   public bin edges or declared categories, or the counts of values rounded to a grid (quantile candidates).

:class:`InMemoryBackend` does this with numpy over the columns of a :class:`~privnoise.analysis.table.Table`: the
contribution order is drawn once per session (one permutation and one sort of the rows of units over the cap,
O(n log n)); each query then costs O(n) — one cumulative count for a new set of taking-part rows, one pass over its
prepared columns for the aggregate (the values of a selection are clamped to a query's bounds and centred
once, and kept for the session's further queries with the same column and bounds).
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from ..core.predicates import Predicate
from ..exceptions import InvalidParameterError
from .bounding import Prepared, bound_contributions
from .kernels import bin_codes, clamp_and_centre, grid_counts
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
    squares : bool
        Whether the sums of (x − centre)² are needed (kind "moments"; a backend may leave them 0 when not).
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
    squares: bool = True


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


class InMemoryBackend(Backend):
    """Aggregates computed with numpy over a :class:`~privnoise.analysis.table.Table` (module docstring).

    What does not change between queries is computed once and kept (:class:`~privnoise.analysis.bounding.Prepared`):
    the rows that satisfy a filter, the contribution order of the privacy unit (drawn once per session from the
    generator the session passes), the rows each set of public choices keeps, and the value and key columns gathered
    over those rows. A further query then costs one pass over its prepared columns.
    """

    def __init__(self, table: Table) -> None:
        self.table = table
        self._data = Prepared(None)  # depends on the data only: filters, declared keys, missing counts
        self._sessions: list[Prepared] = []  # one per generator (session), the most recent first
        self._lock = threading.Lock()

    @property
    def columns(self) -> list[str]:
        return self.table.columns

    def check_column(self, name: Any, role: str) -> str:
        return self.table.check(name, role)

    def count_missing(self, column: str) -> int:
        return int(self._data.get(("missing", column), lambda: np.count_nonzero(self.table.numeric(column).missing)))

    def count_missing_where(self, column: str, where: tuple[Predicate, ...]) -> int:
        if not where or not self.count_missing(column):
            return self.count_missing(column)

        def count() -> int:
            mask = self._matching(where)
            missing = self.table.numeric(column).missing
            return int(np.count_nonzero(missing if mask is None else missing & mask))

        return int(self._data.get(("missing", column, where), count))

    def column_kind(self, column: str) -> str:
        return self.table.kind(column)

    # -- what is computed once -------------------------------------------------------------------------------------
    def _prepared(self, rng: np.random.Generator) -> Prepared:
        """The prepared state of the session whose generator is ``rng`` (at most two sessions' kept)."""
        with self._lock:
            for state in self._sessions:
                if state.generator is rng:
                    self._sessions = [state, *(s for s in self._sessions if s is not state)]
                    return state
            state = Prepared(rng)
            self._sessions = [state, *self._sessions[:1]]
            return state

    def _matching(self, where: tuple[Predicate, ...]) -> NDArray[np.bool_] | None:
        """The rows that satisfy ``where`` (None: no condition)."""
        return None if not where else self._data.get(("where", where), lambda: row_mask(self.table, where))

    def _key(self, group: str | tuple[str, ...]) -> KeyColumn:
        """The codes of one key column, or of the key tuples of several."""
        if isinstance(group, str):
            return self.table.codes(group)
        return self._data.get(("tuples", group), lambda: tuple_codes([self.table.codes(name) for name in group],
                                                                      self.table.rows))

    def _declared(self, key: KeyColumn, declared: tuple[Any, ...]) -> tuple[NDArray[np.int64], bool]:
        """The codes of ``key`` as positions in ``declared`` (−1: not declared), and whether every row is declared."""
        position = {label: i for i, label in enumerate(declared)}
        remap = np.array([position.get(label, -1) for label in key.labels], dtype=np.int64)
        codes = remap[key.codes] if remap.size else np.zeros(0, dtype=np.int64)
        return codes, bool(remap.size == 0 or remap.min() >= 0 or codes.size == 0 or codes.min() >= 0)

    def _groups(self, request: AggregateRequest) -> tuple[NDArray[np.int64], list[Any], bool]:
        """Group codes, labels, and whether every row's key is declared."""
        group, declared = request.group, request.keys
        assert group is not None
        if declared is None:
            key = self._key(group)
            return key.codes, list(key.labels), True
        codes, every = self._data.get(("declared", group, declared), lambda: self._declared(self._key(group), declared))
        return codes, list(declared), every

    def _categories(self, request: AggregateRequest) -> tuple[NDArray[np.int64], bool]:
        column = request.column
        assert column is not None
        return self._data.get(("categories", column, request.categories),
                              lambda: self._declared(self.table.codes(column), request.categories))

    def _selection(self, request: AggregateRequest, state: Prepared) -> tuple[Any, NDArray[np.int64] | None]:
        """Steps 1–2: the rows the request keeps, as sorted row numbers (None: every row), under a public key.

        The rows taking part are those that satisfy the conditions, with a value for the column when the policy drops
        missing ones, and a declared key and category; then at most k of each unit, by the session's contribution
        order (:mod:`privnoise.analysis.bounding`)."""
        column = None if request.column is None or request.kind == "categories" else request.column
        if column is not None and request.missing in ("drop", "error"):
            missing = self.count_missing_where(column, request.where) if request.where else self.count_missing(column)
            if missing and request.missing == "error":
                raise InvalidParameterError(f"column {column!r} has missing values (missing='error').")
            drop = column if missing else None
        else:
            drop = None
        declared = None
        if request.group is not None and request.keys is not None and not self._groups(request)[2]:
            declared = (request.group, request.keys)
        categories = None
        if request.kind == "categories" and not self._categories(request)[1]:
            categories = (request.column, request.categories)
        if request.unit is None and request.max_contributions != 1:
            raise InvalidParameterError("`max_contributions` needs a privacy unit column.")
        key = ("rows", request.unit, request.max_contributions if request.unit else 1, request.where, drop, declared,
               categories)

        def taking_part() -> NDArray[np.bool_] | None:
            mask = self._matching(request.where)
            mask = None if mask is None else mask.copy()
            parts = []
            if drop is not None:
                parts.append(~self.table.numeric(drop).missing)
            if declared is not None:
                parts.append(self._groups(request)[0] >= 0)
            if categories is not None:
                parts.append(self._categories(request)[0] >= 0)
            for part in parts:
                mask = part.copy() if mask is None else np.logical_and(mask, part, out=mask)
            return mask

        def rows() -> NDArray[np.int64] | None:
            mask = taking_part()
            if request.unit is not None:
                unit = request.unit
                order = state.order(unit, request.max_contributions, lambda: self.table.unit_codes(unit))
                mask = order.kept(mask)
            return None if mask is None else np.flatnonzero(mask)

        return key, state.get(key, rows)

    # -- aggregates ------------------------------------------------------------------------------------------------
    def aggregate(self, request: AggregateRequest, rng: np.random.Generator) -> Aggregates:
        state = self._prepared(rng)
        selection, index = self._selection(request, state)
        size = self.table.rows if index is None else int(index.size)

        def gathered(kind: str, what: Any, array: Callable[[], NDArray[Any]]) -> NDArray[Any]:
            """A column over the kept rows, prepared once per selection."""
            if index is None:
                return array()
            return state.get((kind, selection, what), lambda: array()[index])

        labels: list[Any] | None = None
        g = None
        count_groups = 1
        if request.group is not None:
            codes, labels, _ = self._groups(request)
            count_groups = max(len(labels), 1)
            g = gathered("groups", (request.group, request.keys), lambda: codes)
        if request.kind == "categories":
            cats = len(request.categories)
            cells_codes = gathered("cells", (request.column, request.categories), lambda: self._categories(request)[0])
            flat = cells_codes if g is None else g * cats + cells_codes
            cells = np.bincount(flat, minlength=count_groups * cats).astype(float).reshape(count_groups, cats)
            return Aggregates(labels, cells.sum(axis=1), cells=cells)
        if g is None:
            count = np.array([float(size)])
        else:  # rows per group: one pass per selection and key, kept
            groups = g
            count = state.get(("count", selection, request.group, request.keys),
                              lambda: np.bincount(groups, minlength=count_groups).astype(float)).copy()
        if request.column is None:
            return Aggregates(labels, count)
        column = request.column
        impute = None if request.missing in ("drop", "error") else float(request.missing)

        def values() -> NDArray[np.float64]:
            numeric = self.table.numeric(column)
            if impute is None or not self.count_missing(column):
                return numeric.values
            return np.where(numeric.missing, impute, numeric.values)

        centre = request.centre if request.kind == "moments" else 0.0
        if request.bounds is None and not centre:
            x = gathered("values", (column, impute), values)
        else:  # clamped and centred once per selection, column, imputation, bounds and centre; then read in one pass
            x = state.get(("clamped", selection, column, impute, request.bounds, centre),
                          lambda: clamp_and_centre(gathered("values", (column, impute), values), request.bounds, centre))
        if request.kind == "histogram":
            width = len(request.edges) - 1
            bins = state.get(("bins", selection, column, impute, request.bounds, tuple(request.edges)),
                             lambda: bin_codes(x, np.asarray(request.edges, dtype=float)))
            flat = bins if g is None else g * width + bins
            cells = np.bincount(flat, minlength=count_groups * width).astype(float)
            return Aggregates(labels, count, cells=cells.reshape(count_groups, width))
        if request.kind == "grid":
            occupied, counts = grid_counts(x, *request.grid)
            return Aggregates(labels, count, grid_points=occupied, grid_counts=counts)
        squares = np.zeros(count_groups)
        if g is None:
            total = np.array([float(np.sum(x))])
            if request.squares:  # einsum, not BLAS's dot: its threads stall on a busy machine
                squares = np.array([float(np.einsum("i,i->", x, x))])
        else:
            total = np.bincount(g, weights=x, minlength=count_groups).astype(np.float64)
            if request.squares:
                squares = np.bincount(g, weights=x * x, minlength=count_groups).astype(np.float64)
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
