"""What every answer of ``POST /v1/queries`` shares, whatever the form of its query (:mod:`.answers` for the text and
structured forms, :mod:`.sqlanswers` for SQL statements): the refusals and their uncharged ledger rows
(:mod:`.refusals`), the planning threads and the querier's planning slots (:mod:`.limits`), the charge of its plans
(:func:`charge_plans`), and the fixed bodies of the errors that never depend on the data.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

import orjson
from anyio import CapacityLimiter, to_thread
from pydantic import ValidationError

from ..exceptions import InvalidParameterError
from .budgets import Refusal
from .charging import Charged, ChargeUnavailable, StalePlan
from .limits import PLANNING_THREADS, PLANNING_WAIT
from .plans import Plan
from .querybody import dataset_of, validation_detail
from .querylang import QuerySpec
from .refusals import MAX_QUERY_CHARS, Refused, reason_of
from .service import FAILURE_BODY, Service
from .steps import StepQueryRefused

__all__ = [
    "ANY_DATASET",
    "BUSY",
    "EXHAUSTED",
    "FAILED",
    "FORBIDDEN",
    "JSON",
    "UNAVAILABLE",
    "ChargedPlans",
    "Headers",
    "RefusedQuery",
    "after_refusal",
    "charge_plans",
    "error",
    "error_body",
    "exhausted_budget",
    "invalid",
    "note_refused",
    "planners",
    "take_slot",
]

Headers = list[tuple[bytes, bytes]]
JSON: Headers = [(b"content-type", b"application/json")]
FORBIDDEN = orjson.dumps({"error": "forbidden"})
FAILED = orjson.dumps(FAILURE_BODY)
UNAVAILABLE = orjson.dumps({"error": "the charge could not be recorded; nothing was charged"})
EXHAUSTED = "budget exceeded; the querier is known to be out of budget on the dataset, the query was not planned"
BUSY = "too many queries of this querier are being planned"
#: A query that names no dataset (the server's only dataset, if it has one).
ANY_DATASET = QuerySpec("count")

log = logging.getLogger("privnoise.server")
_limiters: dict[int, CapacityLimiter] = {}


def planners() -> CapacityLimiter:
    """The limiter of planning threads of the running event loop (a test may run the app on several loops)."""
    loop = id(asyncio.get_running_loop())
    limiter = _limiters.get(loop)
    if limiter is None:
        _limiters.clear()
        limiter = _limiters[loop] = CapacityLimiter(PLANNING_THREADS)
    return limiter


def exhausted_budget(service: Service, who: dict[str, Any], name: str | None) -> dict[str, Any] | None:
    """The remaining budget of a querier known to be out of budget on dataset ``name`` (else None)."""
    return None if name is None else service.exhausted.remaining(who["id"], name)


def error(status: int, body: dict[str, Any], headers: Headers | None = None) -> tuple[int, bytes, Headers]:
    return status, orjson.dumps(body), [*JSON, *(headers or [])]


def error_body(exc: InvalidParameterError) -> dict[str, Any]:
    """``{"error": message}``, and ``position`` (``{"line", "column"}``, 1-based) where the error knows where in a
    SQL statement it stands."""
    line, column = getattr(exc, "line", None), getattr(exc, "column", None)
    out: dict[str, Any] = {"error": str(exc)}
    if isinstance(line, int) and isinstance(column, int):
        out["position"] = {"line": line, "column": column}
    return out


@dataclass(frozen=True)
class RefusedQuery:
    """A refused query: the response, and the reason its ledger row gives (:mod:`.refusals`)."""

    status: int
    body: dict[str, Any]
    category: str  # one of refusals.REASONS
    text: str  # the reason's short text: never a data value
    dataset: str | None = None
    headers: Headers | None = None

    def response(self) -> tuple[int, bytes, Headers]:
        return error(self.status, self.body, self.headers)


def invalid(exc: ValidationError) -> RefusedQuery:
    """The refusal of a body the schema refuses (its input never echoed)."""
    detail = validation_detail(exc)
    text = "invalid request: " + "; ".join(f"{'.'.join(d['loc'])}: {d['msg']}" for d in detail[:2])
    return RefusedQuery(422, {"error": "invalid request", "detail": detail}, "syntax", text)


async def take_slot(service: Service, querier_id: int) -> bool:
    """Take one of the querier's planning slots, waiting idle (timers, no CPU) up to :data:`PLANNING_WAIT` seconds
    while its other plannings finish; False when none freed in time."""
    deadline = time.monotonic() + PLANNING_WAIT
    pause = 0.005
    while not service.slots.take(querier_id):
        if time.monotonic() + pause > deadline:
            return False
        await asyncio.sleep(pause)
        pause = min(pause * 2.0, 0.1)
    return True


def _query_text(body: bytes, parsed: Any) -> str:
    """The query as the querier sent it: its text form or SQL statement, else the request body (at most
    MAX_QUERY_CHARS)."""
    text = None
    if isinstance(parsed, dict):
        text = parsed.get("query") if isinstance(parsed.get("query"), str) else parsed.get("sql")
    if not isinstance(text, str):
        text = body[: 4 * MAX_QUERY_CHARS].decode("utf-8", "replace")
    return text[:MAX_QUERY_CHARS]


def note_refused(
    service: Service, who: dict[str, Any], body: bytes, parsed: Any, refusal: RefusedQuery
) -> tuple[int, bytes, Headers]:
    """The response to a refused query, after noting its uncharged ledger row (written later, off the loop)."""
    try:
        name = refusal.dataset
        if name not in service.config.datasets:
            named = parsed.get("dataset") if isinstance(parsed, dict) else None
            name = named if named in service.config.datasets else dataset_of(service, ANY_DATASET)
        reason = reason_of(refusal.category, refusal.text)
        service.refusals.record(Refused(who["id"], name or "", _query_text(body, parsed), reason))
    except Exception:  # the ledger row is not worth a failed refusal
        log.exception("could not note a refused query")
    return refusal.response()


def after_refusal(service: Service, querier_id: int, name: str) -> dict[str, Any]:
    """The remaining budget after a refusal; a querier that can pay for no policy of the dataset is remembered
    as exhausted there (:class:`~.limits.Exhausted`)."""
    remaining: dict[str, Any] = service.budget(querier_id).get(name, {})
    if service.out_of_budget(querier_id, name):
        service.exhausted.mark(querier_id, name, remaining)
    return remaining


@dataclass(frozen=True)
class ChargedPlans:
    """Plans charged together: as they were charged (remade if their dataset changed meanwhile), and the charge."""

    plans: tuple[Plan, ...]
    charged: Charged


async def charge_plans(
    service: Service, who: dict[str, Any], body: bytes, parsed: Any, plans: tuple[Plan, ...]
) -> ChargedPlans | tuple[int, bytes, Headers]:
    """Charge ``plans`` (one or more, on one dataset) together to the querier ``who``, in up to three attempts
    (the plans remade between them when their dataset changed); or the response to give instead: a refusal by a
    budget (429) or by the querier's own Fisher floor (422), noted as an uncharged ledger row, or 503 when the
    charge could not be recorded or the dataset kept changing (nothing was charged)."""
    name = plans[0].spec.name
    for _attempt in range(3):
        try:
            return ChargedPlans(plans, await service.committer.charge(plans, who["id"]))
        except StalePlan as stale:
            plans = tuple(service.refreshed(p, stale.records) for p in plans)
        except StepQueryRefused as exc:  # a querier's own Fisher floor, read in the charge's transaction
            refusal = RefusedQuery(422, {"error": str(exc)}, "policy", str(exc), name)
            return note_refused(service, who, body, parsed, refusal)
        except Refusal:
            remaining = await to_thread.run_sync(after_refusal, service, who["id"], name)
            refusal = RefusedQuery(429, {"error": "budget exceeded", "budget": remaining}, "budget",
                                   "budget exceeded", name)
            return note_refused(service, who, body, parsed, refusal)
        except ChargeUnavailable:
            return 503, UNAVAILABLE, [*JSON, (b"retry-after", b"1")]
    return error(503, {"error": "the dataset is being re-imported; try again"}, [(b"retry-after", b"1")])
