"""The columns of a Spark DataFrame as a session reads them: numbers with their missing values, keys, kinds.

The rules are the in-memory ones (:mod:`privnoise.analysis.table`), written as Spark column expressions so that
they run on the executors:

* :func:`numeric` — a numeric column as doubles, a missing value (null, or NaN in a floating-point column) as
  null. Spark orders NaN above every number and makes ``NaN = NaN`` true; in memory a NaN is missing and satisfies
  no comparison, so NaN becomes null before anything compares or adds it. A column of another type (text,
  booleans, dates) is refused, as in memory.
* :func:`key` — a unit id, group key or category column as it is grouped: its values, with NaN grouped with the
  nulls as the one missing key (None), as in memory.
* :func:`missing` — null, or NaN in a floating-point column (``IS NULL`` of a condition).
* :func:`kind` — what a column holds for a condition: "number", "text", "booleans" or the name of its type, from
  the schema only (no data read).

Column names are quoted (:func:`column`), so a name with a dot or a space is a column, never a struct field.
"""

from __future__ import annotations

from typing import Any

from .._optional import require
from ..exceptions import InvalidParameterError

__all__ = ["FEATURE", "column", "functions", "is_floating", "key", "kind", "missing", "numeric", "types", "window"]

#: What the ``spark`` extra is needed for, in the error that asks for it.
FEATURE = "sessions over Spark DataFrames"
_OWNER = "Session"


def functions() -> Any:
    """``pyspark.sql.functions`` (the ``spark`` extra)."""
    return require("pyspark.sql.functions", feature=FEATURE)


def types() -> Any:
    """``pyspark.sql.types`` (the ``spark`` extra)."""
    return require("pyspark.sql.types", feature=FEATURE)


def window() -> Any:
    """``pyspark.sql.window.Window`` (the ``spark`` extra)."""
    return require("pyspark.sql.window", feature=FEATURE).Window


def column(name: str) -> Any:
    """The column ``name`` (quoted: dots and spaces are part of the name)."""
    return functions().col("`" + name.replace("`", "``") + "`")


def is_floating(data_type: Any) -> bool:
    """Whether values of ``data_type`` can be NaN (float and double columns)."""
    t = types()
    return isinstance(data_type, t.FloatType | t.DoubleType)


def kind(data_type: Any) -> str:
    """What a column of ``data_type`` holds for a condition ("number", "text", "booleans", or its type's name)."""
    t = types()
    if isinstance(data_type, t.BooleanType):
        return "booleans"
    if isinstance(data_type, t.NumericType):
        return "number"
    if isinstance(data_type, t.StringType | t.VarcharType | t.CharType):
        return "text"
    return f"values of type {data_type.simpleString()}"


def numeric(name: str, data_type: Any) -> Any:
    """The column as doubles, a missing value (null or NaN) as null; an error for a column that is not numeric."""
    found = kind(data_type)
    if found != "number":
        holds = "booleans" if found == "booleans" else data_type.simpleString()
        raise InvalidParameterError(f"column {name!r} of `{_OWNER}` must hold numbers; it holds {holds}.")
    F = functions()
    value = column(name).cast("double")
    return F.when(~F.isnan(value), value) if is_floating(data_type) else value


def key(name: str, data_type: Any) -> Any:
    """The column as a key: its values, NaN as null (one missing key, None, as in memory)."""
    F = functions()
    value = column(name)
    return F.when(~F.isnan(value), value) if is_floating(data_type) else value


def missing(name: str, data_type: Any) -> Any:
    """True where the value is missing: null, or NaN in a floating-point column (never null itself)."""
    F = functions()
    value = column(name)
    return value.isNull() | F.isnan(value) if is_floating(data_type) else value.isNull()
