"""The file of the command line's privacy ledger (:mod:`.ledger`): where it is, its SQLite format and its
transactions.

Location
    ``--ledger PATH``, else the environment variable ``PRIVNOISE_LEDGER``, else the platform's data directory:
    ``$XDG_DATA_HOME/privnoise/ledger.sqlite`` (``~/.local/share/privnoise/ledger.sqlite`` when ``XDG_DATA_HOME`` is
    unset) on Linux and other Unix systems, ``~/Library/Application Support/privnoise/ledger.sqlite`` on macOS and
    ``%LOCALAPPDATA%\\privnoise\\ledger.sqlite`` on Windows.
Durability
    Every write is one ``BEGIN IMMEDIATE`` transaction (one writer at a time; others wait up to a minute) with
    ``synchronous = FULL``: a charge is on disk before the caller prints anything, and two processes charging at once
    both count. Amounts are stored as exact rational strings (``"1/10"``).
"""

from __future__ import annotations

import os
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Self

from .errors import CliInputError

__all__ = ["ENVIRONMENT", "SCHEMA", "LedgerFile", "default_path"]

#: The environment variable that sets the ledger's location (``--ledger`` overrides it).
ENVIRONMENT = "PRIVNOISE_LEDGER"

SCHEMA = 1
_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS datasets (
    name TEXT PRIMARY KEY,
    identity TEXT NOT NULL,
    created TEXT NOT NULL,
    total_epsilon TEXT NOT NULL,
    total_delta TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    dataset TEXT NOT NULL REFERENCES datasets(name),
    time TEXT NOT NULL,
    kind TEXT NOT NULL,
    command TEXT NOT NULL,
    query TEXT NOT NULL,
    epsilon TEXT,
    delta TEXT,
    information TEXT,
    sha256 TEXT,
    details TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS entries_by_dataset ON entries (dataset, id);
"""
_MAGIC = b"SQLite format 3\x00"


def default_path() -> Path:
    """Where the ledger is when neither ``--ledger`` nor ``PRIVNOISE_LEDGER`` says: the platform's data directory."""
    if sys.platform == "win32":  # pragma: no cover - platform branch
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":  # pragma: no cover - platform branch
        base = Path.home() / "Library" / "Application Support"
    else:
        xdg = os.environ.get("XDG_DATA_HOME", "")
        base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".local" / "share"
    return base / "privnoise" / "ledger.sqlite"


class LedgerFile:
    """The ledger file at ``path``; ``option`` names where the path came from, for messages.

    Parameters
    ----------
    path : pathlib.Path
        The SQLite file (created with its directory at the first write; readable by its owner only).
    option : str
        ``"--ledger"``, ``"PRIVNOISE_LEDGER"`` or ``"the default ledger"``.
    """

    def __init__(self, path: Path, option: str) -> None:
        self.path = path
        self.option = option

    @classmethod
    def locate(cls, option: Path | None) -> Self:
        """The ledger named by ``--ledger`` (``option``), else by ``PRIVNOISE_LEDGER``, else at :func:`default_path`."""
        if option is not None:
            return cls(Path(option).expanduser(), "--ledger")
        env = os.environ.get(ENVIRONMENT, "")
        if env:
            return cls(Path(env).expanduser(), ENVIRONMENT)
        return cls(default_path(), "the default ledger")

    # -- the file ----------------------------------------------------------------------------------------------
    def _fail(self, reason: object) -> CliInputError:
        return CliInputError(f"{self.option}: cannot use the ledger {self.path}: {reason}.")

    @contextmanager
    def _connection(self, *, write: bool) -> Iterator[sqlite3.Connection]:
        """One transaction on the ledger (``BEGIN IMMEDIATE`` to write); sqlite errors name the ledger's option."""
        created = False
        if write:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            except OSError as exc:
                raise self._fail(exc.strerror or exc) from None
            created = not self.path.exists()
        self._check_header()
        try:
            conn = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
        except sqlite3.Error as exc:
            raise self._fail(exc) from None
        try:
            if created:
                try:
                    os.chmod(self.path, 0o600)
                except OSError:  # pragma: no cover - file systems without modes
                    pass
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            self._check_schema(conn, write=write)
            yield conn
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise self._fail(exc) from None
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        finally:
            conn.close()

    def _check_header(self) -> None:
        """Refuse a file that is not SQLite before SQLite sees it (it would take a short file for an empty one)."""
        try:
            with self.path.open("rb") as handle:
                header = handle.read(16)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise self._fail(exc.strerror or exc) from None
        if header and header != _MAGIC:
            raise self._fail("not a database (the file is not SQLite, so not a privnoise ledger)")

    def _check_schema(self, conn: sqlite3.Connection, *, write: bool) -> None:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables and write:
            # one statement at a time: executescript would commit the open transaction first
            for statement in _TABLES.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute("INSERT INTO meta (key, value) VALUES ('schema', ?)", (str(SCHEMA),))
            return
        if not tables:
            return
        row = (
            conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if "meta" in tables
            else None
        )
        if row is None or not {"datasets", "entries"} <= tables:
            raise self._fail("an SQLite file that is not a privnoise ledger")
        if row[0] != str(SCHEMA):
            raise self._fail(f"ledger format {row[0]}, this privnoise reads format {SCHEMA}")
