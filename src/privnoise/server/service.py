"""The charge-then-release transaction.

1. Validate the request against the configuration (no data read): a :class:`Plan` with the components to
   release, their noise and the charge. Errors here are 422 and depend only on the request and the config.
2. One transaction: lock the dataset row then the querier's budget row (``BEGIN IMMEDIATE`` on SQLite,
   ``SELECT ... FOR UPDATE`` on PostgreSQL), check both budgets, write the new spend and a ledger row, commit.
   A refusal writes nothing.
3. Only then read the data and release the hardened answer. If anything fails from here on, the charge stays
   and the querier gets :data:`FAILURE_BODY`, the same bytes whatever the data and whatever went wrong.

Queries and sensitivities (neighbouring databases differ by one record added, removed or replaced; a record's
numeric values are clamped to the declared bounds, NULL/NaN to the lower bound):

* ``count``: Δ = 1. ``sum``/``linear``: a sum over records of g(record) with g ∈ [g̲, ḡ] (interval arithmetic
  on the declared bounds), Δ = max(ḡ − g̲, |g̲|, |ḡ|).
* ``mean`` = noisy sum / noisy count, ``weighted_mean`` = noisy Σwx / noisy Σw, ``variance`` from noisy count,
  sum and sum of squares: the subset size is never treated as public; the policy's (ε, δ) is split evenly over
  the components and the ratio (clipped to the declared range) is post-processing.
* ``identity``: every record of a column in record order; the number of records is public, neighbours replace
  one record (Δ₁ = Δ₂ = hi − lo).
* Fisher policies answer unfiltered ``sum``, ``mean`` (n public), ``linear`` and ``identity`` releases.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from sqlalchemy import MetaData, Table, case, func, insert, literal, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.sql.elements import ColumnElement

from . import db
from .budgets import Charge, Refusal, apply_charge, is_finite, querier_view, text
from .config import DatasetSpec, PolicySpec, ServerConfig
from .mechanisms import Noise, build_noise
from .querylang import QueryError, QuerySpec

__all__ = ["FAILURE_BODY", "Plan", "QueryFailed", "Service"]

FAILURE_BODY = {"error": "query failed"}
log = logging.getLogger("privnoise.server")


class QueryFailed(Exception):
    """The answer could not be computed after the charge was committed (the charge stays)."""


@dataclass
class Component:
    name: str
    expression: Any  # SQLAlchemy aggregate (scalar components) or a column (identity)
    noise: Noise


@dataclass
class Plan:
    spec: DatasetSpec
    query: QuerySpec
    policy: PolicySpec
    components: list[Component]
    combine: Callable[[list[Any]], Any]
    charge: Charge
    where: list[ColumnElement[bool]] = field(default_factory=list)
    identity: bool = False

    def guarantee(self, after: dict[str, Any] | None = None) -> dict[str, Any]:
        noise = [c.noise.describe() for c in self.components]
        if self.policy.is_fisher:
            release = {c: (1.0 / v if v > 0 else None) for c, v in self.charge.fisher.items()}
            out: dict[str, Any] = {
                "notion": "fisher-information",
                "per_record_information": self.charge.fisher,
                "record_bound_of_this_release": release,
                "noise": noise,
                "note": "bounded cos² noise gives no pure ε-DP"
                if self.policy.mechanism == "fisher-cosine"
                else "",
            }
            if after is not None and "fisher" in after:
                out["record_bound_after"] = {c: v["record_bound"] for c, v in after["fisher"].items()}
            return out
        out = {
            "notion": "differential-privacy",
            "epsilon": float(self.charge.epsilon),
            "delta": float(self.charge.delta),
            "epsilon_exact": text(self.charge.epsilon),
            "delta_exact": text(self.charge.delta),
            "adjacency": "one record replaced" if self.identity else "one record added, removed or replaced",
            "composition": f"{len(self.components)} hardened release(s), (ε, δ) split evenly",
            "noise": noise,
            "per_record_information": self.charge.fisher,
        }
        if after is not None and "fisher" in after:
            out["record_bound_after"] = {c: v["record_bound"] for c, v in after["fisher"].items()}
        return out


def _range_product(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    p = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
    return min(p), max(p)


def _sensitivity(lo: float, hi: float) -> float:
    return max(hi - lo, abs(lo), abs(hi), 1e-300)


class Service:
    """Everything the HTTP layer needs: validation, the charge transaction, the release."""

    def __init__(self, config: ServerConfig, engine: Engine) -> None:
        self.config = config
        self.engine = engine
        meta = MetaData()
        self.tables: dict[str, Table] = {}
        self.rows: dict[str, int] = {}
        with engine.connect() as conn:
            for name, spec in config.datasets.items():
                table = Table(spec.table, meta, autoload_with=conn)
                missing = [c for c in spec.columns if c not in table.c]
                if missing:
                    raise QueryError(f"dataset {name!r}: table {spec.table!r} has no column {missing[0]!r}.")
                self.tables[name] = table
                self.rows[name] = int(conn.execute(select(func.count()).select_from(table)).scalar_one())

    # -- 1. plan (request and configuration only) -----------------------------------------------------------
    def _clamped(self, name: str, spec: DatasetSpec, column: str) -> Any:
        col = spec.numeric(column)
        if col is None:
            raise QueryError(f"{column!r} is not a declared numeric column of dataset {name!r}.")
        assert col.bounds is not None
        lo, hi = col.bounds
        c = self.tables[name].c[column]
        return case((c.is_(None), lo), (c < lo, lo), (c > hi, hi), else_=c)

    def plan(self, query: QuerySpec) -> Plan:
        name = query.dataset
        if name is None:
            if len(self.config.datasets) != 1:
                raise QueryError(f"name a dataset (one of {', '.join(sorted(self.config.datasets))}).")
            name = next(iter(self.config.datasets))
        spec = self.config.datasets.get(name)
        if spec is None:
            raise QueryError(f"unknown dataset {name!r}.")
        for col in query.columns():
            if col not in spec.columns:
                raise QueryError(f"{col!r} is not a declared column of dataset {name!r}.")
        policy = spec.policies.get(query.kind)
        if policy is None:
            raise QueryError(f"dataset {name!r} does not answer {query.kind} queries.")
        if policy.is_fisher and query.where:
            raise QueryError("Fisher-information policies answer unfiltered queries only.")
        table = self.tables[name]
        where = []
        for cond in query.where:
            kind = spec.columns[cond.column].type
            if (kind == "text") != isinstance(cond.value, str):
                raise QueryError(f"column {cond.column!r} is {kind}; compare it with a {kind} literal.")
            lhs = self._clamped(name, spec, cond.column) if kind == "number" else table.c[cond.column]
            rhs = literal(cond.value)
            ops = {
                "=": lhs == rhs,
                "!=": lhs != rhs,
                "<": lhs < rhs,
                "<=": lhs <= rhs,
                ">": lhs > rhs,
                ">=": lhs >= rhs,
            }
            where.append(ops[cond.op])
        kind = query.kind

        def bounds(column: str) -> tuple[float, float]:
            col = spec.numeric(column)
            if col is None or col.bounds is None:
                raise QueryError(f"{column!r} is not a declared numeric column of dataset {name!r}.")
            return col.bounds

        parts: list[tuple[str, Any, float]] = []  # (name, aggregate, sensitivity)
        count = ("count", func.count(), 1.0)
        identity = False
        combine: Callable[[list[Any]], Any]
        fisher_coef: dict[str, float] = {}
        # sup over the declared domain of |∂ component / ∂ x_i| per column: each component's Fisher information
        # about a record is at most coefficient² × the noise's information (components without an entry do not
        # depend on the values in a differentiable way, like a count).
        slopes: dict[str, dict[str, float]] = {}
        if kind == "count":
            parts = [count]

            def combine(v: list[Any]) -> Any:
                return max(v[0], 0.0)
        elif kind in ("sum", "mean", "variance", "identity"):
            assert query.column is not None
            lo, hi = bounds(query.column)
            x = self._clamped(name, spec, query.column)
            total = ("sum", func.coalesce(func.sum(x), 0.0), _sensitivity(lo, hi))
            if kind == "sum":
                parts = [total]
                fisher_coef = {query.column: 1.0}
                slopes = {"sum": {query.column: 1.0}}

                def combine(v: list[Any]) -> Any:
                    return v[0]
            elif kind == "mean" and policy.is_fisher:
                n = max(self.rows[name], 1)
                parts = [("mean", func.coalesce(func.sum(x), 0.0) / float(n), (hi - lo) / n)]
                fisher_coef = {query.column: 1.0 / n}
                slopes = {"mean": {query.column: 1.0 / n}}

                def combine(v: list[Any]) -> Any:
                    return v[0]
            elif kind == "mean":
                parts = [total, count]
                slopes = {"sum": {query.column: 1.0}}

                def combine(v: list[Any]) -> Any:
                    return min(max(v[0] / max(v[1], 1.0), lo), hi)
            elif kind == "variance":
                sq = _range_product((lo, hi), (lo, hi))
                sq = (0.0, sq[1]) if lo <= 0 <= hi else (min(lo * lo, hi * hi), sq[1])
                parts = [
                    total,
                    ("sum_of_squares", func.coalesce(func.sum(x * x), 0.0), _sensitivity(*sq)),
                    count,
                ]
                top = (hi - lo) ** 2 / 4.0
                slopes = {
                    "sum": {query.column: 1.0},
                    "sum_of_squares": {query.column: 2.0 * max(abs(lo), abs(hi))},
                }

                def combine(v: list[Any]) -> Any:
                    n = max(v[2], 2.0)
                    m = v[0] / n
                    return min(max((v[1] - n * m * m) / (n - 1.0), 0.0), top)
            else:
                identity = True
                parts = [("values", x, hi - lo)]
                fisher_coef = {query.column: 1.0}
                slopes = {"values": {query.column: 1.0}}

                def combine(v: list[Any]) -> Any:
                    return v[0]
        elif kind == "weighted_mean":
            assert query.column is not None and query.weights is not None
            lo, hi = bounds(query.column)
            wlo, whi = bounds(query.weights)
            if wlo < 0:
                raise QueryError(f"weight column {query.weights!r} must have bounds ≥ 0.")
            x = self._clamped(name, spec, query.column)
            w = self._clamped(name, spec, query.weights)
            parts = [
                (
                    "weighted_sum",
                    func.coalesce(func.sum(w * x), 0.0),
                    _sensitivity(*_range_product((lo, hi), (wlo, whi))),
                ),
                ("weight_sum", func.coalesce(func.sum(w), 0.0), _sensitivity(wlo, whi)),
            ]
            slopes = {
                "weighted_sum": {query.column: max(abs(wlo), abs(whi)), query.weights: max(abs(lo), abs(hi))},
                "weight_sum": {query.weights: 1.0},
            }

            def combine(v: list[Any]) -> Any:
                return (lo + hi) / 2.0 if v[1] <= 0 else min(max(v[0] / v[1], lo), hi)
        else:  # linear
            g_lo = g_hi = 0.0
            expr: Any = literal(0.0)
            for column, a in query.coefficients:
                lo, hi = bounds(column)
                g_lo += min(a * lo, a * hi)
                g_hi += max(a * lo, a * hi)
                expr = expr + a * self._clamped(name, spec, column)
                fisher_coef[column] = fisher_coef.get(column, 0.0) + a
            parts = [("sum", func.coalesce(func.sum(expr), 0.0), _sensitivity(g_lo, g_hi))]
            slopes = {"sum": {c: abs(a) for c, a in fisher_coef.items()}}

            def combine(v: list[Any]) -> Any:
                return v[0]

        dim = self.rows[name] if identity else 1
        if identity and dim == 0:
            raise QueryError(f"dataset {name!r} has no records.")
        components = [
            Component(n_, e, build_noise(policy, sensitivity=s, dim=dim, share=len(parts)))
            for n_, e, s in parts
        ]
        # Every release adds Fisher information about the records, whatever its policy (it adds over independent
        # releases); a DP release is charged its (ε, δ) as well.
        fisher: dict[str, float] = {}
        for component in components:
            info = component.noise.information
            for column, slope in slopes.get(component.name, {}).items():
                if info is not None and slope != 0.0:
                    fisher[column] = fisher.get(column, 0.0) + slope * slope * info
        if policy.is_fisher:
            assert all(c.noise.information is not None for c in components)
            charge = Charge(fisher=fisher)
        else:
            assert policy.epsilon is not None
            charge = Charge(epsilon=policy.epsilon, delta=policy.delta or Fraction(0), fisher=fisher)
        q = QuerySpec(query.kind, query.column, query.weights, query.coefficients, query.where, name)
        return Plan(spec, q, policy, components, combine, charge, where, identity)

    # -- 2. charge ------------------------------------------------------------------------------------------
    def charge(self, plan: Plan, querier_id: int) -> tuple[int, dict[str, Any]]:
        """Charge atomically and durably; return (ledger id, the querier's budget after). Raises Refusal."""
        name = plan.spec.name
        with self.engine.begin() as conn:
            ds = (
                conn.execute(select(db.datasets).where(db.datasets.c.name == name).with_for_update())
                .mappings()
                .one()
            )
            b = (
                conn.execute(
                    select(db.budgets)
                    .where(db.budgets.c.querier_id == querier_id, db.budgets.c.dataset == name)
                    .with_for_update()
                )
                .mappings()
                .first()
            )
            if b is None:
                raise Refusal("querier")
            new_ds, new_b = apply_charge(ds, b, plan.spec, plan.charge)
            conn.execute(update(db.datasets).where(db.datasets.c.name == name).values(**new_ds))
            conn.execute(
                update(db.budgets)
                .where(db.budgets.c.querier_id == querier_id, db.budgets.c.dataset == name)
                .values(**new_b)
            )
            pk = conn.execute(
                insert(db.ledger).values(
                    querier_id=querier_id,
                    dataset=name,
                    query=json.dumps(plan.query.as_dict(), sort_keys=True),
                    mechanism=plan.policy.mechanism,
                    epsilon=text(plan.charge.epsilon),
                    delta=text(plan.charge.delta),
                    fisher_information=json.dumps(plan.charge.fisher, sort_keys=True),
                    created_at=db.utcnow(),
                )
            ).inserted_primary_key
            assert pk is not None
            ledger_id = pk[0]
            after = querier_view(dict(b) | new_b, plan.spec)
        return int(ledger_id), after

    def budget(self, querier_id: int) -> dict[str, Any]:
        with self.engine.connect() as conn:
            rows = (
                conn.execute(select(db.budgets).where(db.budgets.c.querier_id == querier_id)).mappings().all()
            )
        return {
            r["dataset"]: querier_view(r, self.config.datasets[r["dataset"]])
            for r in rows
            if r["dataset"] in self.config.datasets
        }

    # -- 3. release -----------------------------------------------------------------------------------------
    def release(self, plan: Plan) -> Any:
        """Read the data and release the hardened answer; any failure becomes :class:`QueryFailed`."""
        try:
            table = self.tables[plan.spec.name]
            with self.engine.connect() as conn:
                if plan.identity:
                    rows = conn.execute(
                        select(plan.components[0].expression).select_from(table).order_by(table.c.pn_row)
                    ).all()
                    true: list[Any] = [np.array([float(r[0]) for r in rows])]
                else:
                    stmt = select(*[c.expression for c in plan.components]).select_from(table)
                    if plan.where:
                        stmt = stmt.where(*plan.where)
                    true = [float(v) for v in conn.execute(stmt).one()]
            noisy = [c.noise.release(v) for c, v in zip(plan.components, true, strict=True)]
            value = plan.combine(noisy)
            value = value.tolist() if isinstance(value, np.ndarray) else float(value)
            if not is_finite(value):
                raise ArithmeticError("non-finite release")
            return value
        except Exception:
            log.exception("query failed after its charge was committed")
            raise QueryFailed from None


def describe_query(plan: Plan) -> dict[str, Any]:
    return plan.query.as_dict()
