"""Property-based fuzzing of the query server's HTTP API with schemathesis: no input gives a 5xx.

Every operation of the app's own OpenAPI document is called in-process (ASGI, no socket) with generated
requests, both valid ones and ones that break the schema (schemathesis' positive and negative modes), with a
valid key in the ``Authorization`` header so that the requests reach the handlers: the admin key on
``/v1/admin/`` operations, elsewhere the key of a querier whose budget outlasts the run (so that queries are
answered, not refused with 429). The server is a fresh one on SQLite made by ``write_config``. Generation is
derandomised with a bounded number of examples per operation, so CI runs the same cases every time.
"""

from __future__ import annotations

import atexit
import contextlib
import math
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

schemathesis = pytest.importorskip("schemathesis")
pytest.importorskip("fastapi")

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.server._harness import write_config  # noqa: E402

#: Generated cases per operation (per generation mode the budget is shared); bounded so the run stays short.
MAX_EXAMPLES = 25


def _build_target() -> tuple[Any, dict[str, str]]:
    """A fresh server app on SQLite in a temporary directory, and its keys (plus the big-budget ``fuzzer``).

    Built when the module is imported, because ``schema.parametrize()`` needs the OpenAPI document at
    collection time (``schemathesis.pytest.from_fixture`` would defer it, but its lazy loader does not work
    with pytest 9: it reads ``Function._nodeid``, which pytest 9 no longer has).
    """
    from privnoise.server import store
    from privnoise.server.app import create_app
    from privnoise.server.config import load_config

    tmp = Path(tempfile.mkdtemp(prefix="privnoise-fuzz-"))
    atexit.register(shutil.rmtree, tmp, True)
    config_path, keys = write_config(tmp, global_epsilon=1e6)
    config = load_config(config_path)
    app = create_app(config)
    atexit.register(app.state.engine.dispose)
    keys = dict(keys)
    keys["fuzzer"] = store.create_querier(app.state.engine, config, "fuzzer", epsilon=1e5, delta="1/2")
    return app, keys


APP, KEYS = _build_target()
# The API description is off by default (owner.toml `api_docs`); the app still knows its own.
schema = schemathesis.openapi.from_dict(APP.openapi())
schema.app = APP


def _key_for(case: Any, keys: dict[str, str]) -> str:
    return keys["admin"] if case.path.startswith("/v1/admin/") else keys["fuzzer"]


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate, Phase.shrink],
    suppress_health_check=list(HealthCheck),
)
def test_no_input_gives_a_server_error(case: Any) -> None:
    response = case.call(headers={"Authorization": f"Bearer {_key_for(case, KEYS)}"})
    assert response.status_code < 500, (
        f"{case.method} {case.formatted_path} answered {response.status_code}: {response.text[:500]!r}\n"
        f"reproduce with: {case.as_curl_command(headers={'Authorization': 'Bearer <key>'})}"
    )


def test_the_fuzzed_schema_covers_the_api() -> None:
    operations = set()
    for result in schema.get_all_operations():
        operation = result.ok()
        operations.add((operation.method.upper(), operation.path))
    assert {("POST", "/v1/queries"), ("GET", "/v1/budget"), ("GET", "/health")} <= operations
    assert any(path.startswith("/v1/admin/") for _, path in operations)


# --- the query language, with the server's own vocabulary ------------------------------------------------------
# Random strings almost never name a dataset and a declared column, so the schema-driven cases above stop at the
# 422 of validation. These cases are drawn from the query grammar over the real datasets, columns, aggregates
# and operators (plus a few wrong names and extreme numbers), so they reach the charge, the SQL and the release:
# on SQLite and on PostgreSQL, whose typing is stricter. Answers are 200, 422 (malformed, not allowed, or failed
# after its charge) or 429 (budget), never a 5xx, and a released value is finite.

# Valid names are repeated so that most cases pass validation; the wrong ones keep the error paths covered.
DATASETS = ("meters", "meters", "meters", "meters_b", "meters_b", "broken", "broken_b", "nowhere")
COLUMNS = ("kwh", "kwh", "kwh", "kwh", "weight", "weight", "weight", "region", "region", "pn_row", "nothing")
KINDS = (
    *("count", "sum", "mean", "weighted_mean", "variance", "linear", "identity") * 3,
    *("avg", "wmean", "var", "max"),
)
OPS = ("=", "!=", "<", "<=", ">", ">=")
CONDITION_COUNTS = (0, 0, 0, 1, 1, 2, 3, 9)  # at most 8 are allowed

_numbers = st.one_of(
    st.integers(-100, 100).map(float),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 5e-324, 1e308, -1e308, 60.0, 60.000000001, 2.0**53]),
)
_strings = st.one_of(
    st.sampled_from(["north", "south", "", "%", "_", "\\", "north'--"]), st.text(max_size=12)
)
_names = st.sampled_from(COLUMNS)


def _literal(value: float | str) -> str:
    if isinstance(value, str):
        return "'" + value.replace("'", "") + "'"
    return repr(abs(value))  # the grammar has no unary minus on literals


@st.composite
def _condition(draw: st.DrawFn) -> tuple[str, str, float | str]:
    column = draw(_names)
    typed = draw(st.integers(0, 4)) > 0  # mostly a literal of the column's type, sometimes the other one
    value = draw(_strings if (column == "region") == typed else _numbers)
    return column, draw(st.sampled_from(OPS)), value


@st.composite
def structured_queries(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(KINDS[:21] + ("max",)))  # the JSON form knows no aliases
    body: dict[str, Any] = {"kind": kind, "dataset": draw(st.sampled_from(DATASETS))}
    if kind not in ("count", "linear") or draw(st.integers(0, 9)) == 0:
        body["column"] = draw(_names)
    if kind in ("weighted_mean", "wmean") or draw(st.integers(0, 9)) == 0:
        body["weights"] = draw(_names)
    if kind == "linear" or draw(st.integers(0, 9)) == 0:
        body["coefficients"] = draw(st.dictionaries(_names, _numbers, max_size=4))
    conditions = [draw(_condition()) for _ in range(draw(st.sampled_from(CONDITION_COUNTS)))]
    if conditions or draw(st.booleans()):
        body["where"] = [{"column": c, "op": op, "value": v} for c, op, v in conditions]
    return body


@st.composite
def text_queries(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(KINDS))
    if kind == "count":
        inner = draw(st.sampled_from(["", "*"]))
    elif kind == "linear":
        terms = draw(
            st.lists(st.tuples(_numbers, _names, st.sampled_from(["+", "-"])), min_size=1, max_size=4)
        )
        inner = " ".join(f"{sign} {_literal(a)}*{c}" for a, c, sign in terms)
    elif kind in ("weighted_mean", "wmean"):
        inner = f"{draw(_names)}, {draw(_names)}"
    else:
        inner = draw(_names)
    text = f"{kind}({inner}) from {draw(st.sampled_from(DATASETS))}"
    conditions = [draw(_condition()) for _ in range(draw(st.sampled_from(CONDITION_COUNTS)))]
    if conditions:
        text += " where " + " and ".join(f"{c} {op} {_literal(v)}" for c, op, v in conditions)
    return {"query": text}


_bodies = st.one_of(
    structured_queries(),
    text_queries(),
    st.text(max_size=120).map(lambda t: {"query": t, "dataset": "meters"}),
)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def query_client(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with warnings.catch_warnings():  # starlette asks for httpx2 instead of httpx; either works here
        warnings.filterwarnings("ignore", message=".*starlette.testclient.*deprecated")
        from fastapi.testclient import TestClient

    from privnoise.server import store
    from privnoise.server.app import create_app
    from privnoise.server.config import load_config

    with contextlib.ExitStack() as stack:
        database_url = None
        if request.param == "postgresql":
            from tests.server._postgres import throwaway_postgres

            database_url = stack.enter_context(throwaway_postgres())
        config_path, _ = write_config(
            tmp_path_factory.mktemp("grammar"), database_url=database_url, global_epsilon=1e6
        )
        config = load_config(config_path)
        app = create_app(config)
        stack.callback(app.state.engine.dispose)
        key = store.create_querier(app.state.engine, config, "grammar", epsilon=1e5, delta="1/2")
        client = stack.enter_context(TestClient(app, raise_server_exceptions=False))
        client.headers["Authorization"] = f"Bearer {key}"
        yield client


@given(body=_bodies)
@settings(
    max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
)
def test_grammar_queries_never_give_a_server_error(query_client: Any, body: dict[str, Any]) -> None:
    response = query_client.post("/v1/queries", json=body)
    assert response.status_code in (200, 422, 429), (
        f"{body!r} answered {response.status_code}: {response.text[:500]}"
    )
    if response.status_code == 200:
        value = response.json()["value"]
        values = value if isinstance(value, list) else [value]
        assert all(isinstance(v, float) and math.isfinite(v) for v in values), (body, value)
