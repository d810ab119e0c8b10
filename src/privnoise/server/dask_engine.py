"""Datasets with ``engine = "dask"``: Parquet files the server answers from on a Dask cluster, after the charge.

A dataset declared ::

    [datasets.big]
    source = "meters/*.parquet"
    engine = "dask"
    scheduler = "local"            # or "tcp://scheduler:8786"

is not imported into the database. The server counts its records from the files' metadata at start-up, keeps its
budgets in the database like any other, and answers a query in the same three steps (:mod:`.service`): plan (no
data read), charge durably, and only then compute on the cluster.

What the cluster computes is the plan's components, with the semantics of the SQL statement (:mod:`.planner`):
each record's numeric values are clamped to the declared bounds, a missing value (null, NaN) counting as the lower
bound; a ``where`` test compares the clamped value, or the text (a test of a missing text is unknown, and so never
true: :mod:`.weights`), its tests joined by ``NOT``, ``AND`` and ``OR`` with SQL's three-valued logic on numpy masks
(:func:`privnoise.core.predicates.truth`); the record's weight is 1 where the ``where`` is true, else 0. Every
partition's task then returns Σ weight·term for every
component, and its number of records:

=================  =========================================
component          term
=================  =========================================
count              1
sum                x (``linear``: Σ a_j x_j; of a mean or variance, x − c, c the bounds' centre)
mean (Fisher)      x / n
sum_of_squares     (x − c)²
weighted_sum       w·x
weight_sum         w
=================  =========================================

**Constant work.** Every expression is evaluated for every record and multiplied by the weight: no record is
skipped, no partition is filtered, the task graph has the same tasks whatever a filter selects, and each task
returns the same few numbers. The work does not reveal how many records a filter selects
(SECURITY.md, requirement 16). The driver adds the partial sums (an exactly rounded sum per component) and draws the noise from
the server's cryptographically strong generator, as for SQL.

**Identity releases** are noised on the workers: each partition's task clamps its records and adds the noise of its
coordinates, drawn from the partition's own stream (:mod:`privnoise.scale.streams`, keys drawn for this query from
the server's generator); the noisy blocks come back in record order. If a worker dies, the scheduler runs its tasks
again; a retried task replays its partition's stream, so the answer is the one the first attempt would have given,
and the charge, recorded before the computation started, is recorded once.
"""

from __future__ import annotations

import dataclasses
import math
import operator
import secrets
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._optional import require
from ..core.conditions import Condition
from ..core.predicates import InList, IsNull, Like, Logic, Predicate, like_regex, truth
from ..exceptions import InvalidParameterError
from ..random import default_rng
from ..scale.cluster import Connection, connect
from ..scale.release import partitions_of
from ..scale.shipping import pack, unpack
from ..scale.streams import partition_generator, partition_keys
from .config import DatasetSpec, ServerConfig
from .planner import Plan

__all__ = ["DaskDatasets", "Evaluation", "check_files", "check_partition", "clamped_values", "evaluate_partition",
           "identity_column", "noisy_partition", "plan_evaluation", "plan_terms", "summed_partials"]

_MASKS: Logic[Any] = Logic(both=np.logical_and, either=np.logical_or)
_COMPARE = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
            ">=": operator.ge}


def check_partition(part: Any, columns: dict[str, tuple[float, float, bool]]) -> tuple[int, str] | None:
    """The first record of a partition that breaks its column's rule, and why (None: every record is valid): a
    missing, NaN or infinite number, or one outside the declared bounds under ``out_of_bounds = "reject"``."""
    pd = require("pandas", feature="Dask datasets")
    first: tuple[int, str] | None = None
    for column, (low, high, reject) in columns.items():
        raw = part[column]
        values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        bad = ~np.isfinite(values)
        if reject:
            bad |= (values < low) | (values > high)
        if bad.any():
            at = int(np.flatnonzero(bad)[0])
            value = raw.iloc[at]
            shown = ("null" if value is None or value is pd.NA else
                     f"{values[at]:g}" if isinstance(value, int | float | np.number) else repr(value))
            why = (f"column {column!r}: {shown} is not a finite number" if not np.isfinite(values[at]) else
                   f"column {column!r}: {values[at]:g} is outside the declared bounds [{low:g}, {high:g}] "
                   "(out_of_bounds = 'reject')")
            record = int(part.index[at])
            if first is None or record < first[0]:
                first = (record, why)
    return first


def check_files(spec: DatasetSpec) -> int:
    """Read every value of a Dask dataset once, as an import would check it, and return the number of records.

    Missing, NaN and infinite numbers are refused, and so are values outside the declared bounds when the column's
    ``out_of_bounds`` is "reject" (otherwise they are clamped when queried). ``scheduler = "local"`` checks with
    Dask's threads in this process; an address, on that cluster.
    """
    dask = require("dask", feature="Dask datasets")
    from ..io import dask_parquet
    from .datafiles import DataImportError

    assert spec.source is not None and spec.scheduler is not None
    try:
        frame = dask_parquet(str(spec.source))
    except InvalidParameterError as exc:
        raise DataImportError(str(exc)) from None
    missing = [c for c in spec.columns if c not in frame.columns]
    if missing:
        raise DataImportError(f"{spec.source}: declared column {missing[0]!r} is not in the files.")
    numeric = {c: (*(col.bounds or (0.0, 0.0)), col.out_of_bounds == "reject")
               for c, col in spec.columns.items() if col.type == "number"}
    tasks = [dask.delayed(check_partition)(part, numeric) for part in frame[list(numeric)].to_delayed()]
    if spec.scheduler == "local":
        found = dask.compute(*tasks, scheduler="threads")
    else:
        with connect(spec.scheduler, owner="owner.toml", set_as_default=False) as connection:
            found = connection.client.gather(connection.client.compute(tasks))
    problems = [f for f in found if f is not None]
    if problems:
        record, why = min(problems)
        raise DataImportError(f"{spec.source}: record {record}, {why}; NaN, inf and missing numbers are rejected.")
    return int(frame.divisions[-1]) + 1


@dataclass(frozen=True, slots=True)
class Evaluation:
    """What a partition's task needs: the declared columns (type, bounds), the ``where`` and the terms."""

    columns: dict[str, tuple[str, float, float]]
    conditions: tuple[Predicate, ...]
    terms: tuple[tuple[str, tuple[Any, ...]], ...]


def clamped_values(series: Any, low: float, high: float) -> NDArray[np.float64]:
    """x clamped to [low, high], a missing value (null, NaN) as ``low`` (SQL: max(lo, min(hi, coalesce(x, lo))))."""
    pd = require("pandas", feature="Dask datasets")
    values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    return np.where(np.isnan(values), low, np.clip(values, low, high))


def _column(part: Any, job: Evaluation, column: str) -> NDArray[np.float64]:
    _, low, high = job.columns[column]
    return clamped_values(part[column], low, high)


def _text_test(text: Any, test: Any) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """(true, false) of ``test`` on a text column: a missing text is neither (unknown)."""
    known = text.notna().to_numpy(dtype=bool)
    holds = known & np.asarray(test(text).fillna(False), dtype=bool)
    return holds, known & ~holds


def _atom(part: Any, job: Evaluation) -> Any:
    """(true, false) masks of one test of a ``where`` (the semantics of :mod:`.weights`: a clamped number is never
    missing; a test of a missing text is unknown)."""

    def atom(p: Condition | InList | IsNull | Like) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
        kind, low, high = job.columns[p.column]
        if kind == "number":
            x = clamped_values(part[p.column], low, high)
            if isinstance(p, IsNull):
                holds = np.zeros(len(x), dtype=bool)
            elif isinstance(p, InList):
                holds = np.isin(x, np.asarray(p.values, dtype=float))
            else:
                assert isinstance(p, Condition)
                holds = _COMPARE[p.op](x, float(p.value))
            pair = (holds, ~holds)
        elif isinstance(p, IsNull):
            missing = part[p.column].isna().to_numpy(dtype=bool)
            pair = (missing, ~missing)
        elif isinstance(p, Like):
            regex = like_regex(p.pattern)
            pair = _text_test(part[p.column], lambda t: t.map(lambda v: regex.fullmatch(str(v)) is not None))
        elif isinstance(p, InList):
            pair = _text_test(part[p.column], lambda t: t.isin(list(p.values)))
        else:
            value, compare = p.value, _COMPARE[p.op]
            pair = _text_test(part[p.column], lambda t: compare(t, value))
        negated = not isinstance(p, Condition) and p.negated
        return (pair[1], pair[0]) if negated else pair

    return atom


def _weight(part: Any, job: Evaluation) -> NDArray[np.float64]:
    weight = np.ones(len(part))
    atom = _atom(part, job)
    for predicate in job.conditions:
        weight *= truth(predicate, atom, _MASKS)[0]
    return weight


def evaluate_partition(part: Any, packed: bytes) -> NDArray[np.float64]:
    """[Σ weight·term for every term, number of records] of one partition (module docstring)."""
    job: Evaluation = unpack(packed)
    weight = _weight(part, job)
    out = np.empty(len(job.terms) + 1)
    for i, (kind, args) in enumerate(job.terms):
        if kind == "count":
            term: Any = 1.0
        elif kind == "linear":
            term = sum(a * _column(part, job, c) for c, a in args)
        elif kind == "product":
            term = _column(part, job, args[0]) * _column(part, job, args[1])
        else:  # "power": (column, exponent, divisor, shift)
            column, exponent, divisor, shift = args
            term = (_column(part, job, column) - shift) ** exponent / divisor
        out[i] = float(np.dot(weight, np.broadcast_to(term, weight.shape)))
    out[-1] = len(part)
    return out


def noisy_partition(part: Any, low: float, high: float, key: NDArray[np.uint64], law: bytes) -> Any:
    """One partition's block of an identity answer (``part``: the column): its clamped records plus its
    coordinates' noise."""
    noise = unpack(law)
    return noise.add_to(clamped_values(part, low, high), rng=partition_generator(key))


def plan_terms(plan: Plan) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    """The term of each of the plan's components (module docstring)."""
    query = plan.query
    out: list[tuple[str, tuple[Any, ...]]] = []
    for component in plan.components:
        name = component.name
        if name == "count":
            out.append(("count", ()))
        elif name == "sum" and query.kind == "linear":
            out.append(("linear", tuple(query.coefficients)))
        elif name in ("sum", "mean", "sum_of_squares"):
            divisor = float(max(plan.records or 1, 1)) if name == "mean" else 1.0
            shift = 0.0
            if query.kind in ("mean", "variance") and name != "mean":  # DP means and variances: centred sums
                assert query.column is not None
                lo, hi = plan.spec.columns[query.column].bounds or (0.0, 0.0)
                shift = (lo + hi) / 2.0
            out.append(("power", (query.column, 2 if name == "sum_of_squares" else 1, divisor, shift)))
        elif name == "weighted_sum":
            out.append(("product", (query.weights, query.column)))
        elif name == "weight_sum":
            out.append(("power", (query.weights, 1, 1.0, 0.0)))
        else:  # pragma: no cover - the planner makes no other component
            raise InvalidParameterError(f"component {name!r} is not computed by the Dask engine.")
    return tuple(out)


def plan_evaluation(plan: Plan) -> Evaluation:
    """What every partition's task evaluates for ``plan``: its dataset's declared columns, its ``where`` and the
    terms of its components."""
    spec = plan.spec
    return Evaluation(
        {c: (col.type, *(col.bounds or (0.0, 0.0))) for c, col in spec.columns.items()},
        tuple(plan.query.where),
        plan_terms(plan),
    )


def summed_partials(partials: NDArray[np.float64]) -> tuple[list[float], int]:
    """The value of each component and the number of records, from the partitions' (or batches') rows of
    ``partials`` ([Σ weight·term for every term, number of records]): an exactly rounded sum per column."""
    totals = [math.fsum(partials[:, j]) for j in range(partials.shape[1] - 1)]
    return totals, int(partials[:, -1].sum())


def identity_column(plan: Plan) -> tuple[str, tuple[float, float]]:
    """The column an identity query releases, and its declared bounds."""
    column = plan.query.column
    assert column is not None
    bounds = plan.spec.columns[column].bounds
    assert bounds is not None
    return column, bounds


class DaskDatasets:
    """The Dask datasets of a server: one client per scheduler, one lazy frame per dataset (module docstring)."""

    def __init__(self, config: ServerConfig) -> None:
        from ..io import dask_parquet

        self.specs = {n: s for n, s in config.datasets.items() if s.engine == "dask"}
        self._connections: dict[str, Connection] = {}
        self.frames: dict[str, Any] = {}
        try:
            for name, spec in self.specs.items():
                assert spec.scheduler is not None and spec.source is not None
                if spec.scheduler not in self._connections:
                    self._connections[spec.scheduler] = connect(spec.scheduler, owner="owner.toml",
                                                                set_as_default=False)
                self.frames[name] = dask_parquet(str(spec.source), columns=list(spec.columns))
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        while self._connections:
            _, connection = self._connections.popitem()
            connection.close()

    def records(self, name: str) -> int:
        return int(self.frames[name].divisions[-1]) + 1

    def _run(self, name: str, tasks: list[Any]) -> list[Any]:
        scheduler = self.specs[name].scheduler
        assert scheduler is not None
        client = self._connections[scheduler].client
        return list(client.gather(client.compute(tasks)))

    def evaluate(self, plan: Plan) -> tuple[list[float], int]:
        """The true value of each component of ``plan`` and the number of records (constant work)."""
        dask = require("dask", feature="Dask datasets")
        spec = plan.spec
        packed = dask.delayed(pack(plan_evaluation(plan)), pure=True)
        token = secrets.token_hex(6)
        parts = self.frames[spec.name].to_delayed()
        tasks = [dask.delayed(evaluate_partition, pure=False)(part, packed, dask_key_name=f"privnoise-sums-{token}-{i}")
                 for i, part in enumerate(parts)]
        return summed_partials(np.array(self._run(spec.name, tasks)))

    def release_identity(self, plan: Plan) -> tuple[NDArray[np.float64], int]:
        """The noisy records of an identity query, noised on the workers, and their number."""
        dask = require("dask", feature="Dask datasets")
        spec = plan.spec
        column, bounds = identity_column(plan)
        noise: Any = plan.components[0].noise
        data = partitions_of(self.frames[spec.name][column])
        if data.records != plan.records:
            raise ValueError(f"the dataset holds {data.records} records, the plan was made for {plan.records}")
        keys = partition_keys(default_rng(), len(data.parts))
        token = secrets.token_hex(6)
        tasks = []
        for i, (part, start, rows) in enumerate(zip(data.parts, data.starts, data.rows, strict=True)):
            law = noise if not noise.shape else dataclasses.replace(  # a scalar noise is drawn per record anyway
                noise, mechanism=noise.mechanism.marginal(start, start + rows), bound=noise.bound[start : start + rows])
            tasks.append(dask.delayed(noisy_partition, pure=False)(
                part, bounds[0], bounds[1], keys[i], pack(law), dask_key_name=f"privnoise-release-{token}-{i}"
            ))
        blocks = self._run(spec.name, tasks)
        values = np.concatenate(blocks) if blocks else np.empty(0)
        return values, int(values.size)
