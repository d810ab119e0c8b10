"""The answer to ``POST /v1/queries``: validate, plan, charge durably, release — the server's hot path.

:func:`answer_query` is called by the gate (:mod:`.gate`) directly for ``POST /v1/queries``, after the key was
checked and the strict JSON body read, without the framework's routing (the FastAPI route of the same path
exists for the API description and calls the same function). It returns the status, the JSON bytes and the
headers of the response:

* 200 with the noisy value (with ``keys``, the public cells, for a histogram or a group-by — on several key columns
  each key a list of one value per column, named in ``key_columns``), its accuracy
  (:mod:`.accuracy`: an interval at 95 % or a quantile's rank radius, from the noise law — noise only, not sampling
  error), its guarantee, what was charged and the querier's remaining budget;
* 422 for a malformed query or one the configuration does not allow (before anything is charged: among them a
  step function of a column with a Fisher floor, :mod:`.steps`), and
  ``{"error": "query failed"}`` — the same bytes whatever the data — for a query that failed after its charge;
* 429 when a budget refuses the charge (nothing is charged); 403 for the admin key; 503 when the charge could
  not be recorded (nothing is charged).

With ``?dry_run=true`` the query is validated and planned as above, then neither charged nor released: the answer
is what it would be charged and its expected accuracy, from public information only (:mod:`.dryruns`); a bad
``dry_run`` value is 422 naming the parameter.

A body with ``sql`` holds a SQL statement: :func:`~.sqlanswers.answer_sql` answers it, its aggregates planned as
the queries they are (:mod:`.sqlspecs`) and charged together, with the same statuses.

Every refusal (budget, policy, syntax, rate: 422 before the charge, 429) is noted as an uncharged ledger row
(:mod:`.refusals`: at most one row per querier per second, written off the event loop, never awaited here).

Plans are cached per request body. A body not in the cache is parsed and planned in a worker thread, bounded in
size and per querier, and not at all for a querier known to be out of budget (:mod:`.limits`). The release runs in the event loop for datasets of at most
:data:`~.planner.INLINE_RECORDS` records on SQLite (a few hundred microseconds, less than a hand-over to a thread
costs under load), and in a worker thread for larger ones and on PostgreSQL, whose read waits for a round trip to
the database server (the loop answers others meanwhile); either way the work does not depend on the data.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from anyio import to_thread
from pydantic import ValidationError

from ..exceptions import InvalidParameterError
from .dryruns import answer_dry_run, dry_run_flag
from .limits import REFUSAL_DELAY
from .planner import Plan
from .plans import serialised
from .querybody import (
    ConditionBody,
    QueryBody,
    check_size,
    dataset_of,
    plan_of,
    spec_of,
    validation_detail,
)
from .replies import (
    ANY_DATASET,
    BUSY,
    EXHAUSTED,
    FAILED,
    FORBIDDEN,
    JSON,
    ChargedPlans,
    Headers,
    RefusedQuery,
    charge_plans,
    error,
    exhausted_budget,
    invalid,
    note_refused,
    planners,
    take_slot,
)
from .service import QueryFailed, Service
from .sqlanswers import answer_sql

__all__ = [
    "ConditionBody",
    "QueryBody",
    "answer_query",
    "check_size",
    "plan_of",
    "spec_of",
    "validation_detail",
]


def _prepare(service: Service, who: dict[str, Any], body: bytes, parsed: Any) -> Plan | RefusedQuery:
    """In a worker thread: parse, refuse an exhausted querier or a too large query, then plan (and cache)."""
    try:
        spec = spec_of(parsed)
    except ValidationError as exc:
        return invalid(exc)
    except InvalidParameterError as exc:
        return RefusedQuery(422, {"error": str(exc)}, "syntax", str(exc))
    name = dataset_of(service, spec)
    try:
        remaining = exhausted_budget(service, who, name)
        if remaining is not None:
            return RefusedQuery(429, {"error": "budget exceeded", "budget": remaining}, "rate", EXHAUSTED, name)
        check_size(service, spec)
        return service.cached(("body", body), lambda: service.plan(spec))
    except ValidationError as exc:
        return invalid(exc)
    except InvalidParameterError as exc:
        return RefusedQuery(422, {"error": str(exc)}, "policy", str(exc), name)


async def _planned(service: Service, who: dict[str, Any], body: bytes, parsed: Any) -> Plan | RefusedQuery:
    """The plan of a body: from the cache in the event loop, else (bounded, :mod:`.limits`) from a worker thread."""
    plan = service.peek(("body", body))
    if plan is not None:
        return plan
    named = parsed.get("dataset") if isinstance(parsed, dict) and "query" not in parsed else None
    name = named if isinstance(named, str) else dataset_of(service, ANY_DATASET)
    remaining = exhausted_budget(service, who, name)
    if remaining is not None:  # known before parsing: nothing is parsed or planned
        await asyncio.sleep(REFUSAL_DELAY)  # an idle wait: a flood of repeated refusals costs no CPU
        return RefusedQuery(429, {"error": "budget exceeded", "budget": remaining}, "rate", EXHAUSTED, name)
    if not await take_slot(service, who["id"]):
        return RefusedQuery(429, {"error": BUSY + "; try again"}, "rate", BUSY, headers=[(b"retry-after", b"1")])
    plan = service.peek(("body", body))  # planned meanwhile by another request of the querier
    if plan is not None:
        service.slots.give(who["id"])
        return plan
    try:
        planned = await to_thread.run_sync(_prepare, service, who, body, parsed, limiter=planners())
    finally:
        service.slots.give(who["id"])
    if isinstance(planned, RefusedQuery) and planned.status == 429:
        await asyncio.sleep(REFUSAL_DELAY)
    return planned


async def answer_query(
    service: Service, who: dict[str, Any], body: bytes, parsed: Any, query_string: bytes = b""
) -> tuple[int, bytes, Headers]:
    """(status, JSON bytes, headers) of the answer to one query (see the module docstring); with ``dry_run=true``
    in ``query_string``, its dry run (:mod:`.dryruns`)."""
    if who["role"] != "querier":
        return 403, FORBIDDEN, list(JSON)
    dry_run = dry_run_flag(query_string) if query_string else False
    if isinstance(dry_run, str):
        return error(422, {"error": dry_run, "parameter": "dry_run"})
    if dry_run:
        return await answer_dry_run(service, who, body, parsed)
    if isinstance(parsed, dict) and parsed.get("sql") is not None:
        return await answer_sql(service, who, body, parsed)
    planned = await _planned(service, who, body, parsed)
    if isinstance(planned, RefusedQuery):
        return note_refused(service, who, body, parsed, planned)
    outcome = await charge_plans(service, who, body, parsed, (planned,))
    if not isinstance(outcome, ChargedPlans):
        return outcome
    (plan,), charged = outcome.plans, outcome.charged
    try:
        if plan.inline and service.dialect == "sqlite":  # in process: nothing to wait for
            release = service.answer(plan, charged.ledger_id)
        elif service.on_loop(plan):  # PostgreSQL: the round trip awaited on the loop (.async_reads)
            release = await service.answer_on_loop(plan, charged.ledger_id)
        else:
            release = await to_thread.run_sync(service.answer, plan, charged.ledger_id)
    except QueryFailed:
        return 422, FAILED, list(JSON)
    after = service.view(charged.after, plan)
    payload = {
        "dataset": plan.spec.name,
        "query": plan.query_dict,
        **serialised(release),
        **({"key_columns": list(plan.query.group_by)} if isinstance(plan.query.group_by, tuple) else {}),
        "guarantee": plan.guarantee(after),
        "charged": plan.charged,
        "remaining": after,
        "ledger_id": charged.ledger_id,
    }
    return 200, orjson.dumps(payload), list(JSON)
