"""Delta Lake tables read by Spark as the Parquet files of their current snapshot.

A Delta table is a directory of Parquet files and a transaction log (``_delta_log/``) that says which of them make up
each version: a file removed by a delete, an update or a compaction stays on disk until it is vacuumed. Read as a
plain directory of Parquet, such a table would count removed rows again. :func:`read_parquet` therefore reads a
location that holds a ``_delta_log`` as the files of its latest version, listed by the ``deltalake`` package (the
Delta protocol in Rust, no JVM package to fetch), with Spark's partition discovery from the table's root so that
partition columns (``region=north/…``) are read from the paths as Delta writes them.

Files alone are the table only when no reader feature changes how they are read: a table with deletion vectors
(rows removed without rewriting their file) or column mapping (physical column names that differ from the
logical ones) is refused with the feature named, before any data is read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .._optional import require
from ..exceptions import InvalidParameterError

__all__ = ["delta_files", "is_delta", "read_parquet"]

#: Reader features under which the snapshot's Parquet files, read as they are, are the table.
PLAIN_READER_FEATURES = frozenset({"timestampNtz", "v2Checkpoint", "vacuumProtocolCheck"})


def is_delta(location: str | Path) -> bool:
    """Whether ``location`` is a Delta table: a directory with a transaction log."""
    return (Path(location) / "_delta_log").is_dir()


def delta_files(location: str | Path) -> list[str]:
    """The Parquet files of the latest version of the Delta table at ``location`` (absolute paths).

    Raises
    ------
    InvalidParameterError
        When the table uses a reader feature its files cannot be read without (deletion vectors, column mapping),
        or its log cannot be read.
    """
    deltalake = require("deltalake", feature="Delta tables on Spark")
    try:
        table = deltalake.DeltaTable(str(location))
    except Exception as exc:  # noqa: BLE001 - deltalake's own errors: a log it cannot read, a missing file
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise InvalidParameterError(f"the Delta table at {location} cannot be read ({first[:200]}).") from None
    protocol = table.protocol()
    features = set(protocol.reader_features or ())
    mapping = table.metadata().configuration.get("delta.columnMapping.mode", "none")
    unreadable = sorted(features - PLAIN_READER_FEATURES) + (["columnMapping"] if mapping != "none" else [])
    if protocol.min_reader_version == 2 and not unreadable:
        unreadable = ["columnMapping"]  # reader version 2 exists for column mapping only
    if unreadable:
        raise InvalidParameterError(
            f"the Delta table at {location} uses {', '.join(sorted(set(unreadable)))}: its Parquet files alone are "
            "not its rows. Rewrite it without them (e.g. REORG TABLE … APPLY (PURGE), or a copy) to read it here."
        )
    return [uri.removeprefix("file://") for uri in table.file_uris()]  # local paths, other URIs as Spark reads them


def read_parquet(spark: Any, location: str | Path) -> Any:
    """The DataFrame of ``location``: Parquet files (a file, a directory, a glob), or a Delta table's latest
    version (:func:`delta_files`) with its partition columns."""
    if is_delta(location):
        files = delta_files(location)
        if not files:
            raise InvalidParameterError(f"the Delta table at {location} holds no rows in its latest version.")
        return spark.read.option("basePath", str(location)).parquet(*files)
    return spark.read.parquet(str(location))
