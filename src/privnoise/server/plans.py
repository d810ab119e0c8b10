"""A server plan and what it states: the components of an answer, their Fisher information and its guarantee.

A :class:`Plan` is everything an answer needs besides the data (:mod:`.planner` makes it from the request and the
configuration): the core's components (:class:`~privnoise.planning.Component`, each holding its policy's hardened
noise, 𝓘_w of that noise and its slope in each column), the statement that computes their exact aggregates, and
the charge. Every component adds Fisher information about the records, per column Σ slope² 𝓘_w
(:func:`information_of`, computed in rationals and rounded up: never below the information released), and the
answer states its guarantee (:func:`plan_guarantee`): the Fisher information of Fisher policies, the (ε, δ)
charged by differential-privacy policies.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from sqlalchemy.sql import Select

from ..dp.accounting import Charge
from ..dp.hardening import HardenedMechanism
from ..exceptions import InvalidParameterError
from ..planning.component import Component
from .accuracy import Accuracy
from .budgets import information_floats, text
from .config import DatasetSpec, PolicySpec
from .mechanisms import describe_noise, policy_noise
from .quantiles import QuantileRelease
from .querylang import QuerySpec
from .vectors import PartitionSelection

__all__ = ["Plan", "information_of", "plan_guarantee"]


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
    accuracy: Accuracy | None = None  # noisy components → the answer's interval or rank accuracy
    keys: tuple[Any, ...] | None = None  # the public cells of a histogram or group-by answer
    quantile: QuantileRelease | None = None  # the exponential mechanism of a quantile query
    selection: PartitionSelection | None = None  # a group-by's keys chosen by a noisy count (keys not declared)
    steps: tuple[tuple[str, str], ...] = ()  # step constructs on floored columns that allow them (.steps)

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
    """What an answer states of its privacy: Fisher information per record (Fisher policies), or the (ε, δ) charged
    and the adjacency (differential-privacy policies), with the noise of every component."""
    noise = [describe_noise(c.noise) for c in components]
    info = information_floats(charge)
    kind = policy_noise(policy)
    if policy.is_fisher:
        out = {
            "notion": "fisher-information",
            "per_record_information": info,
            "record_bound_of_this_release": {c: (1.0 / v if v > 0 else None) for c, v in info.items()},
            "noise": noise,
            "note": kind.note,
        }
        if kind.describe is not None:
            out["design"] = kind.describe(policy)
        return out
    return {
        "notion": "differential-privacy",
        "epsilon": float(charge.epsilon or 0),
        "delta": float(charge.delta or 0),
        "epsilon_exact": text(charge.epsilon),
        "delta_exact": text(charge.delta),
        "adjacency": "one record replaced" if identity else "one record added, removed or replaced",
        "composition": f"{len(components)} hardened release(s), (ε, δ) split evenly",
        "noise": noise,
        "per_record_information": info,
    }
