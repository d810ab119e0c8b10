"""The server's Dask path (:mod:`privnoise.server.dask_engine`) computed in this process, against computations here.

The cluster is replaced by Dask's synchronous scheduler (a client whose ``compute`` runs the task graph here), so
every partition task runs in this process; the Parquet files are written here with outliers, NaN and nulls in
every file.

* Components: every query kind and comparison over four partitions equals a row-by-row loop over the records as
  written (clamped to the declared bounds, a missing number as the lower bound, a missing text never matching),
  and the record count is the number of rows; the Fisher mean divides by the plan's records, for one record too.
* Identity releases: each partition's block is its clamped records plus the noise of a hardened Laplace law
  drawn from AES-128-CTR under that partition's own key (the keys drawn here from the generator the driver is
  given, the streams built here with randomgen); 100,000 records' noise passes a KS test of the stated law at
  α = 1e-6 and fails it at a 30 % wrong scale.
* Constant work: the tasks, the records each task reads and clamps and the numbers each task returns are the same
  whether a filter selects every record or none.
* Checks of declared datasets: the first invalid record of every partition and of the files, with its message.
* Connections: one per scheduler, never the process's default client, closed on close and when start-up fails.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats

dask = pytest.importorskip("dask")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from randomgen import AESCounter  # noqa: E402
from sqlalchemy.dialects import sqlite  # noqa: E402

from privnoise.core.conditions import Condition  # noqa: E402
from privnoise.dp.snapped import SnappedMechanism  # noqa: E402
from privnoise.mechanisms import Laplace  # noqa: E402
from privnoise.mechanisms.hardening import hardened  # noqa: E402
from privnoise.server import dask_engine, db  # noqa: E402
from privnoise.server.config import ServerConfig, load_config  # noqa: E402
from privnoise.server.planner import Plan, make_plan  # noqa: E402
from privnoise.server.querylang import parse_query  # noqa: E402
from privnoise.server.store import DataImportError  # noqa: E402
from tests.server._plan_lab import OPS  # noqa: E402

KS_ALPHA = 1e-6
BOUNDS = {"x": (-2.0, 3.0), "y": (0.5, 2.0), "z": (-1.0, 1.0)}
NAN = float("nan")

#: Four files (four partitions) of 6, 9, 1 and 8 records; every file but the one-record file holds values below and
#: above the bounds of x, a NaN or a null number, and a null text.
FILES: list[dict[str, list[Any]]] = [
    {
        "x": [-5.0, 0.5, 6.0, None, 3.0, -2.0],
        "y": [0.0, 1.25, 3.0, 1.0, None, 0.75],
        "z": [2.0, -0.5, NAN, 0.25, -3.0, 1.0],
        "region": ["north", "south", None, "east", "north", "south"],
    },
    {
        "x": [1.5, NAN, -2.5, 2.75, 0.0, 4.0, -1.0, 2.0, -0.25],
        "y": [2.0, 0.5, 1.5, 0.25, 2.5, 1.0, None, 1.75, 0.6],
        "z": [0.5, 0.0, -0.75, 1.5, None, -1.0, 0.125, -2.0, 0.9],
        "region": ["east", "north", "north", None, "south", "east", "north", "west", "south"],
    },
    {"x": [2.25], "y": [1.5], "z": [-0.25], "region": ["north"]},
    {
        "x": [9.0, -9.0, 1.0, 0.25, NAN, 3.0, -0.5, 2.5],
        "y": [1.0, 1.0, 0.1, 5.0, 1.5, None, 2.0, 0.5],
        "z": [0.75, -0.5, 0.0, 4.0, -0.125, 0.5, None, -1.0],
        "region": ["south", None, "east", "north", "north", "east", "south", "north"],
    },
]
ROWS = [{c: f[c][i] for c in f} for f in FILES for i in range(len(f["x"]))]
N = len(ROWS)


def _policies(dataset: str, family: str, kinds: tuple[str, ...]) -> str:
    out = []
    for kind in kinds:
        out.append(f"[datasets.{dataset}.policies.{kind}]")
        out.append(f'mechanism = "{family}"')
        out.append('epsilon = "1"' if family == "laplace" else "quality = 0.5")
    return "\n".join(out) + "\n"


def _dataset(
    name: str,
    source: str,
    *,
    scheduler: str = "local",
    family: str = "laplace",
    kinds: tuple[str, ...] = ("count", "sum", "mean", "weighted_mean", "variance", "linear", "identity"),
    reject: tuple[str, ...] = (),
) -> str:
    text = f'[datasets.{name}]\nsource = "{source}"\nengine = "dask"\nscheduler = "{scheduler}"\nepsilon = "1000"\n'
    for column, (lo, hi) in BOUNDS.items():
        text += f"[datasets.{name}.columns.{column}]\nbounds = [{lo!r}, {hi!r}]\n"
        if family != "laplace":
            text += "fisher_floor = 1e-12\n"
        if column in reject:
            text += 'out_of_bounds = "reject"\n'
    text += f'[datasets.{name}.columns.region]\ntype = "text"\n'
    return text + _policies(name, family, kinds)


def _write(folder: Path, files: list[dict[str, list[Any]]], *, secret: bool = True) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i, f in enumerate(files):
        columns = {
            c: pa.array(v, type=pa.string() if c == "region" else pa.float64(), from_pandas=False)
            for c, v in f.items()
        }
        if secret:  # an undeclared column: never read
            columns["secret"] = pa.array([1.0e6] * len(f["x"]))
        pq.write_table(pa.table(columns), folder / f"part-{i}.parquet", row_group_size=4)


class FakeClient:
    """A ``distributed.Client`` stand-in: ``compute`` runs the tasks here with Dask's synchronous scheduler."""

    def __init__(self) -> None:
        self.batches: list[list[Any]] = []

    def compute(self, tasks: list[Any]) -> tuple[Any, ...]:
        self.batches.append(list(tasks))
        return tuple(dask.compute(*tasks, scheduler="sync"))

    def gather(self, results: Any) -> Any:
        return results


class FakeConnection:
    def __init__(self, scheduler: str, kwargs: dict[str, Any]) -> None:
        self.scheduler, self.kwargs = scheduler, kwargs
        self.client = FakeClient()
        self.closed = 0

    def close(self) -> None:
        self.closed += 1

    def __enter__(self) -> FakeConnection:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> list[FakeConnection]:
    made: list[FakeConnection] = []

    def connect(scheduler: str, **kwargs: Any) -> FakeConnection:
        made.append(FakeConnection(scheduler, kwargs))
        return made[-1]

    monkeypatch.setattr(dask_engine, "connect", connect)
    return made


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("dask_engine")
    _write(base / "parts", FILES)
    _write(base / "one", [{"x": [2.5], "y": [1.0], "z": [0.0], "region": ["north"]}])
    text = '[server]\ndatabase = "sqlite"\n'
    text += _dataset("d", "parts/*.parquet")
    text += _dataset("f", "parts/*.parquet", family="fisher-gaussian", kinds=("sum", "mean", "linear"))
    text += _dataset("one", "one/*.parquet", family="fisher-gaussian", kinds=("mean",))
    (base / "owner.toml").write_text(text, encoding="utf-8")
    return base


@pytest.fixture
def config(root: Path) -> ServerConfig:
    return load_config(root / "owner.toml")


@pytest.fixture
def datasets(config: ServerConfig, connections: list[FakeConnection]) -> Iterator[dask_engine.DaskDatasets]:
    engine = dask_engine.DaskDatasets(config)
    yield engine
    engine.close()


def _plan(config: ServerConfig, text: str, dataset: str = "d", records: int = N) -> Plan:
    spec = config.datasets[dataset]
    table = db.data_table(spec.table, {n: c.type for n, c in spec.columns.items()})
    return make_plan(
        parse_query(text, dataset=dataset), spec, table, records=records, dialect=sqlite.dialect()
    )


# -- the records, one by one ------------------------------------------------------------------------------------


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _clamp(v: Any, column: str) -> float:
    lo, hi = BOUNDS[column]
    return lo if _missing(v) else min(max(float(v), lo), hi)


def _selected(row: dict[str, Any], where: list[tuple[str, str, Any]]) -> float:
    for column, op, value in where:
        if column == "region":
            if row[column] is None or not OPS[op](row[column], value):
                return 0.0
        elif not OPS[op](_clamp(row[column], column), value):
            return 0.0
    return 1.0


def _loop(
    kind: str, where: list[tuple[str, str, Any]], rows: list[dict[str, Any]] = ROWS
) -> dict[str, float]:
    """The components of a query, record by record (module docstring)."""
    w = [_selected(r, where) for r in rows]
    x = [_clamp(r["x"], "x") for r in rows]
    y = [_clamp(r["y"], "y") for r in rows]
    z = [_clamp(r["z"], "z") for r in rows]
    out = {
        "count": math.fsum(w),
        "sum": math.fsum(wi * xi for wi, xi in zip(w, x, strict=True)),
        "sum_of_squares": math.fsum(wi * xi * xi for wi, xi in zip(w, x, strict=True)),
        "weighted_sum": math.fsum(wi * yi * xi for wi, xi, yi in zip(w, x, y, strict=True)),
        "weight_sum": math.fsum(wi * yi for wi, yi in zip(w, y, strict=True)),
        "mean": math.fsum(x) / len(rows),
    }
    if kind in ("mean", "variance"):  # a DP mean or variance sums x − c, c the centre of x's bounds
        c = sum(BOUNDS["x"]) / 2.0
        out["sum"] = math.fsum(wi * (xi - c) for wi, xi in zip(w, x, strict=True))
        out["sum_of_squares"] = math.fsum(wi * (xi - c) ** 2 for wi, xi in zip(w, x, strict=True))
    if kind == "linear":  # linear(2*x - 0.5*z + y)
        out["sum"] = math.fsum(
            wi * (2 * xi - 0.5 * zi + yi) for wi, xi, yi, zi in zip(w, x, y, z, strict=True)
        )
    return out


CASES: list[tuple[str, list[tuple[str, str, Any]]]] = [
    ("count()", []),
    ("count() where region = 'north'", [("region", "=", "north")]),
    ("count() where region != 'north'", [("region", "!=", "north")]),
    ("count() where region < 'north'", [("region", "<", "north")]),
    ("count() where region <= 'north'", [("region", "<=", "north")]),
    ("count() where region > 'north'", [("region", ">", "north")]),
    ("count() where region >= 'south'", [("region", ">=", "south")]),
    ("sum(x)", []),
    ("sum(x) where x = 3", [("x", "=", 3.0)]),
    ("sum(x) where x != -2", [("x", "!=", -2.0)]),
    ("sum(x) where x < 0.5", [("x", "<", 0.5)]),
    ("sum(x) where x <= -2", [("x", "<=", -2.0)]),
    ("sum(x) where x > 0.5", [("x", ">", 0.5)]),
    ("sum(x) where x >= 3", [("x", ">=", 3.0)]),
    ("sum(y) where y > 1.9 and region = 'north'", [("y", ">", 1.9), ("region", "=", "north")]),
    ("mean(x) where region = 'east' and y >= 1", [("region", "=", "east"), ("y", ">=", 1.0)]),
    ("variance(x) where z <= 0.5", [("z", "<=", 0.5)]),
    ("weighted_mean(x, y) where region != 'south'", [("region", "!=", "south")]),
    ("linear(2*x - 0.5*z + y) where x > -1", [("x", ">", -1.0)]),
]


def _expected(plan: Plan, where: list[tuple[str, str, Any]]) -> list[float]:
    kind = plan.query.kind
    if plan.query.column == "y":  # sum(y): the loop's sum is over x
        w = [_selected(r, where) for r in ROWS]
        return [math.fsum(wi * _clamp(r["y"], "y") for wi, r in zip(w, ROWS, strict=True))]
    loop = _loop(kind, where)
    return [loop[c.name] for c in plan.components]


@pytest.mark.parametrize(("text", "where"), CASES, ids=[c[0] for c in CASES])
def test_components_equal_a_loop_over_the_records(config, datasets, text: str, where) -> None:
    plan = _plan(config, text)
    totals, records = datasets.evaluate(plan)
    assert records == N
    np.testing.assert_allclose(totals, _expected(plan, where), rtol=1e-13, atol=1e-13)


def test_component_names_are_the_ones_the_loop_knows(config) -> None:
    names = {text: [c.name for c in _plan(config, text).components] for text, _ in CASES}
    assert names["count()"] == ["count"]
    assert names["mean(x) where region = 'east' and y >= 1"] == ["sum", "count"]
    assert names["variance(x) where z <= 0.5"] == ["sum", "sum_of_squares", "count"]
    assert names["weighted_mean(x, y) where region != 'south'"] == ["weighted_sum", "weight_sum"]


@pytest.mark.parametrize("text", ["sum(x)", "mean(x)", "linear(2*x - 0.5*z + y)"])
def test_fisher_components_equal_a_loop_over_the_records(config, datasets, text: str) -> None:
    plan = _plan(config, text, "f")
    (total,), records = datasets.evaluate(plan)
    assert records == N
    loop = _loop(plan.query.kind, [])
    expected = loop["mean"] if plan.query.kind == "mean" else loop["sum"]
    assert total == pytest.approx(expected, rel=1e-13, abs=1e-13)


def test_the_fisher_mean_of_one_record_is_that_record(config, datasets) -> None:
    plan = _plan(config, "mean(x)", "one", records=1)
    assert datasets.evaluate(plan) == ([2.5], 1)


# -- identity releases ------------------------------------------------------------------------------------------
def _keys(seed: int, count: int) -> np.ndarray:
    top = np.iinfo(np.uint64).max
    return np.random.default_rng(seed).integers(0, top, size=(count, 2), dtype=np.uint64, endpoint=True)


def _stream(key: np.ndarray) -> np.random.Generator:
    return np.random.Generator(AESCounter(key=(int(key[0]) << 64) | int(key[1])))


def test_each_partitions_block_is_its_clamped_records_plus_its_own_streams_noise(
    config, datasets, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dask_engine, "default_rng", lambda: np.random.default_rng(2024))
    plan = _plan(config, "identity(x)")
    values, found = datasets.release_identity(plan)
    assert found == N and values.shape == (N,)
    law = plan.components[0].noise
    (scale,) = np.unique(law.mechanism.scale)
    (bound,) = np.unique(law.bound)
    lo, hi = BOUNDS["x"]
    assert scale == hi - lo  # Δ/ε with ε = 1: the exact sum snapped adds no margin
    keys = _keys(2024, len(FILES))
    start = 0
    for f, key in zip(FILES, keys, strict=True):
        rows = len(f["x"])
        truth = np.array([_clamp(v, "x") for v in f["x"]])
        one = SnappedMechanism(
            mechanism=Laplace(scale=scale), sensitivity=hi - lo, bound=bound, grid_exponent=law.grid_exponent
        )
        expected = one.add_to(truth, rng=_stream(key))
        np.testing.assert_array_equal(values[start : start + rows], expected)
        start += rows
    assert start == N


def test_identity_noise_is_drawn_from_new_keys_for_every_release(
    config, datasets, monkeypatch: pytest.MonkeyPatch
) -> None:
    seeds = iter([11, 12])
    monkeypatch.setattr(dask_engine, "default_rng", lambda: np.random.default_rng(next(seeds)))
    plan = _plan(config, "identity(x)")
    a, _ = datasets.release_identity(plan)
    b, _ = datasets.release_identity(plan)
    assert np.all(a != b)  # with these seeds no coordinate's noise repeats
    truth = np.array([_clamp(r["x"], "x") for r in ROWS])
    for keys, values in (
        (_keys(11, len(FILES)), a),
        (_keys(12, len(FILES)), b),
    ):  # the last partition's block
        law = plan.components[0].noise
        one = SnappedMechanism(
            mechanism=Laplace(scale=float(np.min(law.mechanism.scale))),
            sensitivity=law.sensitivity,
            bound=float(np.max(law.bound)),
            grid_exponent=law.grid_exponent,
        )
        rows = len(FILES[-1]["x"])
        np.testing.assert_array_equal(values[-rows:], one.add_to(truth[-rows:], rng=_stream(keys[-1])))


def test_every_task_has_a_name_of_its_own_query_and_partition(config, datasets) -> None:
    """Concurrent queries share the cluster: a task named like another query's would be given that one's result.
    The prefixes name the tasks on the cluster (the failure tests stop a worker at a release task by its name)."""
    client = datasets._connections["local"].client
    client.batches.clear()
    for _ in range(2):
        datasets.evaluate(_plan(config, "sum(x)"))
        datasets.release_identity(_plan(config, "identity(x)"))
    keys = [[str(t.key) for t in batch] for batch in client.batches]
    assert [len(k) for k in keys] == [len(FILES)] * 4
    assert all(k.startswith("privnoise-sums-") for k in keys[0] + keys[2])
    assert all(k.startswith("privnoise-release-") for k in keys[1] + keys[3])
    everything = [k for batch in keys for k in batch]
    assert len(set(everything)) == len(everything)


def test_an_identity_plan_for_another_number_of_records_is_refused(config, datasets) -> None:
    plan = _plan(config, "identity(x)", records=N - 1)
    with pytest.raises(ValueError, match=f"holds {N} records, the plan was made for {N - 1}"):
        datasets.release_identity(plan)


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray]:
    base = tmp_path_factory.mktemp("dask_engine_big")
    x = np.random.default_rng(8).uniform(-4.0, 5.0, 100_000)
    files = [
        {"x": list(c), "y": [1.0] * len(c), "z": [0.0] * len(c), "region": ["a"] * len(c)}
        for c in np.array_split(x, 4)
    ]
    _write(base / "parts", files, secret=False)
    (base / "owner.toml").write_text(
        '[server]\ndatabase = "sqlite"\n' + _dataset("big", "parts/*.parquet", kinds=("identity",))
    )
    return base, x


def test_identity_noise_follows_the_stated_law(
    big, connections, assert_ks, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, x = big
    monkeypatch.setattr(dask_engine, "default_rng", lambda: np.random.default_rng(77))
    config = load_config(base / "owner.toml")
    engine = dask_engine.DaskDatasets(config)
    try:
        plan = _plan(config, "identity(x)", "big", records=x.size)
        values, _ = engine.release_identity(plan)
    finally:
        engine.close()
    (scale,) = np.unique(plan.components[0].noise.mechanism.scale)
    noise = values - np.clip(x, *BOUNDS["x"])
    assert_ks(
        noise,
        stats.laplace(scale=scale).cdf,
        [stats.laplace(scale=0.7 * scale).cdf, stats.laplace(scale=1.3 * scale).cdf],
    )


def test_noisy_partition_clamps_nulls_and_nans_to_the_lower_bound() -> None:
    law = hardened(Laplace(scale=[1.0] * 5), sensitivity=1.0, bound=100.0, grid_exponent=-10)
    key = _keys(3, 1)[0]
    column = pd.Series(pd.array([None, 7.0, -7.0, 0.5, None], dtype="Float64"))
    column[4] = NAN  # pandas keeps it a missing value
    out = dask_engine.noisy_partition(column, -1.0, 2.0, key, dask_engine.pack(law))
    expected = hardened(Laplace(scale=1.0), sensitivity=1.0, bound=100.0, grid_exponent=-10).add_to(
        np.array([-1.0, 2.0, -1.0, 0.5, -1.0]), rng=_stream(key)
    )
    np.testing.assert_array_equal(out, expected)


# -- partition tasks --------------------------------------------------------------------------------------------
def test_a_partition_task_reads_missing_numbers_as_the_lower_bound() -> None:
    part = pd.DataFrame(
        {
            "x": pd.array([None, 2.0, NAN, 10.0, -10.0], dtype="Float64"),
            "t": pd.array(["a", None, "b", "a", None], dtype="string"),
        }
    )
    columns = {"x": ("number", -1.0, 3.0), "t": ("text", 0.0, 0.0)}
    terms = (
        ("count", ()),
        ("power", ("x", 1, 1.0, 0.0)),
        ("power", ("x", 2, 4.0, 0.0)),
        ("product", ("x", "x")),
        ("linear", (("x", 3.0), ("x", -1.0))),
    )
    job = dask_engine.pack(dask_engine.Evaluation(columns, (Condition("t", "!=", "b"),), terms))
    out = dask_engine.evaluate_partition(part, job)
    x = np.array([-1.0, 2.0, -1.0, 3.0, -1.0])
    w = np.array([1.0, 0.0, 0.0, 1.0, 0.0])  # a missing text never matches, not even !=
    np.testing.assert_array_equal(out, [w.sum(), w @ x, w @ x**2 / 4, w @ x**2, w @ (2 * x), 5.0])


def test_a_partition_task_reads_numbers_as_the_declaration_check_does() -> None:
    """A nullable flag column's missing value and a value that is no number (which the check of the files
    refuses) count as the lower bound, as a missing number does."""
    part = pd.DataFrame(
        {
            "flag": pd.array([True, None, False, True], dtype="boolean"),
            "v": pd.Series(["2.5", "kwh", None, "-7"], dtype=object),
        }
    )
    columns = {"flag": ("number", 0.25, 1.0), "v": ("number", -1.0, 2.0)}
    job = dask_engine.Evaluation(columns, (), (("power", ("flag", 1, 1.0, 0.0)), ("power", ("v", 1, 1.0, 0.0))))
    out = dask_engine.evaluate_partition(part, dask_engine.pack(job))
    np.testing.assert_array_equal(out, [1.0 + 0.25 + 0.25 + 1.0, 2.0 - 1.0 - 1.0 - 1.0, 4.0])
    assert dask_engine.check_partition(part, {"v": (-1.0, 2.0, False)}) == (
        1,
        "column 'v': 'kwh' is not a finite number",
    )


def test_a_partition_task_of_no_records_returns_zeros() -> None:
    part = pd.DataFrame({"x": pd.Series([], dtype=float)})
    job = dask_engine.pack(
        dask_engine.Evaluation(
            {"x": ("number", 1.0, 2.0)}, (Condition("x", ">", 1.5),), (("count", ()), ("power", ("x", 1, 1.0, 0.0)))
        )
    )
    np.testing.assert_array_equal(dask_engine.evaluate_partition(part, job), [0.0, 0.0, 0.0])


# -- constant work ----------------------------------------------------------------------------------------------
def _work(config, datasets, monkeypatch: pytest.MonkeyPatch, text: str) -> tuple[list[Any], ...]:
    """What evaluating ``text`` did: the records of every clamp, the tasks, each task's output shape."""
    clamps: list[int] = []
    outputs: list[tuple[int, ...]] = []
    clamped, evaluate = dask_engine.clamped_values, dask_engine.evaluate_partition
    client = datasets._connections["local"].client
    client.batches.clear()

    def clamp_spy(series: Any, low: float, high: float) -> Any:
        clamps.append(len(series))
        return clamped(series, low, high)

    def evaluate_spy(part: Any, packed: bytes) -> Any:
        out = evaluate(part, packed)
        outputs.append(out.shape)
        return out

    with monkeypatch.context() as patch:
        patch.setattr(dask_engine, "clamped_values", clamp_spy)
        patch.setattr(dask_engine, "evaluate_partition", evaluate_spy)
        datasets.evaluate(_plan(config, text))
    tasks = [len(batch) for batch in client.batches]
    return clamps, tasks, outputs


@pytest.mark.parametrize(
    ("every", "none"),
    [
        ("sum(x) where region != 'nowhere' and x >= -2", "sum(x) where region = 'nowhere' and x >= -2"),
        (
            "variance(x) where x >= -2 and region != 'nowhere'",
            "variance(x) where x > 3 and region != 'nowhere'",
        ),
        ("weighted_mean(x, y) where y <= 2", "weighted_mean(x, y) where y < 0.5"),
    ],
    ids=["text", "number", "weights"],
)
def test_the_work_does_not_depend_on_how_many_records_a_filter_selects(
    config, datasets, monkeypatch: pytest.MonkeyPatch, every: str, none: str
) -> None:
    counts = [
        datasets.evaluate(_plan(config, "count() where " + text.partition(" where ")[2]))[0]
        for text in (every, none)
    ]
    where = [("region", "!=", "nowhere")] if "region" in every else []
    assert counts == [[_loop("count", where)["count"]], [0.0]] and counts[0][0] >= N - 4
    all_work, no_work = (
        _work(config, datasets, monkeypatch, every),
        _work(config, datasets, monkeypatch, none),
    )
    assert all_work == no_work
    clamps, tasks, outputs = all_work
    assert tasks == [len(FILES)] and len(outputs) == len(FILES)
    assert sorted(set(clamps)) == sorted({len(f["x"]) for f in FILES})  # every clamp reads a whole partition


# -- checks of declared datasets --------------------------------------------------------------------------------
def test_check_partition_finds_the_first_invalid_record_and_says_why() -> None:
    rules = {"a": (0.0, 3.0, True), "b": (0.0, 3.0, False)}
    frame = pd.DataFrame({"a": [0.0, 3.0, 1.5], "b": [-9.0, 9.0, 1.0]}, index=[10, 11, 12])
    assert dask_engine.check_partition(frame, rules) is None  # bounds included; b clamps
    cases = [
        (
            {"a": [0.0, 3.5, 1.0]},
            (11, "column 'a': 3.5 is outside the declared bounds [0, 3] (out_of_bounds = 'reject')"),
        ),
        (
            {"a": [0.0, -0.25, 1.0]},
            (11, "column 'a': -0.25 is outside the declared bounds [0, 3] (out_of_bounds = 'reject')"),
        ),
        ({"b": [1.0, 2.0, NAN]}, (12, "column 'b': nan is not a finite number")),
        ({"b": [1.0, float("inf"), 1.0]}, (11, "column 'b': inf is not a finite number")),
        ({"b": np.array([1.0, None, 1.0], dtype=object)}, (11, "column 'b': null is not a finite number")),
        (
            {"b": pd.array([1.0, pd.NA, 1.0], dtype="Float64")},
            (11, "column 'b': null is not a finite number"),
        ),
        ({"b": ["1", "2", "kwh"]}, (12, "column 'b': 'kwh' is not a finite number")),
        ({"a": [0.0, 1.0, 7.0], "b": [1.0, NAN, 1.0]}, (11, "column 'b': nan is not a finite number")),
        (
            {"a": [0.0, 7.0, 1.0], "b": [1.0, NAN, 1.0]},
            (11, "column 'a': 7 is outside the declared bounds [0, 3] (out_of_bounds = 'reject')"),
        ),
        ({"a": [NAN, 7.0, 1.0], "b": [1.0, NAN, 1.0]}, (10, "column 'a': nan is not a finite number")),
    ]
    for change, expected in cases:
        bad = frame.copy()
        for column, values in change.items():
            bad[column] = pd.Series(values, index=frame.index)
        assert dask_engine.check_partition(bad, rules) == expected, change
    halves = {"h": (-0.5, 0.25, True)}
    assert dask_engine.check_partition(pd.DataFrame({"h": [0.5]}), halves) == (
        0,
        "column 'h': 0.5 is outside the declared bounds [-0.5, 0.25] (out_of_bounds = 'reject')",
    )


def _files_spec(root: Path, files: list[dict[str, list[Any]]], name: str, *, scheduler: str = "local") -> Any:
    _write(root / name, files)
    (root / f"{name}.toml").write_text(
        '[server]\ndatabase = "sqlite"\n'
        + _dataset(name, f"{name}/*.parquet", scheduler=scheduler, kinds=("count",), reject=("y",)),
        encoding="utf-8",
    )
    return load_config(root / f"{name}.toml").datasets[name]


def test_check_files_counts_valid_files_and_refuses_the_first_invalid_record(tmp_path: Path) -> None:
    clean = [{c: [_clamp(v, c) if c in BOUNDS else (v or "none") for v in f[c]] for c in f} for f in FILES]
    for f in clean:  # x and z clamp when queried: out-of-bounds values are valid
        f["x"][0], f["z"][0] = 50.0, -50.0
    assert dask_engine.check_files(_files_spec(tmp_path, clean, "clean")) == N
    bad = [dict(f) for f in clean]
    bad[3] = {**clean[3], "z": [0.0, 0.0, NAN, 0.0, 0.0, 0.0, 0.0, 0.0]}  # record 16 + 2
    bad[1] = {**clean[1], "y": [1.0] * 5 + [2.5] + [1.0] * 3}  # record 6 + 5: y rejects out-of-bounds values
    with pytest.raises(
        DataImportError,
        match=r"bad/\*\.parquet: record 11, column 'y': 2\.5 is outside the "
        r"declared bounds \[0\.5, 2\] \(out_of_bounds = 'reject'\); NaN, inf and missing numbers",
    ):
        dask_engine.check_files(_files_spec(tmp_path, bad, "bad"))
    later = [dict(f) for f in clean]
    later[3] = bad[3]
    with pytest.raises(DataImportError, match="record 18, column 'z': nan is not a finite number"):
        dask_engine.check_files(_files_spec(tmp_path, later, "later"))


def test_check_files_refuses_missing_files_and_columns(tmp_path: Path) -> None:
    spec = _files_spec(tmp_path, [{"x": [1.0], "y": [1.0], "z": [0.0], "region": ["a"]}], "good")
    (tmp_path / "good" / "part-0.parquet").unlink()
    with pytest.raises(DataImportError, match="no Parquet file matches"):
        dask_engine.check_files(spec)
    spec = _files_spec(tmp_path, [{"x": [1.0], "y": [1.0], "region": ["a"]}], "short")
    with pytest.raises(
        DataImportError, match=r"short/\*\.parquet: declared column 'z' is not in the files\."
    ):
        dask_engine.check_files(spec)


def test_check_files_runs_on_the_named_cluster(tmp_path: Path, connections) -> None:
    files = [
        {"x": [1.0, 2.0], "y": [1.0, 1.0], "z": [0.0, 0.0], "region": ["a", "b"]},
        {"x": [1.0], "y": [9.0], "z": [0.0], "region": ["a"]},
    ]
    spec = _files_spec(tmp_path, files, "remote", scheduler="tcp://10.0.0.1:8786")
    with pytest.raises(DataImportError, match="record 2, column 'y'"):
        dask_engine.check_files(spec)
    (connection,) = connections
    assert connection.scheduler == "tcp://10.0.0.1:8786" and connection.kwargs["set_as_default"] is False
    assert connection.closed == 1 and [len(b) for b in connection.client.batches] == [2]


# -- connections ------------------------------------------------------------------------------------------------
def test_one_connection_per_scheduler_never_the_default_and_only_declared_columns(
    root: Path, connections
) -> None:
    text = (root / "owner.toml").read_text() + _dataset(
        "e", "parts/*.parquet", scheduler="tcp://10.0.0.2:8786"
    )
    text += '[datasets.sq]\nsource = "rows.csv"\nepsilon = "1"\n[datasets.sq.columns.v]\nbounds = [0, 1]\n'
    (root / "rows.csv").write_text("v\n0.5\n")
    (root / "two.toml").write_text(text, encoding="utf-8")
    engine = dask_engine.DaskDatasets(load_config(root / "two.toml"))
    assert sorted(engine.specs) == ["d", "e", "f", "one"]
    assert [(c.scheduler, c.kwargs["set_as_default"]) for c in connections] == [
        ("local", False),
        ("tcp://10.0.0.2:8786", False),
    ]
    assert list(engine.frames["d"].columns) == ["x", "y", "z", "region"]
    assert engine.records("d") == N and engine.records("one") == 1
    engine.close()
    engine.close()
    assert [c.closed for c in connections] == [1, 1]


def test_a_dataset_that_cannot_be_read_closes_the_connections_made(root: Path, connections) -> None:
    text = '[server]\ndatabase = "sqlite"\n' + _dataset("d", "parts/*.parquet")
    text += _dataset("gone", "nothing/*.parquet", scheduler="tcp://10.0.0.3:8786")
    (root / "gone.toml").write_text(text, encoding="utf-8")
    with pytest.raises(Exception, match="no Parquet file matches"):
        dask_engine.DaskDatasets(load_config(root / "gone.toml"))
    assert [c.closed for c in connections] == [1, 1]
