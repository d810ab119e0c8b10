"""The charge transaction's statements (:mod:`privnoise.server.transactions`) on SQLite and PostgreSQL.

The rows come back as read; every ledger row is written with its values whatever its text holds (quotes,
backslashes, braces, commas, newlines, non-ASCII), and the ids come back in the order of the rows; a write that
fails in any statement writes nothing (the commit is skipped) and leaves the connection usable; the locked rows
are those asked for, in the order of their keys; PostgreSQL's two steps are one round trip each.
"""

from __future__ import annotations

import datetime as dt
from fractions import Fraction as F
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from privnoise.dp.renyi_filter import RenyiState
from privnoise.server import db
from privnoise.server.config import load_config
from privnoise.server.transactions import DATASET_COLUMNS, transaction
from privnoise.server.writer import WriterConnection
from tests.server._harness import write_config

TEXTS = ["a'b", 'c"d', "e\\f", "{g,h}", "NULL", "", "ü ∑ 😀", "x\ny\tz", "a,b", "'); DROP TABLE pn_ledger; --"]


@pytest.fixture
def setup(tmp_path: Path, database_url: str) -> Any:
    path, _keys = write_config(tmp_path, database_url=database_url)
    config = load_config(path)
    engine = db.make_engine(config.database_url)
    with engine.connect() as conn:
        alice = conn.execute(select(db.queriers.c.id).where(db.queriers.c.name == "alice")).scalar_one()
    connection = WriterConnection(engine)
    yield engine, connection, alice
    connection.close()
    engine.dispose()


RENYI = RenyiState.empty().plus([(F(1), F(0))]).dump()


def _spent(engine: Any) -> tuple[Any, ...]:
    with engine.connect() as conn:
        dataset = conn.execute(select(db.datasets.c.spent_epsilon).where(db.datasets.c.name == "meters")).scalar_one()
        budgets = conn.execute(select(db.budgets.c.spent_epsilon).order_by(db.budgets.c.querier_id)).scalars().all()
        ledger = conn.execute(select(db.ledger.c.query).order_by(db.ledger.c.id)).scalars().all()
    return dataset, tuple(budgets), tuple(ledger)


def _ledger_row(querier: int, query: str) -> tuple[Any, ...]:
    return (querier, "meters", query, "laplace", "1/10", "0", "{}")


def test_rows_are_read_in_key_order_and_every_ledger_text_is_written_as_is(setup: Any) -> None:
    engine, connection, alice = setup
    tx = transaction(connection.raw, engine.dialect.name)
    datasets, budgets = tx.lock(["meters", "meters_b"], [(alice, "meters"), (alice, "meters_b")])
    assert [r[0] for r in datasets] == ["meters", "meters_b"]
    assert len(datasets[0]) == len(DATASET_COLUMNS) and datasets[0][1] == "0"
    assert [(r[0], r[1]) for r in budgets] == [(alice, "meters"), (alice, "meters_b")]
    ids = tx.write(
        [("meters", "1", "0", "{}", RENYI)],
        [(alice, "meters", "1/2", "0", "{}", RENYI)],
        [_ledger_row(alice, t) for t in TEXTS],
        dt.datetime.now(dt.UTC),
    )
    tx.close()
    assert ids == sorted(ids) and len(set(ids)) == len(TEXTS)
    with engine.connect() as conn:
        rows = conn.execute(select(db.ledger.c.id, db.ledger.c.query, db.ledger.c.status)).all()
    assert sorted(rows) == [(i, t, "charged") for i, t in zip(ids, TEXTS, strict=True)]
    dataset, budgets_after, _ = _spent(engine)
    assert dataset == "1" and "1/2" in budgets_after
    with engine.connect() as conn:  # the Rényi state is stored as written, and the untouched row keeps NULL
        stored = dict(conn.execute(select(db.datasets.c.name, db.datasets.c.renyi)).all())
        assert stored["meters"] == RENYI and stored["meters_b"] is None
        assert set(conn.execute(select(db.budgets.c.renyi)).scalars()) == {RENYI, None}


def test_a_failed_write_writes_nothing_and_the_connection_goes_on(setup: Any) -> None:
    engine, connection, alice = setup
    before = _spent(engine)
    tx = transaction(connection.raw, engine.dialect.name)
    tx.lock(["meters"], [(alice, "meters")])
    with pytest.raises(Exception):  # noqa: B017 - the driver's integrity error: no such querier
        tx.write(
            [("meters", "1", "0", "{}", None)],
            [(alice, "meters", "1/2", "0", "{}", None)],
            [_ledger_row(alice, "fine"), _ledger_row(10**6, "no such querier")],
            dt.datetime.now(dt.UTC),
        )
    tx.rollback()
    tx.close()
    assert _spent(engine) == before
    tx = transaction(connection.raw, engine.dialect.name)
    tx.lock(["meters"], [(alice, "meters")])
    assert len(tx.write([], [], [_ledger_row(alice, "after")], dt.datetime.now(dt.UTC))) == 1
    tx.close()
    assert _spent(engine)[2] == ("after",)


def test_postgres_steps_are_one_message_each(setup: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    engine, connection, alice = setup
    if engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL only")
    tx = transaction(connection.raw, engine.dialect.name)
    sent: list[Any] = []
    real = tx.conn.cursor

    class Counting:
        def __init__(self) -> None:
            self.cur = real()

        def execute(self, query: Any, *args: Any) -> Any:
            sent.append((query, args))
            return self.cur.execute(query, *args)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.cur, name)

        def __enter__(self) -> Any:
            return self

        def __exit__(self, *exc: Any) -> None:
            self.cur.close()

    monkeypatch.setattr(tx.conn, "cursor", Counting)
    tx.lock(["meters"], [(alice, "meters")])
    tx.write(
        [("meters", "1", "0", "{}", None)],
        [(alice, "meters", "1/2", "0", "{}", None)],
        [_ledger_row(alice, "one"), _ledger_row(alice, "two")],
        dt.datetime.now(dt.UTC),
    )
    assert len(sent) == 2 and all(args == () for _, args in sent)  # no parameters: one simple-protocol message
