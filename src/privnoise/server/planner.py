"""From a query to a :class:`Plan`: the components to release, their calibrated noise, the charge and one SQL
statement — from the request and the configuration alone (no data is read).

Queries and sensitivities (neighbouring databases differ by one record added, removed or replaced; a record's
numeric values are clamped to the declared bounds, NULL to the lower bound):

* ``count``: Δ = 1. ``sum``/``linear``: a sum over records of g(record) with g ∈ [g̲, ḡ] (interval arithmetic
  on the declared bounds), Δ = max(ḡ − g̲, |g̲|, |ḡ|): adding a record at 60 to a column declared [10, 60]
  changes the sum by 60, not by 50.
* ``mean`` = c + noisy Σ(x − c) / noisy count (c the centre of the declared bounds, h their half-width: the centred
  sum has Δ = 2h, less than the raw sum's whenever the bounds exclude 0), ``weighted_mean`` = noisy Σwx / noisy
  Σw, ``variance`` from the noisy count and the noisy sums of x − c and (x − c)² (Δ = 2h and h²; the variance does
  not change with the shift): the subset size is never treated as public; the policy's (ε, δ) is split evenly
  over the components and the ratio (clipped to the declared range) is post-processing. The library's Session
  computes the same components (:mod:`privnoise.planning.plan`). Components come in this
  order: (sum, count), (weighted_sum, weight_sum), (sum, sum_of_squares, count).
* ``identity``: every record of a column in record order; the number of records is public, neighbours replace
  one record (Δ₁ = Δ₂ = hi − lo).
* Fisher policies answer unfiltered ``sum``, ``mean`` (n public: Δ = (hi − lo)/n), ``linear`` and ``identity``.

Every release adds Fisher information about the records, whatever its policy: per column, Σ over components of
slope² 𝓘_w, the slope being sup over the declared domain of |∂ component / ∂ x_i| (1 for a sum, 1/n for a
Fisher mean, |a| for a coefficient a, 2h for a sum of (x − c)², max|w| and max|x| for Σwx). It is computed
exactly in rationals, rounded up to the next double (never below the information released), checked finite and
positive, and charged as the exact rational of that double. That charge bounds differentiable answers only: a
step function of a column with a Fisher floor (a filter, bins, a quantile, a group key on it — each key column of
a group-by on several) is refused here,
before any charge, unless the column allows it (:mod:`.steps`; the plan keeps those it allows in ``steps``).

Constant work: the statement aggregates over the whole table, each record weighted by the 0/1 value of its filter,
one expression that does the same work whether each test holds or not (:mod:`.indicators`, :mod:`.weights`),
every expression evaluated for every record (each once: :mod:`.row_source`; cells: :mod:`.cells`), values clamped
with ``max``/``min`` (``greatest``/``least``); so the work does not depend on which records a filter selects
(SECURITY.md, requirement 16). It also counts the records, which the release checks against the number a plan was
made for.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from sqlalchemy import Float, Table, func, literal, select
from sqlalchemy.engine import Dialect
from sqlalchemy.sql import Select
from sqlalchemy.sql.elements import BindParameter

from ..core.predicates import check_predicate_kinds
from ..mechanisms import LatticeMechanism
from ..mechanisms.hardening import HardenedMechanism
from ..planning import Component
from .accuracy import Accuracy, accuracy_of, law_of, rank_accuracy
from .aggregates import Part, scalar_parts
from .budgets import information_floats, text
from .config import DatasetSpec, PolicySpec
from .mechanisms import POLICY_NOISES, additive_noise, build_noise, noise_information, policy_noise
from .plans import Plan, core_plan, information_of, plan_guarantee
from .quantiles import SENSITIVITY, QuantileRelease
from .querylang import QueryError, QuerySpec
from .row_source import Rows, fences_needed, row_source
from .steps import floored_steps
from .vectors import PartitionSelection, cell_keys, group_keys, mean_centre, vector_parts
from .weights import row_weight

__all__ = ["INLINE_RECORDS", "Plan", "compiled", "make_plan"]

#: Datasets of at most this many records are released in the event loop (see :mod:`.answers`).
INLINE_RECORDS = 5000


def _flat(parts: list[Part]) -> list[Any]:
    """The SQL terms of ``parts``, each cell of a vector part one term."""
    return [e for p in parts for e in (p[1] if isinstance(p[1], list) else [p[1]])]


def _clamp(column: Any, lo: float, hi: float, dialect: str) -> Any:
    x = func.coalesce(column, literal(lo, Float))
    if dialect == "sqlite":  # the scalar max/min of two arguments
        return func.max(literal(lo, Float), func.min(literal(hi, Float), x))
    return func.greatest(literal(lo, Float), func.least(literal(hi, Float), x))


def compiled(statement: Select[Any], dialect: Dialect) -> tuple[str, Any]:
    """(SQL text, parameters) of ``statement`` for a DBAPI cursor of ``dialect``: positional for SQLite's
    ``?``, a mapping for psycopg's ``%(name)s``."""
    c = statement.compile(dialect=dialect)
    params = c.params  # a property that builds every parameter anew: read once, not once per parameter
    if c.positiontup is not None:
        return str(c), tuple(params[name] for name in c.positiontup)
    return str(c), dict(params)


def make_plan(query: QuerySpec, spec: DatasetSpec, table: Table, *, records: int, dialect: Dialect) -> Plan:
    """The plan of ``query`` on dataset ``spec`` (stored in ``table`` with ``records`` records)."""
    name = spec.name
    for col in query.columns():
        if col not in spec.columns:
            raise QueryError(f"{col!r} is not a declared column of dataset {name!r}.")
    policy = spec.policies.get(query.kind)
    if policy is None:
        raise QueryError(f"dataset {name!r} does not answer {query.kind} queries.")
    if policy.is_fisher and query.where:
        raise QueryError("Fisher-information policies answer unfiltered queries only.")
    steps = floored_steps(query, spec)  # a step function of a floored column is refused here, unless allowed
    vector = query.kind == "histogram" or query.group_by is not None
    if (vector or query.kind == "quantile") and spec.engine != "sql":
        raise QueryError(f"{query.kind}{' group by' if query.group_by else ''} is answered on imported datasets; "
                         f"dataset {name!r} is computed on {spec.engine.capitalize()}.")
    additive = additive_noise(policy)  # None for the exponential mechanism of quantiles
    norm = None if additive is None else additive.vector_norm
    if vector and norm is None:
        answered = ", ".join(sorted(p.name for p in POLICY_NOISES.values() if p.vector_norm is not None))
        raise QueryError(f"a group by or histogram is answered with {answered} noise (or a registered noise "
                         f"family's); the {query.kind} policy of dataset {name!r} is {policy.mechanism!r}.")
    keys: tuple[Any, ...] | None = None
    selection: PartitionSelection | None = None
    if query.group_by is not None:  # declared cells, or a partition selection (.vectors)
        keys, selection = group_keys(query, spec, policy)
    elif vector:
        _, keys = cell_keys(query, spec)

    def bounds(column: str) -> tuple[float, float]:
        col = spec.numeric(column)
        if col is None or col.bounds is None:
            raise QueryError(f"{column!r} is not a declared numeric column of dataset {name!r}.")
        return col.bounds

    def clamped(column: str) -> Any:
        lo, hi = bounds(column)
        return _clamp(table.c[column], lo, hi, dialect.name)

    check_predicate_kinds(query.where, lambda column: spec.columns[column].type, QueryError)
    if query.kind == "quantile":
        assert query.column is not None
        weight = row_weight(query.where, lambda c: ((clamped(c), True) if spec.columns[c].type == "number"
                                                     else (table.c[c], False)), dialect.name)
        return _quantile_plan(query, spec, policy, table, clamped(query.column), weight, bounds(query.column),
                              dialect, steps)

    def build(rows: Rows | None) -> tuple[list[Part], Callable[[list[Any]], Any], bool, bool]:
        """The parts over the row source ``rows`` (None: identity, the stored table)."""
        weight = literal(1.0, Float) if rows is None else rows.weight  # None: the cells' tests carry it

        def total(expr: Any) -> Any:
            if weight is None:  # SQLite (.row_source): total() is the sum as a double, 0.0 over no record
                return func.total(expr)
            if isinstance(expr, BindParameter) and expr.value == 1.0:  # a count: the weights (a double) alone
                return func.coalesce(func.sum(weight), literal(0.0, Float))
            return func.coalesce(func.sum(weight * expr), literal(0.0, Float))

        if not vector:
            return scalar_parts(query, policy, records, bounds, clamped if rows is None else rows.clamped, total)
        assert norm is not None and rows is not None
        tests = [literal(1.0, Float)] if selection is not None else rows.tests
        return (*vector_parts(query, norm, tests, total, rows.clamped, bounds, counted=selection is not None,
                              centred=rows.centred), False, False)

    rows: Rows | None = None
    if query.kind != "identity":  # aggregates: each record's values computed once (.row_source)
        carried = selection.columns if selection is not None else ()
        cells = keys if selection is None and vector else None

        inline = vector and query.kind != "mean"  # one vector part: each cell's test read once (.cells)
        # a mean per cell reads x − c alone: computed once per record (.row_source)
        centre = mean_centre(*bounds(query.column))[0] if vector and query.kind == "mean" and query.column else None

        def source(fences: tuple[bool, bool]) -> Rows:
            return row_source(table, query, spec, clamped, cells, carried, dialect.name, fences=fences,
                              inline_cells=inline, centre=centre)

        rows = source((True, True))
        parts, combine, identity, uses_records = build(rows)
        assert not (inline and cells and len(parts) != 1), "a cell's inline test must be read by one term"
        key_terms = [rows.source.c[c] for c in carried]
        fences = fences_needed(rows, [*key_terms, *_flat(parts)])
        if fences != (True, True):  # the same statement, with the subqueries no expression needs kept apart
            rows = source(fences)
            parts, combine, identity, uses_records = build(rows)
    else:
        parts, combine, identity, uses_records = build(None)

    if identity and records == 0:
        raise QueryError(f"dataset {name!r} has no records.")
    components: list[Component[HardenedMechanism]] = []
    # A released count (of a count, histogram or group count with declared keys) on ℤ, as in the Session; the
    # count of a mean or variance and the one that selects keys keep continuous noise.
    discrete = query.kind in ("count", "histogram") and selection is None
    for n_, expr, s, slopes in parts:
        dim = records if identity else (len(expr) if isinstance(expr, list) else 1)
        used = policy
        if selection is not None:  # two cells change at most; the counts use ε₀ (vectors.PartitionSelection)
            dim = 2
            if n_ == "count":
                used = dataclasses.replace(policy, epsilon=Fraction(selection.count_epsilon) * len(parts))
        moved = 1 if identity else min(dim, 2)  # one record replaced: one value, or one cell left and one entered
        noise = build_noise(used, sensitivity=s, dim=dim, share=len(parts), coordinates=moved,
                            integer=discrete and n_ == "count")
        if selection is not None and n_ == "count":
            selection.calibrated(noise)
        # lattice noise on a count (which reads no column, so charges no column) states no Fisher information
        lattice = not slopes and isinstance(noise.mechanism, LatticeMechanism)
        information = None if lattice else noise_information(noise, policy)
        components.append(Component(name=n_, noise=noise, sensitivity=s, information=information, slopes=slopes,
                                    dim=1 if identity else dim))
    accuracy = _accuracy(query, policy, components, bounds)
    delta = Fraction(0)
    if not policy.is_fisher:
        selecting = (policy.partition_delta or Fraction(0)) if selection is not None else Fraction(0)
        delta = (policy.delta or Fraction(0)) + selecting
    core, charge = core_plan(query.kind, components, combine, accuracy, policy, delta=delta,
                             information=information_of(components), identity=identity)
    if rows is None:
        statement = select(parts[0][1]).select_from(table).order_by(table.c.pn_row)
    else:
        flat = _flat(parts)
        statement = select(*flat, func.count()).select_from(rows.source)
        if selection is not None:  # one group per stored key; the filter stays a weight (module docstring)
            key = [rows.source.c[c] for c in selection.columns]
            statement = select(*key, *flat, func.count()).select_from(rows.source).group_by(*key)
    q = query.on(name)
    sql, parameters = compiled(statement, dialect)
    charged = {
        "epsilon": text(charge.epsilon),
        "delta": text(charge.delta),
        "fisher_information": information_floats(charge),
    }
    return Plan(
        spec=spec,
        query=q,
        policy=policy,
        components=components,
        combine=combine,
        charge=charge,
        statement=statement,
        sql=sql,
        parameters=parameters,
        identity=identity,
        inline=records <= INLINE_RECORDS and spec.engine == "sql",  # a Dask computation never blocks the loop
        query_dict=q.as_dict(),
        records=records if uses_records else None,
        ledger_query=json.dumps(q.as_dict(), sort_keys=True),
        ledger_information=json.dumps(information_floats(charge), sort_keys=True),
        guarantee_base=plan_guarantee(policy, components, charge, identity),
        charged=charged,
        accuracy=accuracy,
        keys=keys,
        selection=selection,
        steps=steps,
        core=core,
    )


def _quantile_plan(
    query: QuerySpec, spec: DatasetSpec, policy: PolicySpec, table: Table, value: Any, weight: Any,
    declared: tuple[float, float], dialect: Dialect, steps: tuple[tuple[str, str], ...],
) -> Plan:
    """The plan of a quantile query (:mod:`.quantiles`): every record's clamped value and filter weight are read,
    the policy's ε is charged exactly (δ = 0), no Fisher information: a quantile is a step function of the values,
    refused on a floored column unless the column allows it (:mod:`.steps`)."""
    assert policy.epsilon is not None
    release = QuantileRelease(declared, query.levels, float(policy.epsilon))
    accuracy = rank_accuracy(release.epsilon_each, [SENSITIVITY] * len(query.levels), release.candidates)
    core, charge = core_plan("quantile", [], lambda v: v, accuracy, policy,
                             selections=[release.epsilon_each] * len(query.levels))
    statement = select(value, weight).select_from(table)
    sql, parameters = compiled(statement, dialect)
    q = query.on(spec.name)
    eps = text(charge.epsilon)
    return Plan(
        spec=spec,
        query=q,
        policy=policy,
        components=[],
        combine=lambda v: v,
        charge=charge,
        statement=statement,
        sql=sql,
        parameters=parameters,
        identity=False,
        inline=False,
        query_dict=q.as_dict(),
        records=None,
        ledger_query=json.dumps(q.as_dict(), sort_keys=True),
        ledger_information=json.dumps({}, sort_keys=True),
        guarantee_base={
            "notion": "differential-privacy",
            "epsilon": float(charge.epsilon or 0),
            "delta": 0.0,
            "epsilon_exact": eps,
            "delta_exact": "0",
            "adjacency": "one record added, removed or replaced",
            "composition": f"{len(query.levels)} exponential-mechanism selection(s), ε split evenly",
            "mechanism": {"family": "exponential", "grid": release.step, "candidates": release.candidates,
                          "epsilon_each": release.epsilon_each, "score_sensitivity": SENSITIVITY},
            "per_record_information": {},
        },
        charged={"epsilon": eps, "delta": "0", "fisher_information": {}},
        accuracy=accuracy,
        quantile=release,
        steps=steps,
        core=core,
    )


def _accuracy(query: QuerySpec, policy: PolicySpec, components: list[Component[HardenedMechanism]],
              bounds: Callable[[str], tuple[float, float]]) -> Accuracy:
    """The accuracy of the answer (:mod:`.accuracy`), from the components' noise laws (the family's own, for a
    registered family)."""
    error = policy_noise(policy).law
    laws = [law_of(c.noise, error) for c in components]
    kind = query.kind
    if kind in ("count", "histogram"):
        return accuracy_of("count", laws, None, low=0.0)
    if kind == "identity" or (kind == "mean" and policy.is_fisher):
        assert query.column is not None
        lo, hi = bounds(query.column)
        return accuracy_of("identity", laws, None, low=lo, high=hi)
    if kind in ("mean", "weighted_mean", "variance"):
        assert query.column is not None
        return accuracy_of(kind, laws, bounds(query.column))
    if kind == "sum":
        assert query.column is not None
        lo, hi = bounds(query.column)
        return accuracy_of("sum", laws, None, low=0.0 if lo >= 0 else None, high=0.0 if hi <= 0 else None)
    return accuracy_of(kind, laws, None)
