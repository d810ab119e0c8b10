"""Fixtures of the Spark tests: one local Spark session (``local[2,3]``: two executor threads, a failed task tried
again up to three times; four shuffle partitions, no web UI) for the whole test run — Spark takes tens of seconds to
start — and the tests skip when pyspark or Java is missing.

Every test here carries the ``xdist_group("spark")`` mark, so that ``pytest -n 2 --dist loadgroup`` (``make
test``) runs them all in one worker, which starts Spark once."""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

HERE = Path(__file__).parent


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook, which reads the group into the test's id
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.xdist_group("spark"))


def java_available() -> bool:
    """A ``java`` on PATH or under JAVA_HOME (scripts/ensure-java.sh installs one where it can)."""
    home = os.environ.get("JAVA_HOME")
    return shutil.which("java") is not None or (home is not None and (Path(home) / "bin" / "java").exists())


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """The tests' Spark session: ``local[2,3]`` (two executor threads, a failed task tried up to three times), stopped
    at the end of the run."""
    if not java_available():
        pytest.skip("no Java runtime: run scripts/ensure-java.sh (OpenJDK 17 or later)")
    from pyspark.sql import SparkSession

    from privnoise.spark import start

    earlier = SparkSession.getActiveSession()  # e.g. the Spark guide's, whose blocks run in this worker first
    if earlier is not None and "," not in earlier.sparkContext.master:
        earlier.stop()  # a master without retries: the retry tests need local[2,3]
    session = start("local[2,3]", app_name="privnoise-tests", shuffle_partitions=4,
                    config={"spark.sql.session.timeZone": "UTC"})
    session.sparkContext.setLogLevel("ERROR")
    yield session
    # The worker is finishing. Spark's own SIGINT handler (installed with the context) would turn the interrupt a
    # test runner sends to a worker still busy after a few seconds into a KeyboardInterrupt raised wherever Python
    # happens to be (a garbage-collection callback prints it as a traceback); the stop is let run to its end.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    session.stop()
