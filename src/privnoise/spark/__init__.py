"""Sessions computed on Spark: ``pn.Session(spark_frame, ...)`` aggregates where the data lives.

Needs the ``spark`` extra (``pip install 'privnoise[spark]'``) and a Java runtime (17 or later); never imported by
``import privnoise``. A Spark DataFrame handed to :class:`privnoise.Session` is recognised by the Spark engine
(:mod:`privnoise.spark.engine`, registered under ``privnoise.engines``) and aggregated by
:class:`SparkBackend`: filters, the missing-value policy, declared keys, contribution bounding (at most k rows per
privacy unit, by a keyed random order), clamping and the aggregates themselves run on the executors; only one row
per group reaches the driver, where the session draws the noise once from its cryptographically strong generator.
``pn.release`` of a one-column Spark DataFrame is computed by :mod:`~privnoise.spark.release`: record-level queries
noised on the executors, one fresh keyed stream per partition, each partition's output published once.

Modules: :mod:`~privnoise.spark.backend` (the steps), :mod:`~privnoise.spark.columns` (reading columns as the
in-memory table does), :mod:`~privnoise.spark.predicates` (filters), :mod:`~privnoise.spark.keys` (declared keys
and categories), :mod:`~privnoise.spark.assemble` (the driver's side), :mod:`~privnoise.spark.session` (starting
Spark), :mod:`~privnoise.spark.delta` (Delta tables read as the Parquet files of their latest version).
"""

from .backend import SparkBackend
from .engine import SPARK, SparkEngine
from .session import start

__all__ = ["SPARK", "SparkBackend", "SparkEngine", "start"]
