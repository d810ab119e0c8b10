"""Budgets: exact (ε, δ) and exact Fisher information, per querier and per dataset.

* DP: each release charges its declared (ε, δ) as :class:`fractions.Fraction` values (stored as text "p/q")
  and charges compose by basic composition, Σε_i and Σδ_i (the pure/approximate modes of
  :class:`privnoise.dp.accounting.PrivacyAccountant`): ten charges of 0.1 spend exactly 1. A dataset with
  ``composition = "renyi"`` composes its budgets (its own and each querier's on it) by the Rényi filter of
  :mod:`privnoise.dp.renyi_filter` instead, whose state (Rényi divergence sums per order, exact integers in units
  of 2⁻⁴⁸) is stored beside Σε and Σδ; the filter accepts whatever basic composition within its δ share accepts,
  and more.
* Fisher information adds over independent releases (Farokhi & Sandberg, Proposition 1), so after any sequence
  of releases record i of a column carries Σ_k 𝓘^{(k)}_ii and, with every other record known, no unbiased
  estimate of it has variance below 1/Σ_k 𝓘^{(k)}_ii (eq. (7)). The server's releases are linear ones whose
  per-record information is at most slope² 𝓘_w; it stores, per column, the accumulated bound as an exact
  rational (the sum of the exact values of the per-release floats, stored as "p/q") and refuses a release
  that would push 1/total below the floor, compared exactly: total · floor ≤ 1, the floor read as the decimal
  it was written as (a floor of 0.01 allows exactly 100 units of information).
* A querier's budget sits under the dataset's global budget, which every querier's charges also spend, so
  colluding queriers together never exceed it (their information adds too).
* The Cramér–Rao bound holds for differentiable answers only: a step function of a floored column (a filter,
  bins, a quantile, a group key on it) is refused by the planner unless the column allows it, and refused here
  to a querier with a floor of its own (:mod:`.steps`); the views say, per floored column, which holds
  (``step_queries``: ``"refused"``, or ``"allowed"`` with ``floor_covers`` saying what the floor no longer bounds).

Nothing stored is ever NaN or infinite: every charge is checked finite and in range before it is applied
(:mod:`.checks`), sums of rationals are exact, and a stored value that does not parse as a finite rational stops
the server (:func:`load_information`). In the views, ``record_bound`` is ``null`` exactly when no information
about the column has been released (``information`` is ``"0"``); it has no other meaning.
"""

from __future__ import annotations

import functools
import json
import math
import sys
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..dp.accounting import Charge
from ..dp.rational_accountant import compose
from ..dp.renyi_filter import RenyiState, StoredRenyiError
from .checks import decimal_fraction
from .composition import charged_parts, composed_view, within
from .config import DatasetSpec
from .steps import querier_refusal, step_entry

__all__ = [
    "Charge",
    "information_floats",
    "DatasetState",
    "QuerierState",
    "Refusal",
    "StoredValueError",
    "apply_charge",
    "apply_charges",
    "dataset_view",
    "dump_information",
    "is_finite",
    "load_information",
    "querier_view",
    "text",
]


def text(q: Fraction | None) -> str:
    """Exact text of a rational: "1/10", "1", "0" (an absent charge, None, is "0")."""
    return str(q if q is not None else Fraction(0))


class StoredValueError(ValueError):
    """A stored budget value is not a finite rational (a database written by something else)."""


def _rational(value: Any, where: str) -> Fraction:
    try:
        if isinstance(value, bool):
            raise TypeError
        if isinstance(value, float):
            if not math.isfinite(value):
                raise ValueError
            return Fraction(value)
        return Fraction(value)
    except (TypeError, ValueError, ZeroDivisionError):
        raise StoredValueError(f"{where}: {value!r} is not a finite rational.") from None


def load_information(raw: str, where: str = "fisher_information") -> dict[str, Fraction]:
    """The stored per-column information {column: "p/q"} (older databases: floats, read exactly)."""
    try:
        data = json.loads(raw)
    except ValueError:
        raise StoredValueError(f"{where}: {raw[:80]!r} is not JSON.") from None
    if not isinstance(data, dict):
        raise StoredValueError(f"{where}: {raw[:80]!r} is not a JSON object.")
    out = {str(k): _rational(v, f"{where}[{k!r}]") for k, v in data.items()}
    if any(v < 0 for v in out.values()):
        raise StoredValueError(f"{where}: a negative information in {raw[:80]!r}.")
    return out


def dump_information(info: dict[str, Fraction]) -> str:
    return json.dumps({k: text(v) for k, v in sorted(info.items())})


def information_floats(charge: Charge) -> dict[str, float]:
    """The information a charge adds per column, as floats (for views and the ledger)."""
    return {c: float(v) for c, v in charge.information.items()}


class _Spending:
    """What a budget has spent, as its row stores it (:meth:`values`): shared by a dataset's global budget and a
    querier's."""

    __slots__ = ()
    spent_epsilon: Fraction
    spent_delta: Fraction
    information: dict[str, Fraction]
    renyi: RenyiState | None

    def values(self) -> dict[str, Any]:
        return {
            "spent_epsilon": text(self.spent_epsilon),
            "spent_delta": text(self.spent_delta),
            "fisher_information": dump_information(self.information),
            "renyi": None if self.renyi is None else self.renyi.dump(),
        }


@dataclass(slots=True)
class DatasetState(_Spending):
    """What a dataset's global budget has spent (its limits are in the configuration)."""

    spent_epsilon: Fraction
    spent_delta: Fraction
    information: dict[str, Fraction]
    records: int | None = None
    renyi: RenyiState | None = None  # the Rényi filter's sums (None: nothing charged under composition "renyi")

    @classmethod
    def from_row(cls, row: Any) -> DatasetState:
        where = f"pn_datasets[{row['name']!r}]"
        return cls(
            _rational(row["spent_epsilon"], where),
            _rational(row["spent_delta"], where),
            load_information(row["fisher_information"], where),
            None if row.get("records") is None else int(row["records"]),
            _renyi(row.get("renyi"), where),
        )


@dataclass(slots=True)
class QuerierState(_Spending):
    """A querier's budget on one dataset: its limits and what it has spent."""

    epsilon: Fraction
    delta: Fraction
    fisher_floor: float | None
    spent_epsilon: Fraction
    spent_delta: Fraction
    information: dict[str, Fraction]
    renyi: RenyiState | None = None  # as :attr:`DatasetState.renyi`

    @classmethod
    def from_row(cls, row: Any) -> QuerierState:
        where = f"pn_budgets[{row['querier_id']!r}, {row['dataset']!r}]"
        floor = row["fisher_floor"]
        return cls(
            _rational(row["epsilon"], where),
            _rational(row["delta"], where),
            None if floor is None else float(floor),
            _rational(row["spent_epsilon"], where),
            _rational(row["spent_delta"], where),
            load_information(row["fisher_information"], where),
            _renyi(row.get("renyi"), where),
        )

    def copy(self) -> QuerierState:
        return QuerierState(
            self.epsilon,
            self.delta,
            self.fisher_floor,
            self.spent_epsilon,
            self.spent_delta,
            dict(self.information),
            self.renyi,
        )


def _renyi(raw: Any, where: str) -> RenyiState | None:
    if raw is None or raw == "":
        return None
    try:
        return RenyiState.load(raw, f"{where}.renyi")
    except StoredRenyiError as exc:
        raise StoredValueError(str(exc)) from None


class Refusal(Exception):
    """The release would exceed a budget (querier's or dataset's); nothing was charged."""


def _allows(total: Fraction, floor: float) -> bool:
    """Whether 1/total ≥ floor, exactly: total · floor ≤ 1."""
    return total * decimal_fraction(floor) <= 1


def apply_charge(
    dataset: DatasetState,
    querier: QuerierState,
    spec: DatasetSpec,
    charge: Charge,
    steps: tuple[tuple[str, str], ...] = (),
) -> None:
    """Spend ``charge`` on both states in place, or raise :class:`Refusal` and change neither.

    (ε, δ) compose by the exact-rational accountant's basic composition (:func:`~privnoise.dp.rational_accountant.compose`).
    ``steps``: the step constructs of the answer on floored columns that allow them (``Plan.steps``); a querier
    with a floor of its own is refused them (:class:`~.steps.StepQueryRefused`), nothing changed.
    """
    refused = querier_refusal(steps, querier.fisher_floor)
    if refused is not None:
        raise refused
    spend = (charge.epsilon or Fraction(0), charge.delta or Fraction(0))
    q_renyi, d_renyi = querier.renyi, dataset.renyi
    if spec.composition == "renyi":
        parts = charged_parts(charge)
        q_eps, q_delta = querier.spent_epsilon + spend[0], querier.spent_delta + spend[1]
        q_renyi = (q_renyi or RenyiState.empty()).caught_up(querier.spent_epsilon).plus(parts)
        if not within(q_renyi, (q_eps, q_delta), (querier.epsilon, querier.delta), spec):
            raise Refusal("querier")
        d_eps, d_delta = dataset.spent_epsilon + spend[0], dataset.spent_delta + spend[1]
        d_renyi = (d_renyi or RenyiState.empty()).caught_up(dataset.spent_epsilon).plus(parts)
        if not within(d_renyi, (d_eps, d_delta), (spec.epsilon, spec.delta), spec):
            raise Refusal("dataset")
    else:
        spent_querier = compose((querier.spent_epsilon, querier.spent_delta), spend, (querier.epsilon, querier.delta))
        if spent_querier is None:
            raise Refusal("querier")
        spent_dataset = compose((dataset.spent_epsilon, dataset.spent_delta), spend, (spec.epsilon, spec.delta))
        if spent_dataset is None:
            raise Refusal("dataset")
        (q_eps, q_delta), (d_eps, d_delta) = spent_querier, spent_dataset
    q_info, d_info = dict(querier.information), dict(dataset.information)
    for column, added in charge.information.items():
        # Information adds over independent releases whatever their policy, so every release is recorded;
        # a column without a declared floor is tracked (its record bound is reported) but never refused.
        q_info[column] = q_info.get(column, Fraction(0)) + added
        d_info[column] = d_info.get(column, Fraction(0)) + added
        floor = spec.columns[column].fisher_floor
        if floor is None:
            continue
        q_floor = querier.fisher_floor if querier.fisher_floor is not None else floor
        if not _allows(q_info[column], q_floor):
            raise Refusal("querier")
        if not _allows(d_info[column], floor):
            raise Refusal("dataset")
    querier.spent_epsilon, querier.spent_delta, querier.information, querier.renyi = q_eps, q_delta, q_info, q_renyi
    dataset.spent_epsilon, dataset.spent_delta, dataset.information, dataset.renyi = d_eps, d_delta, d_info, d_renyi


def apply_charges(
    dataset: DatasetState,
    querier: QuerierState,
    spec: DatasetSpec,
    charges: list[tuple[Charge, tuple[tuple[str, str], ...]]],
) -> None:
    """Spend every (charge, steps) of ``charges`` in order (:func:`apply_charge`), or raise and change neither
    state: the charges of one statement are recorded together or not at all."""
    saved_querier = (querier.spent_epsilon, querier.spent_delta, querier.information, querier.renyi)
    saved_dataset = (dataset.spent_epsilon, dataset.spent_delta, dataset.information, dataset.renyi)
    try:
        for charge, steps in charges:
            apply_charge(dataset, querier, spec, charge, steps)
    except BaseException:
        querier.spent_epsilon, querier.spent_delta, querier.information, querier.renyi = saved_querier
        dataset.spent_epsilon, dataset.spent_delta, dataset.information, dataset.renyi = saved_dataset
        raise


def _amount(total: Fraction, spent: Fraction) -> dict[str, Any]:
    if not spent:  # nothing spent (a δ budget of pure-ε releases): the same view at every answer
        return dict(_unspent(total))
    # the rest in integers (one view per answer: no normalising Fraction arithmetic), reduced for its text
    p, q, a, b = total.numerator, total.denominator, spent.numerator, spent.denominator
    top = max(p * b - a * q, 0)
    common = math.gcd(top, q * b)
    return {
        "budget": text(total),
        "spent": text(spent),
        "remaining": _ratio_text(top // common, q * b // common),
        "remaining_float": top / (q * b),  # int / int is correctly rounded, as float(Fraction) is
    }


def _ratio_text(numerator: int, denominator: int) -> str:
    """The text of a reduced ratio, as :func:`text` writes its Fraction."""
    return str(numerator) if denominator == 1 else f"{numerator}/{denominator}"


@functools.lru_cache(maxsize=256)
def _unspent(total: Fraction) -> dict[str, Any]:
    return {"budget": text(total), "spent": "0", "remaining": text(total), "remaining_float": float(total)}


def _quotient(numerator: int, denominator: int) -> float:
    """The float nearest numerator/denominator (correctly rounded), the largest finite float beyond it."""
    try:
        return numerator / denominator
    except OverflowError:
        return sys.float_info.max


@functools.lru_cache(maxsize=256)
def _allowed_information(floor: float) -> Fraction:
    """1/floor, exactly (a configuration's few floors are read at every budget view)."""
    return 1 / decimal_fraction(floor)


def _fisher_entry(floor: float | None, total: Fraction, steps: dict[str, str] | None = None) -> dict[str, Any]:
    n, d = total.numerator, total.denominator  # in integers: one view per answer, no normalising arithmetic
    out: dict[str, Any] = {
        "floor": floor,
        "information": text(total),
        "information_float": _quotient(n, d),
        # null exactly when nothing has been released about the column (the bound is +∞)
        "record_bound": None if n == 0 else _quotient(d, n),
    }
    if floor is not None:
        allowed = _allowed_information(floor)
        top = allowed.numerator * d - n * allowed.denominator
        out["remaining_information"] = _quotient(max(top, 0), allowed.denominator * d)
        out.update(steps or {})
    return out


def querier_view(state: QuerierState, spec: DatasetSpec) -> dict[str, Any]:
    """What a querier may know of its own budget on one dataset (never anything of other queriers)."""
    fisher = {}
    for name, col in spec.columns.items():
        if col.type != "number" or col.fisher_floor is None:
            continue
        floor = state.fisher_floor if state.fisher_floor is not None else col.fisher_floor
        fisher[name] = _fisher_entry(
            floor, state.information.get(name, Fraction(0)), step_entry(col, state.fisher_floor)
        )
    out: dict[str, Any] = {
        "epsilon": _amount(state.epsilon, state.spent_epsilon),
        "delta": _amount(state.delta, state.spent_delta),
    }
    if spec.composition == "renyi":
        out["composition"] = composed_view(state.renyi, (state.spent_epsilon, state.spent_delta),
                                       (state.epsilon, state.delta), spec)
    if fisher:
        out["fisher"] = fisher
    return out


def dataset_view(state: DatasetState, spec: DatasetSpec) -> dict[str, Any]:
    """The global budget of a dataset (for the owner)."""
    out = {
        "epsilon": _amount(spec.epsilon, state.spent_epsilon),
        "delta": _amount(spec.delta, state.spent_delta),
        "fisher": {
            c: _fisher_entry(col.fisher_floor, state.information.get(c, Fraction(0)), step_entry(col))
            for c, col in spec.columns.items()
            if col.type == "number"
        },
        "records": state.records,
    }
    if spec.composition == "renyi":
        out["composition"] = composed_view(state.renyi, (state.spent_epsilon, state.spent_delta),
                                       (spec.epsilon, spec.delta), spec)
    return out


def is_finite(value: Any) -> bool:
    try:
        return all(math.isfinite(float(v)) for v in (value if isinstance(value, list) else [value]))
    except (TypeError, ValueError):
        return False
