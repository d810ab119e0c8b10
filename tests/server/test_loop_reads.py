"""PostgreSQL reads on the event loop (:mod:`privnoise.server.async_reads`): a small table's answer is read and
released without a worker thread, at most ``connections`` statements run at once, and a connection whose statement
failed is never used again. The failure of a release read this way (charged, marked failed, generic body) is
tested on both databases by ``test_security.py``'s failing datasets, which are small tables.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
psycopg = pytest.importorskip("psycopg")

from fastapi.testclient import TestClient  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

from privnoise.server.app import create_app  # noqa: E402
from privnoise.server.async_reads import AsyncReads, libpq_url  # noqa: E402
from privnoise.server.config import load_config  # noqa: E402
from privnoise.server.querylang import parse_query  # noqa: E402
from privnoise.server.service import Service  # noqa: E402
from tests.server._harness import write_config  # noqa: E402


@pytest.fixture
def pg_url(_postgres_url: str) -> str:
    return libpq_url(make_url(_postgres_url))


def _backend_pids(reads: AsyncReads, n: int) -> list[int]:
    async def main() -> list[int]:
        try:
            rows = await asyncio.gather(*(reads.rows("SELECT pg_backend_pid(), pg_sleep(0.05)", None,
                                                     every_row=False) for _ in range(n)))
            return [int(r[0][0]) for r in rows]
        finally:
            await reads.close()

    return asyncio.run(main())


def test_no_more_statements_run_at_once_than_there_are_connections(pg_url: str) -> None:
    reads = AsyncReads(pg_url, connections=2)
    pids = _backend_pids(reads, 12)
    assert len(pids) == 12 and len(set(pids)) == 2  # twelve reads, two connections, each used again
    assert reads._idle == []  # closed at the end


def test_a_connection_whose_statement_failed_is_not_used_again(pg_url: str) -> None:
    reads = AsyncReads(pg_url, connections=1)

    async def main() -> tuple[int, int, int]:
        try:
            (first,), = await reads.rows("SELECT pg_backend_pid()", None, every_row=True)
            with pytest.raises(psycopg.errors.UndefinedTable):
                await reads.rows("SELECT x FROM pn_no_such_table", None, every_row=False)
            idle = len(reads._idle)
            (second,), = await reads.rows("SELECT pg_backend_pid()", None, every_row=True)
            return first, second, idle
        finally:
            await reads.close()

    first, second, idle = asyncio.run(main())
    assert idle == 0 and first != second


def test_a_pool_without_connections_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="`connections` must be ≥ 1"):
        AsyncReads("postgresql://unused", connections=0)


def test_small_tables_are_answered_on_the_loop_and_nothing_else_is(
    tmp_path: Path, _postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, keys = write_config(tmp_path, database_url=_postgres_url)
    threaded: list[str] = []
    on_loop: list[str] = []
    answer, answer_on_loop = Service.answer, Service.answer_on_loop

    def spy_answer(self: Service, plan: Any, ledger_id: int, noisy_out: Any = None) -> Any:
        threaded.append(plan.query.kind)
        return answer(self, plan, ledger_id, noisy_out)

    async def spy_on_loop(self: Service, plan: Any, ledger_id: int) -> Any:
        on_loop.append(plan.query.kind)
        return await answer_on_loop(self, plan, ledger_id)

    monkeypatch.setattr(Service, "answer", spy_answer)
    monkeypatch.setattr(Service, "answer_on_loop", spy_on_loop)
    headers = {"Authorization": f"Bearer {keys['alice']}"}
    queries = ("mean(kwh) from meters", "count() from meters", "sum(kwh) from meters where region = 'north'",
               "identity(kwh) from meters")
    with TestClient(create_app(load_config(path))) as client:
        service = client.app.state.service  # type: ignore[attr-defined]
        for query in queries:
            reply = client.post("/v1/queries", json={"query": query}, headers=headers)
            assert reply.status_code == 200, reply.text
            body = reply.json()
            assert "guarantee" in body and body["ledger_id"] > 0
        assert len(reply.json()["value"]) == 40  # identity: every record's noisy value
        plan = service.plan(parse_query("mean(kwh) from meters"))
    assert on_loop == ["mean", "count", "sum", "identity"] and threaded == []
    assert service.on_loop(plan) and not service.on_loop(dataclasses.replace(plan, inline=False))  # a large table
