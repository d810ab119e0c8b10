"""A server plan and what it states: the components of an answer, their Fisher information and its guarantee.

A :class:`Plan` is everything an answer needs besides the data (:mod:`.planner` makes it from the request and the
configuration): the core's plan (:class:`privnoise.planning.Plan`: components, each holding its policy's hardened
noise, 𝓘_w of that noise and its slope in each column, the finish that makes them the answer, and the guarantee),
the statement that computes their exact aggregates, and the charge. An answer is that core plan executed
(:func:`privnoise.planning.execute`) into a :class:`~privnoise.Release`, which :mod:`.answers` serialises. Every
component adds Fisher information about the records, per column Σ slope² 𝓘_w (:func:`information_of`, computed
in rationals and rounded up: never below the information released), and the answer states its guarantee
(:func:`plan_guarantee`): the Fisher information of Fisher policies, the (ε, δ) charged by differential-privacy
policies.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from sqlalchemy.sql import Select

from ..dp.accounting import Charge
from ..exceptions import InvalidParameterError
from ..guarantees import DifferentialPrivacyGuarantee, Guarantee
from ..mechanisms.hardening import HardenedMechanism
from ..planning import Plan as CorePlan
from ..planning import execute, finished
from ..planning.component import Component
from ..random import default_rng
from ..results import Release
from .accuracy import Accuracy, stated_accuracy
from .budgets import information_floats, text
from .config import DatasetSpec, PolicySpec
from .mechanisms import describe_noise, policy_noise
from .quantiles import QuantileRelease
from .querylang import QuerySpec
from .vectors import PartitionSelection

__all__ = ["Plan", "RecordInformation", "core_plan", "information_of", "plan_guarantee", "serialised", "statement_of"]


@dataclass(frozen=True, slots=True, eq=False)
class RecordInformation(Guarantee):
    """Fisher-information privacy of one answer, per record (Farokhi & Sandberg, Proposition 1, eq. (7)): per
    column, the Fisher information the answer carries about any one record's value, so that any unbiased estimate
    of that value, by someone who knows every other record, has variance ≥ 1/𝓘."""

    information: dict[str, float]
    notion: str = field(default="fisher-information", init=False)

    def as_dict(self) -> dict[str, Any]:
        return {"notion": self.notion, "per_record_information": dict(self.information)}

    def summary(self) -> str:
        return "Fisher information per record, per column: " + ", ".join(
            f"{c} {v:g}" for c, v in self.information.items())


def statement_of(policy: PolicySpec, charge: Charge, identity: bool) -> Guarantee:
    """The guarantee an answer states: the Fisher information per record of a Fisher policy, the (ε, δ) charged
    by a differential-privacy policy, for one record added, removed or replaced (replaced, for an identity
    release, whose number of records is public)."""
    if policy.is_fisher:
        return RecordInformation(information_floats(charge))
    adjacency = "one record replaced" if identity else "one record added, removed or replaced"
    return DifferentialPrivacyGuarantee(float(charge.epsilon or 0), float(charge.delta or 0), adjacency)


def core_plan(label: str, components: list[Component[HardenedMechanism]], combine: Callable[[list[Any]], Any],
              accuracy: Accuracy | None, policy: PolicySpec, *, delta: Fraction = Fraction(0),
              information: dict[str, Fraction] | None = None, identity: bool = False,
              selections: Sequence[float] = ()) -> tuple[CorePlan, Charge]:
    """The core plan of an answer and what it charges.

    The plan holds the components by name, their finish (``combine``, then the accuracy fields of the noisy
    components) and the guarantee it states; the names are the parts' (:mod:`.aggregates`), one each. Its price is
    the policy's ε (none for a Fisher policy) with ``delta``, and the exponential-mechanism ``selections`` of a
    quantile are its events. The charge is the plan's cost (:meth:`privnoise.planning.Plan.cost`), with the
    Fisher ``information`` per record beside it; the guarantee is stated from that charge (:func:`statement_of`).
    """
    parts = {c.name: c for c in components}
    if len(parts) != len(components):
        raise ValueError(f"the components of a {label} plan must have distinct names; got {[c.name for c in components]}.")
    names = list(parts)

    def finish(noisy: dict[str, Any]) -> dict[str, Any]:
        values = [noisy[n] for n in names] if names else noisy[label]  # a quantile: the mechanism's choice
        value = combine(values)
        value = value.tolist() if isinstance(value, np.ndarray) else value if isinstance(value, list) else float(value)
        return {"value": value, **({} if accuracy is None else accuracy(values))}

    price = Fraction(0) if policy.is_fisher or policy.epsilon is None else policy.epsilon
    core = CorePlan(label, None, components=dict(parts), finish=finish, price=price,  # type: ignore[arg-type]
                    delta=delta)
    for epsilon in selections:
        core.selection(epsilon)
    cost = core.cost()
    charge = Charge(cost.epsilon, cost.delta, label=policy.mechanism, information=dict(information or {}),
                    events=cost.events)
    core.statement = statement_of(policy, charge, identity)
    return core, charge


@dataclass(frozen=True)
class Plan:
    """Everything an answer needs besides the data; immutable, cached per query text."""

    spec: DatasetSpec
    query: QuerySpec
    policy: PolicySpec
    components: list[Component[HardenedMechanism]]
    combine: Callable[[list[Any]], Any]
    charge: Charge
    statement: Select[Any]
    sql: str  # the statement compiled once for the database, and its parameters
    parameters: Any
    identity: bool
    inline: bool  # small enough to release in the event loop
    query_dict: dict[str, Any]
    records: int | None  # the number of records the plan was made for (Fisher mean, identity), else None
    ledger_query: str
    ledger_information: str
    guarantee_base: dict[str, Any]
    charged: dict[str, Any]
    core: CorePlan  # the core plan the answer is executed by (core_plan)
    accuracy: Accuracy | None = None  # noisy components → the answer's interval or rank accuracy
    keys: tuple[Any, ...] | None = None  # the public cells of a histogram or group-by answer
    quantile: QuantileRelease | None = None  # the exponential mechanism of a quantile query
    selection: PartitionSelection | None = None  # a group-by's keys chosen by a noisy count (keys not declared)
    steps: tuple[tuple[str, str], ...] = ()  # step constructs on floored columns that allow them (.steps)

    def execute(self, aggregates: list[Any], noisy_out: dict[str, Any] | None = None) -> Release:
        """The answer on the exact ``aggregates`` (one per component, in order): the core plan executed
        (:func:`privnoise.planning.execute`) with the per-thread cryptographic generator."""
        core = self.core
        return execute(core, dict(zip(core.components, aggregates, strict=True)), default_rng(),
                       query=self.query_dict, noisy_out=noisy_out, keys=self.public_keys)

    def finished(self, noisy: list[Any], **fields: Any) -> Release:
        """The answer from noisy components drawn elsewhere (on a cluster's workers, by a partition selection, by
        the exponential mechanism of a quantile): the core plan's finish (:func:`privnoise.planning.finished`)."""
        core = self.core
        names = list(core.components) or [core.label]
        fields.setdefault("keys", self.public_keys)
        return finished(core, dict(zip(names, noisy, strict=True)), query=self.query_dict, **fields)

    @property
    def public_keys(self) -> list[Any] | None:
        """The declared cells of a histogram or group-by (None otherwise, or when a selection chooses them)."""
        return None if self.keys is None else [list(k) if isinstance(k, tuple) else k for k in self.keys]

    def stated_accuracy(self, noisy: list[Any]) -> dict[str, Any]:
        """The ``accuracy`` object an answer with these noisy components states (:func:`.accuracy.stated_accuracy`)."""
        if self.accuracy is None:
            return {}
        return stated_accuracy(self.accuracy(noisy))

    def split(self, flat: list[float]) -> list[Any]:
        """The statement's flat row of component values, one entry (a float or a vector) per component."""
        out: list[Any] = []
        i = 0
        for c in self.components:
            out.append(flat[i] if c.dim == 1 else np.array(flat[i : i + c.dim]))
            i += c.dim
        return out

    def guarantee(self, after: dict[str, Any] | None = None) -> dict[str, Any]:
        out = dict(self.guarantee_base)
        if after is not None and "fisher" in after:
            out["record_bound_after"] = {c: v["record_bound"] for c, v in after["fisher"].items()}
        return out


def serialised(release: Release) -> dict[str, Any]:
    """What an answer's JSON states of its :class:`~privnoise.Release`: the value, the keys it is aligned with (a
    histogram's or group-by's cells, or those a partition selection released) and the ``accuracy`` at
    :data:`.accuracy.LEVEL` (the guarantee and the charge come from the plan, in exact rationals)."""
    out: dict[str, Any] = {"value": release.value}
    if release.keys is not None:
        out["keys"] = [list(k) if isinstance(k, tuple) else k for k in release.keys]
    out["accuracy"] = stated_accuracy(release)
    return out


def information_of(components: list[Component[HardenedMechanism]]) -> dict[str, Fraction]:
    """Per column, Σ over components of slope² 𝓘_w, each term the smallest double ≥ its exact value (computed in
    rationals, then rounded up: the charge is never below the information released)."""
    out: dict[str, Fraction] = {}
    for component in components:
        information = component.information
        if information is None:
            continue
        for column, slope in component.slopes.items():
            if slope == 0.0:
                continue
            exact = Fraction(slope) ** 2 * Fraction(information)
            try:
                info = float(exact)
            except OverflowError:
                info = math.inf
            if not math.isfinite(info) or info <= 0.0:
                raise InvalidParameterError(
                    f"the Fisher information of `query` about column {column!r} would be {info:g}; it must be "
                    "finite and > 0 (a coefficient is too extreme for the declared bounds and the policy)."
                )
            if Fraction(info) < exact:
                info = math.nextafter(info, math.inf)
            out[column] = out.get(column, Fraction(0)) + Fraction(info)
    return out


def plan_guarantee(
    policy: PolicySpec, components: list[Component[HardenedMechanism]], charge: Charge, identity: bool
) -> dict[str, Any]:
    """What an answer states of its privacy: its guarantee (:func:`statement_of`: Fisher information per record, or
    the (ε, δ) charged and the adjacency), in exact rationals too, with the noise of every component."""
    noise = [describe_noise(c.noise) for c in components]
    info = information_floats(charge)
    kind = policy_noise(policy)
    out = statement_of(policy, charge, identity).as_dict()
    if policy.is_fisher:
        out.update({
            "record_bound_of_this_release": {c: (1.0 / v if v > 0 else None) for c, v in info.items()},
            "noise": noise,
            "note": kind.note,
        })
        if kind.describe is not None:
            out["design"] = kind.describe(policy)
        return out
    out.update({
        "epsilon_exact": text(charge.epsilon),
        "delta_exact": text(charge.delta),
        "composition": f"{len(components)} hardened release(s), (ε, δ) split evenly",
        "noise": noise,
        "per_record_information": info,
    })
    return out
