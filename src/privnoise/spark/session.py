"""Starting Spark for privnoise: a local master for tests, benchmarks and the command line, or a cluster's master.

:func:`start` returns the active Spark session of the process if there is one (a notebook's, Databricks'), and
otherwise builds one: ``local[N]`` runs N executor threads in this process's JVM; ``spark://host:7077``,
``k8s://https://host:443`` or ``yarn`` connect to a cluster. A session's aggregates ship no Python: every expression
privnoise builds for them runs in the JVM. A record-level release (:mod:`privnoise.spark.release`) runs privnoise's
partition functions in the executors' Python workers, which need privnoise installed: on a local master they are
started with the driver's Python (``PYSPARK_PYTHON`` is set to it unless it is set already); on a cluster, set
``PYSPARK_PYTHON`` (or ``spark.pyspark.python``) to an environment that has privnoise.
The settings privnoise chooses are few: no web UI and no progress bar unless asked, and a small number of shuffle
partitions on a local master (Spark's default of 200 is meant for clusters).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from .._optional import require

__all__ = ["start"]


def start(master: str | None = None, *, app_name: str = "privnoise", shuffle_partitions: int | None = None,
          ui: bool = False, config: dict[str, str] | None = None) -> Any:
    """The active Spark session, or a new one on ``master`` (default ``local[2]``).

    Parameters
    ----------
    master : str, optional
        ``local[N]`` (``local[N,F]``: a task is tried up to F times), ``spark://HOST:7077``, ``k8s://https://HOST:PORT``, ``yarn``. With an active session and no
        master, that session.
    app_name : str
        The application's name on the cluster.
    shuffle_partitions : int, optional
        ``spark.sql.shuffle.partitions``; default: twice the threads of a local master, Spark's own otherwise.
    ui : bool
        Whether to start Spark's web UI (and show its progress bar on the console).
    config : dict, optional
        Further ``spark.*`` settings.
    """
    sql = require("pyspark.sql", feature="Spark sessions")
    active = sql.SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    master = master or "local[2]"
    if master.startswith("local"):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the Python workers of a release: this Python
    builder = (sql.SparkSession.builder.master(master).appName(app_name).config("spark.ui.enabled", str(ui).lower())
               .config("spark.ui.showConsoleProgress", str(ui).lower()))
    if shuffle_partitions is None and master.startswith("local"):
        threads = master[len("local["):-1].partition(",")[0] if master.startswith("local[") else "1"
        shuffle_partitions = 2 * int(threads) if threads.isdigit() else None
    if shuffle_partitions is not None:
        builder = builder.config("spark.sql.shuffle.partitions", str(shuffle_partitions))
    for name, value in (config or {}).items():
        builder = builder.config(name, value)
    return builder.getOrCreate()
