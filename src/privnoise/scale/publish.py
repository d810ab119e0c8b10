"""Publishing the partitions of a record-level release exactly once, also when a task runs again.

A release written with ``out="noisy/"`` is a directory of Parquet files, one per partition of the data, in record
order (``part-00000.parquet``, ``part-00001.parquet``, …), and a manifest ``_privnoise.json`` written last.

Each partition's task writes its output under a staging name of its own (``.part-00003-<random>.parquet``: a
leading dot, which Parquet readers skip) and then **links** it to the final name with ``os.link``, which fails when
the final name exists. So, whatever the scheduler does:

* a file appears under its final name only complete (the staging file is complete before the link);
* the first attempt that finishes publishes; any later attempt of the same partition — a retry after its worker
  died, a duplicate run after a worker was wrongly declared dead — finds the name taken, publishes nothing and
  reports the file that is there (``already_published``);
* a staging file of an attempt killed mid-write is never visible under a final name, and the driver removes the
  staging files once every partition is published.

A retry replays its partition's noise stream (:mod:`privnoise.scale.streams`), so its output is bit for bit the
published one; were the records to change between the two attempts, the retry's different output would still never
be published. One partition, one published version: the release is charged once and made once
(SECURITY.md, requirement 17). ``os.link`` needs a POSIX file system shared by the workers (a local disk for a
``LocalCluster``, NFS or a parallel file system for a cluster).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..exceptions import InvalidParameterError
from ..io import open_writer

__all__ = ["MANIFEST", "Published", "check_directory", "partition_name", "publish_partition", "write_manifest"]

MANIFEST = "_privnoise.json"
_STAGING = ".part-"


@dataclass(frozen=True, slots=True)
class Published:
    """What a partition's task reports: its file, its records, the SHA-256 of the published bytes, and whether
    this attempt published it (False: an earlier attempt had)."""

    partition: int
    file: str
    first_record: int
    rows: int
    sha256: str
    published_here: bool


def partition_name(partition: int) -> str:
    """The final file name of a partition: ``part-00003.parquet``."""
    return f"part-{partition:05d}.parquet"


def check_directory(out: Any, owner: str) -> Path:
    """``out`` as a directory to publish into: created if absent, refused if it holds anything (checked before any
    data is read, so that no file of an earlier release is mistaken for one of this release)."""
    if not isinstance(out, str | os.PathLike):
        raise InvalidParameterError(f"`out` of `{owner}` must be a directory path; got {type(out).__name__}.")
    directory = Path(out)
    if directory.suffix.lower() in (".npy", ".parquet", ".csv") and not directory.is_dir():
        raise InvalidParameterError(
            f"`out` of `{owner}` must be a directory for Dask data (one Parquet file per partition); got "
            f"{directory.name!r}."
        )
    if directory.exists():
        if not directory.is_dir():
            raise InvalidParameterError(f"`out` of `{owner}`: {directory} exists and is not a directory.")
        if any(directory.iterdir()):
            raise InvalidParameterError(f"`out` of `{owner}`: the directory {directory} must be empty.")
    elif not directory.parent.is_dir():
        raise InvalidParameterError(f"`out` of `{owner}`: the directory {directory.parent} does not exist.")
    directory.mkdir(exist_ok=True)
    return directory


def _digest(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def publish_partition(
    directory: Path, partition: int, first_record: int, values: NDArray[np.float64], column: str
) -> Published:
    """Write ``values`` under a staging name, then link it to the partition's final name unless an earlier attempt
    did (module docstring)."""
    final = directory / partition_name(partition)
    staging = directory / f"{_STAGING}{partition:05d}-{secrets.token_hex(8)}.parquet"
    writer = open_writer(staging, int(values.size), column=column)
    try:
        writer.write(values)
        writer.commit()
    except BaseException:
        writer.abort()
        raise
    try:
        os.link(staging, final)
        here = True
    except FileExistsError:
        here = False
    finally:
        digest = _digest(final) if final.exists() else ""
        staging.unlink(missing_ok=True)
    return Published(partition, final.name, first_record, int(values.size), digest, here)


def write_manifest(directory: Path, published: list[Published], description: dict[str, Any]) -> Path:
    """Remove staging files left by killed attempts, then publish the manifest (once, by the same link rule)."""
    for leftover in directory.glob(f"{_STAGING}*"):
        leftover.unlink(missing_ok=True)
    ordered = sorted(published, key=lambda p: p.partition)
    body = {
        **description,
        "partitions": [{k: v for k, v in asdict(p).items() if k != "published_here"} for p in ordered],
        "retried_after_publishing": [p.partition for p in ordered if not p.published_here],
    }
    staging = directory / f"{_STAGING}manifest-{secrets.token_hex(8)}.json"
    staging.write_text(json.dumps(body, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    final = directory / MANIFEST
    try:
        os.link(staging, final)
    finally:
        staging.unlink(missing_ok=True)
    return final
