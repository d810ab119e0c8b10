"""The querier's query form, built from the query language's own description of its kinds.

:data:`privnoise.server.queryspec.ARGUMENTS` says, for each kind, its arguments (a column, a linear combination
of columns, …) and whether a ``where`` clause may follow. The form offers the kinds that the dataset has a
policy for, one field per argument, and up to :data:`CONDITIONS` conditions; :func:`compose` writes the query
in the text language, which the server then parses, plans, charges and answers exactly as a text query sent to
the API. A kind the table does not describe gets one free "arguments" field, so a new kind is usable at once.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from ..config import DatasetSpec
from ..querylang import ARGUMENTS, KINDS, OPS, Argument, KindSyntax

__all__ = ["CONDITIONS", "Field", "KindForm", "compose", "describe_query", "kind_form", "kinds_of"]

#: The number of ``where`` condition rows of the form.
CONDITIONS = 3
_FREE = KindSyntax((Argument("arguments", "text", "arguments, separated by commas"),))


@dataclass(frozen=True)
class Field:
    """One input of the form: its name, label, and the choices of a select (None: free text)."""

    name: str
    label: str
    choices: tuple[str, ...] | None
    form: str


@dataclass(frozen=True)
class KindForm:
    kind: str
    summary: str
    fields: tuple[Field, ...]
    where: bool


def kinds_of(spec: DatasetSpec) -> list[str]:
    """The kinds a dataset answers (those with a policy), in the query language's order."""
    known = [k for k in KINDS if k in spec.policies]
    return known + sorted(k for k in spec.policies if k not in KINDS)


def _syntax(kind: str) -> KindSyntax:
    return ARGUMENTS.get(kind, _FREE)


def kind_form(spec: DatasetSpec, kind: str) -> KindForm:
    """The fields of ``kind`` on ``spec``'s columns."""
    numeric = tuple(c for c, col in spec.columns.items() if col.type == "number")
    syntax = _syntax(kind)
    fields = tuple(
        Field(f"arg_{a.field}", a.label, numeric if a.form == "column" else None, a.form)
        for a in syntax.arguments
    )
    return KindForm(kind, syntax.summary, fields, syntax.where)


def _literal(spec: DatasetSpec, column: str, value: str) -> str:
    col = spec.columns.get(column)
    if col is not None and col.type == "number":
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"the value compared with {column!r} must be a number; got {value!r}") from None
        if not math.isfinite(number):
            raise ValueError(f"the value compared with {column!r} must be finite; got {value!r}")
        return repr(number)
    if "'" not in value:
        return f"'{value}'"
    if '"' not in value:
        return f'"{value}"'
    raise ValueError("a text value cannot hold both kinds of quotes")


def compose(spec: DatasetSpec, form: dict[str, str]) -> str:
    """The text query of a submitted form (``kind``, ``arg_<field>``, ``where_column_<i>``, ``where_op_<i>``,
    ``where_value_<i>``); raises ValueError naming the field at fault. The text is parsed by the server like any
    other, so nothing here is trusted."""
    kind = form.get("kind", "")
    if kind not in spec.policies:
        raise ValueError(f"choose a query kind among {', '.join(kinds_of(spec))}")
    syntax = _syntax(kind)
    arguments = []
    for argument in syntax.arguments:
        value = form.get(f"arg_{argument.field}", "").strip()
        if not value and argument.optional:
            continue
        if not value:
            raise ValueError(f"{kind} needs its {argument.label.split(',')[0]}")
        arguments.append(value)
    text = f"{kind}({', '.join(arguments)}) from {spec.name}"
    conditions = []
    for i in range(CONDITIONS):
        column = form.get(f"where_column_{i}", "").strip()
        if not column:
            continue
        op = form.get(f"where_op_{i}", "=")
        if op not in OPS:
            raise ValueError(f"condition {i + 1}: the operator must be one of {' '.join(OPS)}")
        conditions.append(f"{column} {op} {_literal(spec, column, form.get(f'where_value_{i}', '').strip())}")
    if conditions:
        if not syntax.where:
            raise ValueError(f"{kind} takes no where clause")
        text += " where " + " and ".join(conditions)
    return text


def describe_query(query: dict[str, Any]) -> str:
    """A ledger's query (the server's JSON form) in the text language, or as JSON if the table does not
    describe its kind."""
    kind = query.get("kind")
    syntax = ARGUMENTS.get(kind) if isinstance(kind, str) else None
    known = {"kind", "dataset", "where", "group_by"} | {a.field for a in syntax.arguments} if syntax else set()
    if syntax is None or set(query) - known:
        return json.dumps(query, sort_keys=True, ensure_ascii=False)
    arguments = []
    for argument in syntax.arguments:
        value = query.get(argument.field)
        if value is None and argument.optional:
            continue
        if argument.form == "numbers" and isinstance(value, list):
            value = "[" + ", ".join(repr(float(v)) for v in value) + "]"
        if argument.form == "terms" and isinstance(value, dict):
            value = " + ".join(f"{coef:g}*{name}" for name, coef in value.items()).replace("+ -", "- ")
        arguments.append(str(value))
    text = f"{kind}({', '.join(arguments)})"
    if query.get("dataset"):
        text += f" from {query['dataset']}"
    where = query.get("where") or []
    if where:
        text += " where " + " and ".join(
            c  # a compound predicate, as its SQL text
            if isinstance(c, str)
            else f"{c['column']} {c['op']} {c['value']!r}"
            if isinstance(c["value"], str)
            else f"{c['column']} {c['op']} {c['value']:g}"
            for c in where
        )
    group_by = query.get("group_by")
    if group_by:
        text += " group by " + (", ".join(map(str, group_by)) if isinstance(group_by, list) else str(group_by))
    return text
