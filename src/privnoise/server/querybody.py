"""The body of ``POST /v1/queries`` (:class:`QueryBody`): the text form (``query``), the structured form (``kind``
and its fields) or a SQL statement (``sql`` and its ``dialect``), exactly one of them; validated as strictly as the
API description states (:mod:`.openapi`), read into a :class:`~.queryspec.QuerySpec` (the text and structured
forms, :func:`spec_of`; a statement's aggregates, :mod:`.sqlspecs`) and checked for size before it is planned.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..sql import DIALECTS
from .limits import MAX_PARAMETERS, parameter_bound
from .planner import Plan
from .querylang import MAX_KEY_COLUMNS, QueryError, QuerySpec, parse_query, spec_from_json
from .service import Service
from .vectors import cell_count, check_cells

__all__ = [
    "DIALECT_NAMES",
    "MAX_SQL_CHARS",
    "ConditionBody",
    "QueryBody",
    "body_of",
    "check_size",
    "dataset_of",
    "plan_of",
    "spec_of",
    "validation_detail",
]

#: The longest SQL statement a request may hold.
MAX_SQL_CHARS = 4000
#: The SQL dialects a statement may be written in (sqlglot's names).
DIALECT_NAMES = tuple(sorted({*DIALECTS, "databricks", "hive", "presto", "redshift", "snowflake", "spark2", "trino",
                              "tsql"}))

_Name = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]


class ConditionBody(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, strict=True)
    column: _Name
    op: Literal["=", "!=", "<", "<=", ">", ">="]
    value: float | Annotated[str, Field(max_length=200)]


class QueryBody(BaseModel):
    """A query: ``query`` (the text form), ``kind`` with its fields, or ``sql`` (a SQL statement, in ``dialect``);
    never a seed."""

    model_config = ConfigDict(
        extra="forbid",
        allow_inf_nan=False,
        strict=True,  # JSON types as described: no "0.5" or true where a number is expected
        json_schema_extra={
            "examples": [
                {"query": "mean(kwh) where region = 'north'", "dataset": "meters"},
                {"kind": "sum", "column": "kwh", "dataset": "meters"},
                {"query": "mean(kwh) from meters group by region"},
                {"kind": "quantile", "column": "kwh", "levels": [0.25, 0.5, 0.75], "dataset": "meters"},
                {"sql": "SELECT region, AVG(kwh) AS mean_kwh FROM meters GROUP BY region", "dialect": "postgres"},
            ]
        },
    )
    query: Annotated[str, Field(min_length=1, max_length=1000)] | None = None
    sql: Annotated[str, Field(min_length=1, max_length=MAX_SQL_CHARS)] | None = None
    dialect: Literal[DIALECT_NAMES] | None = None  # type: ignore[valid-type]
    dataset: _Name | None = None
    kind: (
        Literal["count", "sum", "mean", "weighted_mean", "variance", "linear", "identity", "histogram", "quantile"]
        | None
    ) = None
    column: _Name | None = None
    weights: _Name | None = None
    coefficients: Annotated[dict[_Name, float], Field(max_length=32)] | None = None
    levels: Annotated[list[float], Field(min_length=1, max_length=64)] | None = None
    bins: Annotated[list[float], Field(min_length=2, max_length=64)] | None = None
    where: Annotated[list[ConditionBody], Field(max_length=8)] | None = None
    group_by: _Name | Annotated[list[_Name], Field(min_length=1, max_length=MAX_KEY_COLUMNS)] | None = None


def validation_detail(exc: ValidationError | RequestValidationError) -> list[dict[str, Any]]:
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


def body_of(raw: Any) -> QueryBody:
    """Validate a query body: the schema, and exactly one form (``query``, ``kind`` or ``sql``) with its fields."""
    body = QueryBody.model_validate(raw)
    if sum(form is not None for form in (body.query, body.kind, body.sql)) != 1:
        raise QueryError("give exactly one of `query` (text), `kind` (structured) or `sql` (a SQL statement).")
    if body.sql is not None and any(v is not None for k, v in body if k not in ("sql", "dialect")):
        raise QueryError("a `sql` statement takes no other field than `dialect` (its FROM names the dataset).")
    if body.dialect is not None and body.sql is None:
        raise QueryError("`dialect` is the SQL dialect of a `sql` statement; give it with `sql` only.")
    return body


def spec_of(raw: Any) -> QuerySpec:
    """Validate a query body of the text or structured form and parse it (no data read, nothing planned)."""
    body = body_of(raw)
    if body.sql is not None:
        raise QueryError("a `sql` statement may ask several queries; it is answered by .sqlanswers.")
    if body.query is not None:
        if any(
            v is not None
            for v in (body.column, body.weights, body.coefficients, body.where, body.levels, body.bins, body.group_by)
        ):
            raise QueryError("a text `query` takes no other fields than `dataset`.")
        spec = parse_query(body.query, dataset=body.dataset)
    else:
        spec = spec_from_json(body.model_dump(exclude_none=True, exclude={"query", "sql", "dialect"}))
    return spec


def dataset_of(service: Service, spec: QuerySpec) -> str | None:
    """The dataset a query is asked of (None when it names none and several are served)."""
    if spec.dataset is not None:
        return spec.dataset
    return next(iter(service.config.datasets)) if len(service.config.datasets) == 1 else None


def check_size(service: Service, spec: QuerySpec) -> None:
    """Refuse a query whose statement could hold more than :data:`~.limits.MAX_PARAMETERS` parameters, or a group-by
    of more than :data:`~.vectors.MAX_CELLS` cells."""
    name = dataset_of(service, spec)
    declared = service.config.datasets.get(name) if name is not None else None
    if isinstance(spec.group_by, tuple):  # several key columns: the product of their categories, if all declared
        cells = cell_count(declared, spec.group_by) if declared is not None else None
        if cells is not None:
            check_cells(cells)
        categories = cells or 0
    else:
        keyed = spec.group_by or (spec.column if spec.kind == "histogram" else None)
        column = declared.columns.get(keyed) if declared is not None and keyed is not None else None
        categories = len(column.categories or ()) if column is not None else 0
    bound = parameter_bound(spec, categories)
    if bound > MAX_PARAMETERS:
        raise QueryError(
            f"the query is too large: its statement could hold {bound} parameters, more than the limit of "
            f"{MAX_PARAMETERS} (fewer bins, keys, coefficients or `where` conditions)."
        )


def plan_of(service: Service, raw: Any) -> Plan:
    """Validate a query body (no data read), check its size and make its plan."""
    spec = spec_of(raw)
    check_size(service, spec)
    return service.plan(spec)
