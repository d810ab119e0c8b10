"""``Session.sql``: a standard SQL ``SELECT`` answered by the session's own queries (:mod:`privnoise.sql`).

The statement is read by sqlglot (:func:`privnoise.sql.parse_statement`); its ``WHERE`` becomes a filtered view
(:meth:`~privnoise.Session.where`), each distinct aggregate one release of the session — ``COUNT`` →
:meth:`~privnoise.Session.count`, ``SUM``/``AVG`` → ``sum``/``mean``, ``VAR_POP``/``VARIANCE`` →
``variance`` (the population variance; ``STDDEV`` is its square root, post-processing), ``PERCENTILE_CONT``,
``MEDIAN``, ``MIN``, ``MAX`` → ``quantile``, ``COUNT(DISTINCT unit)`` → ``count_distinct`` — and with ``GROUP BY``
the session's group-by (``COUNT``, ``SUM``, ``AVG`` per group). The rest is post-processing
(:func:`privnoise.sql.answers.assemble`).

Budget: the statement's ε (or ρ) — the ``epsilon=`` argument, or the statement's ``OPTIONS(epsilon = …)`` — is
split evenly over its releases; with ``GROUP BY`` and no declared keys, the groups are first selected by a noisy
count (partition selection at the δ given, by default a tenth of the session's δ), which is one of those releases
(the statement's ``COUNT(*)`` when it has one), and the other aggregates are then released for the selected keys.
The statement is charged as a whole: if any release is refused (the budget, a missing value), nothing is charged and
nothing is returned. Every check that needs no data — the statement, the bounds, the keys, the options — is made
before any aggregate is computed. With ``dry_run=True`` the statement stops there: its
:class:`~privnoise.analysis.dry_run.StatementDryRun` gives the price, the guarantee and each release's accuracy from
public information only (after partition selection, the accuracy of each selected group), nothing charged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from ..dp.accounting import exact_rational
from ..exceptions import InvalidParameterError
from ..planning.plan import Cost
from ..sql.answers import Released, SqlAnswer, assemble
from ..sql.statement import Aggregate, SqlError, Statement
from .dry_run import DryRun, StatementDryRun, cost_of
from .estimate import Estimate
from .grouping import sort_key

if TYPE_CHECKING:
    from .backend import Backend
    from .ledger import Ledger

__all__ = ["SqlQueries"]

_OWNER = "Session.sql"
_BOUNDED = ("sum", "mean", "variance", "stddev", "quantile")
_GROUPED = ("count", "sum", "mean")


def _base(aggregate: Aggregate) -> Aggregate:
    """The release an aggregate comes from: ``STDDEV`` is the square root of the variance."""
    return Aggregate("variance", aggregate.column, text=aggregate.text) if aggregate.kind == "stddev" else aggregate


def _bounds_of(bounds: Any, needed: list[str]) -> dict[str, tuple[float, float]]:
    if bounds is None:
        bounds = {}
    if not isinstance(bounds, Mapping):
        raise InvalidParameterError(f"`bounds` of `{_OWNER}` maps each column to (low, high); got {type(bounds).__name__}.")
    missing = [c for c in needed if c not in bounds]
    if missing:
        raise InvalidParameterError(
            f"`bounds` of `{_OWNER}` must declare the range of {', '.join(map(repr, missing))}: sums, means, variances "
            "and quantiles clamp each value to declared bounds (never read from the data), e.g. "
            f"bounds={{{missing[0]!r}: (0, 100)}}."
        )
    return {c: bounds[c] for c in needed}


class SqlQueries:
    """:meth:`sql` of :class:`~privnoise.analysis.Session` (its base class)."""

    _backend: Backend
    _ledger: Ledger
    privacy_unit: str | None
    max_contributions: int

    if TYPE_CHECKING:
        @property
        def adjacency(self) -> str: ...
        def where(self, conditions: Any = None, /, **equalities: Any) -> Any: ...
        def group_by(self, key: Any, *, keys: Any = None, delta: float | None = None) -> Any: ...

    @overload
    def sql(self, statement: str, *, epsilon: Any = None, rho: Any = None, bounds: Mapping[str, Any] | None = None,
            keys: Any = None, delta: Any = None, dialect: str | None = None, level: float = 0.95,
            resolution: int = 1 << 14, before_release: Callable[[], None] | None = None,
            dry_run: Literal[False] = False) -> SqlAnswer: ...
    @overload
    def sql(self, statement: str, *, epsilon: Any = None, rho: Any = None, bounds: Mapping[str, Any] | None = None,
            keys: Any = None, delta: Any = None, dialect: str | None = None, level: float = 0.95,
            resolution: int = 1 << 14, before_release: Callable[[], None] | None = None,
            dry_run: Literal[True]) -> StatementDryRun: ...
    def sql(self, statement: str, *, epsilon: Any = None, rho: Any = None, bounds: Mapping[str, Any] | None = None,
            keys: Any = None, delta: Any = None, dialect: str | None = None, level: float = 0.95,
            resolution: int = 1 << 14, before_release: Callable[[], None] | None = None,
            dry_run: bool = False) -> SqlAnswer | StatementDryRun:
        """Answer a SQL ``SELECT`` with noise (module docstring); one row per group.

        Parameters
        ----------
        statement : str
            One ``SELECT`` over the session's data (the ``FROM`` table names it; any name is accepted).
        epsilon, rho : float, optional
            The statement's budget (one of them; or ``OPTIONS(epsilon = …)`` in the statement), split evenly over
            its releases.
        bounds : mapping
            ``{column: (low, high)}`` for every column summed, averaged, or of which a variance or quantile is taken.
        keys : optional
            The declared keys of a ``GROUP BY`` (as :meth:`group_by` takes them); None: partition selection.
        delta : float, optional
            The δ of partition selection (default: the statement's ``OPTIONS(delta = …)``, else a tenth of the
            session's δ).
        dialect : str, optional
            The SQL dialect (sqlglot's names: "postgres", "bigquery", "spark", "duckdb", ...).
        level : float
            The coverage of the answer's intervals.
        resolution : int
            The quantiles' grid: at least this many steps over the bounds.
        before_release : callable, optional
            Called once, after every check that needs no data and before any aggregate is computed (the command
            line charges its durable ledger there).
        dry_run : bool
            Only the price, the guarantee and each release's accuracy from public information
            (:mod:`privnoise.analysis.dry_run`): nothing charged, no aggregate computed.

        Returns
        -------
        SqlAnswer or StatementDryRun
            ``.to_frame()`` (one row per group: outputs, ``<name>_low``/``<name>_high``, the guarantee), ``.rows()``,
            ``.guarantee`` and each release in ``.releases``; with ``dry_run``, the statement's dry run.

        Examples
        --------
        >>> import numpy as np, privnoise as pn
        >>> data = {"region": np.array(["north", "south"] * 500), "kwh": np.linspace(0.0, 10.0, 1000)}
        >>> s = pn.Session(data, epsilon=2.0, rng=7)
        >>> answer = s.sql("SELECT region, AVG(kwh) AS mean_kwh, COUNT(*) AS n FROM meters WHERE kwh > 1 "
        ...                "GROUP BY region ORDER BY region", epsilon=1.0, bounds={"kwh": (0, 10)},
        ...                keys=["north", "south"])
        >>> list(answer.to_frame().columns)
        ['region', 'mean_kwh', 'mean_kwh_low', 'mean_kwh_high', 'n', 'n_low', 'n_high', 'guarantee']
        >>> answer.guarantee["epsilon"], s.remaining().epsilon
        (1.0, 1.0)
        """
        from ..sql.parsing import parse_statement  # sqlglot loads with the first statement

        st = parse_statement(statement, dialect=dialect)
        price = self._statement_price(st, epsilon, rho)
        self._check_options(st)
        releases = list(dict.fromkeys(_base(a) for a in st.aggregates))
        needed = list(dict.fromkeys(str(a.column) for a in releases if a.kind in _BOUNDED))
        declared = _bounds_of(bounds, needed)
        for a in releases:
            if a.column is not None:
                self._backend.check_column(a.column, "column")
            if a.kind == "count_distinct" and (self.privacy_unit is None or a.column != self.privacy_unit):
                raise SqlError(f"{a.text}: COUNT(DISTINCT ...) counts privacy units; this session's unit is "
                               f"{self.privacy_unit!r} (other distinct counts are not answered)")
        view = self
        for predicate in st.where:
            view = view.where(predicate)
        selection_delta: Fraction = Fraction(0)
        if st.group_by:
            unanswered = [a.text for a in releases if a.kind not in _GROUPED]
            if unanswered:
                raise SqlError(f"{', '.join(unanswered)} with GROUP BY is not answered: per group, COUNT, SUM and AVG "
                               "are (ask a filtered statement per group for the others)")
            if keys is None:
                given = delta if delta is not None else st.options.get("delta")
                selection_delta = (self._ledger.delta / 10 if given is None
                                   else exact_rational(given, "delta", _OWNER, allow_zero=True))
                if selection_delta <= 0:
                    raise SqlError("GROUP BY without declared keys releases the keys found in the data by partition "
                                   "selection, which needs a δ > 0: declare `keys`, or give the session (or `delta`) "
                                   "a δ > 0")
        count_star = Aggregate("count", None)
        selecting = bool(st.group_by) and keys is None
        parts = len(releases) + (1 if selecting and count_star not in releases else 0)
        share = price / parts
        budget = {"epsilon": share} if self._ledger.currency == "epsilon" else {"rho": share}
        released: dict[Aggregate, Released] = {}
        estimates: dict[Aggregate, Estimate] = {}
        guarantee = self._ledger.family.guarantee(price, selection_delta if selecting else Fraction(0), self.adjacency)
        stated = {**guarantee.as_dict(), "summary": guarantee.summary(), "releases": parts}
        if dry_run:
            return self._dry_statement(view, st, releases, keys, selection_delta, budget, declared, resolution, stated)
        if before_release is not None:
            before_release()
        with self._ledger.transaction():
            if st.group_by:
                groups = self._grouped_releases(view, st, releases, keys, selection_delta, budget, declared, estimates)
            else:
                groups = [()]
                for a in releases:
                    estimates[a] = self._release(view, a, budget, declared, resolution)
            for a in st.aggregates:  # no group selected: nothing else was released
                released[a] = (_released(estimates[_base(a)], a, groups, bool(st.group_by)) if _base(a) in estimates
                               else Released([], None))
        return assemble(st, groups, released, stated, level=level, releases={a.text: e for a, e in estimates.items()})

    # -- steps -----------------------------------------------------------------------------------------------------
    def _statement_price(self, st: Statement, epsilon: Any, rho: Any) -> Fraction:
        option = st.options.get("epsilon")
        if epsilon is not None and option is not None and exact_rational(epsilon, "epsilon", _OWNER) != \
                exact_rational(option, "epsilon", _OWNER):
            raise SqlError(f"the statement's OPTIONS(epsilon = {option:g}) differs from `epsilon` = {epsilon}; give one")
        if epsilon is None and rho is None:
            epsilon = option
        if epsilon is None and rho is None:
            raise InvalidParameterError(f"`{_OWNER}` needs a budget: `epsilon` (or `rho`), or OPTIONS(epsilon = ...) "
                                        "in the statement.")
        return self._ledger.price(epsilon, rho, _OWNER)

    def _check_options(self, st: Statement) -> None:
        unit = st.options.get("privacy_unit_column")
        if unit is not None and unit != self.privacy_unit:
            raise SqlError(f"the statement's privacy_unit_column = {unit!r}, but this session protects "
                           f"{self.privacy_unit!r}: build the session with privacy_unit={unit!r}")
        cap = st.options.get("max_groups_contributed")
        if cap is not None and cap != self.max_contributions:
            raise SqlError(f"the statement's max_groups_contributed = {cap}, but this session uses at most "
                           f"{self.max_contributions} rows per unit: build the session with max_contributions={cap}")

    def _dry_statement(self, view: Any, st: Statement, releases: list[Aggregate], keys: Any, delta: Fraction,
                       budget: dict[str, Any], bounds: dict[str, Any], resolution: int,
                       stated: dict[str, Any]) -> StatementDryRun:
        """The statement's price and each release's accuracy, nothing charged (``sql(..., dry_run=True)``)."""
        runs: dict[str, DryRun] = {}
        if st.group_by:
            columns = list(st.group_by)
            key: Any = columns[0] if len(columns) == 1 else columns
            count_star = Aggregate("count", None)
            if keys is None:
                runs[count_star.text or "COUNT(*)"] = view.group_by(key, delta=delta).count(**budget, dry_run=True)
            # the accuracy per group depends on no key: one placeholder key stands for the selected ones
            grouping = view.group_by(key, keys=keys if keys is not None else [None if len(columns) == 1
                                                                            else (None,) * len(columns)])
            for a in releases:
                if keys is None and a == count_star:
                    continue
                if a.kind == "count":
                    runs[a.text] = grouping.count(**budget, dry_run=True)
                else:
                    method = grouping.sum if a.kind == "sum" else grouping.mean
                    runs[a.text] = method(a.column, bounds=bounds[str(a.column)], **budget, dry_run=True)
        else:
            for a in releases:
                runs[a.text] = self._release(view, a, budget, bounds, resolution, dry_run=True)
        charges = [run.charge for run in runs.values() if run.charge is not None]
        after, refusal = self._ledger.trial(*charges)
        total = Cost("statement", epsilon=sum((c.epsilon for c in charges), Fraction(0)),
                     delta=sum((c.delta for c in charges), Fraction(0)), rho=sum((c.rho for c in charges), Fraction(0)))
        return StatementDryRun(runs, cost_of(total, self._ledger.currency), stated, after, refusal)

    @staticmethod
    def _release(view: Any, a: Aggregate, budget: dict[str, Any], bounds: dict[str, Any], resolution: int,
                 dry_run: bool = False) -> Any:
        if a.kind == "count":
            return view.count(a.column, **budget, dry_run=dry_run)
        if a.kind == "count_distinct":
            return view.count_distinct(**budget, dry_run=dry_run)
        if a.kind == "quantile":
            return view.quantile(a.column, a.q, bounds=bounds[str(a.column)], resolution=resolution,
                                 **budget, dry_run=dry_run)
        method = {"sum": view.sum, "mean": view.mean, "variance": view.variance}[a.kind]
        return method(a.column, bounds=bounds[str(a.column)], **budget, dry_run=dry_run)

    @staticmethod
    def _grouped_releases(view: Any, st: Statement, releases: list[Aggregate], keys: Any, delta: Fraction,
                          budget: dict[str, Any], bounds: dict[str, Any], estimates: dict[Aggregate, Estimate]) -> list[tuple[Any, ...]]:
        columns = list(st.group_by)
        key: Any = columns[0] if len(columns) == 1 else columns
        count_star = Aggregate("count", None)
        if keys is None:  # partition selection by a noisy count, then the other aggregates on the keys it released
            first = view.group_by(key, delta=delta).count(**budget)
            if count_star in releases:
                estimates[count_star] = first
            keys = list(first.keys or [])
        groups = [k if isinstance(k, tuple) else (k,) for k in (keys or [])]
        if not keys:
            return []
        grouping = view.group_by(key, keys=keys)
        for a in releases:
            if a in estimates:
                continue
            if a.kind == "count":
                if a.column is not None:
                    raise SqlError(f"{a.text} per group is not answered; COUNT(*) is")
                estimates[a] = grouping.count(**budget)
            else:
                method = grouping.sum if a.kind == "sum" else grouping.mean
                estimates[a] = method(a.column, bounds=bounds[str(a.column)], **budget)
        first_keys = [k if isinstance(k, tuple) else (k,) for k in (estimates[releases[0]].keys or [])]
        return sorted(first_keys or groups, key=sort_key)


def _released(estimate: Estimate, a: Aggregate, groups: list[tuple[Any, ...]], grouped: bool) -> Released:
    """One aggregate's values (and interval) aligned with ``groups``."""
    values = np.atleast_1d(np.asarray(estimate.value, dtype=float) if a.kind != "count" else estimate.value)
    order = np.arange(len(groups))
    if grouped:
        where = {(k if isinstance(k, tuple) else (k,)): i for i, k in enumerate(estimate.keys or [])}
        order = np.array([where[g] for g in groups], dtype=np.int64)
    stddev = a.kind == "stddev"

    def shaped(x: Any) -> Any:
        x = np.atleast_1d(np.asarray(x, dtype=float))[order]
        return np.sqrt(np.maximum(x, 0.0)) if stddev else x

    picked = shaped(values) if stddev else np.atleast_1d(values)[order]
    if estimate.interval is None:
        return Released(list(picked), None)

    def interval(level: float) -> tuple[Any, Any]:
        low, high = estimate.confidence_interval(level)
        return shaped(low), shaped(high)

    return Released(list(picked), interval)
