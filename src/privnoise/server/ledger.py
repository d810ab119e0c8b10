"""The ledger as the owner reads it: its rows filtered by querier, dataset, status and outcome, sorted, paged and
counted (:func:`read_ledger`, :func:`count_ledger`). A ledger row never holds a true value.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from ..exceptions import InvalidParameterError
from . import db

__all__ = ["LEDGER_ORDER", "LEDGER_OUTCOMES", "count_ledger", "read_ledger"]


#: The orders :func:`read_ledger` knows: a column of its rows, and the direction.
LEDGER_ORDER = ("id", "querier", "dataset", "mechanism", "created_at", "status")


#: The columns of a ledger row that :func:`read_ledger` returns after its id and its querier's name.
_LEDGER_COLUMNS = ("dataset", "query", "mechanism", "epsilon", "delta", "fisher_information", "created_at", "status",
                   "reason", "repeats")


#: The outcomes :func:`read_ledger` filters on: a charge (``status`` "charged" or "failed"), or a refusal.
LEDGER_OUTCOMES = ("charged", "refused")


def _ledger_filters(
    stmt: Any, querier: str | None, dataset: str | None, status: str | None, outcome: str | None = None
) -> Any:
    if outcome is not None:
        if outcome not in LEDGER_OUTCOMES:
            raise InvalidParameterError(
                f"`outcome` of the ledger must be one of {', '.join(LEDGER_OUTCOMES)}; got {outcome!r}."
            )
        refused = db.ledger.c.status == "refused"
        stmt = stmt.where(refused if outcome == "refused" else ~refused)
    if querier is not None:
        stmt = stmt.where(db.queriers.c.name == querier)
    if dataset is not None:
        stmt = stmt.where(db.ledger.c.dataset == dataset)
    if status is not None:
        stmt = stmt.where(db.ledger.c.status == status)
    return stmt


def count_ledger(
    engine: Engine,
    *,
    querier: str | None = None,
    dataset: str | None = None,
    status: str | None = None,
    outcome: str | None = None,
) -> int:
    """The number of ledger rows that :func:`read_ledger` filters with the same arguments."""
    stmt = select(func.count()).select_from(
        db.ledger.join(db.queriers, db.queriers.c.id == db.ledger.c.querier_id)
    )
    with engine.connect() as conn:
        return int(conn.execute(_ledger_filters(stmt, querier, dataset, status, outcome)).scalar_one())


def read_ledger(
    engine: Engine,
    *,
    limit: int = 100,
    querier: str | None = None,
    dataset: str | None = None,
    status: str | None = None,
    outcome: str | None = None,
    offset: int = 0,
    order: str = "id",
    descending: bool = True,
) -> list[dict[str, Any]]:
    """Ledger rows (by default the most recent first), filtered by querier name, dataset, status and outcome
    (:data:`LEDGER_OUTCOMES`), ordered by one of :data:`LEDGER_ORDER` (then by id); a ledger row never holds a
    true value. A refused row (``status`` "refused") charged nothing: its ``query`` is the text the querier
    sent (a string, at most 1,000 characters), ``reason`` says why it was refused and ``repeats`` how many
    refusals of that querier it stands for (:mod:`.refusals`); other rows have ``reason`` None and ``repeats`` 1."""
    if order not in LEDGER_ORDER:
        raise InvalidParameterError(
            f"`order` of `read_ledger` must be one of {', '.join(LEDGER_ORDER)}; got {order!r}."
        )
    key = db.queriers.c.name if order == "querier" else db.ledger.c[order]
    stmt = (
        select(
            db.ledger.c.id,
            db.queriers.c.name.label("querier"),
            *db.columns(db.ledger, *_LEDGER_COLUMNS),
        )
        .join(db.queriers, db.queriers.c.id == db.ledger.c.querier_id)
        .order_by(*((key.desc(), db.ledger.c.id.desc()) if descending else (key.asc(), db.ledger.c.id.asc())))
        .limit(limit)
        .offset(offset)
    )
    stmt = _ledger_filters(stmt, querier, dataset, status, outcome)
    with engine.connect() as conn:
        rows = conn.execute(stmt).mappings().all()
    out = []
    for r in rows:
        d = dict(r)
        d["query"] = json.loads(d["query"])
        d["fisher_information"] = json.loads(d["fisher_information"])
        d["created_at"] = d["created_at"].isoformat()
        out.append(d)
    return out

