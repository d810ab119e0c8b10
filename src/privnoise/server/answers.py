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

Every refusal (budget, policy, syntax, rate: 422 before the charge, 429) is noted as an uncharged ledger row
(:mod:`.refusals`: at most one row per querier per second, written off the event loop, never awaited here).

Plans are cached per request body. A body not in the cache is parsed and planned in a worker thread, bounded in
size and per querier, and not at all for a querier known to be out of budget (:mod:`.limits`). The release runs in the event loop for datasets of at most
:data:`~.planner.INLINE_RECORDS` records (a few hundred microseconds, less than a hand-over to a thread costs
under load) and in a worker thread for larger ones; either way the work does not depend on the data.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import orjson
from anyio import CapacityLimiter, to_thread
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..exceptions import InvalidParameterError
from .budgets import Refusal
from .charging import ChargeUnavailable, StalePlan
from .limits import MAX_PARAMETERS, PLANNING_THREADS, PLANNING_WAIT, REFUSAL_DELAY, parameter_bound
from .planner import Plan
from .querylang import MAX_KEY_COLUMNS, QueryError, QuerySpec, parse_query, spec_from_json
from .refusals import MAX_QUERY_CHARS, Refused, reason_of
from .service import FAILURE_BODY, QueryFailed, Service
from .steps import StepQueryRefused
from .vectors import cell_count, check_cells

__all__ = ["ConditionBody", "QueryBody", "answer_query", "plan_of", "validation_detail"]

Headers = list[tuple[bytes, bytes]]
_JSON: Headers = [(b"content-type", b"application/json")]
_FORBIDDEN = orjson.dumps({"error": "forbidden"})
_FAILED = orjson.dumps(FAILURE_BODY)
_UNAVAILABLE = orjson.dumps({"error": "the charge could not be recorded; nothing was charged"})

log = logging.getLogger("privnoise.server")

_Name = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]


class ConditionBody(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, strict=True)
    column: _Name
    op: Literal["=", "!=", "<", "<=", ">", ">="]
    value: float | Annotated[str, Field(max_length=200)]


class QueryBody(BaseModel):
    """A query: ``query`` (the text form) or ``kind`` with its fields; never a seed."""

    model_config = ConfigDict(
        extra="forbid",
        allow_inf_nan=False,
        strict=True,  # JSON types as described: no "0.5" or true where a number is expected
        json_schema_extra={
            "examples": [
                {"query": "mean(kwh) where region = 'north'", "dataset": "meters"},
                {"kind": "sum", "column": "kwh", "dataset": "meters"},
                {"query": "mean(kwh) from meters group by region"},
                {"kind": "quantile", "column": "kwh", "levels": [0.25, 0.5, 0.75], "dataset": "meters"},
            ]
        },
    )
    query: Annotated[str, Field(min_length=1, max_length=1000)] | None = None
    dataset: _Name | None = None
    kind: (
        Literal["count", "sum", "mean", "weighted_mean", "variance", "linear", "identity", "histogram", "quantile"]
        | None
    ) = None
    column: _Name | None = None
    weights: _Name | None = None
    coefficients: Annotated[dict[_Name, float], Field(max_length=32)] | None = None
    levels: Annotated[list[float], Field(min_length=1, max_length=64)] | None = None
    bins: Annotated[list[float], Field(min_length=2, max_length=64)] | None = None
    where: Annotated[list[ConditionBody], Field(max_length=8)] | None = None
    group_by: _Name | Annotated[list[_Name], Field(min_length=1, max_length=MAX_KEY_COLUMNS)] | None = None


def validation_detail(exc: ValidationError | RequestValidationError) -> list[dict[str, Any]]:
    """The errors of a refused request without its input (which may not even be serialisable)."""
    out = []
    for err in exc.errors():
        out.append(
            {
                "loc": [str(p) for p in err.get("loc", ())],
                "msg": str(err.get("msg", "")),
                "type": err.get("type"),
            }
        )
    return out


def spec_of(raw: Any) -> QuerySpec:
    """Validate a query body and parse it (no data read, nothing planned)."""
    body = QueryBody.model_validate(raw)
    if (body.query is None) == (body.kind is None):
        raise QueryError("give either `query` (text) or `kind` (structured).")
    if body.query is not None:
        if any(
            v is not None
            for v in (body.column, body.weights, body.coefficients, body.where, body.levels, body.bins, body.group_by)
        ):
            raise QueryError("a text `query` takes no other fields than `dataset`.")
        spec = parse_query(body.query, dataset=body.dataset)
    else:
        spec = spec_from_json(body.model_dump(exclude_none=True, exclude={"query"}))
    return spec


def dataset_of(service: Service, spec: QuerySpec) -> str | None:
    """The dataset a query is asked of (None when it names none and several are served)."""
    if spec.dataset is not None:
        return spec.dataset
    return next(iter(service.config.datasets)) if len(service.config.datasets) == 1 else None


def check_size(service: Service, spec: QuerySpec) -> None:
    """Refuse a query whose statement could hold more than :data:`~.limits.MAX_PARAMETERS` parameters, or a group-by
    of more than :data:`~.vectors.MAX_CELLS` cells."""
    name = dataset_of(service, spec)
    declared = service.config.datasets.get(name) if name is not None else None
    if isinstance(spec.group_by, tuple):  # several key columns: the product of their categories, if all declared
        cells = cell_count(declared, spec.group_by) if declared is not None else None
        if cells is not None:
            check_cells(cells)
        categories = cells or 0
    else:
        keyed = spec.group_by or (spec.column if spec.kind == "histogram" else None)
        column = declared.columns.get(keyed) if declared is not None and keyed is not None else None
        categories = len(column.categories or ()) if column is not None else 0
    bound = parameter_bound(spec, categories)
    if bound > MAX_PARAMETERS:
        raise QueryError(
            f"the query is too large: its statement could hold {bound} parameters, more than the limit of "
            f"{MAX_PARAMETERS} (fewer bins, keys, coefficients or `where` conditions)."
        )


def plan_of(service: Service, raw: Any) -> Plan:
    """Validate a query body (no data read), check its size and make its plan."""
    spec = spec_of(raw)
    check_size(service, spec)
    return service.plan(spec)


_limiters: dict[int, CapacityLimiter] = {}
_ANY = QuerySpec("count")  # a query that names no dataset


def _planners() -> CapacityLimiter:
    """The limiter of planning threads of the running event loop (a test may run the app on several loops)."""
    loop = id(asyncio.get_running_loop())
    limiter = _limiters.get(loop)
    if limiter is None:
        _limiters.clear()
        limiter = _limiters[loop] = CapacityLimiter(PLANNING_THREADS)
    return limiter


def _refused_for_budget(service: Service, who: dict[str, Any], name: str | None) -> dict[str, Any] | None:
    """The remaining budget of a querier known to be out of budget on dataset ``name`` (else None)."""
    return None if name is None else service.exhausted.remaining(who["id"], name)


@dataclass(frozen=True)
class _Refusal:
    """A refused query: the response, and the reason its ledger row gives (:mod:`.refusals`)."""

    status: int
    body: dict[str, Any]
    category: str  # one of refusals.REASONS
    text: str  # the reason's short text: never a data value
    dataset: str | None = None
    headers: Headers | None = None

    def response(self) -> tuple[int, bytes, Headers]:
        return _error(self.status, self.body, self.headers)


def _invalid(exc: ValidationError) -> _Refusal:
    detail = validation_detail(exc)
    text = "invalid request: " + "; ".join(f"{'.'.join(d['loc'])}: {d['msg']}" for d in detail[:2])
    return _Refusal(422, {"error": "invalid request", "detail": detail}, "syntax", text)


def _prepare(service: Service, who: dict[str, Any], body: bytes, parsed: Any) -> Plan | _Refusal:
    """In a worker thread: parse, refuse an exhausted querier or a too large query, then plan (and cache)."""
    try:
        spec = spec_of(parsed)
    except ValidationError as exc:
        return _invalid(exc)
    except InvalidParameterError as exc:
        return _Refusal(422, {"error": str(exc)}, "syntax", str(exc))
    name = dataset_of(service, spec)
    try:
        remaining = _refused_for_budget(service, who, name)
        if remaining is not None:
            return _Refusal(429, {"error": "budget exceeded", "budget": remaining}, "rate", _EXHAUSTED, name)
        check_size(service, spec)
        return service.cached(("body", body), lambda: service.plan(spec))
    except ValidationError as exc:
        return _invalid(exc)
    except InvalidParameterError as exc:
        return _Refusal(422, {"error": str(exc)}, "policy", str(exc), name)


async def _slot(service: Service, querier_id: int) -> bool:
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


async def _planned(service: Service, who: dict[str, Any], body: bytes, parsed: Any) -> Plan | _Refusal:
    """The plan of a body: from the cache in the event loop, else (bounded, :mod:`.limits`) from a worker thread."""
    plan = service.peek(("body", body))
    if plan is not None:
        return plan
    named = parsed.get("dataset") if isinstance(parsed, dict) and "query" not in parsed else None
    name = named if isinstance(named, str) else dataset_of(service, _ANY)
    remaining = _refused_for_budget(service, who, name)
    if remaining is not None:  # known before parsing: nothing is parsed or planned
        await asyncio.sleep(REFUSAL_DELAY)  # an idle wait: a flood of repeated refusals costs no CPU
        return _Refusal(429, {"error": "budget exceeded", "budget": remaining}, "rate", _EXHAUSTED, name)
    if not await _slot(service, who["id"]):
        return _Refusal(429, {"error": _BUSY + "; try again"}, "rate", _BUSY, headers=[(b"retry-after", b"1")])
    plan = service.peek(("body", body))  # planned meanwhile by another request of the querier
    if plan is not None:
        service.slots.give(who["id"])
        return plan
    try:
        planned = await to_thread.run_sync(_prepare, service, who, body, parsed, limiter=_planners())
    finally:
        service.slots.give(who["id"])
    if isinstance(planned, _Refusal) and planned.status == 429:
        await asyncio.sleep(REFUSAL_DELAY)
    return planned


def _error(status: int, body: dict[str, Any], headers: Headers | None = None) -> tuple[int, bytes, Headers]:
    return status, orjson.dumps(body), [*_JSON, *(headers or [])]


async def answer_query(
    service: Service, who: dict[str, Any], body: bytes, parsed: Any
) -> tuple[int, bytes, Headers]:
    """(status, JSON bytes, headers) of the answer to one query (see the module docstring)."""
    if who["role"] != "querier":
        return 403, _FORBIDDEN, list(_JSON)
    planned = await _planned(service, who, body, parsed)
    if isinstance(planned, _Refusal):
        return _refused(service, who, body, parsed, planned)
    plan = planned
    charged = None
    for _attempt in range(3):
        try:
            charged = await asyncio.wrap_future(service.committer.submit(plan, who["id"]))
            break
        except StalePlan as stale:
            plan = service.refreshed(plan, stale.records)
        except StepQueryRefused as exc:  # a querier's own Fisher floor, read in the charge's transaction
            refusal = _Refusal(422, {"error": str(exc)}, "policy", str(exc), plan.spec.name)
            return _refused(service, who, body, parsed, refusal)
        except Refusal:
            remaining = await to_thread.run_sync(_after_refusal, service, who["id"], plan.spec.name)
            refusal = _Refusal(429, {"error": "budget exceeded", "budget": remaining}, "budget",
                               "budget exceeded", plan.spec.name)
            return _refused(service, who, body, parsed, refusal)
        except ChargeUnavailable:
            return 503, _UNAVAILABLE, [*_JSON, (b"retry-after", b"1")]
    if charged is None:
        return _error(503, {"error": "the dataset is being re-imported; try again"}, [(b"retry-after", b"1")])
    try:
        if plan.inline:
            value, stated = service.answer(plan, charged.ledger_id)
        else:
            value, stated = await to_thread.run_sync(service.answer, plan, charged.ledger_id)
    except QueryFailed:
        return 422, _FAILED, list(_JSON)
    after = service.view(charged.after, plan)
    payload = {
        "dataset": plan.spec.name,
        "query": plan.query_dict,
        "value": value,
        **({} if plan.keys is None else {"keys": [list(k) if isinstance(k, tuple) else k for k in plan.keys]}),
        **({"key_columns": list(plan.query.group_by)} if isinstance(plan.query.group_by, tuple) else {}),
        **stated,
        "guarantee": plan.guarantee(after),
        "charged": plan.charged,
        "remaining": after,
        "ledger_id": charged.ledger_id,
    }
    return 200, orjson.dumps(payload), list(_JSON)


_EXHAUSTED = "budget exceeded; the querier is known to be out of budget on the dataset, the query was not planned"
_BUSY = "too many queries of this querier are being planned"


def _query_text(body: bytes, parsed: Any) -> str:
    """The query as the querier sent it: its text form, else the request body (at most MAX_QUERY_CHARS)."""
    text = parsed.get("query") if isinstance(parsed, dict) else None
    if not isinstance(text, str):
        text = body[: 4 * MAX_QUERY_CHARS].decode("utf-8", "replace")
    return text[:MAX_QUERY_CHARS]


def _refused(
    service: Service, who: dict[str, Any], body: bytes, parsed: Any, refusal: _Refusal
) -> tuple[int, bytes, Headers]:
    """The response to a refused query, after noting its uncharged ledger row (written later, off the loop)."""
    try:
        name = refusal.dataset
        if name not in service.config.datasets:
            named = parsed.get("dataset") if isinstance(parsed, dict) else None
            name = named if named in service.config.datasets else dataset_of(service, _ANY)
        reason = reason_of(refusal.category, refusal.text)
        service.refusals.record(Refused(who["id"], name or "", _query_text(body, parsed), reason))
    except Exception:  # the ledger row is not worth a failed refusal
        log.exception("could not note a refused query")
    return refusal.response()


def _after_refusal(service: Service, querier_id: int, name: str) -> dict[str, Any]:
    """The remaining budget after a refusal; a querier that can pay for no policy of the dataset is remembered
    as exhausted there (:class:`~.limits.Exhausted`)."""
    remaining: dict[str, Any] = service.budget(querier_id).get(name, {})
    if service.out_of_budget(querier_id, name):
        service.exhausted.mark(querier_id, name, remaining)
    return remaining
