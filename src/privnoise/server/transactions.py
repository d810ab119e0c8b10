"""The statements of a charge transaction (:mod:`.charging`), on SQLite and on PostgreSQL.

A transaction has two steps, whatever the database: :meth:`lock` reads (and locks) the datasets' rows and the
queriers' budget rows that the batch touches; the committer decides every charge in memory; :meth:`write` writes
the changed rows and the ledger rows and commits, returning only once the commit is on disk.

* SQLite: ``BEGIN IMMEDIATE`` (the database's single write lock), then one statement at a time; the commit is
  durable in WAL mode with ``synchronous=FULL``.
* PostgreSQL: the committer's connection is in autocommit mode and runs the transaction itself, each step as
  one message of several statements (the simple query protocol), so that each step is one round trip and wakes
  the server once: ``BEGIN`` and the two ``SELECT … FOR UPDATE`` (the datasets' rows by name, then the budget rows
  by querier and dataset: always in that order, so two committers never deadlock); then the updates, one
  ``INSERT`` of every ledger row and ``COMMIT``. The server answers the ``COMMIT`` only once the transaction is on
  disk (``synchronous_commit`` on), and an error in any statement skips the statements after it, the ``COMMIT``
  included, so nothing is written. A statement's rows are one JSON array of arrays (serialised by orjson)
  unnested in the database (``jsonb_array_elements``), written into the message as one text literal quoted by
  the driver (``psycopg.sql.Literal``: the quoting of the connection's own settings), never by hand. One literal
  per statement instead of one array per column: the driver's quoting of arrays, element by element, cost more
  than the rest of the committer's work.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

import orjson

__all__ = ["DATASET_COLUMNS", "BUDGET_COLUMNS", "PostgresTransaction", "SqliteTransaction", "transaction"]

#: Rows read or written (one tuple per row); the spent budgets :meth:`write` stores, per dataset
#: ``(name, ε, δ, information, Rényi state)`` and per querier ``(querier id, dataset, ε, δ, information, Rényi
#: state)`` (the state None when the filter was never used).
Rows = list[tuple[Any, ...]]
SpentDatasets = list[tuple[str, str, str, str, str | None]]
SpentBudgets = list[tuple[int, str, str, str, str, str | None]]

#: The columns :meth:`lock` reads, in order.
DATASET_COLUMNS = ("name", "spent_epsilon", "spent_delta", "fisher_information", "records", "renyi")
BUDGET_COLUMNS = (
    "querier_id",
    "dataset",
    "epsilon",
    "delta",
    "fisher_floor",
    "spent_epsilon",
    "spent_delta",
    "fisher_information",
    "renyi",
)
#: The ledger columns :meth:`write` fills (``created_at`` and ``status`` besides), in order.
LEDGER_COLUMNS = ("querier_id", "dataset", "query", "mechanism", "epsilon", "delta", "fisher_information")

_DATASETS = ", ".join(DATASET_COLUMNS)
_BUDGETS = ", ".join(BUDGET_COLUMNS)
_LEDGER = ", ".join(LEDGER_COLUMNS)
_SPENT = "spent_epsilon = ?, spent_delta = ?, fisher_information = ?, renyi = ?"

# PostgreSQL: each statement of one text, its rows one JSON array of arrays (serialised by orjson, quoted by the
# driver as one literal) and unnested in the database: the i-th value of row v is v.r->>i.
_PG_LOCK_DATASETS = (
    f"SELECT {_DATASETS} FROM pn_datasets WHERE name IN (SELECT jsonb_array_elements_text({{}}::jsonb)) "
    "ORDER BY name FOR UPDATE"
)
_PG_LOCK_BUDGETS = (
    f"SELECT {_BUDGETS} FROM pn_budgets WHERE (querier_id, dataset) IN "
    "(SELECT (v.r->>0)::integer, v.r->>1 FROM jsonb_array_elements({}::jsonb) AS v(r)) "
    "ORDER BY querier_id, dataset FOR UPDATE"
)
_PG_SPENT = "spent_epsilon = v.r->>{0}, spent_delta = v.r->>{1}, fisher_information = v.r->>{2}, renyi = v.r->>{3}"
_PG_UPDATE_DATASETS = (
    f"UPDATE pn_datasets AS t SET {_PG_SPENT.format(1, 2, 3, 4)} "
    "FROM jsonb_array_elements({}::jsonb) AS v(r) WHERE t.name = v.r->>0"
)
_PG_UPDATE_BUDGETS = (
    f"UPDATE pn_budgets AS t SET {_PG_SPENT.format(2, 3, 4, 5)} "
    "FROM jsonb_array_elements({}::jsonb) AS v(r) WHERE t.querier_id = (v.r->>0)::integer AND t.dataset = v.r->>1"
)
_PG_INSERT_LEDGER = (
    f"INSERT INTO pn_ledger ({_LEDGER}, created_at, status) "
    "SELECT (v.r->>0)::integer, v.r->>1, v.r->>2, v.r->>3, v.r->>4, v.r->>5, v.r->>6, {}::timestamptz, 'charged' "
    "FROM jsonb_array_elements({}::jsonb) WITH ORDINALITY AS v(r, n) ORDER BY n RETURNING id"
)


class SqliteTransaction:
    """A charge transaction on SQLite: ``BEGIN IMMEDIATE``, one statement at a time, ``COMMIT``.

    Parameters
    ----------
    raw : Any
        The committer's DBAPI connection (the driver emits no ``BEGIN`` of its own).
    """

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self.cur = raw.cursor()

    def lock(self, names: list[str], pairs: list[tuple[int, str]]) -> tuple[Rows, Rows]:
        """Take the write lock; the rows of the datasets ``names`` and of the budgets ``pairs`` (querier id,
        dataset), each list in the order of its key."""
        cur = self.cur
        cur.execute("BEGIN IMMEDIATE")
        cur.execute(
            f"SELECT {_DATASETS} FROM pn_datasets WHERE name IN ({', '.join('?' * len(names))}) ORDER BY name",
            names,
        )
        datasets = cur.fetchall()
        cur.execute(
            f"SELECT {_BUDGETS} FROM pn_budgets WHERE (querier_id, dataset) IN "
            f"(VALUES {', '.join(['(?, ?)'] * len(pairs))}) ORDER BY querier_id, dataset",
            [v for pair in pairs for v in pair],
        )
        return datasets, cur.fetchall()

    def write(self, datasets: SpentDatasets, budgets: SpentBudgets, ledger: Rows, created: _dt.datetime) -> list[int]:
        """Write the spent budgets (``(name, ε, δ, information, Rényi state)`` and ``(querier id, dataset, ε, δ,
        information, Rényi state)``), insert the ledger rows (:data:`LEDGER_COLUMNS`) as "charged" at ``created`` and commit;
        the ledger rows' ids in order."""
        cur = self.cur
        if datasets:
            cur.executemany(f"UPDATE pn_datasets SET {_SPENT} WHERE name = ?", [(*v, n) for n, *v in datasets])
        if budgets:
            cur.executemany(
                f"UPDATE pn_budgets SET {_SPENT} WHERE querier_id = ? AND dataset = ?",
                [(*v, q, d) for q, d, *v in budgets],
            )
        when = created.strftime("%Y-%m-%d %H:%M:%S.%f")  # SQLAlchemy's format of a SQLite datetime
        ids = []
        for row in ledger:
            cur.execute(
                f"INSERT INTO pn_ledger ({_LEDGER}, created_at, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'charged') "
                "RETURNING id",
                (*row, when),
            )
            ids.append(int(cur.fetchone()[0]))
        self.raw.commit()
        return ids

    def rollback(self) -> None:
        self.raw.rollback()

    def close(self) -> None:
        self.cur.close()


class PostgresTransaction:
    """A charge transaction on PostgreSQL in two round trips (see the module docstring).

    Parameters
    ----------
    raw : Any
        The committer's DBAPI connection: a psycopg connection in autocommit mode (:mod:`.writer`).
    """

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self.conn = getattr(raw, "dbapi_connection", raw)  # the psycopg connection under SQLAlchemy's wrapper

    def _send(self, *statements: tuple[str, tuple[Any, ...]]) -> Any:
        """Send ``statements`` (each a text and the values of its ``{}``) as one message; a cursor on their
        results, the first one current. Raises if a statement failed: the ones after it were not run."""
        from psycopg import sql

        text = sql.SQL("; ").join(sql.SQL(t).format(*(sql.Literal(v) for v in values)) for t, values in statements)
        cur = self.conn.cursor()
        try:
            cur.execute(text)  # no parameters: the simple query protocol, which runs several statements
        except BaseException:
            cur.close()
            raise
        return cur

    def lock(self, names: list[str], pairs: list[tuple[int, str]]) -> tuple[Rows, Rows]:
        """``BEGIN`` and both ``SELECT … FOR UPDATE``, one round trip; the rows as :meth:`SqliteTransaction.lock`."""
        cur = self._send(
            ("BEGIN", ()),
            (_PG_LOCK_DATASETS, (_json(names),)),
            (_PG_LOCK_BUDGETS, (_json(pairs),)),
        )
        with cur:
            cur.nextset()
            datasets = cur.fetchall()
            cur.nextset()
            return datasets, cur.fetchall()

    def write(self, datasets: SpentDatasets, budgets: SpentBudgets, ledger: Rows, created: _dt.datetime) -> list[int]:
        """The updates, the ledger rows and ``COMMIT``, one round trip; as :meth:`SqliteTransaction.write`."""
        statements: list[tuple[str, tuple[Any, ...]]] = []
        if datasets:
            statements.append((_PG_UPDATE_DATASETS, (_json(datasets),)))
        if budgets:
            statements.append((_PG_UPDATE_BUDGETS, (_json(budgets),)))
        if ledger:
            statements.append((_PG_INSERT_LEDGER, (created, _json(ledger))))
        with self._send(*statements, ("COMMIT", ())) as cur:
            if not ledger:
                return []
            for _ in range(len(statements) - 1):
                cur.nextset()
            # one sequence numbers the rows in the order they were inserted (ORDER BY n): ascending ids
            ids = sorted(int(row[0]) for row in cur.fetchall())
        if len(ids) != len(ledger):
            raise RuntimeError(f"{len(ids)} ledger ids for {len(ledger)} rows")
        return ids

    def rollback(self) -> None:
        self.conn.rollback()  # a no-op unless the transaction is still open (or failed)

    def close(self) -> None:
        pass


def _json(rows: Any) -> str:
    """``rows`` (tuples of text, integers and None, or texts) as one JSON array: a statement's rows in one
    literal (the driver quotes it as it quotes any text)."""
    return orjson.dumps(rows).decode()


def transaction(raw: Any, dialect: str) -> SqliteTransaction | PostgresTransaction:
    """The charge transaction of the committer's connection ``raw`` on a database of ``dialect``."""
    return SqliteTransaction(raw) if dialect == "sqlite" else PostgresTransaction(raw)
