"""The server answers datasets with ``engine = "spark"``: the same true components as the SQL engine for every
query kind and filter (the noise sees the same values), the same guarantee and charge, the charge committed before
the computation (a computation that fails is charged and answered with the generic failure body), identity
answers noised on the executors in record order, values checked when the dataset is declared, constant work per
query (SECURITY.md, requirements 8, 9, 16), and an answer whose task fails and is run again charged exactly once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi")

from privnoise.core.conditions import Condition  # noqa: E402
from privnoise.scale.shipping import pack  # noqa: E402
from privnoise.server.config import ConfigError, load_config  # noqa: E402
from privnoise.server.dask_engine import Evaluation  # noqa: E402
from privnoise.server.service import FAILURE_BODY  # noqa: E402
from privnoise.server.spark_engine import FILE, ROW, _evaluator  # noqa: E402
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
MASTER = "local[2,3]"  # the tests' session (conftest): the server uses the Spark session already running


@pytest.fixture(scope="module")
def lab(spark, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TwinLab, NoiseSpy]]:
    with TwinLab(tmp_path_factory.mktemp("twins"), [twin_dataset("meters", twin_rows(300))], MASTER,
                 engine="spark") as lab:
        lab.add_querier("ana")
        with NoiseSpy().installed() as spy:
            yield lab, spy


def _ask(lab: TwinLab, text: str, dataset: str) -> dict[str, Any]:
    response = lab.post("ana", {"query": text, "dataset": dataset})
    assert response.status_code == 200, response.text
    return dict(response.json())


@pytest.mark.parametrize("text", QUERIES)
def test_the_spark_engine_gives_the_noise_the_sql_engines_true_values(lab, text: str) -> None:
    server, spy = lab
    spy.take()
    on_sql = _ask(server, text, "meters")
    sql_draws = spy.take()
    on_spark = _ask(server, text, "meters_spark")
    spark_draws = spy.take()
    assert len(sql_draws) == len(spark_draws) >= 1
    for (noise_a, true_a), (noise_b, true_b) in zip(sql_draws, spark_draws, strict=True):
        assert noise_a.describe() == noise_b.describe()
        np.testing.assert_allclose(true_b, true_a, rtol=1e-12, atol=1e-9)
    assert on_spark["guarantee"] == on_sql["guarantee"] and on_spark["charged"] == on_sql["charged"]


def test_identity_answers_are_noised_on_the_executors_in_record_order(lab) -> None:
    server, spy = lab
    spy.take()
    answer = _ask(server, "identity(x)", "meters_spark")
    assert spy.take() == []  # no noise drawn by the server process: the executors drew it
    values = np.array(answer["value"])
    truth = np.clip([r["x"] for r in server.datasets["meters"].rows], 10.0, 60.0)
    sql = _ask(server, "identity(x)", "meters")
    assert values.shape == truth.shape == (300,) and answer["guarantee"] == sql["guarantee"]
    grid = answer["guarantee"]["noise"][0]["grid"]
    assert np.all(values / grid == np.rint(values / grid))
    scale = answer["guarantee"]["noise"][0]["scale"]
    errors = values - truth  # in record order: the errors are the noise, centred and of the stated scale
    assert abs(np.mean(errors)) < 6 * scale * np.sqrt(2.0 / values.size)
    assert 0.5 < np.std(errors) / np.std(np.array(sql["value"]) - truth) < 2.0


def test_the_charge_is_committed_before_the_computation_and_kept_when_it_fails(spark, tmp_path: Path) -> None:
    with TwinLab(tmp_path, [twin_dataset("meters", twin_rows(60))], MASTER, engine="spark") as server:
        server.add_querier("ana", epsilon="1")
        (tmp_path / "meters_parts" / "part-1.parquet").unlink()  # the files go away after start-up
        response = server.post("ana", {"query": "sum(x)", "dataset": "meters_spark"})
        assert response.status_code == 422 and response.json() == FAILURE_BODY
        (row,) = server.get("admin", "/v1/admin/ledger", limit=5).json()["ledger"]
        assert row["status"] == "failed" and row["epsilon"] == "1/10"
        budget = server.get("ana", "/v1/budget").json()["datasets"]["meters_spark"]
        assert budget["epsilon"]["spent"] == "1/10"


def test_spark_datasets_are_declared_and_checked_like_imports(spark, tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from privnoise.server import store

    base = '[datasets.big]\nsource = "parts/*.parquet"\nepsilon = 1\n[datasets.big.columns.x]\nbounds = [0, 1]\n'
    for extra, message in [
        ('engine = "spark"\nmaster = "http://x"\n', "must be a Spark master"),
        ('engine = "spark"\nscheduler = "local"\n', "is for engine = 'dask' only"),
        ('master = "local[2]"\n', "is for engine = 'spark' only"),
        ('engine = "spark"\nsource = "x.csv"\n', "reads Parquet files"),
    ]:
        text = base.replace("epsilon = 1\n", f"epsilon = 1\n{extra}")
        if "x.csv" in extra:
            text = text.replace('source = "parts/*.parquet"\n', "")
        (tmp_path / "owner.toml").write_text(text)
        with pytest.raises(ConfigError, match=message):
            load_config(tmp_path / "owner.toml")
    two = (base.replace("epsilon = 1\n", 'epsilon = 1\nengine = "spark"\nmaster = "local[2]"\n')
           + base.replace("big", "other").replace("epsilon = 1\n", 'epsilon = 1\nengine = "spark"\nmaster = "local[3]"\n'))
    (tmp_path / "owner.toml").write_text(two)
    with pytest.raises(ConfigError, match="one Spark session"):
        load_config(tmp_path / "owner.toml")
    (tmp_path / "parts").mkdir()
    pq.write_table(pa.table({"x": [0.5, 0.75]}), tmp_path / "parts" / "a.parquet")
    pq.write_table(pa.table({"x": [0.5, float("nan"), 0.25]}), tmp_path / "parts" / "b.parquet")
    (tmp_path / "owner.toml").write_text(base.replace("epsilon = 1\n", f'epsilon = 1\nengine = "spark"\nmaster = "{MASTER}"\n'))
    config = load_config(tmp_path / "owner.toml")
    assert config.datasets["big"].engine == "spark" and config.datasets["big"].master == MASTER
    with pytest.raises(store.DataImportError, match="record 3, column 'x': nan is not a finite number"):
        store.init_database(config)  # record 3: the second row of the second file, in the files' sorted order
    (tmp_path / "owner.toml").write_text(base.replace("epsilon = 1\n", 'epsilon = 1\nengine = "spark"\n'))
    assert load_config(tmp_path / "owner.toml").datasets["big"].master == "local[2]"  # the default


def test_the_job_and_each_tasks_output_do_not_depend_on_what_a_filter_selects(lab) -> None:
    """Each task evaluates every record (the Dask engine's partition function, whose time is tested not to depend
    on the selection in tests/scale/test_server.py) and returns one row per batch of records, whatever is selected."""
    server, _ = lab
    frame = server.app.state.service.spark.frames["meters_spark"]
    columns = {"x": ("number", 10.0, 60.0), "y": ("number", -5.0, 3.0), "w": ("number", 0.5, 2.0),
               "region": ("text", 0.0, 0.0)}
    terms = (("power", ("x", 1, 1.0, 0.0)), ("count", ()))
    names = ["x", "y", "w", "region"]
    outputs = {}
    for value in ("north", "nowhere"):
        job = pack(Evaluation(columns, (Condition("region", "=", value),), terms))
        table = frame.mapInArrow(_evaluator(job, names), "sums array<double>").toArrow()
        outputs[value] = np.array(table.column("sums").to_pylist())
    every, none = outputs["north"], outputs["nowhere"]
    assert every.shape == none.shape and every.shape[0] >= 1  # the same rows, one per batch of records
    np.testing.assert_array_equal(every[:, -1], none[:, -1])  # every record read, whatever the filter
    assert every[:, 1].sum() > 0 and none[:, :2].sum() == 0
    assert FILE in frame.columns and ROW in frame.columns


def _dies_once(marker: str, partition: int = 1):  # noqa: ANN202 - a mapInArrow function
    """Pass the batches through, except that the Python worker of ``partition``'s task ends its process
    (``os._exit``, as a lost executor would) the first time, made once by a marker file created with O_EXCL."""

    def run(batches):  # noqa: ANN001, ANN202
        import os

        from pyspark import TaskContext

        if TaskContext.get().partitionId() == partition:
            try:
                os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                pass
            else:
                os._exit(1)
        yield from batches

    return run


@pytest.mark.parametrize("text", ["identity(x)", "sum(x) where region = 'north'"])
def test_an_answer_whose_task_dies_is_answered_and_charged_exactly_once(
    spark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    with TwinLab(tmp_path / "lab", [twin_dataset("meters", twin_rows(300))], MASTER, engine="spark",
                 files=3) as server:
        server.add_querier("ana", epsilon="10")
        datasets = server.app.state.service.spark
        frame = datasets.frames["meters_spark"].repartition(3)  # partition 1 exists whatever the file sizes
        marker = tmp_path / "died"
        monkeypatch.setitem(datasets.frames, "meters_spark", frame.mapInArrow(_dies_once(str(marker)), frame.schema))
        answer = _ask(server, text, "meters_spark")
        assert marker.exists()  # the first attempt's worker died; Spark ran the task again
        (row,) = server.get("admin", "/v1/admin/ledger", limit=5).json()["ledger"]
        assert row["status"] != "failed" and row["epsilon"] == answer["charged"]["epsilon"]
        budget = server.get("ana", "/v1/budget").json()["datasets"]["meters_spark"]
        assert budget["epsilon"]["spent"] == answer["charged"]["epsilon"]  # charged once
        if text.startswith("identity"):
            values = np.array(answer["value"])
            truth = np.clip([r["x"] for r in server.datasets["meters"].rows], 10.0, 60.0)
            assert values.shape == truth.shape  # every record once, in record order
            scale = answer["guarantee"]["noise"][0]["scale"]
            assert abs(np.mean(values - truth)) < 6 * scale * np.sqrt(2.0 / values.size)
