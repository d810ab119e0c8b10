"""The pieces of the API description (``/openapi.json``) that FastAPI cannot derive: request bodies exactly as strict
as the server, every status an operation can answer, and the bearer key.

* :func:`query_request` — ``POST /v1/queries`` (with its ``dry_run`` query parameter, :data:`DRY_RUN`) takes one of three mutually exclusive forms (``oneOf``): the text
  form (``query`` and at most ``dataset``), the structured form (``kind`` and its fields) or a SQL statement
  (``sql`` and at most ``dialect``: its ``FROM`` names the dataset); a field of another form may only be ``null``. Whether a well-formed query is answered (its dataset, columns, policies, grammar, size,
  Fisher floors) depends on the owner's configuration: those refusals are 422 with an ``error`` text.
* :data:`EPSILON_PATTERN`, :data:`DELTA_PATTERN` — the strings ``POST /v1/admin/queriers`` takes for ε and δ
  (exact rationals), written so that every string of the pattern is a budget the store accepts: ε in (0, 10⁶],
  δ in [0, 1), at most :data:`~.checks.RATIONAL_CHARS` characters once reduced. Numbers are read through their
  shortest decimal form; ε ≥ :data:`SMALLEST` and δ = 0 or ≥ :data:`SMALLEST`, so that they too stay within
  that length.
* :func:`responses` — the statuses of an operation with their bodies and headers: every operation behind the
  gate (:mod:`.gate`) can answer 400 (a body that is not strict JSON), 401 (missing or wrong key, with
  ``WWW-Authenticate``), 403 (a key of the other role), 413 (body too large) and 429 (too many failed
  authentications, with ``Retry-After``). A method a path does not serve gets 405 with ``Allow`` listing the
  methods it does (not an operation's status, so not listed per operation).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "DELTA_PATTERN",
    "DRY_RUN",
    "EPSILON_PATTERN",
    "ERROR",
    "SECURITY_SCHEMES",
    "SMALLEST",
    "query_request",
    "responses",
    "with_security",
]

#: The smallest positive ε or δ a number may give (its shortest decimal form as a reduced fraction p/q fits in
#: 100 characters for every double at or above it: at most 17 digits over 10^(65+16)).
SMALLEST = 1e-65

_DIGITS = 30  # digits of p and of q in a string p/q


def _fraction(extra: int) -> str:
    """p/q (p, q positive integers of at most :data:`_DIGITS` digits, no leading zeros) whose p has at most
    ``extra`` digits more than q: then p < 10^(digits of q + extra) ≤ 10^extra · q."""
    forms = []
    for p in range(1, _DIGITS + 1):
        low = max(1, p - extra)
        if low > _DIGITS:
            break
        forms.append(f"[1-9][0-9]{{{p - 1}}}/[1-9][0-9]{{{low - 1},{_DIGITS - 1}}}")
    return "|".join(forms)


#: ε as a string: an integer 1…999999 or 1000000, or a fraction p/q with p at most 5 digits longer than q
#: (so p/q < 10⁶), p and q of at most 30 digits.
EPSILON_PATTERN = "^(?:[1-9][0-9]{0,5}|1000000|" + _fraction(5) + ")$"
#: δ as a string: 0, a decimal 0.ddd (at most 30 decimals), or a fraction p/q with p shorter than q (so p/q < 1).
DELTA_PATTERN = "^(?:0|0\\.[0-9]{1,30}|" + _fraction(-1) + ")$"

ERROR: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {"type": "string"},
        "detail": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "loc": {"type": "array", "items": {"type": "string"}},
                    "msg": {"type": "string"},
                    "type": {"type": ["string", "null"]},
                },
            },
        },
        "budget": {"type": "object"},
        "position": {
            "type": "object",
            "description": "where in a SQL statement the refused construct stands (1-based)",
            "properties": {"line": {"type": "integer"}, "column": {"type": "integer"}},
        },
    },
}

SECURITY_SCHEMES: dict[str, Any] = {
    "bearer": {
        "type": "http",
        "scheme": "bearer",
        "description": "An API key: a querier's key, or the admin key on /v1/admin/ operations.",
    }
}

_HEADER_TEXT = {"schema": {"type": "string"}}
_DESCRIPTIONS = {
    400: "the body is not strict JSON (RFC 8259: no NaN, no Infinity, no number beyond the doubles)",
    401: "missing or wrong API key (the same answer whether or not the querier exists)",
    403: "not allowed for this key (a querier's key on an admin operation, or the admin key on a querier's)",
    404: "no such querier (or it was revoked)",
    409: "a querier of that name exists (or existed: names of revoked queriers are not reused)",
    413: "request body too large",
    422: "the request is malformed (validation `detail`), or refused (`error`)",
    429: "too many failed authentications from this address or key id (with Retry-After)",
    503: "the charge could not be recorded; nothing was charged",
}
#: Statuses every operation behind the gate can answer.
GATED = (400, 401, 403, 413, 429)


def responses(*codes: int, **descriptions: str) -> dict[int | str, dict[str, Any]]:
    """The ``responses`` of an operation: ``codes`` with their error body and headers; ``descriptions`` (keyed
    ``s422`` etc.) replace the default texts."""
    out: dict[int | str, dict[str, Any]] = {}
    for code in sorted(codes):
        entry: dict[str, Any] = {
            "description": descriptions.get(f"s{code}", _DESCRIPTIONS[code]),
            "content": {"application/json": {"schema": ERROR}},
        }
        if code == 401:
            entry["headers"] = {"WWW-Authenticate": {"required": True, **_HEADER_TEXT}}
        elif code == 429:
            entry["headers"] = {"Retry-After": {"required": False, **_HEADER_TEXT}}
        elif code == 503:
            entry["headers"] = {"Retry-After": {"required": True, **_HEADER_TEXT}}
        out[code] = entry
    return out


_NULL = {"type": "null"}


def _non_null(schema: dict[str, Any]) -> dict[str, Any]:
    """A pydantic ``X | None`` property without its ``null`` branch (and without its null default)."""
    branches = [s for s in schema.get("anyOf", [schema]) if s != _NULL]
    out = dict(branches[0]) if len(branches) == 1 else {"anyOf": branches}
    for key in ("title", "description"):
        if key in schema:
            out[key] = schema[key]
    return out


def _closed_maps(schema: Any) -> Any:
    """``schema`` with pydantic's ``dict[Name, X]`` (``patternProperties``, which lets other keys through with any
    value) written as what the server validates: every key matches the pattern, every value is an X."""
    if isinstance(schema, list):
        return [_closed_maps(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _closed_maps(v) for k, v in schema.items()}
    patterns = out.pop("patternProperties", None)
    if patterns is not None:
        ((pattern, values),) = patterns.items()
        out["propertyNames"] = {**out.get("propertyNames", {}), "pattern": pattern}
        out["additionalProperties"] = values
    return out


def query_request(schema: dict[str, Any]) -> dict[str, Any]:
    """The ``requestBody`` of ``POST /v1/queries`` from the JSON schema of its body model (local refs inlined):
    the text form, the structured form and a SQL statement, mutually exclusive."""
    properties: dict[str, Any] = _closed_maps(schema["properties"])

    def form(title: str, required: str, own: set[str]) -> dict[str, Any]:
        """The form whose ``required`` field is given, with its ``own`` fields; every other field only null."""
        return {
            "title": title,
            "type": "object",
            "additionalProperties": False,
            "required": [required],
            "properties": {
                name: (_non_null(prop) if name == required else prop if name in own else _NULL)
                for name, prop in properties.items()
            },
        }

    sql_fields = {"sql", "dialect"}
    text = form("Text query", "query", {"dataset"})
    structured = form("Structured query", "kind", set(properties) - sql_fields - {"query"})
    statement = form("SQL statement", "sql", {"dialect"})
    body = {
        "title": schema.get("title", "QueryBody"),
        "description": schema.get("description", ""),
        "oneOf": [text, structured, statement],
        **({"examples": schema["examples"]} if "examples" in schema else {}),
    }
    return {
        "parameters": [DRY_RUN],
        "requestBody": {"required": True, "content": {"application/json": {"schema": body}}},
    }


#: The ``dry_run`` query parameter of ``POST /v1/queries`` (:mod:`.dryruns`).
DRY_RUN: dict[str, Any] = {
    "name": "dry_run",
    "in": "query",
    "required": False,
    "description": "true: answer with what the query would be charged (decimals, exact rationals under `exact`) "
    "and its expected accuracy from public information only (noise law and declared bounds), whether the budgets "
    "would admit it (`fits`, `remaining_after` or `refusal`); nothing is charged and no data is read. A query the "
    "configuration refuses is a dry run with `fits: false`. Any value but true, false, 1 or 0 is 422.",
    "schema": {"type": "boolean", "default": False},
}


def with_security(document: dict[str, Any], open_paths: frozenset[str]) -> dict[str, Any]:
    """``document`` with the bearer scheme required on every operation but those of ``open_paths``."""
    document.setdefault("components", {})["securitySchemes"] = SECURITY_SCHEMES
    for path, item in document.get("paths", {}).items():
        if path in open_paths:
            continue
        for operation in item.values():
            if isinstance(operation, dict):
                operation["security"] = [{"bearer": []}]
    return document
