"""The server answers datasets with ``engine = "dask"``: the same true components as the SQL engine for every
query kind and filter (the noise sees the same values), the same guarantee and charge, the charge committed before
the computation (a computation that fails is charged and answered with the generic failure body), identity
answers noised on the workers, values checked when the dataset is declared, and constant work per query
(SECURITY.md, requirements 8, 9, 16)."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("fastapi")

from scipy.stats import ks_2samp  # noqa: E402

from privnoise.core.conditions import Condition  # noqa: E402
from privnoise.scale.shipping import pack, unpack  # noqa: E402
from privnoise.server.config import ConfigError, load_config  # noqa: E402
from privnoise.server.dask_engine import Evaluation, evaluate_partition  # noqa: E402
from privnoise.server.service import FAILURE_BODY  # noqa: E402
from tests.scale._server import TwinLab, twin_dataset, twin_rows  # noqa: E402
from tests.server._lab import NoiseSpy  # noqa: E402

QUERIES = [
    "count()",
    "count() where region = 'north'",
    "sum(x)",
    "sum(x) where region != 'south' and x > 20",
    "mean(x) where region = 'east'",
    "mean(x) where region = 'nowhere'",
    "variance(x) where y <= 0",
    "weighted_mean(x, w) where region = 'north'",
    "linear(2*x - 0.5*y + w)",
]


@pytest.fixture(scope="module")
def lab(cluster: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TwinLab, NoiseSpy]]:
    address = cluster.client.scheduler.address
    with TwinLab(tmp_path_factory.mktemp("twins"), [twin_dataset("meters", twin_rows(300))], address) as lab:
        lab.add_querier("ana")
        with NoiseSpy().installed() as spy:
            yield lab, spy


def _ask(lab: TwinLab, text: str, dataset: str) -> dict[str, Any]:
    response = lab.post("ana", {"query": text, "dataset": dataset})
    assert response.status_code == 200, response.text
    return dict(response.json())


@pytest.mark.parametrize("text", QUERIES)
def test_the_dask_engine_gives_the_noise_the_sql_engines_true_values(lab, text: str) -> None:
    server, spy = lab
    spy.take()
    on_sql = _ask(server, text, "meters")
    sql_draws = spy.take()
    on_dask = _ask(server, text, "meters_dask")
    dask_draws = spy.take()
    assert len(sql_draws) == len(dask_draws) >= 1
    for (noise_a, true_a), (noise_b, true_b) in zip(sql_draws, dask_draws, strict=True):
        assert noise_a.describe() == noise_b.describe()
        np.testing.assert_allclose(true_b, true_a, rtol=1e-12, atol=1e-9)
    assert on_dask["guarantee"] == on_sql["guarantee"] and on_dask["charged"] == on_sql["charged"]


def test_identity_answers_are_noised_on_the_workers(lab) -> None:
    server, spy = lab
    spy.take()
    answer = _ask(server, "identity(x)", "meters_dask")
    assert spy.take() == []  # no noise drawn by the server process: the workers drew it
    values = np.array(answer["value"])
    truth = np.clip([r["x"] for r in server.datasets["meters"].rows], 10.0, 60.0)
    sql = np.array(_ask(server, "identity(x)", "meters")["value"])
    assert values.shape == truth.shape == sql.shape
    grid = answer["guarantee"]["noise"][0]["grid"]
    assert np.all(values / grid == np.rint(values / grid))
    scale = answer["guarantee"]["noise"][0]["scale"]
    assert abs(np.mean(values - truth)) < 6 * scale * np.sqrt(2.0 / values.size)
    assert 0.5 < np.std(values - truth) / np.std(sql - truth) < 2.0


def test_the_charge_is_committed_before_the_computation_and_kept_when_it_fails(
    cluster: Any, tmp_path: Path
) -> None:
    address = cluster.client.scheduler.address
    with TwinLab(tmp_path, [twin_dataset("meters", twin_rows(60))], address) as server:
        server.add_querier("ana", epsilon="1")
        (tmp_path / "meters_parts" / "part-1.parquet").unlink()  # the files go away after start-up
        response = server.post("ana", {"query": "sum(x)", "dataset": "meters_dask"})
        assert response.status_code == 422 and response.json() == FAILURE_BODY
        (row,) = server.get("admin", "/v1/admin/ledger", limit=5).json()["ledger"]
        assert row["status"] == "failed" and row["epsilon"] == "1/10"
        budget = server.get("ana", "/v1/budget").json()["datasets"]["meters_dask"]
        assert budget["epsilon"]["spent"] == "1/10"


def test_dask_datasets_are_declared_and_checked_like_imports(cluster: Any, tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from privnoise.server import store

    base = '[datasets.big]\nsource = "parts/*.parquet"\nepsilon = 1\n[datasets.big.columns.x]\nbounds = [0, 1]\n'
    for extra, message in [
        ('engine = "dask"\nscheduler = "http://x"\n', "scheduler"),
        ('scheduler = "local"\n', "is for engine = 'dask' only"),
    ]:
        (tmp_path / "owner.toml").write_text(base.replace("epsilon = 1\n", f"epsilon = 1\n{extra}"))
        with pytest.raises(ConfigError, match=message):
            load_config(tmp_path / "owner.toml")
    (tmp_path / "parts").mkdir()
    pq.write_table(pa.table({"x": [0.5, float("nan"), 0.25]}), tmp_path / "parts" / "a.parquet")
    (tmp_path / "owner.toml").write_text(base.replace("epsilon = 1\n", 'epsilon = 1\nengine = "dask"\n'))
    config = load_config(tmp_path / "owner.toml")
    assert config.datasets["big"].engine == "dask" and config.datasets["big"].scheduler == "local"
    with pytest.raises(store.DataImportError, match="record 1, column 'x': nan is not a finite number"):
        store.init_database(config)


# -- constant work (SECURITY.md, requirement 16) ---------------------------------------------------------------

RECORDS = 200_000
SAMPLES = 80
ALPHA = 1e-6


def _filtering(part: pd.DataFrame, packed: bytes) -> np.ndarray:
    """A partition task that keeps only the selected records first: the work a filter would reveal."""
    job: Evaluation = unpack(packed)
    (condition,) = job.conditions
    return evaluate_partition(part[part[condition.column] == condition.value],
                              pack(Evaluation(job.columns, (), job.terms)))


def _timings(task: Any, part: pd.DataFrame, every: bytes, none: bytes) -> tuple[list[float], list[float]]:
    for _ in range(3):
        task(part, every), task(part, none)
    times: dict[bytes, list[float]] = {every: [], none: []}
    for i in range(2 * SAMPLES):  # alternate, so that load changes affect both alike
        job = (every, none)[i % 2]
        best = math.inf
        for _ in range(3):  # the fastest of three: a burst of work elsewhere on the machine only slows one run
            start = time.perf_counter()
            task(part, job)
            best = min(best, time.perf_counter() - start)
        times[job].append(best)
    return times[every], times[none]


def test_a_partitions_work_does_not_depend_on_how_many_records_a_filter_selects() -> None:
    part = pd.DataFrame({"x": np.linspace(10.0, 60.0, RECORDS), "region": ["north"] * RECORDS})
    columns = {"x": ("number", 10.0, 60.0), "region": ("text", 0.0, 0.0)}
    terms = (("power", ("x", 1, 1.0, 0.0)), ("count", ()))
    every = pack(Evaluation(columns, (Condition("region", "=", "north"),), terms))
    none = pack(Evaluation(columns, (Condition("region", "=", "nortx"),), terms))
    assert evaluate_partition(part, every)[1] == RECORDS and evaluate_partition(part, none)[1] == 0.0
    p = ks_2samp(*_timings(evaluate_partition, part, every, none)).pvalue
    assert p > ALPHA, f"a partition's work depends on the selection: p = {p:.3g}"
    p_filtering = ks_2samp(*_timings(_filtering, part, every, none)).pvalue  # power check
    assert p_filtering < ALPHA, f"the test does not see a filtering task: p = {p_filtering:.3g}"
