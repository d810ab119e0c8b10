"""An executor JVM killed (SIGKILL) while a record-level release runs, and while the server answers on a Spark
dataset, on ``local-cluster[2,1,1024]`` (two executor JVMs): the release completes with each partition published
once and the noise of its keyed stream, drawn from keys the driver drew once; the answer is given and charged once.

The scenarios run in a process of their own (:mod:`tests.spark._executor_loss`: one SparkContext per process, and
this process holds the other tests' ``local[2,3]``), once for the module; the tests check what it recorded. They
skip, naming Spark's error, when the local cluster cannot start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import privnoise
from privnoise.scale import MANIFEST

from ._executor_loss import PARTS, N
from .conftest import java_available

pytest.importorskip("fastapi")
pytest.importorskip("psutil")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")  # not torn down when another module's test runs in between
def lost(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    """What the scenarios recorded, and their directory."""
    if not java_available():
        pytest.skip("no Java runtime: run scripts/ensure-java.sh (OpenJDK 17 or later)")
    root = tmp_path_factory.mktemp("executor-loss")
    paths = [str(ROOT), str(Path(privnoise.__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]
    env = os.environ | {"PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    done = subprocess.run([sys.executable, "-m", "tests.spark._executor_loss", str(root)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=1800, check=False)
    facts_file = root / "facts.json"
    if not facts_file.exists():
        pytest.fail(f"the executor-loss scenarios ended with code {done.returncode}:\n{done.stderr[-4000:]}")
    facts = json.loads(facts_file.read_text())
    if "cannot_start" in facts:
        pytest.skip(f"Spark's local-cluster master cannot start here: {facts['cannot_start']}")
    if done.returncode != 0:
        pytest.fail(f"the executor-loss scenarios failed (code {done.returncode}):\n{done.stderr[-4000:]}")
    return facts, root


def _killed_then_retried(scenario: dict[str, Any], partition: int) -> None:
    """The partition's first attempt ran in the executor JVM it killed; a later attempt of the same stage ran in
    another executor JVM."""
    killed, stage = scenario["killed_executor"]["executor"], scenario["killed_executor"]["stage"]
    assert isinstance(killed, int)
    runs = [(int(r["name"].split("-")[2]), r) for r in scenario["runs"] if r["name"].startswith(f"ran-{partition}-")]
    assert [r["executor"] for attempt, r in runs if attempt == 0 and r["stage"] == stage] == [killed]
    retries = [r for attempt, r in runs if attempt > 0 and r["stage"] == stage]
    assert retries and all(r["executor"] not in (None, killed) for r in retries)


def test_a_release_whose_executor_is_killed_completes_and_publishes_each_partition_once(lost) -> None:
    facts, root = lost
    release = facts["release"]
    assert facts["master"] == "local-cluster[2,1,1024]" and release["partitions"] == PARTS
    _killed_then_retried(release, partition=2)
    out = Path(release["output"])
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST] + [f"part-{i:05d}.parquet" for i in range(PARTS)]
    manifest = json.loads((out / MANIFEST).read_text())
    assert [p["partition"] for p in manifest["partitions"]] == list(range(PARTS))  # each partition once
    assert sum(p["rows"] for p in manifest["partitions"]) == N and manifest["retried_after_publishing"] == []
    # the driver drew the keys once for the release (and once for the undisturbed release of the same seed)
    assert len(release["keys"]) == 2 and release["keys"][0] == release["keys"][1]
    assert len({tuple(k) for k in release["keys"][0]}) == PARTS
    published = np.concatenate([pd.read_parquet(out / f"part-{i:05d}.parquet")["value"].to_numpy()
                                for i in range(PARTS)])
    # each partition's noise is its keyed stream's, bit for bit: the retry replayed the stream the dead attempt drew
    np.testing.assert_array_equal(published, np.load(root / "release" / "undisturbed.npy"))
    assert release["epsilon"] == pytest.approx(1.0, rel=1e-3)


def test_a_partition_whose_executor_is_killed_after_publishing_is_published_once(lost) -> None:
    facts, root = lost
    publish = facts["publish"]
    _killed_then_retried(publish, partition=1)
    reported = publish["reported"]
    assert reported["partition"] == list(range(PARTS))  # each partition reported once
    assert dict(zip(reported["partition"], reported["published_here"], strict=True)) == {
        0: True, 1: False, 2: True, 3: True}  # the retry of partition 1 found its file published
    out = root / "publish" / "out"
    assert sorted(p.name for p in out.iterdir()) == [f"part-{i:05d}.parquet" for i in range(PARTS)]  # no staging
    np.testing.assert_array_equal(pd.read_parquet(out / "part-00001.parquet")["value"].to_numpy(),
                                  np.load(root / "publish" / "same_keys.npy"))


@pytest.mark.parametrize("scenario", ["server_identity", "server_sum"])
def test_an_answer_whose_executor_is_killed_is_answered_and_charged_exactly_once(lost, scenario: str) -> None:
    facts, _ = lost
    server = facts[scenario]
    assert server["partitions"] >= 2
    _killed_then_retried(server, partition=1)
    assert server["status"] == 200
    answer = server["answer"]
    (row,) = server["ledger"]  # one ledger row: charged once
    assert row["status"] == "charged" and row["repeats"] == 1 and row["epsilon"] == answer["charged"]["epsilon"]
    assert server["spent"] == answer["charged"]["epsilon"]
    if scenario == "server_identity":
        values, truth = np.array(answer["value"]), np.array(server["truth"])
        assert values.shape == truth.shape  # every record once, in record order
        scale = answer["guarantee"]["noise"][0]["scale"]
        assert abs(np.mean(values - truth)) < 6 * scale * np.sqrt(2.0 / values.size)
        assert server["server_draws"] == []  # the executors drew the noise
    else:
        (true,) = server["server_draws"]  # the noise drawn once, on the true sum of every partition once
        assert true == pytest.approx(server["north_sum"], rel=1e-12)
