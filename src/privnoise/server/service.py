"""The charge-then-release service: plan, charge durably, then read the data and release.

1. Plan (:mod:`.planner`): the request against the configuration, no data read. Plans are cached per request
   text; the calibrations of every query kind but ``linear`` are made when the server starts. Errors here are
   422 and depend only on the request and the configuration.
2. Charge (:mod:`.charging`): one transaction, grouped with the other charges waiting, durable before the
   answer may leave. A refusal writes nothing.
3. Release: only then read the data (one statement over the whole table, the same work whatever a filter
   selects) and release the hardened answer. If anything fails from here on, the charge stays, the ledger row
   is marked "failed", and the querier gets :data:`FAILURE_BODY`, the same bytes whatever the data and whatever
   went wrong. A dataset with ``engine = "dask"`` or ``engine = "spark"`` is computed on its cluster instead,
   with the same constant work (:mod:`.dask_engine`, :mod:`.spark_engine`).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
from anyio import to_thread
from sqlalchemy import MetaData, Table, func, select, update
from sqlalchemy.engine import Engine

from ..exceptions import InvalidParameterError
from ..random import default_rng
from ..results import Release
from . import db
from .async_reads import AsyncReads, libpq_url
from .budget_views import BudgetViews
from .budgets import DatasetState, QuerierState, StoredValueError, is_finite
from .charging import Charged, Committer, StalePlan
from .composition import admits
from .config import ConfigError, ServerConfig
from .limits import PLAN_CACHE_BYTES, Exhausted, PlanningSlots, plan_bytes
from .planner import Plan, make_plan
from .querylang import QueryError, QuerySpec
from .readers import ReadConnections
from .refusals import RefusalLog
from .vectors import stored_keys

__all__ = ["FAILURE_BODY", "QueryFailed", "Service"]

FAILURE_BODY = {"error": "query failed"}
log = logging.getLogger("privnoise.server")
_PLAN_CACHE = 2048


class QueryFailed(Exception):
    """The answer could not be computed after the charge was committed (the charge stays)."""


class Service(BudgetViews):
    """Everything the HTTP layer needs: plans, the charge, the release, the budget views."""

    def __init__(self, config: ServerConfig, engine: Engine, *, read_engine: Engine | None = None) -> None:
        self.config = config
        self.engine = engine
        self.reader = read_engine or db.make_read_engine(engine.url.render_as_string(hide_password=False))
        self.dialect = engine.dialect.name
        meta = MetaData()
        self.tables: dict[str, Table] = {}
        self.dask: Any = None
        if any(spec.engine == "dask" for spec in config.datasets.values()):
            from .dask_engine import DaskDatasets

            self.dask = DaskDatasets(config)
        self.spark: Any = None
        if any(spec.engine == "spark" for spec in config.datasets.values()):
            from .spark_engine import SparkDatasets

            self.spark = SparkDatasets(config)
        with self.reader.connect() as conn:
            for name, spec in config.datasets.items():
                if spec.engine != "sql":  # not in the database: the declared columns stand for its table
                    self.tables[name] = db.data_table(spec.table, {n: c.type for n, c in spec.columns.items()}, meta)
                    continue
                table = Table(spec.table, meta, autoload_with=conn)
                missing = [c for c in spec.columns if c not in table.c]
                if missing:
                    raise ConfigError(f"dataset {name!r}: table {spec.table!r} has no column {missing[0]!r}.")
                self.tables[name] = table
        self.records: dict[str, int] = {}
        self._check_stored_state()
        self._readers = ReadConnections(self.reader)
        self._plans: OrderedDict[Any, tuple[Plan, int]] = OrderedDict()
        self._plan_bytes = 0  # the estimated size of the cached plans (limits.plan_bytes)
        self.exhausted = Exhausted()
        self.refusals = RefusalLog(engine)  # refused queries as uncharged ledger rows (SECURITY.md, 22)
        self.slots = PlanningSlots()
        self._lock = threading.Lock()
        self._calibrate()
        self.committer = Committer(engine, config)
        # PostgreSQL: small tables' answers are read on the event loop (:mod:`.async_reads`, :meth:`answer_on_loop`)
        self.loop_reads: AsyncReads | None = None
        if self.dialect == "postgresql":
            self.loop_reads = AsyncReads(libpq_url(self.reader.url))

    def close(self) -> None:
        self.refusals.close()
        self.committer.close()
        self._readers.close()
        self.reader.dispose()
        if self.dask is not None:
            self.dask.close()
        if self.spark is not None:
            self.spark.close()

    # -- start-up ------------------------------------------------------------------------------------------
    def _cluster(self, name: str) -> Any:
        """The Dask or Spark datasets that compute dataset ``name`` (None: it is in the database)."""
        for cluster in (self.dask, self.spark):
            if cluster is not None and name in cluster.specs:
                return cluster
        return None

    def _check_stored_state(self) -> None:
        """Read every stored budget once: a value that is not a finite rational stops the server."""
        with self.reader.connect() as conn:
            for row in conn.execute(select(db.datasets)).mappings():
                try:
                    state = DatasetState.from_row(row)
                except StoredValueError as exc:
                    raise ConfigError(f"the stored budget is not usable: {exc}") from None
                if row["name"] in self.tables:
                    cluster = self._cluster(row["name"])
                    if state.records is None and cluster is not None:
                        state.records = cluster.records(row["name"])
                    elif state.records is None:
                        state.records = int(
                            conn.execute(
                                select(func.count()).select_from(self.tables[row["name"]])
                            ).scalar_one()
                        )
                    self.records[row["name"]] = state.records
            for row in conn.execute(select(db.budgets)).mappings():
                try:
                    QuerierState.from_row(row)
                except StoredValueError as exc:
                    raise ConfigError(f"the stored budget is not usable: {exc}") from None

    def _calibrate(self) -> None:
        """Plan (and so calibrate) every query kind but ``linear`` on every column, once, at start-up."""
        for name, spec in self.config.datasets.items():
            numeric = [c for c, col in spec.columns.items() if col.type == "number"]
            weights = [c for c in numeric if (spec.columns[c].bounds or (-1.0, 0.0))[0] >= 0]
            wanted: list[QuerySpec] = [QuerySpec("count")]
            for c in numeric:
                wanted += [QuerySpec(k, c) for k in ("sum", "mean", "variance", "identity")]
                wanted += [QuerySpec("weighted_mean", c, w) for w in weights]
            for query in wanted:
                if query.kind not in spec.policies:
                    continue
                try:
                    self.plan(QuerySpec(query.kind, query.column, query.weights, dataset=name))
                except InvalidParameterError as exc:
                    raise ConfigError(
                        f"{self.config.path}: `datasets.{name}.policies.{query.kind}`: cannot be answered on "
                        f"column {query.column!r}: {exc}"
                    ) from None

    # -- 1. plan ---------------------------------------------------------------------------------------------
    def plan(self, query: QuerySpec) -> Plan:
        """The (cached) plan of a parsed query."""
        name = query.dataset
        if name is None:
            if len(self.config.datasets) != 1:
                raise QueryError(f"name a dataset (one of {', '.join(sorted(self.config.datasets))}).")
            name = next(iter(self.config.datasets))
        spec = self.config.datasets.get(name)
        if spec is None:
            raise QueryError(f"unknown dataset {name!r}.")
        query = query.on(name)
        return self.cached(("spec", query), lambda: self._make_plan(query, spec.name))

    def _make_plan(self, query: QuerySpec, name: str) -> Plan:
        return make_plan(
            query,
            self.config.datasets[name],
            self.tables[name],
            records=self.records[name],
            dialect=self.reader.dialect,
        )

    def peek(self, key: Any) -> Plan | None:
        """The plan cached under ``key``, or None (never makes one)."""
        with self._lock:
            entry = self._plans.get(key)
            if entry is None:
                return None
            self._plans.move_to_end(key)
            return entry[0]

    def cached(self, key: Any, make: Callable[[], Plan]) -> Plan:
        """The plan cached under ``key`` (a request text or a parsed query), made by ``make`` on a miss. The
        cache keeps at most ``_PLAN_CACHE`` plans and :data:`~.limits.PLAN_CACHE_BYTES` of them (estimated)."""
        plan = self.peek(key)
        if plan is not None:
            return plan
        plan = make()
        size = plan_bytes(plan)
        with self._lock:
            old = self._plans.pop(key, None)
            self._plan_bytes += size - (old[1] if old is not None else 0)
            self._plans[key] = (plan, size)
            while len(self._plans) > 1 and (len(self._plans) > _PLAN_CACHE or self._plan_bytes > PLAN_CACHE_BYTES):
                self._plan_bytes -= self._plans.popitem(last=False)[1][1]
        return plan

    def _forget_plans(self, name: str) -> None:
        with self._lock:
            for key in [k for k, (p, _) in self._plans.items() if p.spec.name == name]:
                self._plan_bytes -= self._plans.pop(key)[1]

    def stored_states(self, querier_id: int, dataset: str) -> tuple[QuerierState, DatasetState] | None:
        """The querier's budget on ``dataset`` and the dataset's global budget, as stored now (read without the
        write lock); None when either has no row."""
        with self.reader.connect() as conn:
            mine = conn.execute(
                select(db.budgets).where(db.budgets.c.querier_id == querier_id, db.budgets.c.dataset == dataset)
            ).mappings().first()
            ours = conn.execute(select(db.datasets).where(db.datasets.c.name == dataset)).mappings().first()
        if mine is None or ours is None:
            return None
        return QuerierState.from_row(mine), DatasetState.from_row(ours)

    def out_of_budget(self, querier_id: int, dataset: str) -> bool:
        """Whether no policy of ``dataset`` could be charged to this querier now, by its (ε, δ) budget or the
        dataset's (read from the database; a dataset with a Fisher policy is never out of budget here)."""
        spec = self.config.datasets.get(dataset)
        if spec is None:
            return False
        states = self.stored_states(querier_id, dataset)
        if states is None:
            return False
        mine, ours = states
        for policy in spec.policies.values():
            if policy.is_fisher or policy.epsilon is None:
                return False
            least = (policy.epsilon, policy.delta or Fraction(0))  # the smallest charge of the policy
            if admits(
                mine.renyi, (mine.spent_epsilon, mine.spent_delta), least, (mine.epsilon, mine.delta), spec
            ) and admits(ours.renyi, (ours.spent_epsilon, ours.spent_delta), least, (spec.epsilon, spec.delta), spec):
                return False
        return True

    # -- 2. charge -------------------------------------------------------------------------------------------
    def charge(self, plan: Plan, querier_id: int) -> tuple[Plan, Charged]:
        """Charge atomically and durably (blocking); return the plan charged (remade if the dataset changed)
        and the outcome. Raises :class:`~.budgets.Refusal` or :class:`~.charging.ChargeUnavailable`."""
        for _attempt in range(3):
            try:
                return plan, self.committer.submit(plan, querier_id).result()
            except StalePlan as stale:
                plan = self.refreshed(plan, stale.records)
        raise QueryError("the dataset is being re-imported; try again.")

    def refreshed(self, plan: Plan, records: int | None) -> Plan:
        """A new plan for a dataset whose number of records changed (re-imported)."""
        name = plan.spec.name
        if records is not None:
            self.records[name] = records
        self._forget_plans(name)
        return self.plan(plan.query)

    # -- 3. release ------------------------------------------------------------------------------------------
    def release(self, plan: Plan, ledger_id: int) -> Any:
        """Read the data and release the hardened answer's value; any failure marks the ledger row and raises
        :class:`QueryFailed`."""
        return self.answer(plan, ledger_id).value

    def answer(self, plan: Plan, ledger_id: int, noisy_out: list[Any] | None = None) -> Release:
        """The answer of a charged ``plan``: its core plan executed on the exact aggregates
        (:meth:`.plans.Plan.execute`, :func:`privnoise.planning.execute`) into a :class:`~privnoise.Release` —
        value, ``keys`` (those a partition selection released), guarantee and accuracy from the noise law.
        ``noisy_out`` receives the noisy components (those of the released keys), from which a SQL answer derives
        other statistics. Any failure marks the ledger row and raises :class:`QueryFailed`."""
        try:
            release = self._answer(plan, noisy_out)
            if not is_finite(release.value):
                raise ArithmeticError("non-finite release")
            return release
        except Exception:
            log.exception("query failed after its charge was committed (ledger row %d)", ledger_id)
            self._mark_failed(ledger_id)
            raise QueryFailed from None

    def _answer(self, plan: Plan, noisy_out: list[Any] | None) -> Release:
        if plan.quantile is not None:  # the exponential mechanism's choice is the answer's one noisy part
            values, weights = self._read_rows(plan)
            return plan.finished([plan.quantile.release(values, weights)])
        if plan.selection is not None:
            return self._selected(plan, noisy_out)
        cluster = self._cluster(plan.spec.name)
        if cluster is not None and plan.identity:  # noised on the workers (dask_engine, spark_engine)
            values, found = cluster.release_identity(plan)
            self._check_records(plan, found)
            if noisy_out is not None:
                noisy_out.append(values)
            return plan.finished([values])
        true, found = cluster.evaluate(plan) if cluster is not None else self._read(plan)
        self._check_records(plan, found)
        drawn: dict[str, Any] = {}
        release = plan.execute(true, drawn)
        if noisy_out is not None:
            noisy_out.extend(drawn.values())
        return release

    def on_loop(self, plan: Plan) -> bool:
        """Whether ``plan``'s answer is read and released on the event loop (:meth:`answer_on_loop`): a small
        table's aggregate or record-level release on PostgreSQL."""
        return (self.loop_reads is not None and plan.inline and plan.quantile is None and plan.selection is None
                and self._cluster(plan.spec.name) is None)

    async def answer_on_loop(self, plan: Plan, ledger_id: int) -> Release:
        """:meth:`answer` with the read awaited on the event loop (:mod:`.async_reads`), for a plan
        :meth:`on_loop` accepts; the same release, and the same failure: the ledger row marked (in a worker
        thread), :class:`QueryFailed` raised."""
        assert self.loop_reads is not None
        try:
            rows = await self.loop_reads.rows(plan.sql, plan.parameters, every_row=plan.identity)
            true, found = _components(plan, rows)
            self._check_records(plan, found)
            release = plan.execute(true, {})
            if not is_finite(release.value):
                raise ArithmeticError("non-finite release")
            return release
        except Exception:
            log.exception("query failed after its charge was committed (ledger row %d)", ledger_id)
            await to_thread.run_sync(self._mark_failed, ledger_id)
            raise QueryFailed from None

    @staticmethod
    def _check_records(plan: Plan, found: Any) -> None:
        if plan.records is not None and int(found) != plan.records:
            raise ValueError(f"the dataset holds {found} records, the plan was made for {plan.records}")

    def _read(self, plan: Plan) -> tuple[list[Any], int]:
        """The true components of ``plan`` from the database (one statement) and the number of records."""
        with self._readers.cursor() as cur:
            cur.execute(plan.sql, plan.parameters)
            return _components(plan, cur.fetchall() if plan.identity else [cur.fetchone()])

    def _selected(self, plan: Plan, noisy_out: list[Any] | None) -> Release:
        """A group-by over undeclared keys: noisy cells of every stored key (each component's own drawing,
        :meth:`privnoise.planning.Component.add`, two cells a draw), released where the noisy count reaches the
        threshold (:class:`~.vectors.PartitionSelection`)."""
        selection = plan.selection
        assert selection is not None
        with self._readers.cursor() as cur:
            cur.execute(plan.sql, plan.parameters)
            keys, rows = stored_keys(cur.fetchall(), plan.spec, selection.columns)
        if not keys:  # no stored key: nothing to select from, nothing drawn
            return Release(value=[], guarantee=plan.core.guarantee(), query=plan.query_dict, keys=[],
                           interval=lambda level: ([], [], level))
        generator = default_rng()
        noisy = [c.add(np.array([float(r[i]) for r in rows]), generator) for i, c in enumerate(plan.components)]
        counts = next(v for c, v in zip(plan.components, noisy, strict=True) if c.name == "count")
        keep = selection.keep(counts)
        noisy = [v[keep] for v in noisy]
        if noisy_out is not None:
            noisy_out.extend(noisy)
        return plan.finished(noisy, keys=[k for k, kept in zip(keys, keep, strict=True) if kept])

    def _read_rows(self, plan: Plan) -> tuple[np.ndarray, np.ndarray]:
        """Every record's (clamped value, filter weight) of a quantile plan (one pass over the table)."""
        with self._readers.cursor() as cur:
            cur.execute(plan.sql, plan.parameters)
            rows = np.array(cur.fetchall(), dtype=float).reshape(-1, 2)
        return rows[:, 0], rows[:, 1]

    def _mark_failed(self, ledger_id: int) -> None:
        try:
            with self.engine.begin() as conn:
                conn.execute(update(db.ledger).where(db.ledger.c.id == ledger_id).values(status="failed"))
        except Exception:  # the charge stays either way; the mark is for the owner
            log.exception("could not mark ledger row %d as failed", ledger_id)


def _components(plan: Plan, rows: list[Any]) -> tuple[list[Any], int]:
    """The true components of ``plan`` and the number of records, from the rows of its statement: every record's
    value (a record-level release), or the one row of sums and the count."""
    if plan.identity:
        return [np.array([float(r[0]) for r in rows])], len(rows)
    *values, found = rows[0]
    return plan.split([float(v) for v in values]), int(found)
