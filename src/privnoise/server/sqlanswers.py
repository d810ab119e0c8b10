"""``POST /v1/queries`` with ``{"sql": "SELECT …", "dialect": "postgres"}``: a SQL statement answered by the server's
own queries, charged together.

1. **Plan**, in a worker thread and bounded as every planning is (:mod:`.limits`): the body is validated, the
   statement read (:func:`privnoise.sql.parse_statement`) and refused where it cannot be answered privately, its
   aggregates turned into queries (:mod:`.sqlspecs`), each checked for size and planned exactly as the same query
   of the query language (the same cached :class:`~.plans.Plan`), and the statement's options checked against the
   plans' charges. A refusal here is 422 with ``error`` naming the construct and, where it is known,
   ``position`` (line and column, 1-based, also in the message); nothing is charged.
2. **Charge** every query in one request to the committer (:meth:`~.charging.Committer.submit_all`): all are
   recorded, one ledger row each, or none — a statement whose queries together exceed a budget is refused with 429
   and charges nothing.
3. **Release** each query (:meth:`~.service.Service.answer`), then evaluate the statement on the released values
   (:func:`privnoise.sql.answers.assemble`: expressions, ``HAVING``, ``ORDER BY``, ``LIMIT``; :mod:`.sqlreleases`),
   which is post-processing. A failure after the charge is the generic 422 ``{"error": "query failed"}``.

The answer (200) carries the statement's answer — ``columns`` (output name → one value per row), ``intervals``
(output name → ``low``, ``high`` at ``level``), ``level``, ``guarantee`` (of the whole statement), ``statement`` —
and what an answer to a query carries: ``answers`` (per query: the aggregates it answers, its query, value, keys,
accuracy, guarantee, charge and ledger row), ``charged`` (the statement's total), ``remaining``, ``ledger_id``
(the first query's) and ``ledger_ids``.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

import orjson
from anyio import to_thread
from pydantic import ValidationError

from ..exceptions import InvalidParameterError
from ..sql import Aggregate, Statement
from ..sql.answers import assemble
from .accuracy import LEVEL
from .charging import Charged
from .limits import REFUSAL_DELAY
from .plans import Plan, serialised
from .querybody import body_of, check_size
from .queryspec import QueryError
from .replies import (
    BUSY,
    EXHAUSTED,
    FAILED,
    JSON,
    ChargedPlans,
    Headers,
    RefusedQuery,
    charge_plans,
    error_body,
    exhausted_budget,
    invalid,
    note_refused,
    planners,
    take_slot,
)
from .service import QueryFailed, Service
from .sqlreleases import QueryRelease, finite_or_none, groups_of, statement_charged, statement_guarantee
from .sqlspecs import base_of, check_options, plan_error, read_statement, specs_of

__all__ = ["StatementPlan", "answer_sql", "plan_statement"]

log = logging.getLogger("privnoise.server")


@dataclass(frozen=True)
class StatementPlan:
    """A statement and the plan of each of its queries (their aggregates in order, :func:`.sqlspecs.base_of`)."""

    statement: Statement
    aggregates: list[Aggregate]
    plans: list[Plan]


def plan_statement(
    service: Service, who: dict[str, Any], parsed: Any, *, check_exhausted: bool = True
) -> StatementPlan | RefusedQuery:
    """In a worker thread: validate, read and refuse, then plan every query of the statement (module docstring).
    ``check_exhausted``: refuse a querier known to be out of budget before planning (a dry run plans anyway)."""
    try:
        body = body_of(parsed)
        assert body.sql is not None
        statement = read_statement(body.sql, body.dialect)
    except ValidationError as exc:
        return invalid(exc)
    except InvalidParameterError as exc:
        return RefusedQuery(422, error_body(exc), "syntax", str(exc))
    name = statement.table
    known = name if name in service.config.datasets else None
    try:
        specs = specs_of(statement, service.budget(who["id"]), body.dialect)
        remaining = exhausted_budget(service, who, name) if check_exhausted else None
        if remaining is not None:
            return RefusedQuery(429, {"error": "budget exceeded", "budget": remaining}, "rate", EXHAUSTED, name)
        plans = []
        for aggregate, spec in specs.specs.items():
            try:
                check_size(service, spec)
                plans.append(service.plan(spec))
            except QueryError as exc:
                raise plan_error(statement, aggregate, exc, body.dialect) from None
        check_options(statement, plans)
        return StatementPlan(statement, list(specs.specs), plans)
    except InvalidParameterError as exc:
        return RefusedQuery(422, error_body(exc), "policy", str(exc), known)


def _release_all(service: Service, planned: StatementPlan, plans: tuple[Plan, ...],
                 ledger_ids: tuple[int, ...]) -> list[QueryRelease]:
    out = []
    for aggregate, plan, ledger_id in zip(planned.aggregates, plans, ledger_ids, strict=True):
        noisy: list[Any] = []
        release = service.answer(plan, ledger_id, noisy)
        out.append(QueryRelease(aggregate, plan, release, noisy, ledger_id))
    return out


def _payload(statement: Statement, releases: list[QueryRelease], charged: Charged, after: dict[str, Any]) -> bytes:
    plans = [r.plan for r in releases]
    groups = groups_of(releases)
    by_base = {r.aggregate: r for r in releases}
    released = {a: by_base[base_of(a)].released(a, groups) for a in statement.aggregates}
    answer = assemble(statement, groups, released, statement_guarantee(plans, after), level=LEVEL)
    answers = []
    for r in releases:
        answers.append({
            "aggregates": [a.text for a in statement.aggregates if base_of(a) == r.aggregate],
            "query": r.plan.query_dict,
            **serialised(r.release),
            "guarantee": r.plan.guarantee(after),
            "charged": r.plan.charged,
            "ledger_id": r.ledger_id,
        })
    stated = finite_or_none(answer.as_dict())
    for name, span in stated["intervals"].items():  # no interval where there is no value (a key not released)
        for end in ("low", "high"):
            span[end] = [None if v is None else x for v, x in zip(stated["columns"][name], span[end], strict=True)]
    payload = {
        "dataset": plans[0].spec.name,
        **stated,
        **({"key_columns": list(statement.group_by)} if statement.group_by else {}),
        "answers": finite_or_none(answers),
        "charged": statement_charged(plans),
        "remaining": after,
        "ledger_id": charged.ledger_id,
        "ledger_ids": list(charged.ledger_ids),
    }
    return orjson.dumps(payload)


async def answer_sql(service: Service, who: dict[str, Any], body: bytes, parsed: Any) -> tuple[int, bytes, Headers]:
    """(status, JSON bytes, headers) of the answer to a SQL statement (module docstring)."""
    if not await take_slot(service, who["id"]):
        busy = RefusedQuery(429, {"error": BUSY + "; try again"}, "rate", BUSY, headers=[(b"retry-after", b"1")])
        return note_refused(service, who, body, parsed, busy)
    try:
        planned = await to_thread.run_sync(plan_statement, service, who, parsed, limiter=planners())
    finally:
        service.slots.give(who["id"])
    if isinstance(planned, RefusedQuery):
        if planned.status == 429:
            await asyncio.sleep(REFUSAL_DELAY)
        return note_refused(service, who, body, parsed, planned)
    outcome = await charge_plans(service, who, body, parsed, tuple(planned.plans))
    if not isinstance(outcome, ChargedPlans):
        return outcome
    plans, charged = outcome.plans, outcome.charged
    try:
        if service.dialect == "sqlite" and all(p.inline for p in plans):  # PostgreSQL's round trips: in a thread
            releases = _release_all(service, planned, plans, charged.ledger_ids)
        else:
            releases = await to_thread.run_sync(_release_all, service, planned, plans, charged.ledger_ids)
        return 200, _payload(planned.statement, releases, charged, service.view(charged.after, plans[0])), list(JSON)
    except QueryFailed:
        return 422, FAILED, list(JSON)
    except Exception:  # the statement's evaluation on released values: the charge stays, the answer is generic
        log.exception("a SQL statement failed after its charge (ledger rows %s)", list(charged.ledger_ids))
        return 422, FAILED, list(JSON)
