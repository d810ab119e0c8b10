"""How a dataset's (ε, δ) charges compose: basic composition, or the Rényi filter (``composition = "renyi"``).

:func:`within` is the rule every budget check of the server applies (a charge, a dry run, whether a querier is out of
budget); :func:`charged_parts` the parts of a charge the filter composes one by one; :func:`composed_view` what the
budget views state under the filter. The filter and its proof are in :mod:`privnoise.dp.renyi_filter`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from ..dp.accounting import Charge
from ..dp.events import UnsupportedEvent
from ..dp.renyi_filter import RenyiState, composed_epsilon, fits
from .datasets import DatasetSpec

__all__ = ["admits", "charged_parts", "composed_view", "within"]


def _text(q: Fraction) -> str:
    return str(q)


def charged_parts(charge: Charge) -> list[tuple[Fraction, Fraction]]:
    """The (ε, δ) parts of a charge that the Rényi filter composes one by one: its events' when there are several
    pure ones that account for its whole ε (a quantile's selections, each ε rounded up to the next double),
    else the charge's own (ε, δ) as one part."""
    whole = [(charge.epsilon or Fraction(0), charge.delta or Fraction(0))]
    if len(charge.events) < 2:
        return whole
    try:
        pairs = [event.dp_parameters() for event in charge.events]
    except UnsupportedEvent:
        return whole
    if any(delta for _, delta in pairs):
        return whole
    parts = [(Fraction(math.nextafter(e, math.inf)) if e > 0 else Fraction(0), Fraction(0)) for e, _ in pairs]
    return parts if sum(e for e, _ in parts) >= whole[0][0] else whole


def within(state: RenyiState | None, spent: tuple[Fraction, Fraction], budget: tuple[Fraction, Fraction],
           spec: DatasetSpec) -> bool:
    """Whether (Σε, Σδ) = ``spent``, with the Rényi sums ``state`` (covering those charges), is within ``budget``
    by the dataset's composition (basic, or the Rényi filter)."""
    if spec.composition != "renyi":
        return spent[0] <= budget[0] and spent[1] <= budget[1]
    return fits(state or RenyiState.empty(), spent_epsilon=spent[0], spent_delta=spent[1], budget=budget,
                share=spec.renyi_share)


def composed_view(state: RenyiState | None, spent: tuple[Fraction, Fraction], budget: tuple[Fraction, Fraction],
              spec: DatasetSpec) -> dict[str, Any]:
    """The ε the charges so far are stated at, at the budget's δ, under the Rényi filter (for the views)."""
    tail = spec.renyi_share * budget[1]
    renyi = composed_epsilon((state or RenyiState.empty()).caught_up(spent[0]), tail)
    basic = float(spent[0]) if spent[1] <= budget[1] - tail else math.inf
    best = min(basic, renyi)
    return {
        "rule": "renyi",
        "epsilon": None if math.isinf(best) else best,
        "delta": _text(budget[1]),
        "tail_delta": _text(tail),
        "within_budget": within(state, spent, budget, spec) if spent[0] or spent[1] else True,
    }


def admits(state: RenyiState | None, spent: tuple[Fraction, Fraction], charge: tuple[Fraction, Fraction],
           budget: tuple[Fraction, Fraction], spec: DatasetSpec) -> bool:
    """Whether one more charge of (ε, δ) = ``charge`` (one part) fits ``budget`` after ``spent`` (with the Rényi
    sums ``state``) by the dataset's composition."""
    after = (spent[0] + charge[0], spent[1] + charge[1])
    if spec.composition != "renyi":
        return within(None, after, budget, spec)
    return within((state or RenyiState.empty()).caught_up(spent[0]).plus([charge]), after, budget, spec)
