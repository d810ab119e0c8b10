"""SECURITY.md requirement 8 under load: no answer leaves before its charge is on disk.

* A burst of 60 concurrent clients, then ``kill -9`` of the server (all its worker processes) while requests
  are in flight — on PostgreSQL (fsync on) followed by an immediate stop of PostgreSQL itself (no shutdown
  checkpoint: only what reached the WAL on disk survives) and crash recovery. Every answered query's charge
  must be in the database, the budgets must equal the sum of the ledger, and a restart must not reset them.
* Two server processes on one database, 50 clients split between them: the querier's and the dataset's budgets
  hold exactly.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi")

from tests.server._harness import running_server, write_config  # noqa: E402

SUM = {"query": "sum(kwh) from meters"}  # Laplace, ε = 1/10
COUNT = {"query": "count() from meters"}  # Laplace, ε = 1/20


@contextlib.contextmanager
def _database(kind: str) -> Iterator[tuple[str, Any]]:
    """("sqlite", None) or (the URL of a dedicated PostgreSQL cluster, the cluster)."""
    if kind == "sqlite":
        yield "sqlite", None
        return
    from tests.server._postgres import throwaway_cluster

    with throwaway_cluster() as cluster:
        yield cluster.url, cluster


def _ledger_and_budget(config_path: Path, querier: str) -> tuple[dict[int, Fraction], Fraction, Fraction]:
    """(ledger id → ε of the querier's rows, its stored spent ε, the dataset's stored spent ε), read directly."""
    from sqlalchemy import select

    from privnoise.server import db
    from privnoise.server.config import load_config

    engine = db.make_engine(load_config(config_path).database_url)
    try:
        with engine.connect() as conn:
            qid = conn.execute(select(db.queriers.c.id).where(db.queriers.c.name == querier)).scalar_one()
            rows = conn.execute(
                select(db.ledger.c.id, db.ledger.c.epsilon).where(db.ledger.c.querier_id == qid)
            ).all()
            spent = conn.execute(
                select(db.budgets.c.spent_epsilon).where(
                    db.budgets.c.querier_id == qid, db.budgets.c.dataset == "meters"
                )
            ).scalar_one()
            dataset = conn.execute(
                select(db.datasets.c.spent_epsilon).where(db.datasets.c.name == "meters")
            ).scalar_one()
    finally:
        engine.dispose()
    return {int(i): Fraction(e) for i, e in rows}, Fraction(spent), Fraction(dataset)


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_kill9_during_a_burst_loses_no_answered_charge(kind: str, tmp_path: Path) -> None:
    with _database(kind) as (url, cluster):
        path, keys = write_config(tmp_path, database_url=url, global_epsilon=10_000.0, server="workers = 2")
        answered: dict[int, Fraction] = {}
        lock = threading.Condition()
        with running_server(path) as server:
            with server.client(keys["admin"]) as admin:
                r = admin.post("/v1/admin/queriers", json={"name": "burst", "epsilon": 5000})
                key = r.json()["key"]

            def client() -> None:
                with httpx.Client(
                    base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=60
                ) as c:
                    while True:
                        try:
                            r = c.post("/v1/queries", json=SUM)
                        except httpx.HTTPError:
                            return  # the server is gone
                        assert r.status_code == 200, r.text
                        with lock:
                            answered[r.json()["ledger_id"]] = Fraction(r.json()["charged"]["epsilon"])
                            lock.notify_all()

            threads = [threading.Thread(target=client) for _ in range(60)]
            for t in threads:
                t.start()
            with lock:
                assert lock.wait_for(lambda: len(answered) >= 200, timeout=300)
            server.kill9()  # 60 clients in flight
            for t in threads:
                t.join()
        if cluster is not None:
            cluster.crash()  # and PostgreSQL too: only what reached its WAL on disk is left
            cluster.start()
        ledger, spent, dataset = _ledger_and_budget(path, "burst")
        lost = set(answered) - set(ledger)
        assert not lost, f"{len(lost)} answered charges are not in the ledger"
        assert spent == sum(ledger.values()) == dataset  # the budgets are the ledger, exactly
        assert spent >= sum(answered.values())
        with running_server(path) as server, server.client(key) as c:
            r = c.get("/v1/budget")
            assert r.status_code == 200, (r.status_code, r.text)
            assert Fraction(r.json()["datasets"]["meters"]["epsilon"]["spent"]) == spent


def test_two_server_processes_on_one_database_keep_every_budget(database_url: str, tmp_path: Path) -> None:
    path, keys = write_config(tmp_path, database_url=database_url, global_epsilon=1.5)
    with running_server(path) as one, running_server(path) as two:
        codes: dict[str, list[int]] = {"alice": [], "bob": []}
        start = threading.Barrier(50)

        def worker(i: int) -> None:
            name = ("alice", "bob")[i % 2]
            server = (one, two)[(i // 2) % 2]
            with server.client(keys[name]) as c:
                start.wait()
                for _ in range(2):
                    code = c.post("/v1/queries", json=COUNT).status_code
                    codes[name].append(code)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(50)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert set(codes["alice"] + codes["bob"]) <= {200, 429}
        ok = codes["alice"].count(200) + codes["bob"].count(200)
        assert ok == 30  # the dataset's 1.5 / (1/20), although alice and bob hold 2 together
        assert max(codes["alice"].count(200), codes["bob"].count(200)) <= 20  # each querier's 1 / (1/20)
        with one.client(keys["admin"]) as admin:
            assert admin.get("/v1/admin/datasets").json()["datasets"]["meters"]["epsilon"]["spent"] == "3/2"
