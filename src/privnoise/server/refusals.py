"""Refused queries in the ledger (SECURITY.md, requirement 22): a row without a charge, written off the event loop.

A query refused for its budget, the owner's policy, its syntax or the querier's rate leaves a ``pn_ledger`` row
with ``status = "refused"``, no charge (ε = δ = 0, no information), the querier, the time, the query text (at
most :data:`MAX_QUERY_CHARS` characters) and the reason (its category and a short text, at most
:data:`MAX_REASON_CHARS` characters, never a data value).

So that refusals cannot be turned into a flood of writes, :class:`RefusalLog` writes at most one row per querier
per :data:`INTERVAL` seconds: the refusals in between are counted and the next row written for that querier (the
next refusal after the interval, or a timer at the interval's end if there is none) carries them in ``repeats``.
Rows are written in a worker thread (at most one at a time per event loop) and never awaited by the answer; a
row that cannot be written is logged and the refusal is sent as it is.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from anyio import CapacityLimiter, to_thread
from sqlalchemy import insert
from sqlalchemy.engine import Engine

from . import db

__all__ = ["INTERVAL", "MAX_QUERY_CHARS", "MAX_REASON_CHARS", "REASONS", "RefusalLog"]

log = logging.getLogger("privnoise.server")

#: Seconds between two refusal rows of one querier (per server process).
INTERVAL = 1.0
#: The longest query text a refusal row keeps.
MAX_QUERY_CHARS = 1000
#: The longest reason a refusal row keeps (the column is ``VARCHAR(200)``).
MAX_REASON_CHARS = 200
#: The categories of a refusal.
REASONS = ("budget", "policy", "syntax", "rate")


@dataclass(frozen=True)
class Refused:
    """One refusal: what the ledger row says of it."""

    querier_id: int
    dataset: str
    query: str
    reason: str


def reason_of(category: str, text: str) -> str:
    """``"category: text"`` on one line, at most :data:`MAX_REASON_CHARS` characters."""
    assert category in REASONS, category
    line = " ".join(f"{category}: {text}".split())
    return line if len(line) <= MAX_REASON_CHARS else line[: MAX_REASON_CHARS - 1] + "…"


class RefusalLog:
    """Refusal rows of one server process, at most one per querier per ``interval`` seconds."""

    def __init__(
        self, engine: Engine, *, interval: float = INTERVAL, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.engine = engine
        self.interval = interval
        self._clock = clock
        self._lock = threading.Lock()
        self._last: dict[int, float] = {}  # querier id -> when its last row was scheduled
        self._pending: dict[int, tuple[Refused, int]] = {}  # querier id -> its latest unwritten refusal, count
        self._timers: dict[int, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._limiters: dict[int, CapacityLimiter] = {}

    def record(self, refused: Refused) -> None:
        """Note a refusal (in the event loop; returns at once): write its row now, or count it into the next."""
        loop = asyncio.get_running_loop()
        now = self._clock()
        with self._lock:
            _, count = self._pending.pop(refused.querier_id, (refused, 0))
            last = self._last.get(refused.querier_id)
            if last is not None and now - last < self.interval:
                self._pending[refused.querier_id] = (refused, count + 1)
                if refused.querier_id not in self._timers:
                    self._timers[refused.querier_id] = loop.call_later(
                        last + self.interval - now, self._flush, refused.querier_id
                    )
                return
            self._last[refused.querier_id] = now
            timer = self._timers.pop(refused.querier_id, None)
        if timer is not None:
            timer.cancel()
        self._spawn(loop, refused, count + 1)

    def _flush(self, querier_id: int) -> None:
        """At the end of a querier's interval: write the refusals counted in it, if any."""
        with self._lock:
            self._timers.pop(querier_id, None)
            pending = self._pending.pop(querier_id, None)
            if pending is None:
                return
            self._last[querier_id] = self._clock()
        self._spawn(asyncio.get_running_loop(), *pending)

    def _spawn(self, loop: asyncio.AbstractEventLoop, refused: Refused, repeats: int) -> None:
        task = loop.create_task(self._write(refused, repeats))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _limiter(self, loop: asyncio.AbstractEventLoop) -> CapacityLimiter:
        limiter = self._limiters.get(id(loop))
        if limiter is None:
            self._limiters.clear()
            limiter = self._limiters[id(loop)] = CapacityLimiter(1)
        return limiter

    async def _write(self, refused: Refused, repeats: int) -> None:
        try:
            await to_thread.run_sync(self.write, refused, repeats, limiter=self._limiter(asyncio.get_running_loop()))
        except Exception:  # a refusal row is never worth a failed answer (write logs its own failures)
            log.exception("could not write a refusal row")

    def write(self, refused: Refused, repeats: int) -> None:
        """Insert one refusal row (in a worker thread); a failure is logged, never raised."""
        try:
            with self.engine.begin() as conn:
                conn.execute(
                    insert(db.ledger).values(
                        querier_id=refused.querier_id,
                        dataset=refused.dataset[:64],
                        query=json.dumps(refused.query[:MAX_QUERY_CHARS], ensure_ascii=False),
                        mechanism="",
                        epsilon="0",
                        delta="0",
                        fisher_information="{}",
                        created_at=db.utcnow(),
                        status="refused",
                        reason=refused.reason[:MAX_REASON_CHARS],
                        repeats=repeats,
                    )
                )
        except Exception:
            log.exception("could not write the refusal row of querier %d", refused.querier_id)

    def _take_pending(self) -> list[tuple[Refused, int]]:
        """The counted refusals not yet written, taken out with their timers cancelled."""
        with self._lock:
            pending = list(self._pending.values())
            self._pending.clear()
            timers = list(self._timers.values())
            self._timers.clear()
        for timer in timers:
            timer.cancel()
        return pending

    async def drain(self) -> None:
        """Write every counted refusal now and wait for the rows being written (tests, shutdown)."""
        pending = self._take_pending()
        loop = asyncio.get_running_loop()
        for refused, count in pending:
            self._spawn(loop, refused, count)
        tasks = [t for t in self._tasks if t.get_loop() is loop]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    def close(self) -> None:
        """Write every counted refusal now, in this thread (at shutdown, when no event loop will run a timer)."""
        for refused, count in self._take_pending():
            self.write(refused, count)
