"""The API description is what the server does: schemathesis, every check, against a running server.

A real server (``python -m privnoise.server`` on a free loopback port, SQLite, the API description switched on)
is started by the module's fixture with a querier key (a budget that outlasts the run) and the admin key. Its own
``/openapi.json`` is loaded with ``schemathesis.openapi.from_url`` and every operation is called with generated
requests, valid ones and ones that break the schema (the examples, coverage and fuzzing phases: positive and
negative data, missing and wrong keys, methods a path does not serve), with the admin key on ``/v1/admin/``
operations and the querier key elsewhere. Every check schemathesis has is run on every response: status codes,
content types, headers (``Allow`` on 405, ``WWW-Authenticate`` on 401), response bodies, schema-valid requests
accepted and schema-invalid ones refused, authentication not ignored; the stateful test adds use after delete,
resource availability and object-level authorisation over sequences of admin calls.

One refinement: a well-formed query may still be refused with 422 by the owner's configuration (its dataset,
columns, policies, the query language's grammar and size limits, Fisher floors), which no JSON schema can state.
For ``POST /v1/queries`` the positive-data check is therefore replaced by a stricter one of the same kind: a
schema-valid body is never refused for its shape (a validation ``detail`` or the text/structured rule); refusals
by the configuration carry an ``error`` text.

Generation is derandomised with a bounded number of examples per operation, so CI runs the same cases every time.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

schemathesis = pytest.importorskip("schemathesis")

from hypothesis import HealthCheck, settings  # noqa: E402
from schemathesis.checks import CHECKS, load_all_checks  # noqa: E402
from schemathesis.core.failures import Failure  # noqa: E402

from tests.server._harness import ServerProcess, running_server, write_config  # noqa: E402

#: Generated cases per operation and phase (bounded so the run stays short).
MAX_EXAMPLES = 40
#: The querier whose key the querier operations use (a name the fuzzer does not draw).
QUERIER = "conformance_querier_01"
SETTINGS = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)

load_all_checks()
ALL_CHECKS = [check for check in CHECKS.get_all() if callable(check) and not isinstance(check, type)]
CHECK_NAMES = {check.__name__ for check in ALL_CHECKS}
#: Refusals of a query for its shape, which the description states (anything else is the configuration's).
SHAPE_REFUSALS = ("invalid request", "give exactly one of `query`", "a text `query` takes no other fields",
                  "a `sql` statement takes no other field", "`dialect` is the SQL dialect")


@pytest.fixture(autouse=True)
def _node_id(request: pytest.FixtureRequest) -> None:
    """schemathesis' lazy loader renames the test node through ``_nodeid``, which pytest 9 nodes no longer have."""
    if not hasattr(request.node, "_nodeid"):
        request.node._nodeid = request.node.nodeid


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, dict[str, str]]]:
    from privnoise.server import store
    from privnoise.server.config import load_config

    # Many requests of the run go without a key or with a wrong one (ignored_auth): the throttle of failed
    # authentications is set high so that they are answered 401 rather than tarpitted (429 is described too).
    path, keys = write_config(
        Path(tmp_path_factory.mktemp("openapi")),
        global_epsilon=1e6,
        server="api_docs = true\nauth_failures = 1000000",
    )
    config = load_config(path)
    engine = store.init_database(config)
    try:
        keys[QUERIER] = store.create_querier(engine, config, QUERIER, epsilon=1e5, delta="1/2")
    finally:
        engine.dispose()
    with running_server(path) as server:
        yield server, keys


@pytest.fixture(scope="module")
def bearer(served: tuple[ServerProcess, dict[str, str]]) -> dict[str, str]:
    """The ``Authorization`` header of the admin and of the querier operations."""
    _, keys = served
    return {"admin": f"Bearer {keys['admin']}", "querier": f"Bearer {keys[QUERIER]}"}


def _load(served: tuple[ServerProcess, dict[str, str]], bearer: dict[str, str], **more: Any) -> Any:
    """The server's own description, with the key of each operation as configured headers (so that schemathesis
    knows them: its cases without a key or with a wrong one stay so)."""
    from schemathesis.config import SchemathesisConfig

    server, _ = served
    config = SchemathesisConfig.from_dict(
        {
            "seed": 20240601,
            "generation": {"max-examples": MAX_EXAMPLES},
            **more,
            "operations": [
                {"include-path-regex": "^/v1/admin/", "headers": {"Authorization": bearer["admin"]}},
                {
                    "include-path-regex": "^/v1/(queries|budget)$",
                    "headers": {"Authorization": bearer["querier"]},
                },
            ],
        }
    )
    return schemathesis.openapi.from_url(f"{server.url}/openapi.json", config=config)


@pytest.fixture(scope="module")
def api(served: tuple[ServerProcess, dict[str, str]], bearer: dict[str, str]) -> Any:
    return _load(served, bearer)


class QueryRefusedForItsShape(Failure):
    """A schema-valid query body refused for its shape."""

    code = "PN001"
    checks = ("queries_accepted_as_described",)
    kind_title = "Schema-valid query refused for its shape"


def queries_accepted_as_described(ctx: Any, response: Any, case: Any) -> bool | None:
    """``positive_data_acceptance`` for ``POST /v1/queries``: 422 only from the configuration, not the shape."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code == 200:
        return None
    body = response.json() if response.status_code == 422 else {}
    error = str(body.get("error", ""))
    if response.status_code not in (422, 429) or error.startswith(SHAPE_REFUSALS):
        raise QueryRefusedForItsShape(
            operation=case.operation.label,
            message=f"a schema-valid query got {response.status_code}: {response.text[:300]}",
        )
    return None


schema = schemathesis.pytest.from_fixture("api")


@schema.parametrize()
@SETTINGS
def test_every_operation_does_what_the_description_says(case: Any, bearer: dict[str, str]) -> None:
    checks = list(ALL_CHECKS)
    extra = []
    if (case.method.upper(), case.path) == ("POST", "/v1/queries"):
        checks = [c for c in checks if c.__name__ != "positive_data_acceptance"]
        extra = [queries_accepted_as_described]
    response = case.call_and_validate(checks=checks, additional_checks=extra)
    # the run reaches the handlers: a request with the operation's own key is never refused for its key
    own = bearer["admin" if case.path.startswith("/v1/admin/") else "querier"]
    if case.path != "/health" and response.request.headers.get("Authorization") == own:
        assert response.status_code not in (401, 403), (case.method, case.path, response.status_code)


def test_sequences_of_calls_do_what_the_description_says(
    served: tuple[ServerProcess, dict[str, str]], bearer: dict[str, str]
) -> None:
    """The stateful phase, run by schemathesis' own engine (links inferred from the description: create a querier,
    read its budget, revoke it, read it again...), every check on every response."""
    from schemathesis.engine import Status, events, from_schema

    off = {"enabled": False}
    api = _load(
        served,
        bearer,
        phases={"examples": off, "coverage": off, "fuzzing": off, "stateful": {"enabled": True}},
    )
    failures: set[str] = set()
    errors: list[str] = []
    answered: set[tuple[str, str, int]] = set()
    for event in from_schema(api).execute():
        if isinstance(event, events.ScenarioFinished):
            for case_id, interaction in event.recorder.interactions.items():
                if interaction.response is not None:
                    case = event.recorder.cases[case_id].value
                    answered.add((case.method.upper(), case.path, interaction.response.status_code))
            for checks in event.recorder.checks.values():
                for check in checks:
                    if check.status == Status.FAILURE and check.failure_info is not None:
                        failure = check.failure_info.failure
                        failures.add(
                            f"{check.name}: {failure.title}\n{failure.message}\n{check.failure_info.code_sample}"
                        )
        elif isinstance(event, events.NonFatalError | events.FatalError):
            errors.append(repr(event))
    assert not errors, errors
    assert not failures, "\n\n".join(sorted(failures))
    # the sequences reached the handlers: queriers were created and revoked with the admin key
    assert {("POST", "/v1/admin/queriers", 201), ("DELETE", "/v1/admin/queriers/{name}", 200)} <= answered, (
        answered
    )


def test_the_run_covers_every_operation_and_every_check(api: Any) -> None:
    operations = {(op.ok().method.upper(), op.ok().path) for op in api.get_all_operations()}
    assert operations == {
        ("GET", "/health"),
        ("POST", "/v1/queries"),
        ("GET", "/v1/budget"),
        ("POST", "/v1/admin/queriers"),
        ("GET", "/v1/admin/queriers"),
        ("GET", "/v1/admin/queriers/{name}/budget"),
        ("DELETE", "/v1/admin/queriers/{name}"),
        ("GET", "/v1/admin/ledger"),
        ("GET", "/v1/admin/datasets"),
    }
    assert {
        "status_code_conformance",
        "response_schema_conformance",
        "negative_data_rejection",
        "positive_data_acceptance",
        "unsupported_method",
        "allow_header_conformance",
        "ignored_auth",
        "use_after_free",
    } <= CHECK_NAMES
