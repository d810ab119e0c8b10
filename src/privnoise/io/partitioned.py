"""Partitioned Parquet as a Dask data frame whose partitions know their place in record order.

:func:`dask_parquet` reads a directory, a glob (``"meters/*.parquet"``) or a list of Parquet files — local, or on
any file system ``fsspec`` knows (``s3://``, ``gs://``, …) — as a lazy :class:`dask.dataframe.DataFrame`:

* **Record order** is the files in sorted path order, then their rows in order. A partition is one or more
  consecutive row groups of one file, at most ``partition_rows`` rows unless one row group alone is larger; so a
  worker holds at most one partition of the columns a task reads at a time (the memory bound of a release).
* **Known positions.** Only the files' footers are read here (their row counts, from the metadata). Every partition
  carries a ``RangeIndex`` of its record numbers, and the frame's divisions are the first record of each partition
  (``frame.divisions``): a record-level release knows where each partition starts without reading the data.
* **Column projection.** A task reads only the columns it uses (``frame["kwh"]`` reads ``kwh`` alone).

Nothing is read but metadata until a computation runs; values are validated where they are used (the session and
the release refuse NaN, infinities and, by their policy, missing values).

Examples
--------
>>> import numpy as np, pyarrow as pa, pyarrow.parquet as pq, tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> for i in range(2):
...     pq.write_table(pa.table({"kwh": np.arange(3.0) + 10 * i}), folder / f"meters-{i}.parquet")
>>> frame = dask_parquet(str(folder / "*.parquet"))
>>> frame.npartitions, frame.divisions
(2, (0, 3, 5))
>>> frame["kwh"].sum().compute(scheduler="sync")
np.float64(36.0)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._optional import require
from .._validation import check_positive_int, describe
from ..exceptions import InvalidParameterError

__all__ = ["Piece", "dask_parquet", "read_piece"]

_OWNER = "dask_parquet"
_SUFFIXES = (".parquet", ".pq")


@dataclass(frozen=True, slots=True)
class Piece:
    """One partition: row groups of one file and the number of its first record."""

    path: str
    row_groups: tuple[int, ...]
    start: int
    rows: int


def read_piece(piece: Piece, filesystem: Any, columns: Sequence[str] | None = None) -> Any:
    """The pandas DataFrame of one partition (the ``columns`` a task projects), indexed by record number."""
    pd = require("pandas", feature="reading Parquet with Dask")
    pq = require("pyarrow.parquet", feature="reading Parquet with Dask")
    with filesystem.open(piece.path, "rb") as handle:
        table = pq.ParquetFile(handle, pre_buffer=False).read_row_groups(
            list(piece.row_groups), columns=None if columns is None else list(columns)
        )
    frame = table.to_pandas()
    frame.index = pd.RangeIndex(piece.start, piece.start + piece.rows)
    return frame


def _files(filesystem: Any, location: str) -> list[str]:
    if any(ch in location for ch in "*?["):
        found = filesystem.glob(location)
    elif filesystem.isdir(location):
        found = [p for p in filesystem.find(location) if not os.path.basename(p).startswith(("_", "."))]
    else:
        found = [location] if filesystem.exists(location) else []
    return sorted(p for p in found if p.lower().endswith(_SUFFIXES))


def _pieces(filesystem: Any, files: list[str], partition_rows: int) -> tuple[list[Piece], Any]:
    pq = require("pyarrow.parquet", feature="reading Parquet with Dask")
    pieces: list[Piece] = []
    schema = None
    start = 0
    for path in files:
        with filesystem.open(path, "rb") as handle:
            file = pq.ParquetFile(handle)
            metadata, arrow = file.metadata, file.schema_arrow
        if schema is None:
            schema = arrow
        elif not arrow.equals(schema):
            raise InvalidParameterError(
                f"`path` of `{_OWNER}`: {path} has columns {arrow.names} of other types than the first file "
                f"({schema.names}); every file must have the same schema."
            )
        group: list[int] = []
        rows = 0
        for index in range(metadata.num_row_groups):
            size = metadata.row_group(index).num_rows
            if group and rows + size > partition_rows:
                pieces.append(Piece(path, tuple(group), start, rows))
                start, group, rows = start + rows, [], 0
            if size:
                group.append(index)
                rows += size
        if group:
            pieces.append(Piece(path, tuple(group), start, rows))
            start += rows
    return pieces, schema


def dask_parquet(
    path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    columns: Sequence[str] | None = None,
    partition_rows: int = 1 << 21,
    storage_options: dict[str, Any] | None = None,
) -> Any:
    """Parquet files as a Dask DataFrame in record order, partitions indexed by record number (module docstring).

    Parameters
    ----------
    path : str, path or list of them
        A file, a directory (its ``.parquet`` files, hidden and ``_`` files skipped), a glob, or a list of files;
        local or an ``fsspec`` URL.
    columns : list of str, optional
        The columns to expose (default all).
    partition_rows : int
        Rows per partition at most (whole row groups of one file; a larger row group is a partition of its own).
    storage_options : dict, optional
        Passed to ``fsspec`` (credentials, endpoints).

    Returns
    -------
    dask.dataframe.DataFrame

    Raises
    ------
    InvalidParameterError
        No Parquet file matches, files disagree on their schema, a column is unknown, or no file holds a record.
    MissingExtraError
        Without the ``dask`` extra (``pip install 'privnoise[dask]'``).
    """
    dd = require("dask.dataframe", feature="pn.io.dask_parquet")
    fsspec_core = require("fsspec.core", feature="pn.io.dask_parquet", extra="dask")
    rows = check_positive_int(partition_rows, "partition_rows", _OWNER)
    locations = [path] if isinstance(path, str | os.PathLike) else list(path)
    if not locations or not all(isinstance(p, str | os.PathLike) for p in locations):
        raise InvalidParameterError(f"`path` of `{_OWNER}` must be a path, a glob or a list of them; got {describe(path)}.")
    filesystem, _ = fsspec_core.url_to_fs(os.fspath(locations[0]), **(storage_options or {}))
    files: list[str] = []
    for location in locations:
        _, stripped = fsspec_core.url_to_fs(os.fspath(location), **(storage_options or {}))
        files += _files(filesystem, stripped)
    if not files:
        raise InvalidParameterError(f"`path` of `{_OWNER}`: no Parquet file matches {describe(path)}.")
    pieces, schema = _pieces(filesystem, sorted(dict.fromkeys(files)), rows)
    if not pieces:
        raise InvalidParameterError(f"`path` of `{_OWNER}`: the files matching {describe(path)} hold no record.")
    if columns is not None:
        unknown = [c for c in columns if c not in schema.names]
        if unknown:
            raise InvalidParameterError(
                f"`columns` of `{_OWNER}`: {unknown[0]!r} is not a column (columns: {', '.join(schema.names)})."
            )
        schema = require("pyarrow", feature="pn.io.dask_parquet").schema([schema.field(c) for c in columns])
    meta = schema.empty_table().to_pandas()
    meta.index = require("pandas", feature="pn.io.dask_parquet").RangeIndex(0)
    divisions = (*(p.start for p in pieces), pieces[-1].start + pieces[-1].rows - 1)
    frame = dd.from_map(read_piece, pieces, args=[filesystem], meta=meta, divisions=divisions,
                        enforce_metadata=False, label="privnoise-parquet")
    return frame if columns is None else frame[list(columns)]
