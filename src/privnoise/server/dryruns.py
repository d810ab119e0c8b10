"""``POST /v1/queries?dry_run=true``: what a query would be charged and how accurate it would be, from public
information only — nothing charged, no data read.

The query (text, structured or a SQL statement) is validated and planned exactly as the real one (:mod:`.answers`,
:mod:`.sqlanswers`: the same cached :class:`~.plans.Plan`, the same planning threads and per-querier slots), so
the policy's refusals are the real query's. Then, instead of the charge and the release:

* ``cost``: the plan's charge in the querier's budget units, as decimals (``epsilon``, ``delta``,
  ``fisher_information`` per column), exact rationals under ``exact`` (:func:`privnoise.analysis.dry_run.cost_of`);
* ``accuracy``: at :data:`~.accuracy.LEVEL`, for the noise only, from the components' noise laws and the declared
  bounds, through the library's dry-run radii (:mod:`privnoise.analysis.dry_run`): ``radius`` and ``formula``
  for counts, sums, histograms, group-by counts and sums, identity and Fisher means (in rows or in the column's
  units); for means and variances a ``formula`` in n, the number of rows used, which only the data know (the
  server's sums are of raw values, so h is the largest |bound|; its variance is the sample variance,
  :class:`SampleVarianceRadius`); a quantile's rank radius in rows;
* ``fits``: whether the querier's and the dataset's budgets would admit the charge now (read from the database,
  the charge applied to copies, nothing written), with ``remaining_after`` (the querier's budget view after it), or
  ``refusal`` (``status`` and ``error``, as the real query would get them).

A query the configuration refuses (a policy refusal, 422 for the real query) is a dry run with ``fits: false``
and its ``refusal``; a malformed body or query is 422 as for a real query. No SQL statement is sent to the
dataset's table, and no ledger row is written: a dry run is not a refused query (SECURITY.md, requirement 22,
covers queries that ask for an answer).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any
from urllib.parse import parse_qsl

import orjson
from anyio import to_thread
from pydantic import ValidationError

from ..analysis.dry_run import PUBLIC_ONLY, NoiseRadius, RankRadius, RatioRadius, VarianceRadius, cost_of
from ..dp.accounting import Charge
from ..exceptions import InvalidParameterError
from ..planning.estimates import rank_radius
from ..planning.plan import Cost
from .accuracy import LEVEL, law_of
from .budgets import Refusal, apply_charges, information_floats, querier_view
from .mechanisms import policy_noise
from .plans import Plan
from .quantiles import SENSITIVITY
from .querybody import check_size, dataset_of, spec_of
from .replies import BUSY, JSON, Headers, RefusedQuery, error, error_body, invalid, planners, take_slot
from .service import Service
from .sqlanswers import plan_statement
from .steps import StepQueryRefused

__all__ = ["SampleVarianceRadius", "answer_dry_run", "dry_run_flag", "dry_run_of", "plan_accuracy", "plan_radius"]

_TRUE = ("true", "1")
_FALSE = ("false", "0")


def dry_run_flag(query_string: bytes | str) -> bool | str:
    """The ``dry_run`` parameter of a request's query string: True, False, or the error message for a bad value."""
    raw = query_string.decode("latin-1") if isinstance(query_string, bytes) else query_string
    values = [v for k, v in parse_qsl(raw, keep_blank_values=True) if k == "dry_run"]
    if not values:
        return False
    if len(values) > 1:
        return "`dry_run` of `POST /v1/queries` must be given once; got it " f"{len(values)} times."
    value = values[0].strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    return f"`dry_run` of `POST /v1/queries` must be true or false; got {values[0][:40]!r}."


@dataclass(frozen=True, slots=True)
class SampleVarianceRadius:
    """The radius of the server's variance, the sample variance m/(m − 1)·(Ŝ₂/m − (Ŝ₁/m)²) clipped to
    [0, top]: with R(n) the library's radius of the population variance (:class:`VarianceRadius`, on the raw sums,
    h the largest |bound|), f(x) = x/(x − 1) and r₀ the count's radius, the error is at most
    f(n − r₀)·R(n) + (f(n − r₀) − f(n))·top, and at most top = (hi − lo)²/4."""

    population: VarianceRadius
    top: float

    def radius(self, level: float, n: float | None = None) -> float:
        assert n is not None
        _, _, shift = self.population.terms(level)
        if n - shift <= 1.0:
            return self.top
        f_low, f_n = (n - shift) / (n - shift - 1.0), n / (n - 1.0)
        return min(f_low * self.population.radius(level, n) + (f_low - f_n) * self.top, self.top)

    def formula(self, level: float) -> str:
        second, first, shift = self.population.terms(level)
        h = self.population.half
        return (f"±(f·({_number(second)}/(n − {_number(shift)}) + d·({_number(2.0 * h)} + d)) + (f − n/(n − 1))·"
                f"{_number(self.top)}) with d = {_number(first)}/(n − {_number(shift)}), f = (n − {_number(shift)})/"
                f"(n − {_number(shift)} − 1), {self.population.unit}, for n > {_number(shift + 1.0)} rows used, at "
                f"most {_number(self.top)}")


def _number(value: float) -> str:
    return f"{float(value):.6g}"


def _unit(plan: Plan) -> str:
    column = plan.query.column
    return "value units" if column is None else f"units of {column}"


def plan_radius(plan: Plan) -> Any:
    """The dry-run radius of a plan's answer (:mod:`privnoise.analysis.dry_run`'s, or
    :class:`SampleVarianceRadius`), None when its noise has no (ε, δ) law to state one from."""
    if plan.quantile is not None:
        release = plan.quantile
        radii = [rank_radius(release.epsilon_each, SENSITIVITY, release.candidates) for _ in release.levels]
        return RankRadius(lambda level: [r(level) for r in radii] if len(radii) > 1 else radii[0](level))
    error_law = policy_noise(plan.policy).law
    laws = [law_of(c.noise, error_law) for c in plan.components]
    if not laws or any(law is None for law in laws):
        return None
    kind, column = plan.query.kind, plan.query.column
    keyed = plan.keys is not None or plan.selection is not None
    if kind in ("count", "histogram"):
        return NoiseRadius(laws[0], "rows per cell" if keyed else "rows")  # type: ignore[arg-type]
    if kind in ("mean", "weighted_mean", "variance") and not plan.policy.is_fisher:
        assert column is not None
        lo, hi = plan.spec.columns[column].bounds or (0.0, 0.0)
        # a mean's and a variance's sums are centred (x − c ∈ [−h, h]); a weighted mean's are of raw values
        largest = (hi - lo) / 2.0 if kind in ("mean", "variance") else max(abs(lo), abs(hi))
        per = " per group" if keyed else ""
        if kind == "variance":
            s1, s2, n = laws  # the planner's order: sum, sum of squares, count
            population = VarianceRadius((n, s1, s2), largest, f"squared {_unit(plan)}{per}")  # type: ignore[arg-type]
            return SampleVarianceRadius(population, (hi - lo) ** 2 / 4.0)
        return RatioRadius(laws[0], laws[1], largest, _unit(plan) + per)  # type: ignore[arg-type]
    per = " per cell" if keyed else " per record" if kind == "identity" else ""
    return NoiseRadius(laws[0], _unit(plan) + per)  # type: ignore[arg-type]


def plan_accuracy(plan: Plan) -> dict[str, Any]:
    """The accuracy a plan's answer would state, from its noise laws and declared bounds (module docstring)."""
    radius = plan_radius(plan)
    if radius is None:
        return {"level": LEVEL, "available": False,
                "meaning": "no interval: this policy's noise has no (ε, δ) law to state one from"}
    return _accuracy_dict(radius)


def _accuracy_dict(radius: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"level": LEVEL, "formula": radius.formula(LEVEL), "meaning": PUBLIC_ONLY}
    if not isinstance(radius, RatioRadius | SampleVarianceRadius):
        value = radius.radius(LEVEL)
        out["radius"] = [float(v) for v in value] if isinstance(value, list) else float(value)
    else:
        out["depends_on"] = "n, the number of rows used (only the data know it)"
    return out


def _cost(charges: list[Charge]) -> dict[str, Any]:
    epsilon = sum((c.epsilon or Fraction(0) for c in charges), start=Fraction(0))
    delta = sum((c.delta or Fraction(0) for c in charges), start=Fraction(0))
    out = cost_of(Cost("server", epsilon=epsilon, delta=delta), "epsilon")
    information: dict[str, float] = {}
    for charge in charges:
        for column, value in information_floats(charge).items():
            information[column] = information.get(column, 0.0) + value
    out["fisher_information"] = information
    return out


def _fits(service: Service, querier_id: int, plans: list[Plan]) -> dict[str, Any]:
    """Whether the budgets would admit the plans' charges now: read the stored states, apply the charges to them
    in memory (nothing is written), and say what would be left or why it would be refused."""
    spec = plans[0].spec
    states = service.stored_states(querier_id, spec.name)
    if states is None:
        return {"fits": False, "refusal": {"status": 429, "error": "budget exceeded"}}
    querier, dataset = states
    before = querier_view(querier, spec)
    try:
        apply_charges(dataset, querier, spec, [(p.charge, p.steps) for p in plans])
    except StepQueryRefused as exc:
        return {"fits": False, "refusal": {"status": 422, "error": str(exc)}}
    except Refusal:
        return {"fits": False, "refusal": {"status": 429, "error": "budget exceeded", "budget": before}}
    return {"fits": True, "remaining_after": querier_view(querier, spec)}


def dry_run_of(service: Service, querier_id: int, plans: list[Plan], statement: bool = False) -> dict[str, Any]:
    """The dry run's body for the plans of one query (or of a statement's queries)."""
    out: dict[str, Any] = {"dry_run": True, "dataset": plans[0].spec.name}
    if statement:
        out["cost"] = _cost([p.charge for p in plans])
        out["releases"] = [{"query": p.query_dict, "cost": _cost([p.charge]), "accuracy": plan_accuracy(p),
                            "guarantee": p.guarantee()} for p in plans]
    else:
        plan = plans[0]
        out |= {"query": plan.query_dict, "cost": _cost([plan.charge]), "accuracy": plan_accuracy(plan),
                "guarantee": plan.guarantee()}
    out |= _fits(service, querier_id, plans)
    out["charged"] = "nothing: a dry run charges nothing and reads no data"
    return out


def _refused(refusal: RefusedQuery, name: str | None) -> dict[str, Any]:
    return {"dry_run": True, **({"dataset": name} if name else {}), "fits": False,
            "refusal": {"status": refusal.status, **refusal.body},
            "charged": "nothing: a dry run charges nothing and reads no data"}


def _prepare(service: Service, who: dict[str, Any], body: bytes, parsed: Any) -> Any:
    """In a worker thread: parse and plan as the real query would (no exhausted-querier shortcut: a dry run says
    why it would be refused)."""
    if isinstance(parsed, dict) and parsed.get("sql") is not None:
        planned = plan_statement(service, who, parsed, check_exhausted=False)
        if isinstance(planned, RefusedQuery):
            return planned
        return planned.plans, True
    try:
        spec = spec_of(parsed)
    except ValidationError as exc:
        return invalid(exc)
    except InvalidParameterError as exc:
        return RefusedQuery(422, error_body(exc), "syntax", str(exc))
    name = dataset_of(service, spec)
    try:
        check_size(service, spec)
        return [service.cached(("body", body), lambda: service.plan(spec))], False
    except ValidationError as exc:
        return invalid(exc)
    except InvalidParameterError as exc:
        return RefusedQuery(422, error_body(exc), "policy", str(exc), name)


async def answer_dry_run(service: Service, who: dict[str, Any], body: bytes, parsed: Any) -> tuple[int, bytes, Headers]:
    """(status, JSON bytes, headers) of a dry run (module docstring); ``who`` is a querier."""
    if not await take_slot(service, who["id"]):
        return error(429, {"error": BUSY + "; try again"}, [(b"retry-after", b"1")])
    try:
        prepared = await to_thread.run_sync(_prepare, service, who, body, parsed, limiter=planners())
    finally:
        service.slots.give(who["id"])
    if isinstance(prepared, RefusedQuery):
        if prepared.category == "policy":
            return 200, orjson.dumps(_refused(prepared, prepared.dataset)), list(JSON)
        return prepared.response()
    plans, statement = prepared
    payload = await to_thread.run_sync(dry_run_of, service, who["id"], plans, statement)
    return 200, orjson.dumps(payload), list(JSON)
