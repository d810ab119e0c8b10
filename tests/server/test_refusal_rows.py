"""Refused queries are uncharged ledger rows (SECURITY.md, requirement 22), written at most once per querier a second.

Each refusal kind — budget (at the charge), policy (at planning, e.g. a filter on a floored column), syntax
(before planning) and rate (the per-querier planning slots, and a querier known to be out of budget) — leaves
one ``status = "refused"`` row with ε = δ = 0, its reason and ``repeats``; the budgets do not move; bursts
coalesce; the admin endpoint filters on ``outcome``; the console's ledger page and CSV export show the rows; an
existing database without the new columns is upgraded. Runs in process on SQLite and PostgreSQL.
"""

from __future__ import annotations

import asyncio
import csv
import io
import logging
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient  # noqa: E402
from sqlalchemy import create_engine, select, text  # noqa: E402

from privnoise.server import db, store  # noqa: E402
from privnoise.server.app import create_app  # noqa: E402
from privnoise.server.config import load_config  # noqa: E402
from privnoise.server.refusals import MAX_QUERY_CHARS, RefusalLog, Refused  # noqa: E402
from tests.server._harness import write_config  # noqa: E402


class Served:
    def __init__(self, client: TestClient, app: Any, keys: dict[str, str], path: Path) -> None:
        self.client, self.app, self.keys, self.path = client, app, keys, path

    def headers(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.keys[who]}"}

    def ask(self, who: str, body: dict[str, Any]) -> Any:
        return self.client.post("/v1/queries", json=body, headers=self.headers(who))

    def drain(self) -> None:
        """Wait for the refusal rows being written, and write the counted ones."""
        self.client.portal.call(self.app.state.service.refusals.drain)

    def ledger(self, **params: Any) -> list[dict[str, Any]]:
        self.drain()
        params = {"limit": 1000, **params}
        response = self.client.get("/v1/admin/ledger", params=params, headers=self.headers("admin"))
        assert response.status_code == 200, response.text
        return list(response.json()["ledger"])

    def budgets(self) -> tuple[Any, ...]:
        return (
            self.client.get("/v1/budget", headers=self.headers("alice")).json(),
            self.client.get("/v1/admin/datasets", headers=self.headers("admin")).json(),
        )

    def querier_id(self, name: str) -> int:
        with self.app.state.service.reader.connect() as conn:
            return int(conn.execute(select(db.queriers.c.id).where(db.queriers.c.name == name)).scalar_one())


@pytest.fixture
def served(tmp_path: Path, database_url: str) -> Iterator[Served]:
    path, keys = write_config(tmp_path, database_url=database_url)
    app = create_app(load_config(path))
    with TestClient(app) as client:
        yield Served(client, app, keys, path)


def _spend_to_budget_refusal(served: Served) -> Any:
    """Three variances (0.3 each) of alice's ε = 1 on meters, then a fourth: refused at the charge."""
    for _ in range(3):
        assert served.ask("alice", {"query": "variance(kwh) from meters"}).status_code == 200
    before = served.budgets()
    refused = served.ask("alice", {"query": "variance(kwh) from meters"})
    assert served.budgets() == before
    return refused


def test_each_refusal_kind_leaves_one_uncharged_row_with_its_reason(served: Served) -> None:
    kinds: list[tuple[str, int, str]] = []
    # syntax: before planning
    before = served.budgets()
    r = served.ask("alice", {"query": "count( from meters"})
    kinds.append(("syntax", r.status_code, "count( from meters"))
    time.sleep(1.1)  # one row a second per querier: the next refusal gets a row of its own
    # policy: at planning (a filter on the floored column kwh)
    r = served.ask("alice", {"query": "count() from meters where kwh > 3"})
    kinds.append(("policy", r.status_code, "count() from meters where kwh > 3"))
    time.sleep(1.1)
    # rate: the querier's planning slots are all taken
    slots, qid = served.app.state.service.slots, served.querier_id("alice")
    assert slots.take(qid) and slots.take(qid)
    try:
        r = served.ask("alice", {"query": "sum(kwh) from meters"})
    finally:
        slots.give(qid)
        slots.give(qid)
    assert r.headers.get("retry-after") == "1"
    kinds.append(("rate", r.status_code, "sum(kwh) from meters"))
    assert served.budgets() == before  # nothing charged by any of them
    time.sleep(1.1)
    # budget: at the charge
    r = _spend_to_budget_refusal(served)
    kinds.append(("budget", r.status_code, "variance(kwh) from meters"))

    assert [(k, s) for k, s, _ in kinds] == [("syntax", 422), ("policy", 422), ("rate", 429), ("budget", 429)]
    refused = sorted(served.ledger(outcome="refused"), key=lambda row: row["id"])
    assert [row["reason"].split(":")[0] for row in refused] == [k for k, _, _ in kinds]
    for row, (_kind, _status, query) in zip(refused, kinds, strict=True):
        assert row["status"] == "refused" and row["querier"] == "alice" and row["repeats"] == 1
        assert (row["epsilon"], row["delta"], row["fisher_information"], row["mechanism"]) == ("0", "0", {}, "")
        assert row["query"] == query
        assert len(row["reason"]) <= 200 and "\n" not in row["reason"]
    assert refused[0]["reason"].startswith("syntax: unexpected")
    assert "kwh" in refused[1]["reason"] and refused[1]["dataset"] == "meters"
    assert refused[2]["reason"] == "rate: too many queries of this querier are being planned"
    assert refused[3]["reason"] == "budget: budget exceeded" and refused[3]["dataset"] == "meters"
    # the charged rows are the three variances only, and the budget is what they cost
    charged = served.ledger(outcome="charged")
    assert [row["epsilon"] for row in charged] == ["3/10"] * 3
    assert served.budgets()[0]["datasets"]["meters"]["epsilon"]["spent"] == "9/10"


def test_a_querier_known_to_be_out_of_budget_is_refused_for_rate_with_a_row(served: Served) -> None:
    for _ in range(20):  # count costs 1/20: twenty of them spend alice's ε = 1 on meters
        assert served.ask("alice", {"query": "count() from meters"}).status_code == 200
    assert served.ask("alice", {"query": "count() from meters"}).status_code == 429  # refused at the charge
    # the harness's datasets keep a policy (identity) that charges no ε, so alice is not exhausted there by
    # herself: mark her as the server does for a querier that can pay for no policy
    service = served.app.state.service
    qid = served.querier_id("alice")
    service.exhausted.mark(qid, "meters", service.budget(qid)["meters"])
    time.sleep(1.1)
    before = served.budgets()
    r = served.ask("alice", {"query": "sum(kwh) from meters"})  # known exhausted: refused before planning
    assert r.status_code == 429 and r.json()["error"] == "budget exceeded"
    assert served.budgets() == before
    reasons = [row["reason"] for row in sorted(served.ledger(outcome="refused"), key=lambda row: row["id"])]
    assert reasons[0] == "budget: budget exceeded"
    assert reasons[1].startswith("rate: budget exceeded; the querier is known to be out of budget")


def test_a_burst_of_refusals_is_one_row_a_second_whose_repeats_sum_to_the_burst(served: Served) -> None:
    n = 30
    started = time.monotonic()
    for i in range(n):
        assert served.ask("alice", {"query": f"count( from meters {i}"}).status_code == 422
    assert served.ask("bob", {"query": "count( from meters"}).status_code == 422  # its own row
    elapsed = time.monotonic() - started
    rows = served.ledger(outcome="refused", querier="alice")
    assert sum(row["repeats"] for row in rows) == n
    assert len(rows) <= int(elapsed / 1.0) + 2  # at most one row a second, and the last one's count
    assert [row["repeats"] for row in served.ledger(outcome="refused", querier="bob")] == [1]
    assert len(served.ledger(outcome="charged")) == 0


def test_the_refusal_log_writes_one_row_per_interval_and_carries_the_count(served: Served) -> None:
    now = [0.0]
    log = RefusalLog(served.app.state.service.engine, interval=1.0, clock=lambda: now[0])
    qid = served.querier_id("bob")

    async def burst() -> None:
        for i in range(5):
            log.record(Refused(qid, "meters", f"q{i}", "syntax: x"))
        await asyncio.sleep(0)
        now[0] = 1.5
        log.record(Refused(qid, "meters", "q5", "syntax: y"))  # after the interval: carries the four counted
        await log.drain()

    asyncio.run(burst())
    rows = sorted(served.ledger(querier="bob"), key=lambda row: row["id"])
    assert [(row["query"], row["repeats"], row["reason"]) for row in rows] == [
        ("q0", 1, "syntax: x"),
        ("q5", 5, "syntax: y"),
    ]


def test_a_long_query_is_capped_and_a_failed_write_is_logged_not_a_server_error(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    long = "count( " + "x" * 5000
    assert served.ask("alice", {"kind": "count", "dataset": "meters", "where": "x" * 5000}).status_code == 422
    (row,) = served.ledger(outcome="refused")
    assert len(row["query"]) == MAX_QUERY_CHARS and row["reason"].startswith("syntax: invalid request")
    log = served.app.state.service.refusals
    log.engine = create_engine(f"sqlite:///{served.path.parent / 'missing' / 'nowhere.db'}")
    time.sleep(1.1)
    with caplog.at_level(logging.ERROR, logger="privnoise.server"):
        r = served.ask("alice", {"query": long})
        served.drain()
    assert r.status_code == 422  # the refusal as it is, not a 5xx
    assert "could not write the refusal row" in caplog.text
    assert len(served.ledger(outcome="refused")) == 1


def test_the_admin_ledger_filters_on_outcome(served: Served) -> None:
    assert served.ask("alice", {"query": "count() from meters"}).status_code == 200
    assert served.ask("alice", {"query": "sum(kwh) from broken"}).status_code == 422  # failed after its charge
    assert served.ask("bob", {"query": "count() from nowhere"}).status_code == 422
    everything = served.ledger()
    assert sorted(row["status"] for row in everything) == ["charged", "failed", "refused"]
    assert {row["status"] for row in served.ledger(outcome="charged")} == {"charged", "failed"}
    (refused,) = served.ledger(outcome="refused")
    assert refused["querier"] == "bob" and refused["reason"].startswith("policy: unknown dataset")
    bad = served.client.get("/v1/admin/ledger", params={"outcome": "x"}, headers=served.headers("admin"))
    assert bad.status_code == 422
    # refused rows release nothing: the console's per-dataset information skips them
    from privnoise.server.console.owner import _released_information

    releases, _information = _released_information(served.app.state.console, "meters")
    assert releases == 1


def _sign_in_owner(served: Served) -> TestClient:
    client = TestClient(served.app, base_url="http://127.0.0.1", follow_redirects=False)
    form = client.get("/console/sign-in").text
    found = re.search(r'name="csrf" value="([^"]+)"', form)
    assert found is not None
    response = client.post("/console/sign-in", data={"csrf": found.group(1), "key": served.keys["admin"]})
    assert response.status_code == 303, response.text
    return client


def test_the_console_ledger_and_its_csv_show_refused_rows(served: Served) -> None:
    assert served.ask("alice", {"query": "count() from meters"}).status_code == 200
    assert served.ask("alice", {"query": "=cmd() from meters"}).status_code == 422
    (refused,) = served.ledger(outcome="refused")
    owner = _sign_in_owner(served)
    page = owner.get("/console/ledger", params={"status": "refused"}).text
    assert re.findall(r'data-ledger="(\d+)"', page) == [str(refused["id"])]
    assert 'data-field="repeats">1<' in page and "syntax: " in page
    assert "<option selected>refused</option>" in page
    everything = owner.get("/console/ledger").text
    assert len(re.findall(r'data-ledger="(\d+)"', everything)) == 2
    exported = owner.get("/console/ledger.csv", params={"status": "refused"})
    rows = list(csv.DictReader(io.StringIO(exported.text)))
    assert [r["id"] for r in rows] == [str(refused["id"])]
    assert rows[0]["query"] == "'=cmd() from meters"  # no spreadsheet formula
    assert rows[0]["status"] == "refused" and rows[0]["repeats"] == "1" and rows[0]["epsilon"] == "0"
    assert rows[0]["reason"] == refused["reason"]
    both = list(csv.DictReader(io.StringIO(owner.get("/console/ledger.csv").text)))
    assert sorted(r["status"] for r in both) == ["charged", "refused"]


def test_an_existing_database_without_the_new_columns_is_upgraded(tmp_path: Path, database_url: str) -> None:
    path, keys = write_config(tmp_path, database_url=database_url)
    config = load_config(path)
    engine = db.make_engine(config.database_url)
    try:
        with engine.begin() as conn:
            qid = conn.execute(select(db.queriers.c.id).where(db.queriers.c.name == "alice")).scalar_one()
            conn.exec_driver_sql("ALTER TABLE pn_ledger DROP COLUMN reason")
            conn.exec_driver_sql("ALTER TABLE pn_ledger DROP COLUMN repeats")
            conn.execute(
                text(
                    "INSERT INTO pn_ledger (querier_id, dataset, query, mechanism, epsilon, delta, "
                    "fisher_information, created_at, status) VALUES (:q, 'meters', '{\"kind\": \"count\"}', "
                    "'laplace', '1/20', '0', '{}', :t, 'charged')"
                ),
                {"q": qid, "t": db.utcnow()},
            )
        store.init_database(config, engine=engine)
        store.init_database(config, engine=engine)  # idempotent
        (old,) = store.read_ledger(engine)
        assert (old["reason"], old["repeats"], old["status"]) == (None, 1, "charged")
    finally:
        engine.dispose()
    app = create_app(load_config(path))
    with TestClient(app) as client:
        served = Served(client, app, keys, path)
        assert served.ask("alice", {"query": "count( from meters"}).status_code == 422
        assert [row["status"] for row in served.ledger()] == ["refused", "charged"]
