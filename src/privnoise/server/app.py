"""The HTTP API (FastAPI behind the ASGI gate of :mod:`.gate`): ``create_app(config)``.

Endpoints (every one but ``/health`` needs ``Authorization: Bearer <key>``, checked before the body is read):

* ``GET /health`` — liveness, no key.
* ``POST /v1/queries`` — a query as text (``{"query": "mean(kwh) where region = 'north'"}``) or structured
  JSON; returns the noisy value, its guarantee, what was charged and the querier's remaining budget.
  Budget refused: 429. Malformed or not allowed by the configuration: 422. Failed after the charge: 422 with
  ``{"error": "query failed"}``, the same bytes whatever the data. No field accepts a seed (unknown fields: 422).
* ``GET /v1/budget`` — the calling querier's own budgets.
* Admin (admin key): ``POST /v1/admin/queriers``, ``GET /v1/admin/queriers``,
  ``GET /v1/admin/queriers/{name}/budget``, ``GET /v1/admin/ledger``, ``GET /v1/admin/datasets``.
* ``/openapi.json``, ``/docs``, ``/redoc``: only with ``api_docs = true`` in ``[server]``.

Unauthenticated requests get 401 ``{"error": "unauthorized"}`` whether or not the key's querier exists (429 once
an address or key id has failed too often); a querier on an admin endpoint gets 403 ``{"error": "forbidden"}``;
bodies beyond ``max_body_bytes`` get 413; bodies that are not strict JSON get 400; a request the schema refuses
gets 422 without echoing its input. A charge that could not be recorded gets 503 (nothing was charged).
"""

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

import orjson
from fastapi import Depends, FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy import select
from sqlalchemy.engine import Engine
from starlette.concurrency import run_in_threadpool

from .. import __version__
from ..exceptions import InvalidParameterError
from . import db, keys, store
from .budgets import Refusal
from .charging import ChargeUnavailable, StalePlan
from .config import ServerConfig
from .gate import Authenticator, Gate
from .planner import Plan
from .querylang import QueryError, parse_query, spec_from_json
from .service import FAILURE_BODY, QueryFailed, Service
from .throttle import FailureThrottle

__all__ = ["create_app"]

DOCS_PATHS = frozenset({"/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"})


class FastJSON(JSONResponse):
    """JSON rendered by orjson (strict: the server never sends NaN or infinity)."""

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


class ApiError(Exception):
    def __init__(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        self.status, self.body, self.headers = status, body, headers


_FORBIDDEN = ApiError(403, {"error": "forbidden"})
_Name = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]


class ConditionBody(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    column: _Name
    op: Literal["=", "!=", "<", "<=", ">", ">="]
    value: float | Annotated[str, Field(max_length=200)]


class QueryBody(BaseModel):
    """A query: ``query`` (the text form) or ``kind`` with its fields; never a seed."""

    model_config = ConfigDict(
        extra="forbid",
        allow_inf_nan=False,
        json_schema_extra={
            "examples": [
                {"query": "mean(kwh) where region = 'north'", "dataset": "meters"},
                {"kind": "sum", "column": "kwh", "dataset": "meters"},
            ]
        },
    )
    query: Annotated[str, Field(min_length=1, max_length=1000)] | None = None
    dataset: _Name | None = None
    kind: Literal["count", "sum", "mean", "weighted_mean", "variance", "linear", "identity"] | None = None
    column: _Name | None = None
    weights: _Name | None = None
    coefficients: Annotated[dict[_Name, float], Field(max_length=32)] | None = None
    where: Annotated[list[ConditionBody], Field(max_length=8)] | None = None


class QuerierBody(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    name: Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]
    epsilon: Annotated[float, Field(gt=0, le=1e6)] | Annotated[str, Field(max_length=100)]
    delta: Annotated[float, Field(ge=0, lt=1)] | Annotated[str, Field(max_length=100)] = 0.0
    fisher_floor: Annotated[float, Field(ge=1e-300, le=1e300)] | None = None


def _inline(schema: Any, defs: dict[str, Any]) -> Any:
    """``schema`` with its local ``$ref``s replaced by the definitions (for an ``openapi_extra`` body)."""
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return _inline(defs[ref.removeprefix("#/$defs/")], defs)
        return {k: _inline(v, defs) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_inline(v, defs) for v in schema]
    return schema


def _query_schema() -> dict[str, Any]:
    schema = QueryBody.model_json_schema()
    defs = schema.pop("$defs", {})
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": _inline(schema, defs)}},
        }
    }


def _validation_detail(exc: ValidationError | RequestValidationError) -> list[dict[str, Any]]:
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


def _plan_of(service: Service, raw: Any) -> Plan:
    """Validate a query body (no data read) and make its plan."""
    body = QueryBody.model_validate(raw)
    if (body.query is None) == (body.kind is None):
        raise QueryError("give either `query` (text) or `kind` (structured).")
    if body.query is not None:
        if any(v is not None for v in (body.column, body.weights, body.coefficients, body.where)):
            raise QueryError("a text `query` takes no other fields than `dataset`.")
        spec = parse_query(body.query, dataset=body.dataset)
    else:
        spec = spec_from_json(body.model_dump(exclude_none=True, exclude={"query"}))
    return service.plan(spec)


def create_app(config: ServerConfig, *, engine: Engine | None = None, init: bool = True) -> FastAPI:
    """The query server of ``config``; with ``init`` it creates the tables and imports the datasets if needed
    (the worker processes of a multi-process server skip it: their parent did it)."""
    if init:
        engine = store.init_database(config, engine=engine)
    engine = engine or db.make_engine(config.database_url)
    service = Service(config, engine)

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        service.close()

    docs: dict[str, Any] = (
        {} if config.api_docs else {"openapi_url": None, "docs_url": None, "redoc_url": None}
    )
    app = FastAPI(
        title="privnoise query server",
        version=__version__,
        description="Noisy answers to aggregate queries under per-querier and per-dataset privacy budgets.",
        default_response_class=FastJSON,
        lifespan=lifespan,
        **docs,
    )
    app.state.service = service
    app.state.engine = engine
    authenticator = Authenticator(
        service.lookup_key,
        cache=keys.KeyCache(config.key_cache_seconds),
        throttle=FailureThrottle(config.auth_failures, config.auth_window_seconds),
        tarpit=config.auth_tarpit_seconds,
    )
    app.state.authenticator = authenticator
    open_paths = frozenset({"/health"}) | (DOCS_PATHS if config.api_docs else frozenset())
    app.add_middleware(
        Gate, authenticator=authenticator, max_body=config.max_body_bytes, open_paths=open_paths
    )

    @app.exception_handler(ApiError)
    async def _api_error(_request: Request, exc: ApiError) -> Response:
        return FastJSON(exc.body, status_code=exc.status, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, exc: RequestValidationError) -> Response:
        return FastJSON({"error": "invalid request", "detail": _validation_detail(exc)}, status_code=422)

    def who(request: Request) -> dict[str, Any]:
        return dict(request.scope["privnoise.who"])

    def admin(request: Request) -> dict[str, Any]:
        identity = who(request)
        if identity["role"] != "admin":
            raise _FORBIDDEN
        return identity

    Querier = Annotated[dict[str, Any], Depends(who)]
    Admin = Annotated[dict[str, Any], Depends(admin)]
    responses: dict[int | str, dict[str, Any]] = {
        401: {"description": "missing or wrong API key"},
        403: {"description": "not allowed for this key"},
        413: {"description": "request body too large"},
        429: {"description": "too many failed authentications"},
    }

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.post(
        "/v1/queries",
        openapi_extra=_query_schema(),
        responses=responses
        | {
            422: {"description": "malformed, not allowed, or failed after its charge"},
            429: {"description": "budget exceeded, or too many failed authentications"},
            503: {"description": "the charge could not be recorded; nothing was charged"},
        },
    )
    async def post_query(request: Request) -> Response:
        identity = request.scope["privnoise.who"]
        if identity["role"] != "querier":
            raise _FORBIDDEN
        raw = request.scope.get("privnoise.json")
        try:
            plan = service.cached(("body", await request.body()), lambda: _plan_of(service, raw))
        except ValidationError as exc:
            raise ApiError(422, {"error": "invalid request", "detail": _validation_detail(exc)}) from None
        except InvalidParameterError as exc:
            raise ApiError(422, {"error": str(exc)}) from None
        charged = None
        for _attempt in range(3):
            try:
                charged = await asyncio.wrap_future(service.committer.submit(plan, identity["id"]))
                break
            except StalePlan as stale:
                plan = service.refreshed(plan, stale.records)
            except Refusal:
                remaining = (await run_in_threadpool(service.budget, identity["id"])).get(plan.spec.name, {})
                raise ApiError(429, {"error": "budget exceeded", "budget": remaining}) from None
            except ChargeUnavailable:
                raise ApiError(
                    503,
                    {"error": "the charge could not be recorded; nothing was charged"},
                    {"Retry-After": "1"},
                ) from None
        if charged is None:
            raise ApiError(
                503, {"error": "the dataset is being re-imported; try again"}, {"Retry-After": "1"}
            )
        try:
            value = await run_in_threadpool(service.release, plan, charged.ledger_id)
        except QueryFailed:
            raise ApiError(422, dict(FAILURE_BODY)) from None
        after = service.view(charged.after, plan)
        payload = {
            "dataset": plan.spec.name,
            "query": plan.query.as_dict(),
            "value": value,
            "guarantee": plan.guarantee(after),
            "charged": plan.charged,
            "remaining": after,
            "ledger_id": charged.ledger_id,
        }
        return Response(orjson.dumps(payload), media_type="application/json")

    @app.get("/v1/budget", responses=responses)
    def get_budget(identity: Querier) -> dict[str, Any]:
        if identity["role"] != "querier":
            raise _FORBIDDEN
        return {"querier": identity["name"], "datasets": service.budget(identity["id"])}

    @app.post("/v1/admin/queriers", status_code=201, responses=responses | {409: {"description": "exists"}})
    def add_querier(body: QuerierBody, _admin: Admin) -> dict[str, Any]:
        try:
            key = store.create_querier(
                engine,
                config,
                body.name,
                epsilon=body.epsilon,
                delta=body.delta,
                fisher_floor=body.fisher_floor,
            )
        except InvalidParameterError as exc:
            status = 409 if "already exists" in str(exc) else 422
            raise ApiError(status, {"error": str(exc)}) from None
        return {"name": body.name, "key": key}

    @app.get("/v1/admin/queriers", responses=responses)
    def get_queriers(_admin: Admin) -> dict[str, Any]:
        return {"queriers": store.list_queriers(engine)}

    @app.get(
        "/v1/admin/queriers/{name}/budget", responses=responses | {404: {"description": "no such querier"}}
    )
    def get_querier_budget(
        name: Annotated[str, Path(max_length=64, pattern=r"^[A-Za-z0-9_-]+$")], _admin: Admin
    ) -> dict[str, Any]:
        with service.reader.connect() as conn:
            row = conn.execute(
                select(db.queriers.c.id).where(db.queriers.c.name == name, db.queriers.c.role == "querier")
            ).first()
        if row is None:
            raise ApiError(404, {"error": "no such querier"})
        return {"querier": name, "datasets": service.budget(row[0])}

    @app.get("/v1/admin/ledger", responses=responses)
    def get_ledger(
        _admin: Admin,
        limit: Annotated[int, Query(ge=1, le=10000)] = 100,
        querier: Annotated[str | None, Query(max_length=64, pattern=r"^[A-Za-z0-9_-]+$")] = None,
    ) -> dict[str, Any]:
        return {"ledger": store.read_ledger(engine, limit=limit, querier=querier)}

    @app.get("/v1/admin/datasets", responses=responses)
    def get_datasets(_admin: Admin) -> dict[str, Any]:
        return {"datasets": service.datasets()}

    return app
