"""The JSON form of a query: ``{"kind", "column", "weights", "coefficients", "levels", "bins", "where",
"group_by", "dataset"}`` read into a :class:`~.queryspec.QuerySpec` (:func:`spec_from_json`), checked by the same
rules as the text form (:mod:`.querychecks`).
"""

from __future__ import annotations

import math
from typing import Any

from ..core.conditions import checked_condition
from .limits import MAX_KEY_COLUMNS
from .querychecks import checked_spec, key_columns
from .queryspec import ALIASES, KINDS, SHORTHANDS, QueryError, QuerySpec

__all__ = ["spec_from_json"]


def _json_numbers(body: dict[str, Any], field: str) -> tuple[float, ...]:
    raw = body.get(field)
    if raw is None:
        return ()
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        raw = [raw]
    if not isinstance(raw, list) or any(isinstance(v, bool) or not isinstance(v, int | float) for v in raw):
        raise QueryError(f"`{field}` must be a list of numbers.")
    return tuple(float(v) for v in raw)


def spec_from_json(body: dict[str, Any]) -> QuerySpec:
    """The structured form: ``{"kind", "column", "weights", "coefficients", "levels", "bins", "where",
    "group_by", "dataset"}``."""
    kind = body.get("kind")
    if isinstance(kind, str) and kind in SHORTHANDS:  # {"kind": "median", ...}: a quantile at 0.5
        target, field, fixed = SHORTHANDS[kind]
        if body.get(field) is not None:
            raise QueryError(f"`{field}` is fixed by `kind` {kind!r}; ask for {target!r} to choose it.")
        body = {**body, "kind": target, field: list(fixed)}
        kind = target
    kind = ALIASES.get(kind, kind) if isinstance(kind, str) else kind
    if kind not in KINDS:
        raise QueryError(f"`kind` must be one of {', '.join(KINDS)}; got {kind!r}.")
    where = []
    for c in body.get("where") or []:
        where.append(checked_condition(c["column"], c["op"], c["value"], QueryError))
    coefficients = []
    for name, coef in (body.get("coefficients") or {}).items():
        if isinstance(coef, bool) or not isinstance(coef, int | float) or not math.isfinite(coef):
            raise QueryError(f"coefficient of {name!r} must be a finite number.")
        coefficients.append((name, float(coef)))
    spec = QuerySpec(
        kind,
        body.get("column"),
        body.get("weights"),
        tuple(coefficients),
        tuple(where),
        body.get("dataset"),
        _json_numbers(body, "levels"),
        _json_numbers(body, "bins"),
        _json_group_by(body.get("group_by")),
    )
    return checked_spec(spec)


def _json_group_by(raw: Any) -> str | tuple[str, ...] | None:
    """``"group_by"``: a column name, or a list of them (a list of one is that name)."""
    if raw is None or isinstance(raw, str):
        return raw
    if not isinstance(raw, list | tuple) or not all(isinstance(n, str) for n in raw):
        raise QueryError("`group_by` must be a column name or a list of column names.")
    if len(raw) > MAX_KEY_COLUMNS:  # before the names are looked at
        raise QueryError(f"a group by takes at most {MAX_KEY_COLUMNS} key columns (the limit); got {len(raw)}.")
    return key_columns(list(raw))
