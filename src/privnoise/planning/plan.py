"""The plan of a query and its execution: every interface builds a :class:`Plan`, :func:`execute` releases it.

A plan is the noisy components of one query (:class:`~privnoise.planning.component.Component`: an aggregate, its
sensitivity under the plan's neighbours, its calibrated noise and its privacy event), the neighbours it is stated
for (:mod:`privnoise.core.adjacency`), what the whole query costs (:class:`Cost`, the events an accountant
composes) and how the noisy components become the answer (``finish``, post-processing only).
:func:`execute` draws every component's noise on its exact aggregate, in the plan's order, from one generator and
returns one :class:`~privnoise.Release`: value, keys, the guarantee the plan states and the accuracy of its noise.

The analyst's :class:`~privnoise.Session` builds its plans here for every query; the sensitivities it uses are
those of the plan's adjacency.

With a privacy unit, neighbouring databases differ by all the rows of one unit, of which at most k are kept
(:func:`~privnoise.analysis.backend.bound_contributions`); values are clamped to the declared bounds [low, high],
h = (high − low)/2 and c = (low + high)/2. The sensitivities (ℓ1 for Laplace noise, ℓ2 for Gaussian noise) are
then:

===========================  ====================  ==========================================================
aggregate                    ℓ1 (= ℓ2 for scalars)  why
===========================  ====================  ==========================================================
count of rows                k                     k rows added or removed
sum of x                     k·max(|low|, |high|)  each row adds a value in [low, high]
sum of (x − c)               k·h                   the centred value lies in [−h, h]
sum of (x − c)²              k·h²                  its square lies in [0, h²]
histogram / group counts     k (ℓ2 ≤ k)            the k rows fall in at most k cells, one each
quantile score               k·max(q, 1 − q)       ``privnoise.analysis.quantiles``
category counts (top-k)      k in every count      monotone scores
===========================  ====================  ==========================================================

One record replaced (the query server's neighbours, and ``Session(neighbours="replaced")``) gives those of
:class:`~privnoise.core.RecordReplaced`. A query's budget (ε, or ρ in the Gaussian family) is split evenly over
its parts, as the query server does:
mean = sum of (x − c) and count at half each; variance = count, Σ(x − c), Σ(x − c)² at a third each; a group-by
sum or mean with unknown keys also spends half on the count that selects the keys. The value is post-processing:
mean = c + Ŝ/N̂ and variance = Ŝ₂/N̂ − (Ŝ₁/N̂)², clipped to their possible ranges (reported as ``clamped``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..core.adjacency import Adjacency, Norm, UnitAddedOrRemoved
from ..dp.events import PrivacyEvent, PureEvent, SelectionEvent
from ..dp.families import NoiseFamily
from ..dp.profile import profile_of
from ..exceptions import InvalidParameterError
from ..guarantees import Guarantee
from ..mechanisms import Noise
from ..results import Release
from .component import Component, calibrate

__all__ = ["Cost", "Finish", "Plan", "execute", "finished", "group_plan", "split"]

#: How a plan's noisy components become its answer: the Release's fields, ``value`` among them (post-processing).
Finish = Callable[[dict[str, NDArray[np.float64]]], dict[str, Any]]


def split(share: Fraction, parts: int) -> Fraction:
    """An even part of a budget (exact)."""
    return share / parts


@dataclass(frozen=True, slots=True)
class Cost:
    """What one query spends (from public parameters only).

    ``epsilon`` and ``delta`` are the (ε, δ) of the query for the accountants of ε; ``rho`` and ``delta`` its
    (approximate) zCDP for those of ρ; ``events`` the privacy events of its parts, which the numerical accountants
    (PLD, RDP) compose.
    """

    label: str
    epsilon: Fraction = Fraction(0)
    delta: Fraction = Fraction(0)
    rho: Fraction = Fraction(0)
    events: tuple[PrivacyEvent, ...] = ()
    gaussian: bool = False  # every part is Gaussian noise (zCDP then converts through the exact Gaussian profile)


@dataclass
class Plan:
    """The parts of one query: calibrated components, their privacy events and what the whole query costs.

    ``adjacency`` is the neighbours every sensitivity of the plan is taken under and its guarantee is stated for
    (``stated``: the same neighbours in the interface's own words, e.g. naming the privacy unit); ``finish`` turns
    the noisy components into the answer (:func:`execute`). ``family`` calibrates the components (:meth:`add`) and
    states the guarantee; a plan of noise no family calibrated (the query server's Fisher designs, an owner's own
    noise) has none and states ``statement``, the guarantee its builder computed.
    """

    label: str
    family: NoiseFamily | None
    adjacency: Adjacency = field(default_factory=lambda: UnitAddedOrRemoved(1))
    components: dict[str, Component[Noise]] = field(default_factory=dict)
    events: list[PrivacyEvent] = field(default_factory=list)
    price: Fraction = Fraction(0)
    delta: Fraction = Fraction(0)
    gaussian: bool = True  # every part's privacy loss is that of the continuous Gaussian mechanism
    stated: str | None = None
    finish: Finish | None = None
    statement: Guarantee | None = None

    @property
    def calibrating(self) -> NoiseFamily:
        """The family that calibrates the plan's components and states its guarantee."""
        if self.family is None:
            raise InvalidParameterError(f"the plan of {self.label!r} holds noise no family calibrated: it has no family.")
        return self.family

    @property
    def norm(self) -> Norm:
        """The norm its sensitivities are measured in: the family's (ℓ1 for Laplace, ℓ2 for Gaussian noise)."""
        return self.calibrating.norm

    def add(self, name: str, sensitivity: float, share: Fraction, *, integer: bool = False, vector: bool = False,
            unit_cells: bool = True, discrete: bool = False) -> Component[Noise]:
        """Calibrate a component on ``share`` and record its privacy event.

        ``vector`` components (groups, cells) are composed by the numerical accountants as a worst-case pair of
        their share, unless one unit moves a single coordinate (``unit_cells`` False: k = 1) or the family's scalar
        event is exact for vectors (Gaussian noise at ℓ2 sensitivity), when the family's own event is exact.
        """
        component = calibrate(name, self.calibrating, sensitivity, share, integer=integer, discrete=discrete)
        self.components[name] = component
        self.events.append(component.event(scalar=not (vector and unit_cells)))
        self.gaussian = self.gaussian and profile_of(component.noise).gaussian_curve
        return component

    def selection(self, epsilon: float, *, bounded_range: bool = True) -> None:
        """Record an exponential-mechanism (or report-noisy-max) part of pure ε: ε²/8-zCDP when bounded-range,
        ε²/2 otherwise (families of ρ: within the query's price by the family's ``selection_epsilon``)."""
        self.gaussian = False
        self.events.append(SelectionEvent(epsilon, bounded_range))

    def guarantee(self) -> Guarantee:
        """What the plan's release satisfies: its price (and δ) in the family's notion, for its neighbours (the
        ``statement`` of a plan without a family)."""
        if self.statement is not None:
            return self.statement
        return self.calibrating.guarantee(self.price, self.delta, self.stated or self.adjacency.describe())

    def cost(self) -> Cost:
        """What the query spends: in the family's currency, with its parts' events. A plan without a family (the
        query server's) spends its declared ``price`` in ε and ``delta``: one (ε, δ) event, or the events its
        builder recorded (the selections of a quantile)."""
        if self.family is None:
            declared = (PureEvent(float(self.price), float(self.delta)),) if self.price or self.delta else ()
            return Cost(self.label, epsilon=self.price, delta=self.delta, events=tuple(self.events) or declared)
        if self.calibrating.currency == "epsilon":
            # With partition selection the whole query is one (ε, δ)-DP release (dp.partition), so composed as such.
            events = (PureEvent(float(self.price), float(self.delta)),) if self.delta else tuple(self.events)
            return Cost(self.label, epsilon=self.price, delta=self.delta, events=events)
        return Cost(self.label, rho=self.price, delta=self.delta, events=tuple(self.events),
                    gaussian=self.gaussian and not self.delta)


def group_plan(plan: Plan, *, unknown_keys: bool, delta: Fraction, count_share: Fraction, integer: bool) -> tuple[Component[Noise], int | None]:
    """The count component of a group-by and, with unknown keys, the partition-selection threshold.

    Declared keys: the counts' sensitivity is that of a vector of cells under the plan's neighbours (k for a
    unit of k rows; 2 in ℓ1, √2 in ℓ2 for a record replaced). Keys drawn from the data: the threshold rules are stated for
    units added or removed, so a plan whose rows may be replaced must declare its keys.

    Families of ε: the count noise uses ε₀ = ε_count − log(1/(1 − δ)) (:func:`~privnoise.dp.partition.pure_budget_share`)
    so that the query is (ε, δ)-DP; families of ρ: the release is δ-approximate ρ-zCDP. A family without a
    threshold rule cannot select keys: the keys must be declared.
    """
    neighbours = plan.adjacency
    if not unknown_keys:
        return plan.add("count", neighbours.cells(1.0, 1.0, plan.norm), count_share, integer=integer, vector=True,
                        unit_cells=neighbours.several_cells, discrete=integer), None
    if not isinstance(neighbours, UnitAddedOrRemoved):
        raise InvalidParameterError(
            f"{plan.label} with keys drawn from the data selects them by a noisy count whose threshold is stated for "
            f"rows added or removed; this plan's neighbours are {neighbours.describe()}: declare the keys."
        )
    k = neighbours.k
    family = plan.calibrating
    if family.threshold is None:
        raise InvalidParameterError(
            f"{plan.label} with keys drawn from the data needs a partition-selection threshold, which noise family "
            f"{family.name!r} does not state: declare the keys."
        )
    plan.delta = delta
    if family.currency == "epsilon":
        component = calibrate("count", family, float(k), family.selection_share(count_share, delta), integer=True)
        plan.components["count"] = component
    else:
        component = plan.add("count", float(k), count_share, integer=True, vector=True)
    assert component.scale is not None  # a family's calibration states its scale
    return component, family.threshold(component.scale, float(delta), k)




def finished(plan: Plan, noisy: Mapping[str, Any], *, query: dict[str, Any], **fields: Any) -> Release:
    """The release of ``plan`` from its ``noisy`` components (drawn by :func:`execute`, or where the noise was
    drawn elsewhere: on a cluster's workers, by a partition selection that keeps some cells, by the exponential
    mechanism): ``plan.finish`` (post-processing only), the plan's guarantee and the noise of every component."""
    if plan.finish is None:
        raise InvalidParameterError(f"the plan of {plan.label!r} has no `finish`: it cannot state an answer.")
    answer = plan.finish(dict(noisy))
    return Release(guarantee=plan.guarantee(), query=query, noise=[c.describe() for c in plan.components.values()],
                   **fields, **answer)


def execute(plan: Plan, aggregates: Mapping[str, ArrayLike], rng: np.random.Generator, *, query: dict[str, Any],
            noisy_out: dict[str, Any] | None = None, **fields: Any) -> Release:
    """Release ``plan`` on its exact ``aggregates`` (one per component, by name): draw every component's noise in
    the plan's order from ``rng``, finish the noisy parts into the answer (``plan.finish``, post-processing) and
    state the plan's guarantee, the noise of every component and the accuracy ``finish`` gives
    (:func:`finished`). ``noisy_out`` receives the noisy components, for statistics derived from them later.

    The budget is charged before (:meth:`Plan.cost`), by whoever holds the accountant; nothing here reads data
    beyond the aggregates.

    Examples
    --------
    >>> from fractions import Fraction
    >>> import numpy as np
    >>> from privnoise.dp.families import LAPLACE
    >>> plan = Plan("count", LAPLACE, UnitAddedOrRemoved(1), price=Fraction(1))
    >>> count = plan.add("count", plan.adjacency.count(), plan.price, integer=True, discrete=True)
    >>> plan.finish = lambda noisy: {"value": int(max(noisy["count"][0], 0))}
    >>> release = execute(plan, {"count": [120]}, np.random.default_rng(0), query={"query": "count"})
    >>> release.guarantee.epsilon, isinstance(release.value, int)
    (1.0, True)
    """
    missing = [name for name in plan.components if name not in aggregates]
    if missing:
        raise InvalidParameterError(f"`aggregates` of `execute` has no value for component(s) {missing} of the plan.")
    if plan.finish is None:
        raise InvalidParameterError(f"the plan of {plan.label!r} has no `finish`: it cannot state an answer.")
    noisy = {name: c.add(aggregates[name], rng) for name, c in plan.components.items()}
    if noisy_out is not None:
        noisy_out.update(noisy)
    return finished(plan, noisy, query=query, **fields)
