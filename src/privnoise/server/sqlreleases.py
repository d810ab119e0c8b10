"""A SQL statement's answer from the releases of its queries (:mod:`.sqlspecs`): each aggregate's values per group,
its interval at any level, and the guarantee of the whole statement — all post-processing of what was released.

* **Values.** ``COUNT(*)``, ``SUM``, ``AVG`` and the quantiles are the values the queries answer. ``VAR_POP``,
  ``VARIANCE`` and ``STDDEV`` are the population variance S₂/N − (S₁/N)² of the variance query's noisy
  components (clipped to [0, h²], h half the declared range) and its square root, as :meth:`privnoise.Session.sql`
  answers them (the query's own value, in its entry of ``answers``, is the sample variance).
* **Intervals.** The interval of each aggregate at any level: the one its query's :class:`~privnoise.Release`
  states (:mod:`.accuracy`, from the noise law of its components: ± the law's radius for counts and sums, cut to
  the range they can take, the ratio interval of :func:`~privnoise.planning.accuracy.ratio_interval` for means),
  :func:`~privnoise.planning.accuracy.variance_interval` for variances (unscaled: the population variance), its
  square root for ``STDDEV``; none for quantiles (a rank accuracy) or noise without a law.
  :func:`privnoise.sql.answers.assemble` combines them for expressions of several aggregates (union bound).
* **Groups.** Declared keys are the same cells, in the same order, for every query of the statement; keys selected
  by a noisy count (partition selection) are selected by each query on its own, so the answer has a row for every
  key some query released (sorted), and an aggregate whose query did not release a key has no value there (null).
* **Guarantee.** The statement's charge is the sum of its queries' charges (sequential composition, as the ledger
  records them): ε and δ add, and the Fisher information per record adds per column.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from ..analysis.grouping import sort_key
from ..planning.accuracy import variance_interval
from ..results import Release
from ..sql import Aggregate
from ..sql.answers import Released
from .accuracy import law_of
from .budgets import information_floats, text
from .mechanisms import policy_noise
from .plans import Plan

__all__ = ["QueryRelease", "finite_or_none", "groups_of", "interval_at", "statement_charged", "statement_guarantee"]

Interval = Callable[[float], tuple[np.ndarray, np.ndarray]]


def interval_at(release: QueryRelease) -> Interval | None:
    """level → (lows, highs) of a count, sum or mean: the interval its release states (:mod:`.accuracy`, from the
    noise law of its components); None for a quantile, a variance (see :meth:`QueryRelease.variance`) or noise
    without a law."""
    interval = release.release.interval
    if interval is None or release.plan.query.kind not in ("count", "sum", "mean"):
        return None

    def at(level: float) -> tuple[np.ndarray, np.ndarray]:
        low, high, _ = interval(level)
        return np.atleast_1d(np.asarray(low, dtype=float)), np.atleast_1d(np.asarray(high, dtype=float))

    return at


@dataclass
class QueryRelease:
    """One query of a statement, released: its aggregate, plan, the :class:`~privnoise.Release` its core plan
    executed into, its noisy components and its ledger row."""

    aggregate: Aggregate
    plan: Plan
    release: Release
    noisy: list[Any] = field(default_factory=list)
    ledger_id: int = 0

    @property
    def value(self) -> Any:
        return self.release.value

    @property
    def keys(self) -> list[tuple[Any, ...]] | None:
        """The groups of the release (None without ``GROUP BY``), each a tuple of one key per column."""
        if self.plan.query.group_by is None:
            return None
        found = self.release.keys or []
        return [tuple(k) if isinstance(k, tuple | list) else (k,) for k in found]

    def variance(self, root: bool) -> tuple[list[Any], Interval | None]:
        """The population variance (its square root with ``root``) and its interval (module docstring)."""
        column = self.plan.query.column
        assert column is not None and len(self.noisy) == 3
        lo, hi = self.plan.spec.columns[column].bounds or (0.0, 0.0)
        top = ((hi - lo) / 2.0) ** 2
        s1, s2, n = (float(v) for v in self.noisy)
        m = max(n, 1.0)
        value = min(max(s2 / m - (s1 / m) ** 2, 0.0), top)
        laws = [law_of(c.noise, policy_noise(self.plan.policy).law) for c in self.plan.components]
        shape = math.sqrt if root else float
        if any(law is None for law in laws):
            return [shape(value)], None

        def interval(level: float) -> tuple[np.ndarray, np.ndarray]:
            a, b = variance_interval(n, s1, s2, (laws[2], laws[0], laws[1]), level,  # type: ignore[arg-type]
                                     half_range=(hi - lo) / 2.0)
            return np.array([shape(a)]), np.array([shape(b)])

        return [shape(value)], interval

    def series(self, aggregate: Aggregate) -> tuple[list[Any], Interval | None]:
        """``aggregate``'s values, one per key of the release, and their interval."""
        if aggregate.kind in ("variance", "stddev"):
            return self.variance(aggregate.kind == "stddev")
        if aggregate.kind == "quantile":
            return [float(np.ravel(self.value)[0])], None
        return [float(v) for v in np.atleast_1d(np.asarray(self.value, dtype=float))], interval_at(self)

    def released(self, aggregate: Aggregate, groups: list[tuple[Any, ...]]) -> Released:
        """``aggregate``'s values and interval aligned with ``groups`` (null where the release has no such key)."""
        values, interval = self.series(aggregate)
        keys = self.keys
        if keys is None:
            return Released(values, interval)
        where = {k: i for i, k in enumerate(keys)}
        picked = [where.get(g) for g in groups]
        aligned = [None if i is None else values[i] for i in picked]
        if interval is None:
            return Released(aligned, None)

        def at(level: float) -> tuple[np.ndarray, np.ndarray]:
            low, high = interval(level)
            return (np.array([math.nan if i is None else low[i] for i in picked]),
                    np.array([math.nan if i is None else high[i] for i in picked]))

        return Released(aligned, at)


def groups_of(releases: list[QueryRelease]) -> list[tuple[Any, ...]]:
    """The answer's groups: ``[()]`` without ``GROUP BY``; the declared cells in order; or every selected key, sorted."""
    keyed = [r.keys for r in releases]
    if not keyed or keyed[0] is None:
        return [()]
    if all(r.plan.keys is not None for r in releases):
        return list(keyed[0] or [])
    found = {k for keys in keyed for k in (keys or [])}
    return sorted(found, key=sort_key)


def statement_charged(plans: list[Plan]) -> dict[str, Any]:
    """What the statement charged: the sum of its queries' charges (exact ε and δ, Fisher information per column)."""
    epsilon = sum((p.charge.epsilon or Fraction(0) for p in plans), Fraction(0))
    delta = sum((p.charge.delta or Fraction(0) for p in plans), Fraction(0))
    information: dict[str, float] = {}
    for p in plans:
        for column, value in information_floats(p.charge).items():
            information[column] = information.get(column, 0.0) + value
    return {"epsilon": text(epsilon), "delta": text(delta), "fisher_information": information}


def statement_guarantee(plans: list[Plan], after: dict[str, Any]) -> dict[str, Any]:
    """The privacy of the whole answer: its queries' releases composed (module docstring)."""
    charged = statement_charged(plans)
    epsilon, delta = Fraction(charged["epsilon"]), Fraction(charged["delta"])
    composition = f"{len(plans)} quer{'y' if len(plans) == 1 else 'ies'} composed sequentially: their charges add"
    out: dict[str, Any] = {"releases": len(plans), "composition": composition,
                           "per_record_information": charged["fisher_information"]}
    if any(p.policy.is_fisher for p in plans):
        out = {"notion": "fisher-information", **out,
               "summary": "Fisher information per record, per column: " + ", ".join(
                   f"{c} {v:g}" for c, v in charged["fisher_information"].items())}
    else:
        out = {"notion": "differential-privacy", "epsilon": float(epsilon), "delta": float(delta),
               "epsilon_exact": text(epsilon), "delta_exact": text(delta),
               "adjacency": "one record added, removed or replaced", **out,
               "summary": f"(ε = {float(epsilon):g}, δ = {float(delta):g})-differential privacy, one record added, "
                          "removed or replaced"}
    if "fisher" in after:
        out["record_bound_after"] = {c: v["record_bound"] for c, v in after["fisher"].items()}
    return out


def finite_or_none(value: Any) -> Any:
    """``value`` (a number, a list or a dict of them) with every NaN and infinity as None (JSON has neither)."""
    if isinstance(value, dict):
        return {k: finite_or_none(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_or_none(v) for v in value]
    if isinstance(value, float | np.floating) and not math.isfinite(float(value)):
        return None
    return value.item() if isinstance(value, np.generic) else value
