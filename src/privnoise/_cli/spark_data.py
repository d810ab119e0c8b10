"""``privnoise release DATA ... --epsilon 1 --engine spark --master local[2]``: the release's session aggregates on
Spark (:mod:`privnoise.spark`).

DATA is read by Spark where it lives: Parquet files (a file, a directory of files or a glob), a Delta table (the
files of its latest version, :mod:`privnoise.spark.delta`), or CSV files with a
header line (``.csv``; the types inferred by Spark). The master is ``local[N]`` (N executor threads in this
process), ``spark://HOST:PORT`` (a standalone cluster), ``k8s://https://HOST:PORT`` or ``yarn``; Spark is started
for the command and stopped after it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..engines import SPARK_MASTER, SPARK_MASTERS
from .errors import CliInputError

__all__ = ["check_master", "spark_frame"]

def check_master(master: str) -> str:
    """``master`` when it is a Spark master URL; a one-line error otherwise (before Spark starts)."""
    if not SPARK_MASTER.fullmatch(master):
        raise CliInputError(f"--master must be a Spark master: {SPARK_MASTERS}; got {master!r}.")
    return master


def _read(spark: Any, data: Path) -> Any:
    """The DataFrame of DATA: CSV for a ``.csv`` name, Parquet files or a Delta table's latest version otherwise
    (absolute paths: Spark resolves relative ones in its own process)."""
    from ..spark.delta import read_parquet

    location = os.path.abspath(str(data))
    if data.suffix.lower() == ".csv":
        return spark.read.csv(location, header=True, inferSchema=True)
    return read_parquet(spark, location)


@contextmanager
def spark_frame(data: Path, master: str) -> Iterator[Any]:
    """DATA as a Spark DataFrame on a session of ``master``, stopped on exit (unless it was running before: a
    caller's own session); a path Spark cannot read is a one-line error."""
    from .._optional import require

    sql = require("pyspark.sql", feature="--engine spark")
    from ..spark import start

    running = sql.SparkSession.getActiveSession()
    spark = start(check_master(master), app_name="privnoise release")
    if running is None:
        spark.sparkContext.setLogLevel("ERROR")
    try:
        try:
            frame = _read(spark, data)
        except Exception as exc:  # Spark's AnalysisException: a path not found, files of another format
            if type(exc).__module__.split(".")[0] != "pyspark":
                raise
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise CliInputError(f"{data}: Spark could not read it ({first[:200]}).") from None
        yield frame
    finally:
        if running is None:
            spark.stop()
