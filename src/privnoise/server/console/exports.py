"""The querier's export of their answers: every answer they received, as CSV or as JSON.

``/console/history.csv``: one row per answer — its ledger id, time, dataset, query, value (a list as JSON), its
interval where it has one, its exact charge and the answer in words; cells a spreadsheet would run as a formula are
quoted. ``/console/history.json``: ``{"querier", "answers": [{id, created, query, answer}]}``, each answer as the API
returned it. Only the signed-in querier's own answers (``pn_answers``: noisy values, never a true one).
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import orjson
from fastapi import APIRouter, Request
from fastapi.responses import Response
from sqlalchemy import select

from .. import db
from .guard import PREFIX
from .render import signed_in_as
from .wording import answer_words

__all__ = ["router"]

router = APIRouter(prefix=PREFIX, include_in_schema=False)


def _querier(request: Request) -> Any:
    return signed_in_as(request, "querier")


def _all_answers(console: Any, querier_id: int) -> list[dict[str, Any]]:
    """Every answer of the querier, oldest first: what the API returned them (the noisy values, never a true one)."""
    a = db.answers
    with console.service.reader.connect() as conn:
        rows = conn.execute(
            select(a.c.ledger_id, a.c.text, a.c.answer, a.c.created_at)
            .where(a.c.querier_id == querier_id)
            .order_by(a.c.ledger_id)
        ).all()
    return [{"id": row.ledger_id, "created": row.created_at.isoformat(timespec="seconds"), "query": row.text,
             "answer": json.loads(row.answer)} for row in rows]


_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any) -> Any:
    """A CSV cell a spreadsheet will not run as a formula (a negative number stays a number)."""
    if isinstance(value, str) and value.startswith(_FORMULA):
        try:
            float(value)
        except ValueError:
            return "'" + value
    return value


_EXPORT_COLUMNS = ("id", "created", "dataset", "query", "value", "low", "high", "level", "epsilon", "delta",
                   "fisher_information", "answer")


@router.get("/history.csv")
def history_csv(request: Request) -> Response:
    """The querier's answers as CSV: one row per answer, its value (a list as JSON), its interval where it has
    one, its exact charge, and the answer in words."""
    session = _querier(request)
    if isinstance(session, Response):
        return session
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(_EXPORT_COLUMNS)
    for entry in _all_answers(request.app.state.console, session.who["id"]):
        payload = entry["answer"]
        value = payload.get("value", payload.get("columns"))
        accuracy = payload.get("accuracy") if isinstance(payload.get("accuracy"), dict) else {}
        charged = payload.get("charged") if isinstance(payload.get("charged"), dict) else {}
        row = {
            "id": entry["id"], "created": entry["created"], "dataset": payload.get("dataset", ""),
            "query": entry["query"],
            "value": json.dumps(value) if isinstance(value, list | dict) else repr(value),
            "low": json.dumps(accuracy.get("low", "")), "high": json.dumps(accuracy.get("high", "")),
            "level": accuracy.get("level", ""),
            "epsilon": charged.get("epsilon", ""), "delta": charged.get("delta", ""),
            "fisher_information": json.dumps(charged.get("fisher_information", {}), sort_keys=True),
            "answer": answer_words(payload),
        }
        writer.writerow([_cell(str(row[c])) for c in _EXPORT_COLUMNS])
    return Response(
        buffer.getvalue(),
        media_type="text/csv; charset=utf-8",
        headers={"content-disposition": 'attachment; filename="answers.csv"'},
    )


@router.get("/history.json")
def history_json(request: Request) -> Response:
    """The querier's answers as JSON: ``{"querier", "answers": [{id, created, query, answer}]}``, each answer as the
    API returned it."""
    session = _querier(request)
    if isinstance(session, Response):
        return session
    body = {"querier": session.who["name"], "answers": _all_answers(request.app.state.console, session.who["id"])}
    return Response(
        orjson.dumps(body),
        media_type="application/json",
        headers={"content-disposition": 'attachment; filename="answers.json"'},
    )
