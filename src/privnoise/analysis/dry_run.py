"""A dry run: what a query would be charged and how accurate it would be, from public information only.

``session.mean("kwh", bounds=(0, 5), epsilon=0.5, dry_run=True)`` — every query of a
:class:`~privnoise.analysis.Session`, of its group-by and ``Session.sql`` take ``dry_run=True`` — returns a
:class:`DryRun` instead of an :class:`~privnoise.analysis.Estimate`: nothing is charged, no aggregate is computed
and no value of the data is read (the names of the columns are checked; the missing-value check of the "error"
policy is the real query's). Its numbers come from the noise law and the declared parameters alone, at level
1 − α, for the noise only (as the release's own accuracy):

================================  ===============================================================================
query                             expected accuracy
================================  ===============================================================================
count, sum, histogram,            ± r, the radius of the released number's noise law: rows for counts, the unit
group count, group sum            of the column for sums; the same for every cell or group
mean, group mean                  ± (r_S + h·r_N)/(n − r_N) for n > r_N, n the rows used (per group): with
                                  m = S/N in [−h, h], Ŝ/N̂ − S/N = (W_S − m·W_N)/(n + W_N); r_S and r_N are the
                                  radii of the sum's and the count's noise at 1 − α/2 each (a union bound), h half
                                  the width of the bounds; at most 2h (the mean is clipped to the bounds)
variance                          ± (r₂ + h²r₀)/(n − r₀) + d(2h + d) with d = (r₁ + h·r₀)/(n − r₀), the radii of
                                  the count, Σ(x − c) and Σ(x − c)² at 1 − α/3 each; at most h²
quantile, top-k                   the exponential mechanism's rank radius, in rows (as the release's own)
================================  ===============================================================================

>>> import numpy as np, privnoise as pn
>>> s = pn.Session({"kwh": np.linspace(0.0, 5.0, 100)}, epsilon=1.0)
>>> plan = s.sum("kwh", bounds=(0, 5), epsilon=0.5, dry_run=True)
>>> plan.cost["epsilon"], round(plan.accuracy(0.05), 2), s.remaining().epsilon
(0.5, 29.96, 1.0)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ..exceptions import InvalidParameterError
from ..guarantees import Guarantee, json_number
from ..planning.accuracy import NoiseLaw, check_level
from ..planning.plan import Cost
from .ledger import Remaining

__all__ = ["DryRun", "NoiseRadius", "RankRadius", "RatioRadius", "StatementDryRun", "VarianceRadius", "cost_of"]

PUBLIC_ONLY = (
    "from public information only (the noise law and the declared parameters): noise only, as the release's own "
    "accuracy; nothing charged, no data read"
)


class Accuracy(Protocol):
    """How accurate a query would be at a level, from its noise law (and, for ratios, a number of rows n)."""

    def radius(self, level: float, n: float | None = None) -> Any: ...

    def formula(self, level: float) -> str: ...


def _number(value: Any) -> str:
    return f"{float(value):.6g}"


@dataclass(frozen=True, slots=True)
class NoiseRadius:
    """± r of one released number (a count, a sum; every cell or group alike), in ``unit``."""

    law: NoiseLaw
    unit: str

    def radius(self, level: float, n: float | None = None) -> float:
        return self.law.radius(level)[0]

    def formula(self, level: float) -> str:
        return f"±{_number(self.radius(level))} {self.unit}"


@dataclass(frozen=True, slots=True)
class RatioRadius:
    """± (r_S + h·r_N)/(n − r_N) of a mean (module docstring), in ``unit``."""

    sum_law: NoiseLaw
    count_law: NoiseLaw
    half: float
    unit: str

    def terms(self, level: float) -> tuple[float, float]:
        """(r_S + h·r_N, r_N) at ``level`` (each noise at 1 − α/2)."""
        part = 1.0 - (1.0 - level) / 2.0
        r_count = self.count_law.radius(part)[0]
        return self.sum_law.radius(part)[0] + self.half * r_count, r_count

    def radius(self, level: float, n: float | None = None) -> float:
        if n is None:
            raise InvalidParameterError(
                "the accuracy of a mean depends on n, the number of rows used, which only the data know: give `n` "
                f"(a public guess or a noisy count); the formula is {self.formula(level)}."
            )
        top, shift = self.terms(level)
        return 2.0 * self.half if n <= shift else min(top / (n - shift), 2.0 * self.half)

    def formula(self, level: float) -> str:
        top, shift = self.terms(level)
        return (f"±{_number(top)}/(n − {_number(shift)}) {self.unit}, for n > {_number(shift)} rows used, at most "
                f"{_number(2.0 * self.half)}")


@dataclass(frozen=True, slots=True)
class VarianceRadius:
    """± (r₂ + h²r₀)/(n − r₀) + d(2h + d) of a variance (module docstring), in the square of ``unit``."""

    laws: tuple[NoiseLaw, NoiseLaw, NoiseLaw]  # count, Σ(x − c), Σ(x − c)²
    half: float
    unit: str

    def terms(self, level: float) -> tuple[float, float, float]:
        part = 1.0 - (1.0 - level) / 3.0
        r0, r1, r2 = (law.radius(part)[0] for law in self.laws)
        return r2 + self.half**2 * r0, r1 + self.half * r0, r0

    def radius(self, level: float, n: float | None = None) -> float:
        if n is None:
            raise InvalidParameterError(
                "the accuracy of a variance depends on n, the number of rows used, which only the data know: give "
                f"`n`; the formula is {self.formula(level)}."
            )
        second, first, shift = self.terms(level)
        top = self.half**2
        if n <= shift:
            return top
        d = first / (n - shift)
        return min(second / (n - shift) + d * (2.0 * self.half + d), top)

    def formula(self, level: float) -> str:
        second, first, shift = self.terms(level)
        return (f"±({_number(second)}/(n − {_number(shift)}) + d·({_number(2.0 * self.half)} + d)) with "
                f"d = {_number(first)}/(n − {_number(shift)}) {self.unit}, for n > {_number(shift)} rows used, at "
                f"most {_number(self.half**2)}")


@dataclass(frozen=True, slots=True)
class RankRadius:
    """The exponential mechanism's rank radius, in rows (one per quantile level)."""

    of: Callable[[float], Any]

    def radius(self, level: float, n: float | None = None) -> Any:
        return self.of(level)

    def formula(self, level: float) -> str:
        radii = np.atleast_1d(self.of(level))
        return "±" + ", ±".join(_number(r) for r in radii) + " rows of rank"


def cost_of(cost: Cost, currency: str) -> dict[str, Any]:
    """A query's price as decimals, with its exact rationals under ``exact``."""
    if currency == "rho":
        return {"rho": float(cost.rho), "delta": float(cost.delta),
                "exact": {"rho": str(cost.rho), "delta": str(cost.delta)}}
    return {"epsilon": float(cost.epsilon), "delta": float(cost.delta),
            "exact": {"epsilon": str(cost.epsilon), "delta": str(cost.delta)}}


def _price_text(cost: dict[str, Any]) -> str:
    first = "ρ" if "rho" in cost else "ε"
    return f"{first} = {cost.get('rho', cost.get('epsilon')):.6g}, δ = {cost['delta']:.3g}"


def _budget_text(remaining: Remaining | None, refusal: str | None) -> str:
    if remaining is None:
        return f"it would be refused: {(refusal or '').rstrip('.')}"
    rho = "" if remaining.rho is None else f", ρ = {remaining.rho:.6g}"
    return f"it fits the budget, leaving ε = {remaining.epsilon:.6g}, δ = {remaining.delta:.3g}{rho}"


@dataclass(frozen=True, eq=False)
class DryRun:
    """What a query would cost and how accurate it would be (module docstring).

    Attributes
    ----------
    query : dict
        The query as its release would describe it.
    guarantee : Guarantee
        What the release would satisfy.
    cost : dict
        Its price as decimals (``epsilon`` or ``rho``, and ``delta``), exact rationals under ``exact``.
    remaining_after : Remaining or None
        The session's budget after it (None: it would be refused, ``refusal`` says why).
    """

    query: dict[str, Any]
    guarantee: Guarantee
    cost: dict[str, Any]
    remaining_after: Remaining | None
    refusal: str | None
    accuracy_of: Accuracy
    noise: list[dict[str, Any]] = field(default_factory=list)
    meaning: str = PUBLIC_ONLY
    charge: Cost | None = None  # what the ledger would be charged (a statement's dry run composes its parts')

    @property
    def fits(self) -> bool:
        """Whether the session's budget would admit the query now."""
        return self.remaining_after is not None

    def accuracy(self, alpha: float = 0.05, n: float | None = None) -> Any:
        """a with P(error > a) ≤ α over the noise; a mean or a variance needs ``n``, the number of rows used."""
        return self.accuracy_of.radius(1.0 - check_level(alpha, "DryRun.accuracy"), n)

    def formula(self, level: float = 0.95) -> str:
        """The accuracy at ``level`` in words and numbers (a formula in n for means and variances)."""
        return self.accuracy_of.formula(check_level(level, "DryRun.formula"))

    def summary(self, level: float = 0.95) -> str:
        what = self.query.get("query", "query")
        if self.query.get("column"):
            what = f"{what}({self.query['column']})"
        return (f"dry run of {what}: would charge {_price_text(self.cost)}; {level:.0%} accuracy "
                f"{self.formula(level)}; {self.guarantee.summary()}; {_budget_text(self.remaining_after, self.refusal)}"
                "; nothing charged, no data read")

    def as_dict(self, level: float = 0.95) -> dict[str, Any]:
        out: dict[str, Any] = {"dry_run": True, "query": self.query, "cost": self.cost,
                               "guarantee": self.guarantee.as_dict(), "noise": self.noise, "fits": self.fits,
                               "accuracy": {"level": level, "formula": self.formula(level), "meaning": self.meaning}}
        if not isinstance(self.accuracy_of, RatioRadius | VarianceRadius):
            radius = np.asarray(self.accuracy(1.0 - level), dtype=float)
            out["accuracy"]["radius"] = (json_number(float(radius)) if radius.ndim == 0
                                         else [json_number(float(r)) for r in radius])
        if self.remaining_after is not None:
            out["remaining_after"] = self.remaining_after.as_dict()
        else:
            out["refusal"] = self.refusal
        return out


@dataclass(frozen=True, eq=False)
class StatementDryRun:
    """The dry run of a SQL statement: each release's, and the statement's whole price and guarantee."""

    releases: dict[str, DryRun]
    cost: dict[str, Any]
    guarantee: dict[str, Any]
    remaining_after: Remaining | None
    refusal: str | None

    @property
    def fits(self) -> bool:
        return self.remaining_after is not None

    def summary(self, level: float = 0.95) -> str:
        lines = [f"dry run of the statement: would charge {_price_text(self.cost)} ({self.guarantee['summary']}); "
                 f"{_budget_text(self.remaining_after, self.refusal)}; nothing charged, no data read"]
        lines += [f"  {text}: {level:.0%} accuracy {run.formula(level)}" for text, run in self.releases.items()]
        return "\n".join(lines)

    def as_dict(self, level: float = 0.95) -> dict[str, Any]:
        out: dict[str, Any] = {"dry_run": True, "cost": self.cost, "guarantee": self.guarantee, "fits": self.fits,
                               "releases": {text: run.as_dict(level) for text, run in self.releases.items()}}
        if self.remaining_after is not None:
            out["remaining_after"] = self.remaining_after.as_dict()
        else:
            out["refusal"] = self.refusal
        return out
