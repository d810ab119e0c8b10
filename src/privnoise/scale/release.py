"""``pn.release`` of a Dask Series or 1-d Dask array, computed on the cluster that holds it.

:func:`privnoise.release` hands Dask data here after it has validated every parameter. Two ways, as in memory
(:mod:`privnoise.release`):

* **Record-level queries** (identity, scaled identity, diagonal) with noise of independent coordinates: each
  partition's task checks its records (NaN, inf, declared bounds, the out-of-bounds policy), adds the noise of its
  coordinates — drawn on the worker from the partition's own stream (:mod:`privnoise.scale.streams`), snapped to the
  release's grid — and either returns its block of the release or, with ``out="noisy/"``, publishes it as one
  Parquet file, exactly once (:mod:`privnoise.scale.publish`). Only the noisy values (or nothing) cross the network.
* **Linear queries with few outputs** (sum, mean, weighted mean, a few linear combinations): each partition's task
  returns its partial sums C[:, block]·x[block] and how many records it clamped; the driver adds them (an exactly
  rounded sum for one output) and draws the noise once, centrally, from its own cryptographically strong generator.
  Only partial sums cross the network.

Queries that need every record in one place (nonlinear queries, data-dependent policies, correlated noise over
records) are refused: compute the collection first (``data.compute()``) if it fits in memory.

Where each partition starts in record order is read from the data when it is free: the chunks of a Dask array, or
the divisions of a frame indexed by record number (what :func:`privnoise.io.dask_parquet` makes; each task checks
that its partition's index is its record range). Otherwise one pass counts the records of each partition first.
The guarantee is the one the in-memory release states: the same query, noise, grid and rounding.
"""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._optional import require
from ..exceptions import DimensionError, InvalidParameterError
from ..io.columnar import series_values
from ..mechanisms import Noise, NoiseDesign
from ..queries import Query
from ..random import RNGLike, default_rng
from ..release import ACCUMULATE_LIMIT, Release, accumulate, check_block, direct_plan
from .publish import check_directory, publish_partition, write_manifest
from .shipping import pack, unpack
from .streams import partition_generator, partition_keys

__all__ = ["PartitionJob", "PartitionedData", "checked_release", "partial_sums", "partition_values", "partitions_of",
           "release_on_dask", "release_partition"]

_OWNER = "release"


@dataclass(frozen=True, slots=True)
class PartitionedData:
    """The partitions of a Dask collection (delayed objects), where each starts, how many records each holds, and
    whether the partition index must be checked against that range."""

    parts: list[Any]
    starts: list[int]
    rows: list[int]
    check_index: bool

    @property
    def records(self) -> int:
        return sum(self.rows)


def _known_ranges(divisions: tuple[Any, ...]) -> list[int] | None:
    """Rows per partition from divisions that are record numbers starting at 0 (None otherwise)."""
    if not divisions or any(d is None or not isinstance(d, int | np.integer) for d in divisions) or divisions[0] != 0:
        return None
    bounds = [int(d) for d in divisions]
    rows = [b - a for a, b in zip(bounds[:-2], bounds[1:-1], strict=True)] + [bounds[-1] - bounds[-2] + 1]
    return rows if all(r > 0 for r in rows) else None


def partitions_of(data: Any, owner: str = _OWNER) -> PartitionedData:
    """The partitions of a Dask Series, one-column DataFrame or 1-d array, with their record ranges."""
    dask = require("dask", feature="releases of Dask data")
    dd = require("dask.dataframe", feature="releases of Dask data")
    da = require("dask.array", feature="releases of Dask data")
    if isinstance(data, dd.DataFrame):
        if len(data.columns) != 1:
            raise InvalidParameterError(
                f"`data` of `{owner}` must be one column; got a Dask DataFrame with {len(data.columns)} columns "
                "(select one: data['kwh'])."
            )
        data = data[data.columns[0]]
    if isinstance(data, da.Array):
        if data.ndim != 1:
            raise DimensionError(f"`data` of `{owner}` must have 1 dimension(s); got a Dask array of shape {data.shape}.")
        if any(math.isnan(c) for c in data.chunks[0]):
            data = data.compute_chunk_sizes()
        rows = [int(c) for c in data.chunks[0]]
        return PartitionedData(list(data.to_delayed().ravel()), _starts(rows), rows, False)
    if not isinstance(data, dd.Series):
        raise InvalidParameterError(
            f"`data` of `{owner}` must be a Dask Series, a one-column Dask DataFrame or a 1-d Dask array; got "
            f"{type(data).__name__}."
        )
    parts = list(data.to_delayed())
    known = _known_ranges(tuple(data.divisions)) if data.known_divisions else None
    if known is not None and len(known) == len(parts):
        return PartitionedData(parts, _starts(known), known, True)
    lengths = [int(n) for n in dask.compute(*[dask.delayed(len)(p) for p in parts])]
    return PartitionedData(parts, _starts(lengths), lengths, False)


def _starts(rows: list[int]) -> list[int]:
    return [int(s) for s in np.concatenate([[0], np.cumsum(rows, dtype=np.int64)[:-1]])] if rows else []


@dataclass(frozen=True, slots=True)
class PartitionJob:
    """What every partition task of one release needs (packed once, see :mod:`privnoise.scale.shipping`)."""

    operator: Any  # the query's structured operator (queries themselves are not sent)
    bounds: Any
    outputs: int
    noise: Noise
    policy: str
    reach: float
    grid_exponent: int | None
    harden: bool
    directory: str | None
    check_index: bool


def partition_values(part: Any, partition: int, start: int, rows: int, check_index: bool) -> NDArray[np.float64]:
    """One partition as float64 records (a pandas Series: missing values refused, as in memory)."""
    where = f"`data` of `{_OWNER}`, partition {partition} (records from {start})"
    if hasattr(part, "index") and hasattr(part, "dtype"):
        if check_index:
            index = part.index
            if len(index) != rows or (rows and not (
                int(index[0]) == start and int(index[-1]) == start + rows - 1 and index.is_monotonic_increasing
                and index.is_unique
            )):
                raise InvalidParameterError(
                    f"{where}: Dask data with known divisions must be indexed by record number 0, 1, … (as "
                    "pn.io.dask_parquet makes it); call .clear_divisions() to release it in partition order."
                )
        values = series_values(part, "error", where)
    else:
        array = np.asarray(part)
        if array.dtype.kind not in "fiu":
            raise InvalidParameterError(f"{where} must hold real numbers; got {array.dtype}.")
        values = array.astype(np.float64, copy=False)
    if values.size != rows:
        raise DimensionError(f"{where} holds {values.size} records, not the {rows} it was counted with.")
    return values


def _checked(values: NDArray[np.float64], job: PartitionJob) -> tuple[NDArray[np.float64], int]:
    if not values.size:
        return values, 0
    return check_block(values, job.bounds, job.policy, job.reach)  # type: ignore[arg-type]


def release_partition(part: Any, partition: int, start: int, rows: int, key: NDArray[np.uint64],
                      packed: bytes) -> tuple[Any, int]:
    """A partition's block of a record-level release (or its published file) and its number of clamped records."""
    job: PartitionJob = unpack(packed)
    values, clamped = _checked(partition_values(part, partition, start, rows, job.check_index), job)
    stop = start + values.size
    noisy = np.empty(0)
    if values.size:
        scale = job.operator.record_scale(start, stop)
        if not np.all(scale == 1.0):
            values = values * scale
        law = job.noise.marginal(start, stop)
        assert law is not None
        with np.errstate(over="ignore", invalid="ignore"):
            noisy = law.add_to(values, rng=partition_generator(key), harden=job.harden,
                               grid_exponent=job.grid_exponent, checked=True)
    if job.directory is None:
        return noisy, clamped
    return publish_partition(Path(job.directory), partition, start, noisy, "value"), clamped


def partial_sums(part: Any, partition: int, start: int, rows: int, packed: bytes) -> tuple[NDArray[np.float64], int]:
    """C[:, block]·x[block] of one partition and its number of clamped records."""
    job: PartitionJob = unpack(packed)
    values, clamped = _checked(partition_values(part, partition, start, rows, job.check_index), job)
    if not values.size:
        return np.zeros(job.outputs), 0
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(job.operator.apply_columns(values, start), dtype=float), clamped


def checked_release(query: Query, mechanism: NoiseDesign, out: Any, where: str,
                    remedy: str) -> tuple[Noise, bool, Path | None]:
    """The checks of a release on distributed data (``where``: "Dask data", "Spark data"), before any data is read:
    the noise is data-independent; the query is record-level (each record's value noised where it lies) or its
    partial sums can be added up; ``out`` only for a record-level release. Returns (the noise, as the
    data-independent :class:`Noise` it was checked to be; record-level; the checked output directory or None);
    ``remedy`` says how to bring the data into memory instead."""
    if not isinstance(mechanism, Noise):
        raise InvalidParameterError(
            f"`mechanism` of `{_OWNER}`: a data-dependent {type(mechanism).__name__} needs every record in one place; "
            f"{remedy}."
        )
    operator = getattr(query, "operator", None)
    record_level = operator is not None and operator.record_scale(0, 1) is not None and mechanism.marginal(0, 1) is not None
    if not record_level and (operator is None or query.m > ACCUMULATE_LIMIT):
        raise InvalidParameterError(
            f"`query` of `{_OWNER}`: `{query.name}` needs every record in one place on {where} (a nonlinear query, "
            f"correlated noise or many outputs); {remedy}."
        )
    if out is not None and not record_level:
        raise InvalidParameterError(
            f"`out` of `{_OWNER}` on {where} is for record-level releases (a directory of partitions); the value of "
            f"`{query.name}` is returned."
        )
    return mechanism, record_level, None if out is None else check_directory(out, _OWNER)


def release_on_dask(data: Any, query: Query, mechanism: NoiseDesign, *, rng: RNGLike, out_of_bounds: str,
                    harden: bool, delta: float | None, out: Any) -> Release:
    """The release of ``query`` on Dask ``data`` (parameters validated by :func:`privnoise.release`)."""
    dask = require("dask", feature="releases of Dask data")
    generator = default_rng(rng)
    mechanism, record_level, directory = checked_release(
        query, mechanism, out, "Dask data", "compute the Dask data first (data.compute()) if it fits in memory"
    )
    operator = getattr(query, "operator", None)  # record-level or summable: checked above
    data_parts = partitions_of(data)
    if data_parts.records != query.n:
        raise DimensionError(
            f"`data` of `{_OWNER}` must have length {query.n} (the query's n); got {data_parts.records}."
        )
    plan = direct_plan(query, mechanism, mechanism, harden=harden, delta=delta)
    job = PartitionJob(operator, query.bounds, query.m, mechanism, out_of_bounds, plan.reach, plan.exponent, harden,
                       None if directory is None else str(directory), data_parts.check_index)
    packed = dask.delayed(pack(job), pure=True)
    token = secrets.token_hex(6)
    ranges = list(enumerate(zip(data_parts.parts, data_parts.starts, data_parts.rows, strict=True)))
    if not record_level:
        tasks = [dask.delayed(partial_sums, pure=False)(part, i, start, rows, packed,
                                                         dask_key_name=f"privnoise-sums-{token}-{i}")
                 for i, (part, start, rows) in ranges]
        results = dask.compute(*tasks)
        total = accumulate((partial for partial, _ in results), query)
        return plan.execute(total, generator, clamped=sum(c for _, c in results))
    keys = partition_keys(generator, len(ranges))
    tasks = [dask.delayed(release_partition, pure=False)(part, i, start, rows, keys[i], packed,
                                                          dask_key_name=f"privnoise-release-{token}-{i}")
             for i, (part, start, rows) in ranges]
    results = dask.compute(*tasks)
    clamped = sum(c for _, c in results)
    if directory is None:
        value = np.concatenate([block for block, _ in results]) if results else np.empty(0)
        return plan.finished(value, clamped=clamped)
    made = plan.finished(None, clamped=clamped, output=str(directory))
    write_manifest(directory, [published for published, _ in results], {**made.as_dict(), "records": query.n})
    return made

