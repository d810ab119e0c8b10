"""The read engine's DBAPI connections, taken and given back without the pool's bookkeeping (the release's hot
path, :mod:`.service`)."""

from __future__ import annotations

import contextlib
import queue
from collections.abc import Iterator
from typing import Any

from sqlalchemy.engine import Engine

__all__ = ["ReadConnections"]


class ReadConnections:
    """DBAPI connections of the read engine, taken and given back without the pool's bookkeeping."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._idle: queue.SimpleQueue[Any] = queue.SimpleQueue()

    @contextlib.contextmanager
    def cursor(self) -> Iterator[Any]:
        try:
            connection = self._idle.get_nowait()
        except queue.Empty:
            fairy = self.engine.raw_connection()  # made by the engine: its connect events have run
            fairy.detach()
            connection = fairy.dbapi_connection
        cur = connection.cursor()
        try:
            yield cur
        except BaseException:
            cur.close()
            connection.close()  # possibly broken: not given back
            raise
        cur.close()
        self._idle.put(connection)

    def close(self) -> None:
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return
