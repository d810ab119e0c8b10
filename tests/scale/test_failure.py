"""A worker dies in the middle of a record-level release: the release completes, every partition is published once
(the retry of a partition already published publishes nothing), and the server's charge is recorded once
(SECURITY.md, requirements 8 and 17).

The kill is deterministic: a worker plugin ends its worker process (``os._exit``) when the worker starts its second
task of the release, after its first partition is published and while its result still lives only in that worker;
the scheduler then runs the lost tasks again on the other worker (and on the restarted one). A marker file made
with ``O_EXCL`` makes it happen once per test.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import privnoise as pn
from privnoise.scale import MANIFEST
from tests.scale.conftest import write_meters

distributed = pytest.importorskip("distributed")


class KillOnce(distributed.WorkerPlugin):
    """Ends the worker process when it starts its ``nth`` release task, if no worker has done so yet."""

    def __init__(self, marker: str, nth: int = 2) -> None:
        self.marker, self.nth, self.started = marker, nth, 0

    def transition(self, key: Any, start: str, finish: str, **kwargs: Any) -> None:
        if finish != "executing" or "privnoise-release-" not in str(key):
            return
        self.started += 1
        if self.started < self.nth:
            return
        try:
            os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return
        os._exit(1)


@pytest.fixture
def kill_once(cluster: Any, tmp_path: Path) -> Iterator[Path]:
    marker = tmp_path / "killed"
    cluster.client.register_plugin(KillOnce(str(marker)), name="kill-once")
    try:
        yield marker
    finally:
        cluster.client.unregister_worker_plugin("kill-once")


def test_a_release_survives_a_killed_worker_and_publishes_each_partition_once(
    kill_once: Path, tmp_path: Path
) -> None:
    meters = write_meters(tmp_path / "meters", files=4, rows=3000, row_group=500)
    frame = pn.io.dask_parquet(str(meters), partition_rows=500)
    series = frame["kwh"].fillna(30.0).clip(0.0, 60.0)
    n = 12_000
    q = pn.queries.identity(n, bounds=(0, 60))
    out = tmp_path / "noisy"
    rel = pn.release(series, q, pn.fisher.optimal_noise(q, quality_budget=n), out=out)
    assert kill_once.exists()  # a worker did die during the release
    manifest = json.loads((out / MANIFEST).read_text())
    files = sorted(p.name for p in out.iterdir() if p.name != MANIFEST)
    assert files == [f"part-{i:05d}.parquet" for i in range(frame.npartitions)]  # one each, no staging left
    for part in manifest["partitions"]:
        assert hashlib.sha256((out / part["file"]).read_bytes()).hexdigest() == part["sha256"]
    assert manifest["retried_after_publishing"]  # the dead worker's published partitions ran again, kept as is
    values = pn.io.dask_parquet(str(out)).compute()["value"].to_numpy()
    truth = series.compute().to_numpy()
    assert values.size == n and rel.output == str(out)
    assert abs(np.std(values - truth) - 1.0) < 0.05  # E w² = 1 per record: one noise draw per record, not two


def test_the_server_charges_once_when_a_worker_dies_during_an_identity_answer(
    cluster: Any, kill_once: Path, tmp_path: Path
) -> None:
    pytest.importorskip("fastapi")
    from tests.scale._server import TwinLab, twin_dataset, twin_rows

    rows = twin_rows(2400)
    with TwinLab(tmp_path / "server", [twin_dataset("meters", rows)], cluster.client.scheduler.address,
                 files=8) as server:
        server.add_querier("ana", epsilon="1")
        response = server.post("ana", {"query": "identity(x)", "dataset": "meters_dask"})
        assert kill_once.exists()
        assert response.status_code == 200, response.text
        assert len(response.json()["value"]) == len(rows)
        ledger = server.get("admin", "/v1/admin/ledger", limit=10).json()["ledger"]
        assert [(r["dataset"], r["status"], r["epsilon"]) for r in ledger] == [("meters_dask", "charged", "1/2")]
        budget = server.get("ana", "/v1/budget").json()["datasets"]["meters_dask"]
        assert budget["epsilon"]["spent"] == "1/2"
