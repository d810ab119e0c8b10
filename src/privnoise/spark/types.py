"""What kind of Spark object a value is, read from its type's name (pyspark is never imported to tell)."""

from __future__ import annotations

from typing import Any

__all__ = ["spark_type"]


def spark_type(data: Any) -> str | None:
    """"DataFrame" or "Column" for Spark's (classic or Connect) DataFrames and columns, else None.

    >>> spark_type([1.0, 2.0]) is None
    True
    """
    module, name = type(data).__module__, type(data).__name__
    if module.startswith("pyspark.sql") and name in ("DataFrame", "Column"):
        return name
    return None
