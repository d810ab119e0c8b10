"""The console's numbers and answers in words: budgets and charges as decimals (the exact rationals kept for
``title`` and ``data-value``), a history entry as one readable line, a dry run as the sentences of the form.

Nothing here reads data: every input is what the API already returned to the querier (an answer, a budget view,
a dry run).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

__all__ = ["answer_words", "charge_words", "composed_words", "decimal", "dry_run_words"]

_NAMES = {"epsilon": "ε", "delta": "δ", "rho": "ρ"}


def decimal(value: Any, digits: int = 6) -> str:
    """An exact rational ("8/5"), a number or None as a decimal for people ("1.6"); text that is neither, as is."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    try:
        number = float(Fraction(str(value))) if isinstance(value, str) else float(value)
    except (ValueError, ZeroDivisionError, OverflowError, TypeError):
        return str(value)
    if not math.isfinite(number):
        return str(number)
    if number == 0:
        return "0"
    return f"{number:.{digits}g}"


def charge_words(charged: Any) -> str:
    """What a query charged, in words: "ε 0.2, δ 0" and "Fisher information about kwh 2.75e-06" per column."""
    if not isinstance(charged, dict):
        return decimal(charged)
    parts = [f"{_NAMES[k]} {decimal(charged[k])}" for k in ("epsilon", "rho", "delta") if k in charged]
    information = charged.get("fisher_information")
    if isinstance(information, dict):
        parts += [f"Fisher information about {column} {decimal(v)}" for column, v in information.items()]
    return ", ".join(parts) if parts else "nothing"


def _values(value: list[Any], keys: list[Any] | None, shown: int = 4) -> str:
    if keys is not None and len(keys) == len(value):
        cells = [f"{'/'.join(map(str, k)) if isinstance(k, list) else k}: {decimal(v)}" for k, v in
                 zip(keys, value, strict=True)]
    else:
        cells = [decimal(v) for v in value]
    more = f", … ({len(value)} values)" if len(cells) > shown else ""
    return ", ".join(cells[:shown]) + more if cells else "no values"


def answer_words(payload: dict[str, Any]) -> str:
    """An answer in one line: its value (or the first values, with their keys), and its interval where it has one."""
    value = payload.get("value")
    accuracy: dict[str, Any] = payload["accuracy"] if isinstance(payload.get("accuracy"), dict) else {}
    if value is None and isinstance(payload.get("columns"), dict):  # a SQL statement's answer
        columns = payload["columns"]
        rows = len(next(iter(columns.values()), []))
        first = ", ".join(f"{name} {decimal(v[0]) if v else '—'}" for name, v in columns.items())
        return f"{rows} row{'s' if rows != 1 else ''}: {first}{' …' if rows > 1 else ''}"
    if isinstance(value, list):
        return _values(value, payload.get("keys"))
    text = decimal(value)
    low, high = accuracy.get("low"), accuracy.get("high")
    if isinstance(low, int | float) and isinstance(high, int | float):
        level = accuracy.get("level", 0.95)
        text += f" (between {decimal(low)} and {decimal(high)} at {float(level):.0%})"
    elif "rank_radius" in accuracy:
        text += f" (within ±{decimal(accuracy['rank_radius'])} rows of rank)"
    return text


def composed_words(view: dict[str, Any]) -> str | None:
    """A budget view's ε as its dataset's Rényi filter composes the charges (``composition`` of the view), in words:
    "ε 0.42 at δ 1e-05 of the budget's ε 1 (Rényi filter)"; None when the view's charges compose by their sum.

    Under the filter, the sum of the charged ε may pass the budget's ε while the composed ε stays within it
    (:mod:`privnoise.server.composition`), so that "remaining" of the summed ε is not what the querier has left.

    Examples
    --------
    >>> view = {"epsilon": {"budget": "1", "spent": "3/2", "remaining": "0"},
    ...         "composition": {"rule": "renyi", "epsilon": 0.8125, "delta": "1/100000", "within_budget": True}}
    >>> print(composed_words(view))
    ε 0.8125 at δ 1e-05 of the budget's ε 1 (Rényi filter)
    >>> composed_words({"epsilon": {"budget": "1", "spent": "0", "remaining": "1"}}) is None
    True
    """
    composition = view.get("composition")
    if not isinstance(composition, dict) or composition.get("rule") != "renyi":
        return None
    amount = view.get("epsilon")
    budget = amount.get("budget") if isinstance(amount, dict) else None
    epsilon = composition.get("epsilon")
    stated = "∞" if epsilon is None else decimal(epsilon)
    return f"ε {stated} at δ {decimal(composition.get('delta'))} of the budget's ε {decimal(budget)} (Rényi filter)"


def dry_run_words(run: dict[str, Any]) -> dict[str, Any]:
    """The form's preview of a dry run (``POST /v1/queries?dry_run=true``): its price, its accuracy, whether it
    fits and, when it does not, why (``fits`` False also when the policy refuses the query)."""
    refusal = run.get("refusal") if isinstance(run.get("refusal"), dict) else None
    out: dict[str, Any] = {"fits": bool(run.get("fits")), "cost": None, "accuracy": [], "after": None,
                           "after_composed": None, "refusal": None}
    cost = run.get("cost")
    if isinstance(cost, dict):
        out["cost"] = charge_words(cost)
        exact: dict[str, Any] = cost["exact"] if isinstance(cost.get("exact"), dict) else {}
        out["exact"] = ", ".join(f"{_NAMES.get(k, k)} {v}" for k, v in exact.items())
    parts: list[Any] = run["releases"] if isinstance(run.get("releases"), list) else [run]
    for part in parts:
        accuracy = part.get("accuracy")
        if isinstance(accuracy, dict) and accuracy.get("formula"):
            out["accuracy"].append(f"{accuracy['formula']} at {float(accuracy.get('level', 0.95)):.0%}")
        elif isinstance(accuracy, dict):
            out["accuracy"].append(str(accuracy.get("meaning", "no interval")))
    after = run.get("remaining_after")
    if isinstance(after, dict):
        composed = composed_words(after)
        if composed is not None:  # the Rényi filter: the sum of the charged ε is not what is left
            out["after_composed"] = composed
        else:
            remaining = [f"{_NAMES[k]} {decimal(after[k]['remaining'])}" for k in ("epsilon", "delta")
                         if isinstance(after.get(k), dict)]
            out["after"] = ", ".join(remaining)
    if refusal is not None:
        reason = str(refusal.get("error", "refused"))
        if refusal.get("status") == 429:
            budget = refusal.get("budget")
            left = ""
            composed = composed_words(budget) if isinstance(budget, dict) else None
            if composed is not None:
                left = f": your charges so far compose to {composed}, and this one would take them past it"
            elif isinstance(budget, dict) and isinstance(budget.get("epsilon"), dict):
                left = f" (ε {decimal(budget['epsilon']['remaining'])} left)"
            reason = f"Not enough budget left for this query{left}."
        else:
            reason = f"The server would refuse this query: {reason}"
        out["refusal"] = reason
    return out
