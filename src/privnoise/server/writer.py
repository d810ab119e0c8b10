"""The committer's own database connection (:mod:`.charging`): reopened after a failure, and on SQLite taking its
turn among the server processes through a file lock before it writes; on PostgreSQL in autocommit mode, since
the charge transaction sends its own ``BEGIN`` and ``COMMIT`` (:mod:`.transactions`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from sqlalchemy.engine import Engine

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: SQLite's busy handler orders the writers alone
    fcntl = None  # type: ignore[assignment]

__all__ = ["WriterConnection"]


class WriterConnection:
    """The committer thread's own database connection (reopened after a failure).

    On SQLite, the committers of several server processes take turns through an exclusive ``flock`` on a file
    next to the database before ``BEGIN IMMEDIATE``: a process waiting for it wakes as soon as it is released,
    instead of polling the database's lock with SQLite's sleeping busy handler.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._raw: Any = None
        self._lock_file: Any = None
        database = engine.url.database if engine.dialect.name == "sqlite" else None
        if database and database != ":memory:" and fcntl is not None:
            self._lock_file = open(f"{database}-charges.lock", "a+b")  # noqa: SIM115 - held for the thread's life

    @contextlib.contextmanager
    def turn(self) -> Iterator[None]:
        """This process's turn to write (a no-op on PostgreSQL, whose row locks order the writers)."""
        if self._lock_file is None:
            yield
            return
        fcntl.flock(self._lock_file.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(self._lock_file.fileno(), fcntl.LOCK_UN)

    @property
    def raw(self) -> Any:
        if self._raw is None:
            self._raw = self.engine.raw_connection()
            if self.engine.dialect.name == "sqlite":  # the checkpoints run in the checkpointer thread
                cur = self._raw.cursor()
                cur.execute("PRAGMA wal_autocheckpoint=0")
                cur.close()
            else:
                # the transaction sends its own BEGIN and COMMIT in pipeline mode (:mod:`.transactions`); the
                # connection is the thread's alone and never goes back to the pool in autocommit mode
                self._raw.detach()
                self._raw.dbapi_connection.autocommit = True
        return self._raw

    def cursor(self) -> Any:
        return self.raw.cursor()

    def discard(self) -> None:
        if self._raw is not None:
            try:
                self._raw.invalidate()
            except Exception:  # pragma: no cover - the connection is gone either way
                pass
            self._raw = None

    def close(self) -> None:
        if self._lock_file is not None:
            self._lock_file.close()
            self._lock_file = None
        if self._raw is not None:
            try:
                self._raw.close()
            finally:
                self._raw = None
