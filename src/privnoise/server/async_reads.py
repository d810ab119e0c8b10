"""The release's read on PostgreSQL from the event loop: psycopg's asynchronous connections, so that an answer over a
small table (:data:`.planner.INLINE_RECORDS`) is read and released without a worker thread, as on SQLite
(:mod:`.answers`).

A worker thread per answer costs more than the read itself on PostgreSQL: the thread waits on the database's round
trip, then takes the interpreter back from the threads that are computing. On the loop, the round trip is an idle
wait and the release that follows runs at once. The statement, its parameters and the connection's settings are
those of :mod:`.readers` (autocommit: each statement reads one snapshot); at most :data:`CONNECTIONS` statements run
at a time, the others wait for a connection on the loop.
"""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy.engine import URL

__all__ = ["CONNECTIONS", "AsyncReads", "libpq_url"]

#: Connections (and statements running at once) of the loop's reads.
CONNECTIONS = 8


def libpq_url(url: URL) -> str:
    """The connection string psycopg reads for a SQLAlchemy ``postgresql+psycopg`` URL (its driver name dropped).

    Examples
    --------
    >>> from sqlalchemy.engine import make_url
    >>> libpq_url(make_url("postgresql+psycopg://pn:secret@127.0.0.1:5432/meters"))
    'postgresql://pn:secret@127.0.0.1:5432/meters'
    """
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


class AsyncReads:
    """At most ``connections`` psycopg ``AsyncConnection`` objects in autocommit mode, opened when first needed
    and kept for the next read; a connection whose statement failed is closed, not reused.

    Parameters
    ----------
    url : str
        The database's connection string (:func:`libpq_url`).
    connections : int
        How many statements may run at once.
    """

    def __init__(self, url: str, connections: int = CONNECTIONS) -> None:
        if connections < 1:
            raise ValueError(f"`connections` must be ≥ 1; got {connections}.")
        import psycopg  # the ``postgres`` extra: only a server on PostgreSQL makes loop reads

        self.url = url
        self.connections = connections
        self._connect = psycopg.AsyncConnection.connect
        self._idle: list[Any] = []
        self._turns: asyncio.Semaphore | None = None  # made on the loop that first reads

    async def rows(self, statement: str, parameters: Any, *, every_row: bool) -> list[Any]:
        """The rows of ``statement``: every row, or only the first (an aggregate's one row)."""
        if self._turns is None:
            self._turns = asyncio.Semaphore(self.connections)
        async with self._turns:
            connection = self._idle.pop() if self._idle else await self._connect(self.url, autocommit=True)
            try:
                async with connection.cursor() as cursor:
                    await cursor.execute(statement, parameters)
                    rows: list[Any] = await cursor.fetchall() if every_row else [await cursor.fetchone()]
            except BaseException:
                await connection.close()  # possibly broken: not given back
                raise
            self._idle.append(connection)
            return rows

    async def close(self) -> None:
        """Close the idle connections (at shutdown, on the loop that opened them)."""
        while self._idle:
            await self._idle.pop().close()
