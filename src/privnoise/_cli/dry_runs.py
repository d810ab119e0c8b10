"""``privnoise release --dry-run`` and ``privnoise sql --dry-run``: what a release would be charged and its expected
accuracy, from public information only.

The options are checked as for the release; of the file only the header (CSV) or the schema (Parquet) is read, to
check the columns named; the session is built over those names alone
(:class:`~privnoise.analysis.SchemaBackend`), so no value is read and no aggregate computed; the ledger is read,
never written: its line says whether the dataset's remaining budget would admit the release. The accuracy is the
library's (:mod:`privnoise.analysis.dry_run`): a radius in value units for sums and counts, a formula in n, the rows
used, for means and variances, a rank radius for quantiles.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .analyst import ask, check_options, conditions_of, describe, group_keys, unit_cap, whole_budget

if TYPE_CHECKING:
    from .budget import LedgerRequest

__all__ = ["dry_release", "dry_statement", "ledger_preview"]

NOTHING = "nothing charged, no value of DATA read"


def ledger_preview(request: LedgerRequest, data: Path, epsilon: float, delta: float) -> tuple[dict[str, Any], str]:
    """The ledger's state for a release of (ε, δ) from ``data`` and whether it would be admitted; nothing is
    written (a dataset not yet in the ledger is shown with the totals it would get)."""
    from ..dp.accounting import exact_rational
    from .ledger import Ledger
    from .ledger_values import DEFAULT_TOTAL_DELTA, DEFAULT_TOTAL_EPSILON, admits, amount, identify

    book = Ledger.locate(request.ledger)
    dataset = identify(data, request.dataset, content=False)
    status = book.status(dataset.name)
    given_epsilon, given_delta = request.totals
    total = (status.total if status is not None else
             (given_epsilon or DEFAULT_TOTAL_EPSILON, DEFAULT_TOTAL_DELTA if given_delta is None else given_delta))
    spent = status.spent if status is not None else (Fraction(0), Fraction(0))
    asked = (exact_rational(epsilon, "epsilon", "privnoise"), exact_rational(delta, "delta", "privnoise",
                                                                             allow_zero=True))
    fits = admits(total, spent, asked)
    left = (max(total[0] - spent[0], Fraction(0)), max(total[1] - spent[1], Fraction(0)))
    state = {"dataset": dataset.name, "in_ledger": status is not None, "fits": fits,
             "total": _amounts(total), "spent": _amounts(spent), "remaining": _amounts(left)}
    verdict = ("it would fit, leaving ε = " f"{amount(left[0] - asked[0])}, δ = {amount(left[1] - asked[1])}" if fits
               else "it would be refused")
    line = (f"ledger: dataset {dataset.name!r}: spent ε = {amount(spent[0])}, δ = {amount(spent[1])} of the total "
            f"ε = {amount(total[0])}, δ = {amount(total[1])}; remaining ε = {amount(left[0])}, δ = {amount(left[1])}: "
            f"{verdict}")
    return state, line


def _amounts(pair: tuple[Fraction, Fraction]) -> dict[str, Any]:
    return {"epsilon": float(pair[0]), "delta": float(pair[1]),
            "exact": {"epsilon": str(pair[0]), "delta": str(pair[1])}}


def dry_release(data: Path, *, column: str, query: str, epsilon: float, delta: float, bounds: str | None,
                unit: str | None, max_contributions: int | None, accountant: str | None, quantiles: str | None,
                bins: str | None, categories: str | None, group_by: str | None, keys: str | None, top: int,
                level: float, where: str | None, noise: str | None,
                ledger: LedgerRequest) -> tuple[dict[str, Any], str]:
    """The dry run of ``privnoise release`` (module docstring): its JSON form and the lines to print."""
    from ..analysis import SchemaBackend, Session
    from .inputs import column_kinds, columns_read

    declared = check_options(query, bounds=bounds, group_by=group_by, bins=bins, categories=categories,
                             quantiles=quantiles)
    conditions = conditions_of(where)
    cap = unit_cap(unit, max_contributions)
    numeric, text = columns_read(query=query, column=column, unit=unit, group_by=group_by,
                                 categories=categories is not None, conditions=conditions)
    session = Session(SchemaBackend(column_kinds(data, numeric, text)), privacy_unit=unit, max_contributions=cap,
                      epsilon=epsilon, delta=delta, accountant=accountant, noise=noise)
    if where is not None:
        session = session.where(where)
    selection = group_by is not None and keys is None
    spend = whole_budget(session.accountant, epsilon, delta * (0.9 if selection else 1.0))
    run = ask(session, query, column=column, group_by=group_by, keys=group_keys(keys, group_by), declared=declared, bins=bins,
              categories=categories, quantiles=quantiles, top=top, spend=spend, dry_run=True)
    payload = run.as_dict(level)
    for name in ("fits", "remaining_after", "refusal"):  # the session is this release's alone: the ledger decides
        payload.pop(name, None)
    payload["ledger"], line = ledger_preview(ledger, data, epsilon, delta)
    lines = [f"dry run of {describe(query, column, group_by, where)}: would charge ε = {epsilon:g}, δ = {delta:g} "
             f"({NOTHING})",
             f"{level:.0%} accuracy (noise only): {run.formula(level)}",
             f"guarantee: {run.guarantee.summary()}"]
    if declared is not None and query != "clamped-count":
        lines.append(f"values clamped to --bounds {declared[0]:g},{declared[1]:g}: the accuracy is about the "
                     "statistic of the clamped values")
    return payload, "\n".join([*lines, line])


def dry_statement(session: Any, parsed: Any, *, data: Path, epsilon: float, delta: float, declared: dict[str, Any],
                  keys: Any, selecting: bool, spend: dict[str, Any], level: float,
                  ledger: LedgerRequest) -> tuple[dict[str, Any], str]:
    """The dry run of ``privnoise sql`` on a session over the columns' names: its JSON form and the lines."""
    run = session.sql(parsed.text, bounds=declared, keys=keys, delta=delta if selecting else None, level=level,
                      dry_run=True, **spend)
    payload = run.as_dict(level)
    for name in ("fits", "remaining_after", "refusal"):
        payload.pop(name, None)
    payload["ledger"], line = ledger_preview(ledger, data, epsilon, delta)
    lines = [f"dry run of the statement: would charge ε = {epsilon:g}, δ = {delta:g} ({NOTHING})",
             f"guarantee: {run.guarantee['summary']}"]
    lines += [f"  {text}: {level:.0%} accuracy {each.formula(level)}" for text, each in run.releases.items()]
    return payload, "\n".join([*lines, line])
