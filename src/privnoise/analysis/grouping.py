"""Group-by keys of a session: one key column or several, declared keys or partition selection, keys in order.

``session.group_by("region")`` groups by one column, its keys plain values, as always. ``session.group_by(["species",
"island"])`` groups by the tuple of several columns: every result key is a tuple of one value per key column.
Keys come back sorted (numbers, then text, then missing values, column by column) — except the declared keys of one
column, which keep the order they were declared in — so the order of the released keys never depends on the order
of the rows. :meth:`~privnoise.analysis.Estimate.to_frame` puts the keys in one column per key column, named by it
(``region``). Declared keys are a list of tuples, or a mapping of every key column to its values, meaning their
product:

>>> declared_keys({"species": ["Adelie", "Gentoo"], "island": ["Biscoe"]}, ("species", "island"))
(('Adelie', 'Biscoe'), ('Gentoo', 'Biscoe'))
>>> sorted(["b", None, 2, "a", 1.5], key=sort_key)
[1.5, 2, 'a', 'b', None]

Without declared keys, partition selection (:mod:`privnoise.dp.partition`) runs over the key tuples present in the
data exactly as over single keys: a tuple is a cell of the vector of counts like any key, one unit's rows fall in at
most k of them, so the sensitivities and the threshold are those of one key column.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any, Literal, overload

import numpy as np

from .._validation import describe
from ..core import Bounds
from ..dp.accounting import exact_rational
from ..exceptions import InvalidParameterError
from ..planning.component import Component
from ..planning.estimates import ratio_estimate, vector_interval
from ..planning.plan import group_plan, split
from .backend import Aggregates, Backend
from .dry_run import DryRun, NoiseRadius, RatioRadius
from .estimate import Estimate
from .steps import SessionSteps

__all__ = ["GroupBy", "GroupQueries", "declared_keys", "group_columns", "in_key_order", "sort_key"]

KeyColumns = str | tuple[str, ...]


def group_columns(key: Any, backend: Backend) -> KeyColumns:
    """One key column (a name, or a list of one name) as its name; several as a tuple of distinct names."""
    if isinstance(key, str):
        return backend.check_column(key, "key")
    if not isinstance(key, Sequence) or not key:
        raise InvalidParameterError(
            f"`key` of `group_by` must be a column or a non-empty list of columns; got {describe(key)}."
        )
    names = tuple(backend.check_column(name, "key") for name in key)
    if len(set(names)) != len(names):
        raise InvalidParameterError(f"`key` of `group_by` names a column twice: {list(names)}.")
    return names[0] if len(names) == 1 else names


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _distinct(values: Any, what: str) -> tuple[Any, ...]:
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | np.ndarray):
        raise InvalidParameterError(f"{what} of `group_by` must be a list of values; got {describe(values)}.")
    found = tuple(_plain(v) for v in values)
    if not found:
        raise InvalidParameterError(f"{what} of `group_by` must be a non-empty list of distinct values.")
    try:
        unique = len(set(found)) == len(found)
    except TypeError:
        raise InvalidParameterError(f"{what} of `group_by` must be hashable values; got {describe(values)}.") from None
    if not unique:
        raise InvalidParameterError(f"{what} of `group_by` must be a non-empty list of distinct values.")
    return found


def declared_keys(keys: Any, columns: KeyColumns) -> tuple[Any, ...] | None:
    """The declared keys of a group-by on ``columns`` (None: partition selection).

    One column: a list of distinct values (or ``{column: values}``). Several: a list of distinct tuples with one value
    per key column, or a mapping of exactly the key columns to their values, meaning the product of those lists in
    the order of the key columns.
    """
    if keys is None:
        return None
    names = (columns,) if isinstance(columns, str) else columns
    if isinstance(keys, Mapping):
        if set(keys) != set(names) or len(keys) != len(names):
            raise InvalidParameterError(
                f"`keys` of `group_by` as a mapping must give the values of every key column {list(names)} and no "
                f"other; got {sorted(map(str, keys))}."
            )
        lists = [_distinct(keys[name], f"`keys[{name!r}]`") for name in names]
        product = tuple(itertools.product(*lists))
        return tuple(k[0] for k in product) if isinstance(columns, str) else product
    if isinstance(columns, str) or isinstance(keys, str | bytes) or not isinstance(keys, Sequence | np.ndarray):
        return _distinct(keys, "`keys`")
    for k in keys:
        if not isinstance(k, tuple | list) or len(k) != len(names):
            raise InvalidParameterError(
                f"`keys` of `group_by` on {len(names)} columns must be tuples of {len(names)} values "
                f"({', '.join(names)}); got {describe(k)}."
            )
    return _distinct([tuple(_plain(v) for v in k) for k in keys], "`keys`")


def sort_key(label: Any) -> Any:
    """An order over keys of any type: numbers, then text, then other values, then missing ones (None); tuples
    element by element."""
    if isinstance(label, tuple):
        return tuple(sort_key(v) for v in label)
    if label is None:
        return (3, 0.0, "")
    if isinstance(label, int | float | np.integer | np.floating):
        return (0, float(label), "")
    if isinstance(label, str):
        return (1, 0.0, label)
    return (2, 0.0, str(label))


def in_key_order(aggregates: Aggregates) -> Aggregates:
    """The aggregates of a group-by with its groups sorted by key (:func:`sort_key`)."""
    labels = list(aggregates.keys or [])
    order = np.array(sorted(range(len(labels)), key=lambda i: sort_key(labels[i])), dtype=np.int64)

    def rows(values: np.ndarray) -> np.ndarray:
        return values[order] if values.shape[0] == len(labels) else values

    return dataclasses.replace(aggregates, keys=[labels[i] for i in order], count=rows(aggregates.count),
                               sum=rows(aggregates.sum), sum_squares=rows(aggregates.sum_squares),
                               cells=rows(aggregates.cells))


class GroupBy:
    """Releases per value of a key column, or per tuple of values of several (see :meth:`Session.group_by`).

    Attributes
    ----------
    key : str or tuple of str
        The key column, or the key columns.
    keys : tuple or None
        The declared keys, tuples for several key columns (None: partition selection).
    delta : Fraction
        The δ of partition selection (0 with declared keys).
    """

    def __init__(self, query: Callable[..., Any], key: KeyColumns, keys: tuple[Any, ...] | None,
                 delta: Fraction) -> None:
        self._query = query
        self.key, self.keys, self.delta = key, keys, delta

    @overload
    def count(self, *, epsilon: float | None = None, rho: float | None = None,
              dry_run: Literal[False] = False) -> Estimate: ...
    @overload
    def count(self, *, epsilon: float | None = None, rho: float | None = None, dry_run: Literal[True]) -> DryRun: ...
    def count(self, *, epsilon: float | None = None, rho: float | None = None,
              dry_run: bool = False) -> Estimate | DryRun:
        """Rows per group (integers)."""
        return self._query("group count", None, None, epsilon, rho, 1, dry_run)

    @overload
    def sum(self, column: str, *, bounds: Sequence[float], epsilon: float | None = None, rho: float | None = None,
            dry_run: Literal[False] = False) -> Estimate: ...
    @overload
    def sum(self, column: str, *, bounds: Sequence[float], epsilon: float | None = None, rho: float | None = None,
            dry_run: Literal[True]) -> DryRun: ...
    def sum(self, column: str, *, bounds: Sequence[float], epsilon: float | None = None,
            rho: float | None = None, dry_run: bool = False) -> Estimate | DryRun:
        """Sums per group (with unknown keys, half the budget selects the keys)."""
        return self._query("group sum", column, bounds, epsilon, rho, 1 if self.keys is not None else 2, dry_run)

    @overload
    def mean(self, column: str, *, bounds: Sequence[float], epsilon: float | None = None, rho: float | None = None,
             dry_run: Literal[False] = False) -> Estimate: ...
    @overload
    def mean(self, column: str, *, bounds: Sequence[float], epsilon: float | None = None, rho: float | None = None,
             dry_run: Literal[True]) -> DryRun: ...
    def mean(self, column: str, *, bounds: Sequence[float], epsilon: float | None = None,
             rho: float | None = None, dry_run: bool = False) -> Estimate | DryRun:
        """Means per group: noisy Σ(x − c) over noisy counts (half the budget each; the counts select the keys)."""
        return self._query("group mean", column, bounds, epsilon, rho, 2, dry_run)


class GroupQueries(SessionSteps):
    """The group-by queries of :class:`~privnoise.analysis.Session` (its base class: the session's steps are
    declared here and defined there)."""

    def group_by(self, key: str | Sequence[str], *, keys: Any = None, delta: float | None = None) -> GroupBy:
        """Per-group releases by one key column, or by several (``["species", "island"]``: keys are tuples, sorted;
        :mod:`privnoise.analysis.grouping`). ``keys`` declared public — a list of keys (of tuples for several
        columns), or ``{column: values}`` meaning their product: every key is released (absent ones with a count
        near 0). Unknown keys: differentially private partition selection (:mod:`privnoise.dp.partition`) at
        ``delta`` (default a tenth of the session's δ).

        >>> import numpy as np, privnoise as pn
        >>> data = {"species": np.array(["Adelie", "Gentoo"] * 50), "island": np.array(["Biscoe"] * 60 + ["Dream"] * 40)}
        >>> s = pn.Session(data, epsilon=1.0, rng=3)
        >>> counts = s.group_by(["species", "island"], keys={"species": ["Adelie", "Gentoo"],
        ...                                                  "island": ["Biscoe", "Dream"]}).count(epsilon=1.0)
        >>> counts.keys[0], list(counts.to_frame().columns)
        (('Adelie', 'Biscoe'), ['species', 'island', 'value', 'low', 'high'])
        """
        column = group_columns(key, self._backend)
        declared = declared_keys(keys, column)
        chosen = Fraction(0)
        if declared is None:
            chosen = self._ledger.delta / 10 if delta is None else exact_rational(delta, "delta", "group_by")
            if chosen <= 0:
                raise InvalidParameterError(
                    "`delta` of `group_by` must be > 0 when the keys are not declared: a key held by one unit is "
                    "released with probability ≤ δ. Declare `keys` or give the session a δ > 0."
                )
        return GroupBy(functools.partial(self._grouped, column, declared, chosen), column, declared, chosen)

    def _grouped(self, key: str | tuple[str, ...], keys: tuple[Any, ...] | None, delta: Fraction, label: str,
                 column: str | None, bounds: Any, epsilon: Any, rho: Any, parts: int,
                 dry_run: bool = False) -> Estimate | DryRun:
        """One group-by query (see :class:`GroupBy`)."""
        name = None if column is None else self._value_column(column, label, dry_run)
        b = None if bounds is None else self._bounds(bounds, label)
        plan = self._plan(label, epsilon, rho)
        unknown = keys is None
        share = split(plan.price, parts)
        count, threshold = None, None
        if label != "group sum" or unknown:
            count, threshold = group_plan(plan, unknown_keys=unknown, delta=delta, count_share=share,
                                          integer=label == "group count" or unknown)
        total = None
        if b is not None:
            low, high = (-b.half, b.half) if label == "group mean" else (b.low, b.high)
            sensitivity = plan.adjacency.cells(low, high, plan.norm)
            total = plan.add("sum", sensitivity, share, vector=True, unit_cells=plan.adjacency.several_cells)
        several = not isinstance(key, str)
        query: dict[str, Any] = {"key": list(key) if several else key, "column": name,
                                 "keys": "declared" if not unknown else "selected", "threshold": threshold,
                                 "partition_delta": float(delta) if unknown else 0.0}
        if b is not None:
            query["bounds"] = [b.low, b.high]
        if dry_run:
            return self._dry_run(plan, query, _group_accuracy(label, count, total, b, name))
        request = self._request("moments", name, b, group=key, keys=keys, squares=False,
                                centre=b.centre if (b is not None and label == "group mean") else 0.0)
        aggregates = self._run(plan, request)
        if several or unknown:  # declared keys of one column keep their order; the others are sorted
            aggregates = in_key_order(aggregates)
        labels = list(aggregates.keys or [])
        present = np.ones(len(labels), dtype=bool) if not unknown else aggregates.count > 0
        exact = {"count": aggregates.count[present]} if count is not None else {}
        if total is not None:
            exact["sum"] = aggregates.sum[present]
        candidates = [lb for lb, p in zip(labels, present, strict=True) if p]
        columns = key if several else (key,)

        def finish(noisy: dict[str, Any]) -> dict[str, Any]:
            n_hat, s_hat = noisy.get("count"), noisy.get("sum")
            chosen = np.ones(len(candidates), dtype=bool) if threshold is None or n_hat is None else n_hat >= threshold
            kept = [lb for lb, keep in zip(candidates, chosen, strict=True) if keep]
            if label == "group count":
                assert n_hat is not None and count is not None
                n_hat = n_hat[chosen]
                return {"value": np.maximum(n_hat, 0.0), "keys": kept, "clamped": n_hat < 0,
                        "interval": vector_interval(n_hat, count.law, low=0.0)}
            assert s_hat is not None and total is not None and b is not None
            s_hat = s_hat[chosen]
            if label == "group sum":  # clipped to the sign the bounds give the sum, as Session.sum
                floor = 0.0 if b.low >= 0 else None
                ceiling = 0.0 if b.high <= 0 else None
                value = np.clip(s_hat, -np.inf if floor is None else floor, np.inf if ceiling is None else ceiling)
                return {"value": value, "keys": kept, "clamped": value != s_hat,
                        "interval": vector_interval(s_hat, total.law, low=floor, high=ceiling)}
            assert n_hat is not None and count is not None
            values, clamped, interval = ratio_estimate(s_hat, n_hat[chosen], b, total.law, count.law)
            return {"value": values, "keys": kept, "clamped": clamped, "interval": interval,
                    "empty": n_hat[chosen] <= 0}

        return self._execute(plan, exact, query, finish, key_columns=columns)


def _group_accuracy(label: str, count: Component | None, total: Component | None, bounds: Bounds | None,
                    column: str | None) -> Any:
    """A group-by's accuracy from its noise laws (:mod:`privnoise.analysis.dry_run`), per group."""
    if label == "group count":
        assert count is not None
        return NoiseRadius(count.law, "rows per group")
    assert total is not None and bounds is not None
    unit = f"in the unit of {column}, per group"
    if label == "group sum":
        return NoiseRadius(total.law, unit)
    assert count is not None
    return RatioRadius(total.law, count.law, bounds.half, unit)
