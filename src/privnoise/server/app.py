"""The HTTP API (FastAPI behind the ASGI gate of :mod:`.gate`): ``create_app(config)``.

Endpoints (every one but ``/health`` needs ``Authorization: Bearer <key>``, checked before the body is read):

* ``GET /health`` — liveness, no key.
* ``POST /v1/queries`` — a query as text (``{"query": "mean(kwh) where region = 'north'"}``), structured
  JSON, or a SQL statement (``{"sql": "SELECT region, AVG(kwh) FROM meters GROUP BY region", "dialect":
  "postgres"}``, :mod:`.sqlanswers`); returns the noisy value (a statement: its columns and intervals, one row per
  group), its guarantee, what was charged and the querier's remaining budget. With ``?dry_run=true``: what it
  would be charged and its expected accuracy, from public information only, charging nothing (:mod:`.dryruns`).
  Budget refused: 429. Malformed or not allowed by the configuration: 422. Failed after the charge: 422 with
  ``{"error": "query failed"}``, the same bytes whatever the data. No field accepts a seed (unknown fields: 422).
* ``GET /v1/budget`` — the calling querier's own budgets.
* Admin (admin key): ``POST /v1/admin/queriers``, ``GET /v1/admin/queriers``,
  ``GET /v1/admin/queriers/{name}/budget``, ``DELETE /v1/admin/queriers/{name}`` (revoke),
  ``GET /v1/admin/ledger``, ``GET /v1/admin/datasets``.
* ``/openapi.json``, ``/docs``, ``/redoc``: only with ``api_docs = true`` in ``[server]``.
* ``/console/...``: the web console (:mod:`.console`), with ``[console] enabled`` (by default on loopback); it
  authenticates by session cookie behind its own guard, and answers queries through the same path.

Unauthenticated requests get 401 ``{"error": "unauthorized"}`` whether or not the key's querier exists (429 once
an address or key id has failed too often); a querier on an admin endpoint gets 403 ``{"error": "forbidden"}``;
bodies beyond ``max_body_bytes`` get 413; bodies that are not strict JSON get 400; a request the schema refuses
gets 422 without echoing its input. A charge that could not be recorded gets 503 (nothing was charged). A method
a path does not serve gets 405 with ``Allow`` listing the methods it does. A revoked querier is gone for the
admin operations on it (404); its ledger rows stay, and its name is not reused (409).

The API description (:mod:`.openapi`) states every status of every operation, and its request schemas are as
strict as the server: a test runs schemathesis with every check against a running server.
"""

import contextlib
import functools
from collections.abc import AsyncIterator
from typing import Annotated, Any

import orjson
from fastapi import Depends, FastAPI, Path, Query, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from sqlalchemy import select
from sqlalchemy.engine import Engine
from starlette.exceptions import HTTPException
from starlette.routing import Match

from .._version import __version__
from ..exceptions import InvalidParameterError
from . import db, keys, openapi, store
from .answers import QueryBody, answer_query, validation_detail
from .config import ServerConfig
from .gate import Authenticator, Gate
from .querier_body import QuerierBody
from .service import Service
from .throttle import FailureThrottle

__all__ = ["FastLane", "create_app"]

DOCS_PATHS = frozenset({"/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"})


class FastJSON(JSONResponse):
    """JSON rendered by orjson (strict: the server never sends NaN or infinity)."""

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


class ApiError(Exception):
    def __init__(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        self.status, self.body, self.headers = status, body, headers


_FORBIDDEN = ApiError(403, {"error": "forbidden"})


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
    return openapi.query_request(_inline(schema, defs))


def _served_methods(app: FastAPI, scope: dict[str, Any]) -> list[str]:
    """Every method a route of ``scope``'s path serves (several routes may share one path)."""
    methods: set[str] = set()
    for route in app.router.routes:
        served = getattr(route, "methods", None)
        if served and route.matches(scope)[0] != Match.NONE:
            methods |= served
    return sorted(methods)


class FastLane:
    """The ASGI app a server process serves: the routes the gate answers itself (``POST /v1/queries``) go to a gate
    of their own ahead of the framework's middleware (its error page, telemetry and body limit, the console's
    guard: a layer of calls each per request), with the same authenticator, body limit, strict JSON and route as the
    gate inside; every other request, and the lifespan, goes to ``app``.

    An exception of the route is answered by the server's own 500 (uvicorn's), as the framework's error middleware
    would answer it."""

    def __init__(self, app: FastAPI) -> None:
        self.app = app
        service: Service = app.state.service
        self.gate = Gate(
            app,
            app.state.authenticator,
            max_body=service.config.max_body_bytes,
            open_paths=frozenset(),
            routes=app.state.routes,
        )
        self.lanes = frozenset(app.state.routes)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and (scope["method"], scope["path"]) in self.lanes:
            await self.gate(scope, receive, send)
            return
        await self.app(scope, receive, send)


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
        if service.loop_reads is not None:  # its connections belong to this loop
            await service.loop_reads.close()
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
    app.state.routes = {("POST", "/v1/queries"): functools.partial(answer_query, service)}
    app.add_middleware(
        Gate,
        authenticator=authenticator,
        max_body=config.max_body_bytes,
        open_paths=open_paths | ({"/console"} if config.console.enabled else set()),
        routes=app.state.routes,
        open_prefixes=("/console/",) if config.console.enabled else (),
    )
    if config.console.enabled:
        from .console import mount

        mount(app, config=config, service=service, authenticator=authenticator)

    @app.exception_handler(ApiError)
    async def _api_error(_request: Request, exc: ApiError) -> Response:
        return FastJSON(exc.body, status_code=exc.status, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, exc: RequestValidationError) -> Response:
        return FastJSON({"error": "invalid request", "detail": validation_detail(exc)}, status_code=422)

    @app.exception_handler(HTTPException)
    async def _http_error(request: Request, exc: HTTPException) -> Response:
        if exc.status_code == 405:  # Allow: every method served on the path, not only one route's
            allow = ", ".join(_served_methods(app, dict(request.scope)))
            return FastJSON({"error": "method not allowed"}, status_code=405, headers={"Allow": allow})
        if request.url.path.startswith("/v1/"):
            return FastJSON(
                {"error": str(exc.detail).lower()}, status_code=exc.status_code, headers=exc.headers
            )
        return await http_exception_handler(request, exc)

    def who(request: Request) -> dict[str, Any]:
        return dict(request.scope["privnoise.who"])

    def admin(request: Request) -> dict[str, Any]:
        identity = who(request)
        if identity["role"] != "admin":
            raise _FORBIDDEN
        return identity

    Querier = Annotated[dict[str, Any], Depends(who)]
    Admin = Annotated[dict[str, Any], Depends(admin)]
    gated = openapi.GATED
    responses = openapi.responses(*gated)

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.post(
        "/v1/queries",
        openapi_extra=_query_schema(),
        responses=openapi.responses(
            *gated,
            422,
            503,
            s422="malformed (validation `detail`; a `dry_run` that is not a boolean names the `parameter`), not "
            "allowed by the configuration (a SQL statement's refusal with its `position`), or failed after its charge "
            '(`{"error": "query failed"}`, the same bytes whatever the data)',
            s429="budget exceeded (with the remaining `budget`), too many of this querier's queries being "
            "planned, or too many failed authentications (these two with Retry-After)",
        ),
    )
    async def post_query(request: Request) -> Response:
        # The gate answers this path itself (answers.answer_query); this route describes it and serves an app
        # mounted without the gate.
        status, body, headers = await answer_query(
            service,
            request.scope["privnoise.who"],
            await request.body(),
            request.scope.get("privnoise.json"),
            request.scope.get("query_string", b""),
        )
        return Response(body, status_code=status, headers={k.decode(): v.decode() for k, v in headers})

    @app.get("/v1/budget", responses=responses)
    def get_budget(identity: Querier) -> dict[str, Any]:
        if identity["role"] != "querier":
            raise _FORBIDDEN
        return {"querier": identity["name"], "datasets": service.budget(identity["id"])}

    @app.post("/v1/admin/queriers", status_code=201, responses=openapi.responses(*gated, 409, 422))
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

    def active_querier(name: str) -> int:
        """The id of the querier ``name``; 404 if there is none or it was revoked."""
        with service.reader.connect() as conn:
            row = conn.execute(
                select(db.queriers.c.id).where(
                    db.queriers.c.name == name,
                    db.queriers.c.role == "querier",
                    db.queriers.c.revoked_at.is_(None),
                )
            ).first()
        if row is None:
            raise ApiError(404, {"error": "no such querier"})
        return int(row[0])

    @app.get("/v1/admin/queriers/{name}/budget", responses=openapi.responses(*gated, 404, 422))
    def get_querier_budget(
        name: Annotated[str, Path(max_length=64, pattern=r"^[A-Za-z0-9_-]+$")], _admin: Admin
    ) -> dict[str, Any]:
        return {"querier": name, "datasets": service.budget(active_querier(name))}

    @app.delete("/v1/admin/queriers/{name}", responses=openapi.responses(*gated, 404, 422))
    def revoke_querier(
        name: Annotated[str, Path(max_length=64, pattern=r"^[A-Za-z0-9_-]+$")], _admin: Admin
    ) -> dict[str, Any]:
        active_querier(name)
        key_id = store.revoke_querier(engine, name)
        if key_id is None:
            raise ApiError(404, {"error": "no such querier"})
        authenticator.cache.forget(key_id)
        return {"name": name, "revoked": True}

    @app.get("/v1/admin/ledger", responses=openapi.responses(*gated, 422))
    def get_ledger(
        _admin: Admin,
        limit: Annotated[int, Query(ge=1, le=10000)] = 100,
        querier: Annotated[str | None, Query(max_length=64, pattern=r"^[A-Za-z0-9_-]+$")] = None,
        outcome: Annotated[str | None, Query(pattern=r"^(charged|refused)$")] = None,
    ) -> dict[str, Any]:
        return {"ledger": store.read_ledger(engine, limit=limit, querier=querier, outcome=outcome)}

    @app.get("/v1/admin/datasets", responses=responses)
    def get_datasets(_admin: Admin) -> dict[str, Any]:
        return {"datasets": service.datasets()}

    described = app.openapi

    def description() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = openapi.with_security(described(), frozenset({"/health"}))
        return app.openapi_schema

    app.openapi = description  # type: ignore[method-assign]
    return app
