"""The querier's pages (their own key): compose a query, read the answer, keep a history of answers.

A query composed by the form (:mod:`.queryform`) or written as text — in the query language, or a SQL statement
when the text starts with ``SELECT`` (sent as ``{"sql": ...}``) — is sent down the API's own path,
:func:`privnoise.server.answers.answer_query`, with the querier's identity: validated and planned without reading
data, charged durably, then released; refusals (429), malformed queries (422), failures after the charge (the
generic ``{"error": "query failed"}``) and unrecorded charges (503) come back with the API's status and body, which
the page shows as they are. An answer is kept in ``pn_answers`` (the noisy values the querier received, never a true
value) and the browser is sent to its page, so reloading a page never sends a query again.

Before Ask, the form shows the query's cost and expected accuracy: its dry run down the same path
(``dry_run=true``, :mod:`..dryruns`; nothing charged, no data read) — for the form's query when the page loads, and
for any query on "Check cost and accuracy" (``action=preview``). Ask is disabled, with the reason, when that dry run
says the budget or the configuration would refuse the query, and when no policy of the dataset can be paid at all
(:meth:`~privnoise.server.service.Service.out_of_budget`). The history shows each answer in words
(:mod:`.wording`); :mod:`.exports` downloads it.
"""

from __future__ import annotations

import csv
import functools
import io
import json
from typing import Any

import orjson
from anyio import to_thread
from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response
from sqlalchemy import func, insert, select

from .. import db
from ..answers import answer_query
from .guard import PREFIX
from .paging import Paging
from .queryform import CONDITIONS, compose, kind_form, kinds_of
from .render import page, signed_in_as
from .wording import answer_words, charge_words, dry_run_words

__all__ = ["router"]

router = APIRouter(prefix=PREFIX, include_in_schema=False)
#: Keys of an answer that the answer page shows in their own places; any other key is shown as it comes.
SHOWN = ("dataset", "query", "value", "guarantee", "charged", "remaining", "ledger_id")
#: Keys of a SQL statement's answer shown in its table (besides those of SHOWN).
TABLE = ("columns", "intervals", "level", "statement", "key_columns")
_PREVIEW = 20


def _querier(request: Request) -> Any:
    """The querier's session, or the response to give instead (sign-in, or 403 for the owner)."""
    return signed_in_as(request, "querier")


def _chosen(console: Any, values: dict[str, str]) -> tuple[str, Any, list[str], str]:
    """(dataset name, its spec, its kinds, the kind) of the form's values, defaulting as the page shows them."""
    datasets = console.config.datasets
    name = values.get("dataset", "")
    if name not in datasets:
        name = next(iter(datasets))
    spec = datasets[name]
    kinds = kinds_of(spec)
    kind = values.get("kind", "")
    if kind not in kinds:
        kind = kinds[0] if kinds else ""
    return name, spec, kinds, kind


def _form_page(request: Request, session: Any, *, status: int = 200, **context: Any) -> Response:
    console = request.app.state.console
    datasets = console.config.datasets
    values: dict[str, str] = context.pop("values", {}) or dict(request.query_params)
    name, spec, kinds, kind = _chosen(console, values)
    budget = console.service.budget(session.who["id"])
    exhausted = console.service.out_of_budget(session.who["id"], name)
    return page(
        request,
        "query.html",
        status=status,
        datasets=list(datasets),
        dataset=name,
        spec=spec,
        kinds=kinds,
        kind=kind,
        form=kind_form(spec, kind) if kind else None,
        conditions=range(CONDITIONS),
        columns=list(spec.columns),
        values=values,
        budget=budget,
        exhausted=exhausted,
        **({"outcome": None, "text": "", "preview": None} | context),
    )


async def _preview(
    console: Any, who: dict[str, Any], request_body: dict[str, Any], mode: str
) -> dict[str, Any] | None:
    """The form's preview of a query: its dry run through the API's own path (``dry_run=true``), in words; None
    when the server could not make one now (its planning slots busy): Ask is then left as it is."""
    body = orjson.dumps(request_body)
    status, content, _headers = await answer_query(console.service, who, body, request_body, b"dry_run=true")
    run = orjson.loads(content)
    if status == 422:  # malformed: the API's own message (the real query would be refused the same)
        return {"mode": mode, "fits": False, "cost": None, "accuracy": [], "after": None, "after_composed": None,
                "refusal": f"The query cannot be read: {run.get('error', 'refused')}"}
    if status != 200:
        return None
    return {"mode": mode, **dry_run_words(run)}


def _defaults(spec: Any, kind: str, values: dict[str, str]) -> dict[str, str]:
    """The form's values with each unset choice at its first option (what the page shows selected)."""
    out = dict(values) | {"dataset": spec.name, "kind": kind}
    for field in kind_form(spec, kind).fields:
        if field.choices and not out.get(field.name):
            out[field.name] = field.choices[0]
    return out


@router.get("/query")
async def query_form(request: Request) -> Response:
    if isinstance(session := _querier(request), Response):
        return session
    console = request.app.state.console
    values = dict(request.query_params)
    _name, spec, _kinds, kind = _chosen(console, values)
    preview = None
    if kind:
        try:  # the cost of the query the form shows, when its fields are complete
            text = compose(spec, _defaults(spec, kind, values))
        except ValueError:
            text = ""
        if text:
            preview = await _preview(console, session.who, {"query": text}, "form")
    return await to_thread.run_sync(functools.partial(_form_page, request, session, values=values, preview=preview))


def _store_answer(engine: Any, querier_id: int, text: str, payload: dict[str, Any]) -> None:
    with engine.begin() as conn:
        conn.execute(
            insert(db.answers).values(
                ledger_id=payload["ledger_id"],
                querier_id=querier_id,
                text=text,
                answer=orjson.dumps(payload).decode(),
                created_at=db.utcnow(),
            )
        )


@router.post("/query")
async def ask(request: Request) -> Response:
    if isinstance(session := _querier(request), Response):
        return session
    console = request.app.state.console
    form: dict[str, str] = request.scope["privnoise.form"]
    values = {k: v for k, v in form.items() if k not in ("csrf", "action")}
    mode = "text" if form.get("mode") == "text" else "form"
    if mode == "text":
        text = form.get("query", "").strip()
        request_body: dict[str, Any] = {"sql": text} if is_sql(text) else {"query": text}
    else:
        spec = console.config.datasets.get(form.get("dataset", ""))
        if spec is None:
            return _form_page(
                request, session, status=422, values=values, outcome={"error": "choose a dataset"}
            )
        try:
            text = compose(spec, form)
        except ValueError as exc:
            return _form_page(request, session, status=422, values=values, outcome={"error": str(exc)})
        request_body = {"query": text}
    if form.get("action") == "preview":  # cost and accuracy before asking: nothing charged, no data read
        preview = await _preview(console, session.who, request_body, mode)
        return await to_thread.run_sync(
            functools.partial(_form_page, request, session, values=values, preview=preview)
        )
    body = orjson.dumps(request_body)
    status, content, _headers = await answer_query(console.service, session.who, body, request_body)
    outcome = orjson.loads(content)
    if status != 200:
        return _form_page(request, session, status=status, values=values, outcome=outcome, text=text)
    await to_thread.run_sync(_store_answer, console.engine, session.who["id"], text, outcome)
    return RedirectResponse(f"{PREFIX}/answers/{outcome['ledger_id']}", status_code=303)


def is_sql(text: str) -> bool:
    """Whether a query's text is a SQL statement: it starts with ``SELECT`` (in any case)."""
    return text[:6].upper() == "SELECT" and (len(text) == 6 or not (text[6].isalnum() or text[6] == "_"))


def _table(payload: dict[str, Any]) -> dict[str, Any] | None:
    """The rows of a SQL statement's answer — ``{"columns": [(name, has an interval)], "rows": [[(value, low,
    high)]], "level"}`` — or None for another answer."""
    columns, intervals = payload.get("columns"), payload.get("intervals")
    if not isinstance(columns, dict) or not isinstance(intervals, dict):
        return None
    names = list(columns)
    count = len(columns[names[0]]) if names else 0
    rows = []
    for i in range(count):
        row = []
        for name in names:
            span = intervals.get(name)
            low, high = (span["low"][i], span["high"][i]) if isinstance(span, dict) else (None, None)
            row.append((columns[name][i], low, high))
        rows.append(row)
    return {"columns": [(n, n in intervals) for n in names], "rows": rows, "level": payload.get("level")}


def _answer(console: Any, querier_id: int, ledger_id: str) -> tuple[str, dict[str, Any], str] | None:
    if not ledger_id.isdigit() or len(ledger_id) > 18:
        return None
    a = db.answers
    with console.service.reader.connect() as conn:
        row = conn.execute(
            select(a.c.text, a.c.answer, a.c.created_at).where(
                a.c.ledger_id == int(ledger_id), a.c.querier_id == querier_id
            )
        ).first()
    if row is None:
        return None
    return row.text, json.loads(row.answer), row.created_at.isoformat(timespec="seconds")


def _own_answer(request: Request, ledger_id: str) -> Response | tuple[str, dict[str, Any], str]:
    """The signed-in querier's answer ``ledger_id``, or the response to give instead."""
    if isinstance(session := _querier(request), Response):
        return session
    found = _answer(request.app.state.console, session.who["id"], ledger_id)
    if found is None:
        return page(request, "error.html", status=404, message="No such answer of yours.")
    return found


# before the answer's page: its path would take "<id>.csv" for an id
@router.get("/answers/{ledger_id}.csv")
def answer_csv(request: Request, ledger_id: str) -> Response:
    found = _own_answer(request, ledger_id)
    if isinstance(found, Response):
        return found
    value = found[1].get("value")
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    cells = _cells(found[1]) if "key_columns" in found[1] else None  # several key columns: one CSV column each
    table = _table(found[1])
    if table is not None:  # a SQL statement's rows: each output, and its interval's ends
        writer.writerow([h for name, spanned in table["columns"] for h in
                         ((name, f"{name}_low", f"{name}_high") if spanned else (name,))])
        for row in table["rows"]:
            writer.writerow([x for (v, lo, hi), (_, spanned) in zip(row, table["columns"], strict=True)
                             for x in ((v, lo, hi) if spanned else (v,))])
    elif cells is not None:
        writer.writerow(("index", *cells["columns"], "noisy value"))
        for i, (key, v) in enumerate(cells["rows"]):
            writer.writerow((i, *key, repr(v)))
    else:
        writer.writerow(("index", "noisy value"))
        for i, v in enumerate(value if isinstance(value, list) else [value]):
            writer.writerow((i, repr(v)))
    return Response(
        buffer.getvalue(),
        media_type="text/csv; charset=utf-8",
        headers={"content-disposition": f'attachment; filename="answer-{int(ledger_id)}.csv"'},
    )


@router.get("/answers/{ledger_id}")
def answer(request: Request, ledger_id: str) -> Response:
    found = _own_answer(request, ledger_id)
    if isinstance(found, Response):
        return found
    text, payload, created = found
    value = payload.get("value")
    cells = _cells(payload)
    table = _table(payload)
    hidden = (*SHOWN, *TABLE) if table is not None else SHOWN if cells is None else (*SHOWN, "keys", "key_columns")
    return page(
        request,
        "answer.html",
        text=text,
        answer=payload,
        created=created,
        values=value if isinstance(value, list) else None,
        cells=cells,
        table=table,
        preview=_PREVIEW,
        extra={k: v for k, v in payload.items() if k not in hidden},
    )


def _cells(payload: dict[str, Any]) -> dict[str, Any] | None:
    """The keyed values of a group-by or histogram answer — ``{"columns": key column names, "rows": [(key values,
    noisy value)]}`` — or None for an answer without keys."""
    value, keys = payload.get("value"), payload.get("keys")
    if not isinstance(value, list) or not isinstance(keys, list) or len(keys) != len(value):
        return None
    found = payload.get("query")
    query: dict[str, Any] = found if isinstance(found, dict) else {}
    columns = payload.get("key_columns") or [query.get("group_by") or query.get("column") or "key"]
    rows = [(key if isinstance(key, list) else [key], v) for key, v in zip(keys, value, strict=True)]
    return {"columns": [str(c) for c in columns], "rows": rows}


_HISTORY_ORDER = {
    "id": db.answers.c.ledger_id,
    "created": db.answers.c.created_at,
    "query": db.answers.c.text,
}


@router.get("/history")
def history(request: Request) -> Response:
    if isinstance(session := _querier(request), Response):
        return session
    console = request.app.state.console
    a = db.answers
    paging = Paging.of(
        request, tuple(_HISTORY_ORDER), default="id", descending=True, size=console.config.console.page_size
    )
    key = _HISTORY_ORDER[paging.sort]
    order = (key.desc(), a.c.ledger_id.desc()) if paging.descending else (key.asc(), a.c.ledger_id.asc())
    with console.service.reader.connect() as conn:
        total = conn.execute(
            select(func.count()).select_from(a).where(a.c.querier_id == session.who["id"])
        ).scalar_one()
        paging = paging.counted(int(total))
        rows = conn.execute(
            select(a.c.ledger_id, a.c.text, a.c.answer, a.c.created_at)
            .where(a.c.querier_id == session.who["id"])
            .order_by(*order)
            .limit(paging.size)
            .offset(paging.offset)
        ).all()
    entries = []
    for row in rows:
        payload = json.loads(row.answer)
        entries.append(
            {
                "id": row.ledger_id,
                "text": row.text,
                "created": row.created_at.isoformat(timespec="seconds"),
                "value": payload.get("value", payload.get("columns")),
                "answer": answer_words(payload),
                "charged": payload.get("charged"),
                "charge": charge_words(payload.get("charged")),
                "dataset": payload.get("dataset"),
            }
        )
    return page(request, "history.html", entries=entries, paging=paging)
