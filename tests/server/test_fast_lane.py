"""The app a server process serves (:class:`privnoise.server.app.FastLane`): queries answered by a gate
of their own ahead of the framework's middleware, as the gate inside answers them; every other path
served by the app."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient  # noqa: E402

from privnoise.server.app import FastLane, create_app  # noqa: E402
from privnoise.server.config import load_config  # noqa: E402
from tests.server._harness import write_config  # noqa: E402

QUERY = {"query": "mean(kwh) where region = 'north'", "dataset": "meters"}


def test_the_fast_lane_answers_queries_as_the_app_does(tmp_path: Path) -> None:
    path, keys = write_config(tmp_path)
    app = create_app(load_config(path))
    with TestClient(FastLane(app)) as lane, TestClient(app) as inner:
        alice = {"Authorization": f"Bearer {keys['alice']}"}
        for client in (lane, inner):
            assert client.get("/health").json() == {"status": "ok"}
            missing = client.post("/v1/queries", json=QUERY)
            assert (missing.status_code, missing.content) == (401, b'{"error":"unauthorized"}')
            assert client.post("/v1/queries", content=b"{nan}", headers=alice).status_code == 400
            malformed = {"query": "mean(", "dataset": "meters"}
            assert client.post("/v1/queries", json=malformed, headers=alice).status_code == 422
            answered = client.post("/v1/queries", json=QUERY, headers=alice)
            assert answered.status_code == 200, answered.text
            assert set(answered.json()) >= {"value", "guarantee", "charged", "remaining", "ledger_id"}
            assert client.get("/v1/budget", headers=alice).status_code == 200
            owner = {"Authorization": f"Bearer {keys['admin']}"}
            admin = client.get("/v1/admin/ledger", headers=owner)
            assert admin.status_code == 200
            assert client.post("/v1/queries", json=QUERY, headers=owner).status_code == 403
        ledger = admin.json()["ledger"]
        assert sum(row["status"] == "charged" for row in ledger) == 2  # one answer through each
