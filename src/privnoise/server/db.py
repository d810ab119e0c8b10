"""Storage: SQLAlchemy 2 models and engine creation (SQLite by default, PostgreSQL by URL).

* SQLite runs in WAL mode with ``synchronous=FULL``; every transaction starts with ``BEGIN IMMEDIATE`` (the
  SQLAlchemy recipe for pysqlite: the driver's own BEGIN is disabled and the ``begin`` event emits ours), so
  the check-then-charge of a budget is serialised across threads and processes.
* PostgreSQL locks the dataset row and then the querier's budget row with ``SELECT ... FOR UPDATE`` (always in
  that order, so two charges never deadlock).

Tables: ``pn_queriers`` (API keys as salted scrypt hashes), ``pn_datasets`` (what the dataset's global budget
has spent, and its number of records), ``pn_budgets`` (one row per querier and dataset), ``pn_ledger``
(append-only: what was asked, what was charged, when, and ``status`` "charged", or "failed" when the answer
could not be computed after its charge, or "refused" for a query refused without a charge, with its ``reason``
and the number of refusals the row stands for, ``repeats`` (:mod:`.refusals`); never a true value), one data
table per imported dataset, and the web console's ``pn_sessions`` (server-side sessions: a hash of the cookie's token, the CSRF token, the expiry) and
``pn_answers`` (the noisy answers a querier received through the console, its history).
Rationals are stored as text "p/q" and Fisher information as JSON ``{column: "p/q"}``.

Reads of the data and of the budget views go through a second engine (:func:`make_read_engine`) that never takes
the write lock: SQLite reads in WAL mode run beside the charges.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from sqlalchemy import (
    Column,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    event,
    inspect,
)
from sqlalchemy.engine import Connection, Engine

__all__ = [
    "answers",
    "budgets",
    "columns",
    "data_table",
    "datasets",
    "ledger",
    "make_engine",
    "make_read_engine",
    "metadata",
    "queriers",
    "sessions",
    "upgrade",
    "utcnow",
]

metadata = MetaData()

queriers = Table(
    "pn_queriers",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(64), unique=True, nullable=False),
    Column("role", String(16), nullable=False),  # "admin" or "querier"
    Column("key_id", String(32), unique=True, nullable=False),
    Column("key_hash", String(200), nullable=False),
    Column("epsilon", Text, nullable=False),  # per-dataset budget of this querier, "p/q"
    Column("delta", Text, nullable=False),
    Column("fisher_floor", Float, nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column(
        "revoked_at", DateTime(timezone=True), nullable=True
    ),  # set once: the key no longer opens anything
)

datasets = Table(
    "pn_datasets",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("spent_epsilon", Text, nullable=False),
    Column("spent_delta", Text, nullable=False),
    Column("fisher_information", Text, nullable=False),  # JSON {column: "p/q"}, accumulated max_i 𝓘_ii
    Column("records", Integer, nullable=True),  # number of records at the last import (NULL: not yet counted)
    Column("renyi", Text, nullable=True),  # the Rényi filter's state (dp.renyi_filter; NULL: never used)
)

budgets = Table(
    "pn_budgets",
    metadata,
    Column("querier_id", Integer, ForeignKey("pn_queriers.id"), primary_key=True),
    Column("dataset", String(64), ForeignKey("pn_datasets.name"), primary_key=True),
    Column("epsilon", Text, nullable=False),
    Column("delta", Text, nullable=False),
    Column("fisher_floor", Float, nullable=True),
    Column("spent_epsilon", Text, nullable=False),
    Column("spent_delta", Text, nullable=False),
    Column("fisher_information", Text, nullable=False),
    Column("renyi", Text, nullable=True),  # as pn_datasets.renyi
)

ledger = Table(
    "pn_ledger",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("querier_id", Integer, ForeignKey("pn_queriers.id"), nullable=False),
    Column("dataset", String(64), nullable=False),
    Column("query", Text, nullable=False),
    Column("mechanism", Text, nullable=False),
    Column("epsilon", Text, nullable=False),
    Column("delta", Text, nullable=False),
    Column("fisher_information", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("status", String(16), nullable=False, server_default="charged"),  # "charged" | "failed" | "refused"
    Column("reason", String(200), nullable=True),  # a refusal's category and short text (refused rows only)
    Column("repeats", Integer, nullable=False, server_default="1"),  # refusals a refused row stands for
)

sessions = Table(
    "pn_sessions",
    metadata,
    Column("token_hash", String(64), primary_key=True),  # SHA-256 of the cookie's 256-bit random token
    Column("querier_id", Integer, ForeignKey("pn_queriers.id"), nullable=False, index=True),
    Column("csrf", String(64), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False),
)

answers = Table(
    "pn_answers",
    metadata,
    Column("ledger_id", Integer, ForeignKey("pn_ledger.id"), primary_key=True),
    Column("querier_id", Integer, ForeignKey("pn_queriers.id"), nullable=False, index=True),
    Column("text", Text, nullable=False),  # the query as the querier wrote or composed it
    Column("answer", Text, nullable=False),  # the JSON the querier received (noisy values only)
    Column("created_at", DateTime(timezone=True), nullable=False),
)

#: Columns added since the first schema, with their DDL type (added to older databases by :func:`upgrade`).
_ADDED = {
    ("pn_datasets", "records"): "INTEGER",
    ("pn_ledger", "status"): "VARCHAR(16) NOT NULL DEFAULT 'charged'",
    ("pn_queriers", "revoked_at"): "TIMESTAMP WITH TIME ZONE",
    ("pn_ledger", "reason"): "VARCHAR(200)",
    ("pn_ledger", "repeats"): "INTEGER NOT NULL DEFAULT 1",
    ("pn_datasets", "renyi"): "TEXT",
    ("pn_budgets", "renyi"): "TEXT",
}
#: Columns that were varchar(200) in the first schema (PostgreSQL enforces the length): widened to text.
_WIDENED = {
    "pn_queriers": ("epsilon", "delta"),
    "pn_datasets": ("spent_epsilon", "spent_delta"),
    "pn_budgets": ("epsilon", "delta", "spent_epsilon", "spent_delta"),
    "pn_ledger": ("epsilon", "delta"),
}


def upgrade(conn: Connection) -> None:
    """Bring the tables of an older database to the current schema (idempotent)."""
    inspector = inspect(conn)
    for (table, column), ddl in _ADDED.items():
        if column not in {c["name"] for c in inspector.get_columns(table)}:
            conn.exec_driver_sql(f"ALTER TABLE {table} ADD COLUMN {column} {ddl}")
    if conn.dialect.name == "postgresql":
        for table, columns in _WIDENED.items():
            types = {c["name"]: c["type"] for c in inspector.get_columns(table)}
            for column in columns:
                if isinstance(types.get(column), String) and getattr(types[column], "length", None):
                    conn.exec_driver_sql(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE text")


def utcnow() -> _dt.datetime:
    return _dt.datetime.now(_dt.UTC)


def columns(table: Table, *names: str) -> list[Column[Any]]:
    """The columns of ``table`` with these names, in this order (what a ``select`` of them returns).

    >>> [c.name for c in columns(queriers, "name", "role")]
    ['name', 'role']
    """
    return [table.c[name] for name in names]


def data_table(name: str, columns: dict[str, str], meta: MetaData | None = None) -> Table:
    """The table of an imported dataset: ``pn_row`` (record order) and the declared columns."""
    cols: list[Column[Any]] = [Column("pn_row", Integer, primary_key=True, autoincrement=False)]
    for col, kind in columns.items():
        cols.append(Column(col, Float if kind == "number" else Text, nullable=True))
    return Table(name, meta if meta is not None else MetaData(), *cols)


def _sqlite_engine(url: str, pragmas: tuple[str, ...], *, max_overflow: int) -> Engine:
    """A SQLite engine in autocommit driver mode (no implicit BEGIN) whose connections run ``pragmas``."""
    engine = create_engine(
        url,
        pool_size=8,
        max_overflow=max_overflow,
        pool_timeout=120,
        connect_args={"check_same_thread": False, "timeout": 120},
    )

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        for pragma in pragmas:
            cursor.execute(f"PRAGMA {pragma}")
        cursor.close()

    return engine


def make_engine(url: str) -> Engine:
    """An engine for ``url``; SQLite gets WAL, FULL sync, a busy timeout and ``BEGIN IMMEDIATE``."""
    if url.startswith("sqlite"):
        engine = _sqlite_engine(
            url,
            ("journal_mode=WAL", "synchronous=FULL", "busy_timeout=120000", "foreign_keys=ON"),
            max_overflow=8,
        )

        @event.listens_for(engine, "begin")
        def _begin(conn: Connection) -> None:
            conn.exec_driver_sql(
                "BEGIN IMMEDIATE"
            )  # the driver emits no BEGIN; this one takes the write lock

        return engine
    return create_engine(url, pool_size=8, max_overflow=16, pool_timeout=120, pool_pre_ping=True)


def make_read_engine(url: str) -> Engine:
    """An engine for reads only: autocommit (each statement reads one snapshot), never the write lock."""
    if url.startswith("sqlite"):
        return _sqlite_engine(url, ("busy_timeout=120000", "query_only=ON"), max_overflow=32)
    return create_engine(
        url, pool_size=8, max_overflow=32, pool_timeout=120, pool_pre_ping=True, isolation_level="AUTOCOMMIT"
    )
