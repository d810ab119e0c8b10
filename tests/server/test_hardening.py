"""SECURITY.md requirement 14 and issue findings 1, 6 and 7, with the smaller items: every number that enters a
budget or the ledger is finite and in range before any charge; admin inputs are bounded; validation (NUL bytes
included) comes before any charge; failed queries are marked; re-imports refresh record counts; the admin key
may live in the configuration."""

from __future__ import annotations

import math
import subprocess
import sys
import threading
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.server._harness import _fresh_postgres_database, running_server, write_config  # noqa: E402
from tests.server._lab import FAMILIES, DatasetDef, Lab, _policies, invariant_datasets  # noqa: E402

REPO = Path(__file__).resolve().parents[2]

# --- 1 and the class: extreme numbers never reach the stored budget --------------------------------------------------

EXTREMES = (
    5e-324,
    1e-320,
    2.2250738585072014e-308,
    1e-300,
    3e-163,
    1e-163,
    1e-101,
    1e-100,
    1e-30,
    1.0,
    1e100,
    1e101,
    1e280,
    1e290,
    1e308,
    1.7976931348623157e308,
)
_extreme = st.one_of(
    st.sampled_from(EXTREMES), st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=True)
).flatmap(lambda v: st.sampled_from([v, -v]))


def _wide_datasets() -> list[DatasetDef]:
    """Datasets with wide and narrow declared bounds, for every policy family."""
    out = []
    for family in FAMILIES:
        rows = [
            {
                "x": (-1e60, 1e60)[i % 2] * (i / 7),
                "y": 1e-3 * (i % 3 - 1),
                "w": 10.0 ** (i % 7 - 3),
                "region": "north",
            }
            for i in range(8)
        ]
        bounds = {"x": (-1e60, 1e60), "y": (-1e-3, 1e-3), "w": (1e-3, 1e3)}
        out.append(DatasetDef(f"wide_{family.replace('-', '_')}", rows, bounds, _policies(family), family))
    return out


DATASETS = [d for d in invariant_datasets() if d.name.endswith(("_0", "_1"))] + _wide_datasets()
KINDS = ("count", "sum", "mean", "weighted_mean", "variance", "linear", "identity")


@pytest.fixture(scope="module")
def extreme_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with Lab(tmp_path_factory.mktemp("extreme"), DATASETS) as lab:
        lab.add_querier("x", epsilon="1000", delta="1/2", fisher_floor=1e-6)
        yield {"lab": lab, "last": {}}


@st.composite
def _extreme_query(draw: st.DrawFn) -> dict[str, Any]:
    dataset = draw(st.sampled_from([d.name for d in DATASETS]))
    kind = draw(st.sampled_from(KINDS))
    body: dict[str, Any] = {"kind": kind, "dataset": dataset}
    if kind == "linear":
        terms = draw(st.lists(st.tuples(st.sampled_from(["x", "y", "w"]), _extreme), min_size=1, max_size=3))
        if draw(st.booleans()):
            inner = " ".join(("- " if a < 0 else "+ ") + f"{abs(a)!r}*{c}" for c, a in terms)
            return {"query": f"linear({inner.removeprefix('+ ')}) from {dataset}"}
        body["coefficients"] = dict(terms)
    elif kind != "count":
        body["column"] = draw(st.sampled_from(["x", "y"]))
        if kind == "weighted_mean":
            body["weights"] = "w"
    if kind != "identity" and draw(st.booleans()):
        body["where"] = [
            {
                "column": draw(st.sampled_from(["x", "y"])),
                "op": draw(st.sampled_from(["<", ">=", "="])),
                "value": draw(_extreme),
            }
        ]
    return body


def _stored(lab: Lab) -> dict[tuple[str, ...], Fraction]:
    """Every stored budget number, parsed exactly (a NaN, an infinity or garbage raises)."""
    from sqlalchemy import select

    from privnoise.server import db
    from privnoise.server.budgets import DatasetState, QuerierState

    out: dict[tuple[str, ...], Fraction] = {}
    with lab.engine.connect() as conn:
        for row in conn.execute(select(db.datasets)).mappings():
            d = DatasetState.from_row(row)
            out[("dataset", row["name"], "epsilon")] = d.spent_epsilon
            out[("dataset", row["name"], "delta")] = d.spent_delta
            out |= {("dataset", row["name"], c): v for c, v in d.information.items()}
        for row in conn.execute(select(db.budgets)).mappings():
            q = QuerierState.from_row(row)
            key = (str(row["querier_id"]), row["dataset"])
            out[(*key, "epsilon")] = q.spent_epsilon
            out[(*key, "delta")] = q.spent_delta
            out |= {(*key, c): v for c, v in q.information.items()}
            assert q.spent_epsilon <= q.epsilon and q.spent_delta <= q.delta
    return out


@settings(
    max_examples=120, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
)
@given(body=_extreme_query())
def test_extreme_numbers_never_make_the_stored_budget_non_finite(
    extreme_lab: dict[str, Any], body: dict[str, Any]
) -> None:
    lab: Lab = extreme_lab["lab"]
    r = lab.post("x", body)
    assert r.status_code in (200, 422, 429), (body, r.status_code, r.text)
    if r.status_code == 200:
        value = r.json()["value"]
        assert all(
            isinstance(v, float) and math.isfinite(v) for v in (value if isinstance(value, list) else [value])
        )
        assert all(math.isfinite(v) and v > 0 for v in r.json()["charged"]["fisher_information"].values())
    now = _stored(lab)
    for key, old in extreme_lab["last"].items():
        assert now.get(key, Fraction(0)) >= old, (key, old, now.get(key))  # monotone
    extreme_lab["last"] = now
    views = lab.get("x", "/v1/budget").json()["datasets"]
    for view in views.values():
        for column in view.get("fisher", {}).values():
            # null means exactly one thing: nothing released about this column yet
            assert (column["record_bound"] is None) == (column["information"] == "0"), column
            assert math.isfinite(column["information_float"])


def _meters(tmp_path: Path, **server: Any) -> Lab:
    rows = [{"x": 5.0 + (i * 7.3) % 30.0, "region": ("north", "south")[i % 2]} for i in range(40)]
    policies = (
        '[policies.linear]\nmechanism = "laplace"\nepsilon = "1/10"\n'
        '[policies.sum]\nmechanism = "laplace"\nepsilon = "1/10"\n'
        '[policies.identity]\nmechanism = "fisher-gaussian"\nquality = 1.0\n'
    )
    return Lab(
        tmp_path,
        [
            DatasetDef(
                "meters",
                rows,
                {"x": (0.0, 60.0)},
                policies,
                "laplace",
                epsilon="10",
                fisher_floor={"x": 0.01},
            )
        ],
        **server,
    )


@pytest.mark.parametrize("coefficient", ["1e-300", "3e-163", "1e-170", "1e280", "1e290", "5e-324"])
def test_an_extreme_coefficient_cannot_switch_off_the_fisher_budget(tmp_path: Path, coefficient: str) -> None:
    # The attack of finding 1: linear(1e-300*x) under a DP policy stored 0·∞ = NaN as its Fisher charge, and
    # afterwards the floor of 0.01 (100 releases of information 1) let 400 identity releases through.
    with _meters(tmp_path) as lab:
        lab.add_querier("mallory", epsilon="1")
        r = lab.post("mallory", {"query": f"linear({coefficient}*x) from meters"})
        assert r.status_code == 422, r.text
        assert "coefficient" in r.json()["error"]
        budget = lab.get("mallory", "/v1/budget").json()["datasets"]["meters"]
        assert budget["epsilon"]["spent"] == "0" and budget["fisher"]["x"]["information"] == "0"
        codes = [lab.post("mallory", {"query": "identity(x) from meters"}).status_code for _ in range(101)]
        assert codes == [200] * 100 + [429]


# --- 6: admin inputs, concurrent creation; 7: NUL before any charge (both backends) ---------------------------------------


@pytest.fixture(params=["sqlite", "postgresql"])
def backend_lab(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Lab]:
    database = "sqlite"
    if request.param == "postgresql":
        database = _fresh_postgres_database(str(request.getfixturevalue("_postgres_url")))
    with _meters(tmp_path, database=database) as lab:
        lab.add_querier("alice", epsilon="1")
        yield lab


@pytest.mark.parametrize(
    "body",
    [
        {"name": "a", "epsilon": "1e400"},
        {"name": "a", "epsilon": 1e-320},
        {"name": "a", "epsilon": "1e-320"},
        {"name": "a", "epsilon": "1e-99"},
        {"name": "a", "epsilon": "3" * 99},
        {"name": "a", "epsilon": "1/3", "delta": "1e-400"},
        {"name": "a", "epsilon": 1, "delta": "1"},
        {"name": "a", "epsilon": 1, "fisher_floor": 1e-320},
        {"name": "a", "epsilon": 1, "fisher_floor": 1e308},
        {"name": "a\x00b", "epsilon": 1},
        {"name": "ä", "epsilon": 1},
    ],
)
def test_admin_inputs_are_bounded_before_they_reach_the_database(
    backend_lab: Lab, body: dict[str, Any]
) -> None:
    r = backend_lab.http.post(
        "/v1/admin/queriers", json=body, headers={"Authorization": f"Bearer {backend_lab.keys['admin']}"}
    )
    assert r.status_code == 422, (body, r.status_code, r.text)
    assert "a" not in [q["name"] for q in backend_lab.get("admin", "/v1/admin/queriers").json()["queriers"]]


@pytest.mark.parametrize(
    "body",
    [
        {"query": "sum(x) from meters where region = 'a\x00b'"},
        {
            "kind": "sum",
            "column": "x",
            "dataset": "meters",
            "where": [{"column": "region", "op": "=", "value": "a\x00b"}],
        },
        {
            "kind": "sum",
            "column": "x",
            "dataset": "meters",
            "where": [{"column": "region", "op": "=", "value": "a\x1fb"}],
        },
    ],
)
def test_nul_bytes_are_refused_before_any_charge(backend_lab: Lab, body: dict[str, Any]) -> None:
    r = backend_lab.post("alice", body)
    assert r.status_code == 422 and "control characters" in r.json()["error"], r.text
    assert backend_lab.get("alice", "/v1/budget").json()["datasets"]["meters"]["epsilon"]["spent"] == "0"
    assert backend_lab.get("admin", "/v1/admin/ledger", outcome="charged").json()["ledger"] == []


def test_admin_paths_with_nul_bytes_get_422(backend_lab: Lab) -> None:
    admin = {"Authorization": f"Bearer {backend_lab.keys['admin']}"}
    assert backend_lab.http.get("/v1/admin/queriers/a%00b/budget", headers=admin).status_code == 422
    assert (
        backend_lab.http.get("/v1/admin/ledger", params={"querier": "a\x00b"}, headers=admin).status_code
        == 422
    )


def test_concurrent_creation_of_one_name_gives_one_201_and_409s(database_url: str, tmp_path: Path) -> None:
    path, keys = write_config(tmp_path, database_url=database_url)
    codes: list[int] = []
    start = threading.Barrier(20)
    with running_server(path) as server:

        def create() -> None:
            with server.client(keys["admin"]) as admin:
                start.wait()
                codes.append(
                    admin.post("/v1/admin/queriers", json={"name": "twin", "epsilon": 1}).status_code
                )

        threads = [threading.Thread(target=create) for _ in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert sorted(codes) == [201] + [409] * 19


# --- smaller items ----------------------------------------------------------------------------------------------------


def test_reimport_refreshes_the_record_counts_of_a_running_server(tmp_path: Path) -> None:
    from privnoise.server import store

    rows = [{"x": 10.0 + i, "region": "north"} for i in range(10)]
    policies = '[policies.identity]\nmechanism = "fisher-gaussian"\nquality = 1.0\n[policies.mean]\nmechanism = "fisher-gaussian"\nquality = 1.0\n'
    with Lab(tmp_path, [DatasetDef("d", rows, {"x": (0.0, 60.0)}, policies, "fisher-gaussian")]) as lab:
        lab.add_querier("q")
        assert len(lab.post("q", {"query": "identity(x) from d"}).json()["value"]) == 10
        mean = lab.post("q", {"query": "mean(x) from d"}).json()
        assert mean["charged"]["fisher_information"]["x"] == pytest.approx(1.0 / 10**2)
        (tmp_path / "d.csv").write_text("x,region\n" + "".join(f"{20 + i}.0,south\n" for i in range(25)))
        store.init_database(lab.config, reimport=True).dispose()  # the owner re-imports, the server runs on
        identity = lab.post("q", {"query": "identity(x) from d"})
        assert identity.status_code == 200 and len(identity.json()["value"]) == 25
        mean = lab.post("q", {"query": "mean(x) from d"}).json()
        assert mean["charged"]["fisher_information"]["x"] == pytest.approx(1.0 / 25**2)
        assert lab.get("admin", "/v1/admin/datasets").json()["datasets"]["d"]["records"] == 25


def test_the_admin_key_hash_may_live_in_the_configuration(tmp_path: Path) -> None:
    from privnoise.server import keys

    key, _, _ = keys.new_key()
    result = subprocess.run(
        [sys.executable, "-m", "privnoise.server", "hash-key"],
        input=key + "\n",
        capture_output=True,
        text=True,
        check=True,
    )
    entry = result.stdout.strip()
    assert keys.parse_admin_key_hash(entry) is not None and key.split("_", 2)[2] not in entry
    with _meters(tmp_path, server=f'admin_key_hash = "{entry}"') as lab:
        assert "admin" not in lab.keys  # no admin key was made: the owner holds it
        lab.keys["admin"] = key
        assert lab.get("admin", "/v1/admin/queriers").status_code == 200
        lab.keys["wrong"] = key[:-4] + "AAAA"
        assert lab.get("wrong", "/v1/admin/queriers").status_code == 401


def test_failed_queries_are_marked_in_the_ledger(tmp_path: Path) -> None:
    policies = (
        '[policies.sum]\nmechanism = "custom"\nfactory = "tests.server._failing:build"\nepsilon = "1/10"\n'
    )
    rows = [{"x": 1.0, "region": "north"}]
    with Lab(tmp_path, [DatasetDef("broken", rows, {"x": (0.0, 1.0)}, policies, "custom")]) as lab:
        lab.add_querier("q")
        r = lab.post("q", {"query": "sum(x) from broken"})
        assert (r.status_code, r.content) == (422, b'{"error":"query failed"}')
        (row,) = lab.get("admin", "/v1/admin/ledger").json()["ledger"]
        assert row["status"] == "failed" and row["epsilon"] == "1/10"


def test_a_lost_creation_race_is_a_conflict_not_a_server_error(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Both creations pass the "does the name exist?" check before either inserts (PostgreSQL, READ COMMITTED:
    # SQLite's BEGIN IMMEDIATE would serialise them); the loser's UniqueViolation must read "already exists".
    from privnoise.exceptions import InvalidParameterError
    from privnoise.server import db, store

    database = _fresh_postgres_database(str(request.getfixturevalue("_postgres_url")))
    with _meters(tmp_path, database=database) as lab:
        both_checked = threading.Barrier(2, timeout=30)
        real_now = db.utcnow

        def now_after_both_checked() -> Any:  # called between the check and the insert
            both_checked.wait()
            return real_now()

        monkeypatch.setattr(db, "utcnow", now_after_both_checked)
        outcomes: list[Any] = []

        def create() -> None:
            try:
                outcomes.append(store.create_querier(lab.engine, lab.config, "twin", epsilon=1))
            except InvalidParameterError as exc:
                outcomes.append(exc)

        threads = [threading.Thread(target=create) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    errors = [o for o in outcomes if isinstance(o, Exception)]
    assert len(outcomes) == 2 and len(errors) == 1 and "already exists" in str(errors[0]), outcomes
