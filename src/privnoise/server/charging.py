"""Group commit of charges: several charges per transaction and fsync, each answer waiting for its own.

One :class:`Committer` thread per server process takes every charge waiting when it is free and records them
all in one transaction:

1. SQLite: ``BEGIN IMMEDIATE`` (the database's single write lock, across threads and processes); PostgreSQL:
   ``SELECT … FOR UPDATE`` on the datasets' rows (by name) and then on the queriers' budget rows (by querier
   and dataset), always in that order, so two processes never deadlock. The statements are in
   :mod:`.transactions`; on PostgreSQL the transaction takes two round trips to the server, one message per step (this
   one, and the write and commit of step 3), whatever the number of charges.
2. The charges are applied in arrival order to the rows read in the transaction (:func:`.budgets.apply_charges`):
   a charge that would exceed a budget, or a step answer on a floored column asked by a querier with a floor of
   its own (:mod:`.steps`), is refused and changes nothing; later charges see earlier ones. The charges of a SQL
   statement's aggregates come as one request (:meth:`Committer.submit_all`): all are recorded, each with its own
   ledger row, or none.
3. The changed rows are written back, one ledger row per accepted charge is inserted, and the transaction
   commits: SQLite in WAL mode with ``synchronous=FULL``, PostgreSQL with its default synchronous commit, so the
   commit returns only once the charges are on disk.
4. Only then is each waiting answer told its outcome (its ledger id and budget after, or its refusal). The
   answers waiting in an event loop (:meth:`Committer.charge`) are told together, by one call into their loop
   per transaction, instead of one wake-up of the loop per answer.

Under load, when fewer charges wait than usually come together (their clients were just answered and are
sending again), the committer waits up to 2 ms for them, so that one commit serves them all instead of two.

So no answer leaves before its charge is durable, and a ``kill -9`` at any moment loses only charges whose
answers never left. If the transaction fails, every charge of the batch is rolled back and told so
(:class:`ChargeUnavailable`): nothing was charged, nothing is released.

A charge whose plan was made for another number of records than the dataset now has (re-imported meanwhile)
is refused with :class:`StalePlan` and changes nothing; the service makes a new plan.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Engine

from . import db
from .budgets import DatasetState, QuerierState, Refusal, apply_charges, text
from .config import ServerConfig
from .planner import Plan
from .steps import StepQueryRefused
from .transactions import BUDGET_COLUMNS, DATASET_COLUMNS, transaction
from .writer import WriterConnection

__all__ = ["ChargeUnavailable", "Charged", "Committer", "StalePlan"]

log = logging.getLogger("privnoise.server")
_MAX_BATCH = 256
_GATHER_SECONDS = 0.002


class ChargeUnavailable(Exception):
    """The charge could not be recorded (database error); nothing was charged."""


class StalePlan(Exception):
    """The plan was made for another number of records than the dataset now holds; nothing was charged."""

    def __init__(self, records: int | None) -> None:
        super().__init__(f"the dataset now holds {records} records")
        self.records = records


@dataclass(frozen=True, slots=True)
class Charged:
    """A recorded charge: its ledger row (the first of several charged together: all in ``ledger_ids``) and the
    querier's budget on the dataset after it."""

    ledger_id: int
    after: QuerierState
    ledger_ids: tuple[int, ...] = ()


@dataclass(slots=True)
class _Request:
    plans: tuple[Plan, ...]  # one answer's plan, or the plans of a statement's aggregates (on one dataset)
    querier_id: int
    future: Future[Charged] | asyncio.Future[Charged]
    loop: asyncio.AbstractEventLoop | None = None  # the loop of an asyncio future (Committer.charge)

    @property
    def plan(self) -> Plan:
        return self.plans[0]


class Committer:
    """The group-commit thread of one server process (see the module docstring)."""

    def __init__(self, engine: Engine, config: ServerConfig) -> None:
        self.engine = engine
        self.config = config
        self.sqlite = engine.dialect.name == "sqlite"
        self._queue: deque[_Request] = deque()
        self._wake = threading.Condition()
        self._closing = False
        self._thread: threading.Thread | None = None
        self._commits = 0
        self._usual = 1.0  # moving average of the batch size
        self._checkpoints_stop = threading.Event()

    def submit(self, plan: Plan, querier_id: int) -> Future[Charged]:
        """Queue a charge; the future holds :class:`Charged`, or raises Refusal / StalePlan / ChargeUnavailable.

        The thread starts with the first charge (again after :meth:`close`)."""
        return self.submit_all((plan,), querier_id)

    def submit_all(self, plans: tuple[Plan, ...], querier_id: int) -> Future[Charged]:
        """Queue the charges of ``plans`` (one dataset), recorded together or not at all: one ledger row each, in
        order, all in one transaction, or one refusal for all (:func:`.budgets.apply_charges`)."""
        future: Future[Charged] = Future()
        self._enqueue(_Request(tuple(plans), querier_id, future))
        return future

    async def charge(self, plans: tuple[Plan, ...], querier_id: int) -> Charged:
        """:meth:`submit_all` awaited in the running event loop: the outcome, told to every answer of a
        transaction waiting in this loop by one call into the loop. Raises as the future of :meth:`submit_all`."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Charged] = loop.create_future()
        self._enqueue(_Request(tuple(plans), querier_id, future, loop))
        return await future

    def _enqueue(self, request: _Request) -> None:
        if not request.plans or len({p.spec.name for p in request.plans}) != 1:
            raise ValueError("charges recorded together are one or more plans on one dataset")
        with self._wake:
            if self._thread is None:
                self._closing = False
                self._thread = threading.Thread(target=self._run, name="privnoise-committer", daemon=True)
                self._thread.start()
                if self.sqlite:
                    self._checkpoints_stop = threading.Event()
                    threading.Thread(
                        target=self._checkpoints, name="privnoise-checkpoints", daemon=True
                    ).start()
            self._queue.append(request)
            self._wake.notify()

    def close(self) -> None:
        """Record what is queued, then stop the thread and close its connection."""
        with self._wake:
            thread, self._closing = self._thread, True
            self._wake.notify()
        if thread is not None:
            thread.join(timeout=60)

    # -- the thread -------------------------------------------------------------------------------------------
    def _checkpoints(self) -> None:
        """SQLite: copy the committed write-ahead log into the database every half second when there were
        commits (``PRAGMA wal_checkpoint(PASSIVE)``: it waits for no reader and no writer), so that no commit
        of a charge pays for a checkpoint and its fsyncs. Durability does not depend on it: a commit is on disk
        once its log frames are."""
        done = -1
        connection = None
        stop = self._checkpoints_stop
        try:
            while not stop.wait(0.5):
                commits = self._commits
                if commits == done:
                    continue
                try:
                    if connection is None:
                        connection = self.engine.raw_connection()
                    cur = connection.cursor()
                    cur.execute("PRAGMA wal_checkpoint(PASSIVE)")
                    cur.fetchall()
                    cur.close()
                    done = commits
                except Exception:  # pragma: no cover - tried again at the next tick
                    log.warning("a WAL checkpoint failed; it is tried again", exc_info=True)
                    if connection is not None:
                        connection.invalidate()
                        connection = None
        finally:
            if connection is not None:
                connection.close()

    def _run(self) -> None:
        connection = WriterConnection(self.engine)
        try:
            while True:
                with self._wake:
                    while not self._queue and not self._closing:
                        self._wake.wait()
                    if not self._queue:
                        self._thread = None
                        return
                    if len(self._queue) < self._usual / 2 and not self._closing:
                        # fewer charges wait than usually come together: the others are likely on their way
                        # (their answers just left); a moment's wait saves a whole commit
                        self._wake.wait(timeout=_GATHER_SECONDS)
                    batch = [self._queue.popleft() for _ in range(min(len(self._queue), _MAX_BATCH))]
                    self._usual = 0.8 * self._usual + 0.2 * len(batch)
                try:
                    with connection.turn():
                        outcomes = self._commit(batch, connection)
                except Exception as exc:  # the whole transaction failed: nothing of the batch was charged
                    log.exception(
                        "a charge transaction failed; its %d charge(s) were rolled back", len(batch)
                    )
                    connection.discard()
                    _tell(batch, [ChargeUnavailable(type(exc).__name__) for _ in batch])
                    continue
                self._commits += 1  # read by the checkpointer: a plain int is enough
                _tell(batch, outcomes)
        finally:
            self._checkpoints_stop.set()
            connection.close()

    def _commit(self, batch: list[_Request], connection: WriterConnection) -> list[Charged | Exception]:
        tx = transaction(connection.raw, self.engine.dialect.name)
        try:
            names = sorted({r.plan.spec.name for r in batch})
            pairs = sorted({(r.querier_id, r.plan.spec.name) for r in batch})
            dataset_rows, budget_rows = tx.lock(names, pairs)
            datasets = {
                row[0]: DatasetState.from_row(dict(zip(DATASET_COLUMNS, row, strict=True))) for row in dataset_rows
            }
            budgets = {
                (row[0], row[1]): QuerierState.from_row(dict(zip(BUDGET_COLUMNS, row, strict=True)))
                for row in budget_rows
            }
            outcomes, accepted = _decide(batch, datasets, budgets)
            touched = sorted({batch[i].plan.spec.name for i in accepted})
            pairs_touched = sorted({(batch[i].querier_id, batch[i].plan.spec.name) for i in accepted})
            ledger = [
                (
                    batch[i].querier_id,
                    p.spec.name,
                    p.ledger_query,
                    p.policy.mechanism,
                    text(p.charge.epsilon),
                    text(p.charge.delta),
                    p.ledger_information,
                )
                for i in accepted
                for p in batch[i].plans
            ]
            ids = iter(
                tx.write(
                    [(n, *datasets[n].values().values()) for n in touched],
                    [(*pair, *budgets[pair].values().values()) for pair in pairs_touched],
                    ledger,
                    db.utcnow(),
                )
            )
            for i in accepted:
                mine = tuple(next(ids) for _ in batch[i].plans)
                outcomes[i] = Charged(mine[0], outcomes[i], mine)
        except BaseException:
            try:
                tx.rollback()
            finally:
                tx.close()
            raise
        tx.close()
        return outcomes


def _decide(
    batch: list[_Request], datasets: dict[str, DatasetState], budgets: dict[tuple[int, str], QuerierState]
) -> tuple[list[Any], list[int]]:
    """Apply the charges of ``batch`` in order to the rows read (changing them); each request's outcome (its
    budget after, or its refusal) and the indices of the requests accepted."""
    outcomes: list[Any] = []
    accepted: list[int] = []
    for i, request in enumerate(batch):
        plan = request.plan
        dataset = datasets.get(plan.spec.name)
        budget = budgets.get((request.querier_id, plan.spec.name))
        if dataset is None or budget is None:
            outcomes.append(Refusal("querier"))
            continue
        if any(p.records is not None and p.records != dataset.records for p in request.plans):
            outcomes.append(StalePlan(dataset.records))
            continue
        try:
            apply_charges(dataset, budget, plan.spec, [(p.charge, p.steps) for p in request.plans])
        except (Refusal, StepQueryRefused) as refusal:
            outcomes.append(refusal)
            continue
        outcomes.append(budget.copy())
        accepted.append(i)
    return outcomes, accepted


def _settle(future: Future[Charged] | asyncio.Future[Charged], outcome: Charged | Exception) -> None:
    if future.cancelled():  # an asyncio future whose answer was abandoned (its client went away)
        return
    if isinstance(outcome, Exception):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)


def _settle_all(told: list[tuple[asyncio.Future[Charged], Charged | Exception]]) -> None:
    for future, outcome in told:
        _settle(future, outcome)


def _tell(batch: list[_Request], outcomes: list[Charged | Exception]) -> None:
    """Give each request of a transaction its outcome: a concurrent future directly, the asyncio futures of
    each event loop by one call into that loop."""
    loops: dict[asyncio.AbstractEventLoop, list[tuple[Any, Charged | Exception]]] = {}
    for request, outcome in zip(batch, outcomes, strict=True):
        if request.loop is None:
            _settle(request.future, outcome)
        else:
            loops.setdefault(request.loop, []).append((request.future, outcome))
    for loop, told in loops.items():
        try:
            loop.call_soon_threadsafe(_settle_all, told)
        except RuntimeError:  # the loop is closed: nobody waits for these answers any more
            log.warning("%d charge outcome(s) for a closed event loop were dropped", len(told))
