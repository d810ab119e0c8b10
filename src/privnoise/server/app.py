"""The HTTP API (FastAPI): ``create_app(config)``.

Endpoints (every one but ``/health`` needs ``Authorization: Bearer <key>``):

* ``GET /health`` — liveness, no key.
* ``POST /v1/queries`` — a query as text (``{"query": "mean(kwh) where region = 'north'"}``) or structured
  JSON; returns the noisy value, its guarantee, what was charged and the querier's remaining budget.
  Budget refused: 429. Malformed or not allowed by the configuration: 422. Failed after the charge: 422 with
  ``{"error": "query failed"}``, the same bytes whatever the data. No field accepts a seed (unknown fields: 422).
* ``GET /v1/budget`` — the calling querier's own budgets.
* Admin (admin key): ``POST /v1/admin/queriers``, ``GET /v1/admin/queriers``,
  ``GET /v1/admin/queriers/{name}/budget``, ``GET /v1/admin/ledger``, ``GET /v1/admin/datasets``.

Unauthenticated requests get 401 ``{"error": "unauthorized"}`` whether or not the key's querier exists; a
querier on an admin endpoint gets 403 ``{"error": "forbidden"}``.
"""

from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, Header, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import select
from sqlalchemy.engine import Engine

from .. import __version__
from ..exceptions import InvalidParameterError
from . import db, keys, store
from .budgets import Refusal, dataset_view, querier_view
from .config import ServerConfig
from .querylang import QueryError, parse_query, spec_from_json
from .service import FAILURE_BODY, QueryFailed, Service

__all__ = ["create_app"]


class ApiError(Exception):
    def __init__(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        self.status, self.body, self.headers = status, body, headers


_UNAUTHORIZED = ApiError(401, {"error": "unauthorized"}, {"WWW-Authenticate": "Bearer"})
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
    fisher_floor: Annotated[float, Field(gt=0, le=1e300)] | None = None


def create_app(config: ServerConfig, *, engine: Engine | None = None) -> FastAPI:
    """The query server of ``config``: creates the tables and imports the datasets if needed."""
    engine = store.init_database(config, engine=engine)
    service = Service(config, engine)
    app = FastAPI(
        title="privnoise query server",
        version=__version__,
        description="Noisy answers to aggregate queries under per-querier and per-dataset privacy budgets.",
    )
    app.state.service = service
    app.state.engine = engine

    @app.exception_handler(ApiError)
    async def _api_error(_request: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(exc.body, status_code=exc.status, headers=exc.headers)

    def querier(authorization: Annotated[str | None, Header()] = None) -> dict[str, Any]:
        if not authorization or not authorization.startswith("Bearer ") or len(authorization) > 300:
            raise _UNAUTHORIZED
        parts = keys.split_key(authorization[7:].strip())
        row = None
        if parts is not None:
            with engine.connect() as conn:
                row = (
                    conn.execute(select(db.queriers).where(db.queriers.c.key_id == parts[0]))
                    .mappings()
                    .first()
                )
        ok = keys.verify_secret(parts[1] if parts else "", row["key_hash"] if row else None)
        if not ok or row is None:
            raise _UNAUTHORIZED
        return dict(row)

    def admin(who: Annotated[dict[str, Any], Depends(querier)]) -> dict[str, Any]:
        if who["role"] != "admin":
            raise _FORBIDDEN
        return who

    Querier = Annotated[dict[str, Any], Depends(querier)]
    Admin = Annotated[dict[str, Any], Depends(admin)]
    responses: dict[int | str, dict[str, Any]] = {
        401: {"description": "missing or wrong API key"},
        403: {"description": "not allowed for this key"},
    }

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.post(
        "/v1/queries",
        responses=responses
        | {
            422: {"description": "malformed, not allowed, or failed after its charge"},
            429: {"description": "budget exceeded"},
        },
    )
    def post_query(body: QueryBody, who: Querier) -> dict[str, Any]:
        if who["role"] != "querier":
            raise _FORBIDDEN
        try:
            if (body.query is None) == (body.kind is None):
                raise QueryError("give either `query` (text) or `kind` (structured).")
            if body.query is not None:
                if any(v is not None for v in (body.column, body.weights, body.coefficients, body.where)):
                    raise QueryError("a text `query` takes no other fields than `dataset`.")
                spec = parse_query(body.query, dataset=body.dataset)
            else:
                spec = spec_from_json(body.model_dump(exclude_none=True, exclude={"query"}))
            plan = service.plan(spec)
        except InvalidParameterError as exc:
            raise ApiError(422, {"error": str(exc)}) from None
        try:
            ledger_id, after = service.charge(plan, who["id"])
        except Refusal:
            remaining = service.budget(who["id"]).get(plan.spec.name, {})
            raise ApiError(429, {"error": "budget exceeded", "budget": remaining}) from None
        try:
            value = service.release(plan)
        except QueryFailed:
            raise ApiError(422, dict(FAILURE_BODY)) from None
        return {
            "dataset": plan.spec.name,
            "query": plan.query.as_dict(),
            "value": value,
            "guarantee": plan.guarantee(after),
            "charged": {
                "epsilon": str(plan.charge.epsilon),
                "delta": str(plan.charge.delta),
                "fisher_information": plan.charge.fisher,
            },
            "remaining": after,
            "ledger_id": ledger_id,
        }

    @app.get("/v1/budget", responses=responses)
    def get_budget(who: Querier) -> dict[str, Any]:
        if who["role"] != "querier":
            raise _FORBIDDEN
        return {"querier": who["name"], "datasets": service.budget(who["id"])}

    @app.post("/v1/admin/queriers", status_code=201, responses=responses | {409: {"description": "exists"}})
    def add_querier(body: QuerierBody, _who: Admin) -> dict[str, Any]:
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
    def get_queriers(_who: Admin) -> dict[str, Any]:
        return {"queriers": store.list_queriers(engine)}

    @app.get(
        "/v1/admin/queriers/{name}/budget", responses=responses | {404: {"description": "no such querier"}}
    )
    def get_querier_budget(name: Annotated[str, Field(max_length=64)], _who: Admin) -> dict[str, Any]:
        with engine.connect() as conn:
            row = conn.execute(
                select(db.queriers.c.id).where(db.queriers.c.name == name, db.queriers.c.role == "querier")
            ).first()
        if row is None:
            raise ApiError(404, {"error": "no such querier"})
        return {"querier": name, "datasets": service.budget(row[0])}

    @app.get("/v1/admin/ledger", responses=responses)
    def get_ledger(
        _who: Admin,
        limit: Annotated[int, Query(ge=1, le=10000)] = 100,
        querier: Annotated[str | None, Query(max_length=64)] = None,
    ) -> dict[str, Any]:
        return {"ledger": store.read_ledger(engine, limit=limit, querier=querier)}

    @app.get("/v1/admin/datasets", responses=responses)
    def get_datasets(_who: Admin) -> dict[str, Any]:
        with engine.connect() as conn:
            rows = conn.execute(select(db.datasets)).mappings().all()
        return {
            "datasets": {
                r["name"]: dataset_view(r, config.datasets[r["name"]]) | {"records": service.rows[r["name"]]}
                for r in rows
                if r["name"] in config.datasets
            }
        }

    _ = querier_view
    return app
