"""Budgets: exact (ε, δ) in rationals and Fisher information as an accumulated per-record bound.

* DP: each release charges its declared (ε, δ) as :class:`fractions.Fraction` values (stored as text "p/q")
  and charges compose by basic composition, Σε_i and Σδ_i, through the exact-rational accountant's
  :func:`~privnoise.dp.rational_accountant.compose`: ten charges of 0.1 spend exactly 1.
* Fisher information adds over independent releases (Farokhi & Sandberg, Proposition 1), so after any sequence
  of releases record i of a column carries Σ_k 𝓘^{(k)}_ii and, with every other record known, no unbiased
  estimate of it has variance below 1/Σ_k 𝓘^{(k)}_ii (eq. (7)). The server's releases are unfiltered linear
  ones, whose per-record information is the same for every record (c_i² 𝓘_w with c_i = a or a/n); it stores,
  per column, the accumulated max_i 𝓘_ii — an upper bound on every record's information — and refuses a release
  that would push 1/max below the floor.
* A querier's budget sits under the dataset's global budget, which every querier's charges also spend, so
  colluding queriers together never exceed it (their information adds too).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..dp.rational_accountant import compose
from .config import DatasetSpec

__all__ = ["Charge", "Refusal", "apply_charge", "fraction", "querier_view", "text"]


def fraction(value: str) -> Fraction:
    return Fraction(value)


def text(q: Fraction) -> str:
    """Exact text of a rational: "1/10", "1", "0"."""
    return str(q)


@dataclass(frozen=True, slots=True)
class Charge:
    epsilon: Fraction = Fraction(0)
    delta: Fraction = Fraction(0)
    fisher: dict[str, float] = field(default_factory=dict)  # column → per-record information added


class Refusal(Exception):
    """The release would exceed a budget (querier's or dataset's); nothing was charged."""


def _info(row: Any) -> dict[str, float]:
    return {k: float(v) for k, v in json.loads(row["fisher_information"]).items()}


def apply_charge(
    dataset_row: Any, budget_row: Any, spec: DatasetSpec, charge: Charge
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The new values of the dataset and budget rows after ``charge``, or :class:`Refusal`."""
    spend = (charge.epsilon, charge.delta)
    querier = compose(
        (fraction(budget_row["spent_epsilon"]), fraction(budget_row["spent_delta"])),
        spend,
        (fraction(budget_row["epsilon"]), fraction(budget_row["delta"])),
    )
    if querier is None:
        raise Refusal("querier")
    dataset = compose(
        (fraction(dataset_row["spent_epsilon"]), fraction(dataset_row["spent_delta"])), spend, (spec.epsilon, spec.delta)
    )
    if dataset is None:
        raise Refusal("dataset")
    (q_eps, q_delta), (d_eps, d_delta) = querier, dataset
    q_info, d_info = _info(budget_row), _info(dataset_row)
    for column, added in charge.fisher.items():
        # Information adds over independent releases whatever their policy, so every release is recorded;
        # a column without a declared floor is tracked (its record bound is reported) but never refused.
        q_info[column] = q_info.get(column, 0.0) + added
        d_info[column] = d_info.get(column, 0.0) + added
        floor = spec.columns[column].fisher_floor
        if floor is None:
            continue
        q_floor = budget_row["fisher_floor"] if budget_row["fisher_floor"] is not None else floor
        if q_info[column] > 1.0 / q_floor:
            raise Refusal("querier")
        if d_info[column] > 1.0 / floor:
            raise Refusal("dataset")
    return (
        {
            "spent_epsilon": text(d_eps),
            "spent_delta": text(d_delta),
            "fisher_information": json.dumps(d_info),
        },
        {
            "spent_epsilon": text(q_eps),
            "spent_delta": text(q_delta),
            "fisher_information": json.dumps(q_info),
        },
    )


def _amount(total: Fraction, spent: Fraction) -> dict[str, Any]:
    rest = max(total - spent, Fraction(0))
    return {
        "budget": text(total),
        "spent": text(spent),
        "remaining": text(rest),
        "remaining_float": float(rest),
    }


def querier_view(budget_row: Any, spec: DatasetSpec) -> dict[str, Any]:
    """What a querier may know of its own budget on one dataset (never anything of other queriers)."""
    info = _info(budget_row)
    fisher = {}
    for name, col in spec.columns.items():
        if col.type != "number" or col.fisher_floor is None:
            continue
        floor = budget_row["fisher_floor"] if budget_row["fisher_floor"] is not None else col.fisher_floor
        total = info.get(name, 0.0)
        fisher[name] = {
            "floor": floor,
            "record_bound": None if total <= 0 else 1.0 / total,  # None: no information released yet (∞)
            "information": total,
            "remaining_information": max(1.0 / floor - total, 0.0),
        }
    out: dict[str, Any] = {
        "epsilon": _amount(fraction(budget_row["epsilon"]), fraction(budget_row["spent_epsilon"])),
        "delta": _amount(fraction(budget_row["delta"]), fraction(budget_row["spent_delta"])),
    }
    if fisher:
        out["fisher"] = fisher
    return out


def dataset_view(dataset_row: Any, spec: DatasetSpec) -> dict[str, Any]:
    """The global budget of a dataset (for the owner)."""
    info = _info(dataset_row)
    return {
        "epsilon": _amount(spec.epsilon, fraction(dataset_row["spent_epsilon"])),
        "delta": _amount(spec.delta, fraction(dataset_row["spent_delta"])),
        "fisher": {
            c: {"floor": spec.columns[c].fisher_floor, "record_bound": (1.0 / v if v > 0 else None)}
            for c, v in info.items()
        },
    }


def is_finite(value: Any) -> bool:
    try:
        return all(math.isfinite(float(v)) for v in (value if isinstance(value, list) else [value]))
    except (TypeError, ValueError):
        return False
