"""The Spark engine (:mod:`privnoise.engines`): sessions over Spark DataFrames aggregate on their Spark cluster.

Registered in privnoise's ``pyproject.toml`` under the top-level package of Spark's data types::

    [project.entry-points."privnoise.engines"]
    pyspark = "privnoise.spark.engine:SPARK"

``pn.Session(frame, ...)`` over a Spark DataFrame (classic or Spark Connect) gets a
:class:`~privnoise.spark.SparkBackend`. ``pn.release`` of a one-column Spark DataFrame is computed on its executors
(:func:`~privnoise.spark.release.release_on_spark`): the records are the DataFrame's rows in its own order.

>>> SPARK.name, SPARK.accepts([1.0, 2.0])
('spark', False)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..exceptions import InvalidParameterError
from .types import spark_type

__all__ = ["SPARK", "SparkEngine"]


@dataclass(frozen=True)
class SparkEngine:
    """Sessions over Spark DataFrames (:class:`~privnoise.spark.SparkBackend`) and releases of one-column Spark
    DataFrames (:func:`~privnoise.spark.release.release_on_spark`)."""

    name: str = "spark"

    def accepts(self, data: Any) -> bool:
        return spark_type(data) is not None

    def backend(self, data: Any) -> Any:
        if spark_type(data) != "DataFrame":
            raise InvalidParameterError(
                "`data` of `Session` must be a Spark DataFrame (a column is not data: "
                "pass the DataFrame and name the column in the query)."
            )
        from .backend import SparkBackend

        return SparkBackend(data)

    def release(self, data: Any, query: Any, mechanism: Any, **options: Any) -> Any:
        from .release import release_on_spark

        return release_on_spark(data, query, mechanism, **options)


#: The registered instance (``privnoise.engines`` entry point ``pyspark``).
SPARK = SparkEngine()
