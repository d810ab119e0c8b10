"""The owner's pages (admin key): datasets and their figures, queriers and their budgets, the ledger.

Every number comes from the API's own views (:meth:`~privnoise.server.service.Service.datasets`,
:func:`~privnoise.server.budgets.querier_view`, :func:`~privnoise.server.ledger.read_ledger`); queriers are added
with :func:`~privnoise.server.queriers.create_querier` (the key is shown on the answer to that form only) and revoked
with :func:`~privnoise.server.queriers.revoke_querier`. The ledger never holds a true value; its CSV export guards
against spreadsheet formulas.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response, StreamingResponse
from pydantic import ValidationError
from sqlalchemy import select

from ...exceptions import InvalidParameterError
from .. import db, openapi, store
from ..budgets import QuerierState, querier_view
from ..querier_body import QuerierBody
from . import figures
from .guard import PREFIX
from .paging import Paging, sort_rows
from .queryform import describe_query
from .render import page, signed_in_as

__all__ = ["router"]

router = APIRouter(prefix=PREFIX, include_in_schema=False)
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_STATUSES = ("charged", "failed", "refused")
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def _owner(request: Request) -> Response | None:
    """None for the owner; otherwise the response to give (sign-in, or 403 for a querier)."""
    session = signed_in_as(request, "admin")
    return session if isinstance(session, Response) else None


def _console(request: Request) -> Any:
    return request.app.state.console


# -- datasets -------------------------------------------------------------------------------------------------
@router.get("/datasets")
def datasets(request: Request) -> Response:
    if (refused := _owner(request)) is not None:
        return refused
    console = _console(request)
    views = console.service.datasets()
    return page(request, "datasets.html", datasets=console.config.datasets, views=views)


def _released_information(console: Any, dataset: str) -> tuple[int, dict[str, list[float]]]:
    """Each release's per-record information about each column of ``dataset``, in ledger order (refused rows
    released nothing and are skipped)."""
    with console.service.reader.connect() as conn:
        rows = conn.execute(
            select(db.ledger.c.fisher_information)
            .where(db.ledger.c.dataset == dataset, db.ledger.c.status != "refused")
            .order_by(db.ledger.c.id)
        ).all()
    out: dict[str, list[float]] = {}
    for i, (raw,) in enumerate(rows):
        for column, value in json.loads(raw).items():
            series = out.setdefault(column, [0.0] * i)
            series.extend([0.0] * (i - len(series)))
            series.append(float(value))
    for series in out.values():
        series.extend([0.0] * (len(rows) - len(series)))
    return len(rows), out


@router.get("/datasets/{name}")
def dataset(request: Request, name: str) -> Response:
    if (refused := _owner(request)) is not None:
        return refused
    console = _console(request)
    spec = console.config.datasets.get(name)
    if spec is None:
        return page(request, "error.html", status=404, message="No such dataset.")
    view = console.service.datasets()[name]
    records = int(view["records"] or 0)
    tradeoffs = [
        (kind, policy, figures.tradeoff_svg(name, policy, max(records, 1)))
        for kind, policy in spec.policies.items()
        if policy.is_scalar_fisher
    ]
    releases, information = _released_information(console, name)
    bounds = [
        (
            column,
            view["fisher"][column],
            figures.record_bound_svg(
                name, column, information.get(column, [0.0] * releases), col.fisher_floor
            ),
        )
        for column, col in spec.columns.items()
        if col.type == "number" and (col.fisher_floor is not None or information.get(column))
    ]
    charges = _epsilon_charges(console, name)
    spent = figures.epsilon_spent_svg(name, charges, float(spec.epsilon))
    by_querier: dict[str, float] = {}
    for _when, who, epsilon in charges:
        by_querier[who] = by_querier.get(who, 0.0) + epsilon
    return page(
        request,
        "dataset.html",
        spec=spec,
        view=view,
        tradeoffs=tradeoffs,
        bounds=bounds,
        releases=releases,
        spent_figure=spent,
        spent_by_querier=sorted(by_querier.items()),
    )


def _epsilon_charges(console: Any, dataset: str) -> list[tuple[Any, str, float]]:
    """(time, querier, ε) of every charge on ``dataset`` in ledger order (refused rows charged nothing)."""
    ledger, q = db.ledger, db.queriers
    with console.service.reader.connect() as conn:
        rows = conn.execute(
            select(ledger.c.created_at, q.c.name, ledger.c.epsilon)
            .join(q, q.c.id == ledger.c.querier_id)
            .where(ledger.c.dataset == dataset, ledger.c.status != "refused")
            .order_by(ledger.c.id)
        ).all()
    return [(when, name, float(Fraction(epsilon))) for when, name, epsilon in rows]


# -- queriers -------------------------------------------------------------------------------------------------
def _queriers(console: Any) -> list[dict[str, Any]]:
    """Every querier with its budget views per dataset and the largest share of an ε budget it has spent."""
    q, b = db.queriers, db.budgets
    with console.service.reader.connect() as conn:
        people = conn.execute(
            select(q.c.id, q.c.name, q.c.created_at, q.c.revoked_at).where(q.c.role == "querier")
        ).all()
        budgets = conn.execute(select(b)).mappings().all()
    views: dict[int, dict[str, Any]] = {}
    for row in budgets:
        spec = console.config.datasets.get(row["dataset"])
        if spec is not None:
            views.setdefault(row["querier_id"], {})[row["dataset"]] = querier_view(
                QuerierState.from_row(row), spec
            )
    out = []
    for person in people:
        mine = views.get(person.id, {})
        shares = [
            float(Fraction(v["epsilon"]["spent"]) / Fraction(v["epsilon"]["budget"]))
            for v in mine.values()
            if Fraction(v["epsilon"]["budget"]) > 0
        ]
        out.append(
            {
                "name": person.name,
                "created": person.created_at.isoformat(timespec="seconds"),
                "status": "revoked" if person.revoked_at is not None else "active",
                "budgets": mine,
                "spent": max(shares, default=0.0),
            }
        )
    return out


@router.get("/queriers")
def queriers(request: Request) -> Response:
    if (refused := _owner(request)) is not None:
        return refused
    return _queriers_page(request)


def _queriers_page(request: Request, *, status: int = 200, **context: Any) -> Response:
    console = _console(request)
    rows = _queriers(console)
    paging = Paging.of(
        request, ("name", "created", "status", "spent"), default="name", size=console.config.console.page_size
    )
    rows = sort_rows(rows, paging.sort, paging.descending)
    revoked = request.query_params.get("revoked", "")
    return page(
        request,
        "queriers.html",
        status=status,
        rows=paging.slice(rows),
        paging=paging.counted(len(rows)),
        global_views=console.service.datasets(),
        datasets=console.config.datasets,
        revoked=revoked if _NAME.match(revoked) else "",
        **({"error": None, "values": {}} | context),
    )


def _typed(text: str, pattern: str) -> str | float:
    """A form's budget field as the API takes it: the text when it is an exact form of ``pattern`` (an integer, a
    fraction), else the number it writes (a decimal such as 1.5 or 1e-6, read by the store at its shortest decimal
    value); text that is neither is passed on for the API's own message."""
    if re.fullmatch(pattern, text):
        return text
    try:
        return float(text)
    except ValueError:
        return text


@router.post("/queriers")
def add_querier(request: Request) -> Response:
    if (refused := _owner(request)) is not None:
        return refused
    console = _console(request)
    form = request.scope["privnoise.form"]
    values = {k: form.get(k, "").strip() for k in ("name", "epsilon", "delta", "fisher_floor")}
    try:
        body = QuerierBody.model_validate(
            {
                "name": values["name"],
                "epsilon": _typed(values["epsilon"], openapi.EPSILON_PATTERN),
                "delta": _typed(values["delta"] or "0", openapi.DELTA_PATTERN),
                "fisher_floor": float(values["fisher_floor"]) if values["fisher_floor"] else None,
            }
        )
        key = store.create_querier(
            console.engine,
            console.config,
            body.name,
            epsilon=body.epsilon,
            delta=body.delta,
            fisher_floor=body.fisher_floor,
        )
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        return _queriers_page(request, status=422, error=problems, values=values)
    except (InvalidParameterError, ValueError) as exc:
        status = 409 if "already exists" in str(exc) else 422
        return _queriers_page(request, status=status, error=str(exc), values=values)
    return page(request, "querier_added.html", status=201, name=body.name, key=key)


@router.get("/queriers/{name}/revoke")
def revoke_form(request: Request, name: str) -> Response:
    if (refused := _owner(request)) is not None:
        return refused
    if not _NAME.match(name) or not any(r["name"] == name for r in _queriers(_console(request))):
        return page(request, "error.html", status=404, message="No such querier.")
    return page(request, "revoke.html", name=name)


@router.post("/queriers/{name}/revoke")
def revoke(request: Request, name: str) -> Response:
    if (refused := _owner(request)) is not None:
        return refused
    console = _console(request)
    key_id = store.revoke_querier(console.engine, name) if _NAME.match(name) else None
    if key_id is None:
        return page(request, "error.html", status=404, message="No such querier.")
    console.authenticator.cache.forget(key_id)
    return RedirectResponse(f"{PREFIX}/queriers?revoked={name}", status_code=303)


# -- ledger ---------------------------------------------------------------------------------------------------
def _ledger_filters(request: Request, console: Any) -> dict[str, str | None]:
    params = request.query_params
    querier = params.get("querier", "")
    dataset = params.get("dataset", "")
    status = params.get("status", "")
    return {
        "querier": querier if _NAME.match(querier) else None,
        "dataset": dataset if dataset in console.config.datasets else None,
        "status": status if status in _STATUSES else None,
    }


def _ledger_row(row: dict[str, Any]) -> dict[str, Any]:
    """A ledger row with its query as text (a refused row holds the text the querier sent)."""
    query = row["query"]
    return row | {"text": query if isinstance(query, str) else describe_query(query), "reason": row["reason"] or ""}


@router.get("/ledger")
def ledger(request: Request) -> Response:
    if (refused := _owner(request)) is not None:
        return refused
    console = _console(request)
    filters = _ledger_filters(request, console)
    paging = Paging.of(
        request, store.LEDGER_ORDER, default="id", descending=True, size=console.config.console.page_size
    )
    total = store.count_ledger(console.service.reader, **filters)
    paging = paging.counted(total)
    rows = store.read_ledger(
        console.service.reader,
        limit=paging.size,
        offset=paging.offset,
        order=paging.sort,
        descending=paging.descending,
        **filters,
    )
    names = sorted(r["name"] for r in _queriers(console))
    return page(
        request,
        "ledger.html",
        rows=[_ledger_row(r) for r in rows],
        paging=paging,
        filters={k: v or "" for k, v in filters.items()},
        names=names,
        datasets=list(console.config.datasets),
        statuses=_STATUSES,
    )


def _cell(value: Any) -> Any:
    """A CSV cell a spreadsheet will not run as a formula."""
    if isinstance(value, str) and value.startswith(_FORMULA):
        return "'" + value
    return value


_CSV_COLUMNS = (
    "id",
    "created_at",
    "querier",
    "dataset",
    "text",
    "mechanism",
    "epsilon",
    "delta",
    "fisher_information",
    "status",
    "reason",
    "repeats",
)


@router.get("/ledger.csv")
def ledger_csv(request: Request) -> Response:
    if (refused := _owner(request)) is not None:
        return refused
    console = _console(request)
    filters = _ledger_filters(request, console)

    def rows() -> Iterator[str]:
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(["query" if c == "text" else c for c in _CSV_COLUMNS])
        offset = 0
        while True:
            chunk = store.read_ledger(
                console.service.reader, limit=1000, offset=offset, order="id", descending=False, **filters
            )
            for row in chunk:
                row = _ledger_row(row) | {
                    "fisher_information": json.dumps(row["fisher_information"], sort_keys=True)
                }
                writer.writerow([_cell(row[c]) for c in _CSV_COLUMNS])
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
            if len(chunk) < 1000:
                return
            offset += len(chunk)

    return StreamingResponse(
        rows(),
        media_type="text/csv; charset=utf-8",
        headers={"content-disposition": 'attachment; filename="ledger.csv"'},
    )
