"""How ``privnoise query`` prints a server's answer: the value (per key, or a SQL statement's rows), its accuracy,
its guarantee, the remaining budget with what a Fisher record bound means, and a dry run's cost and verdict."""

from __future__ import annotations

from typing import Any

from rich.console import Console

__all__ = ["accuracy_text", "guarantee_text", "print_answer", "print_dry_run", "record_bound_meaning",
           "remaining_text"]


def print_dry_run(out: Console, answer: dict[str, Any]) -> None:
    """A dry run: the cost, the accuracy the answer would state, whether it fits, and that nothing was charged."""
    releases = answer.get("releases") or ([answer] if "cost" in answer else [])
    if "cost" in answer:
        out.print(f"cost: {_cost_text(answer['cost'])}")
    for release in releases:
        accuracy = release.get("accuracy", {})
        shown = accuracy.get("formula") or accuracy.get("meaning", "")
        prefix = f"{release['query'].get('kind', 'release')}: " if len(releases) > 1 else ""
        out.print(f"accuracy: {prefix}{shown}")
    if answer.get("fits"):
        out.print(f"fits: yes; remaining after it: {remaining_text(answer['remaining_after'])}")
    else:
        refusal = answer.get("refusal", {})
        out.print(f"fits: no — it would be refused ({refusal.get('status', '')}: {refusal.get('error', '')})")
    out.print(f"[dim]{answer.get('charged', 'nothing was charged')}[/dim]")


def _cost_text(cost: dict[str, Any]) -> str:
    exact = cost.get("exact", {})
    epsilon = _amount(exact["epsilon"]) if "epsilon" in exact else f"{cost.get('epsilon', 0):.6g}"
    delta = _amount(exact["delta"]) if "delta" in exact else f"{cost.get('delta', 0):.3g}"
    text = f"ε = {epsilon}, δ = {delta}"
    information = cost.get("fisher_information") or {}
    if information:
        text += "; Fisher information " + ", ".join(f"{c} {v:.4g}" for c, v in information.items())
    return text


def print_answer(out: Console, answer: dict[str, Any]) -> None:
    """One answer: value (per key for a histogram or a group-by; a SQL statement's rows), its accuracy, guarantee,
    remaining budget."""
    if "columns" in answer:  # a SQL statement: one line per row, each value with its interval
        columns, intervals = answer["columns"], answer["intervals"]
        for i in range(len(next(iter(columns.values()), []))):
            cells = [f"{name}: {_shown(values[i])}" + (
                f" [{_shown(intervals[name]['low'][i])}, {_shown(intervals[name]['high'][i])}]"
                if name in intervals else "") for name, values in columns.items()]
            out.print("row: [bold green]" + "; ".join(cells) + "[/bold green]")
        out.print(f"intervals at {answer['level']:.0%} (noise only)")
        _print_guarantee_and_budget(out, answer)
        return
    value = answer["value"]
    keys = answer.get("keys")
    if keys is not None and isinstance(value, list):
        shown = ", ".join(f"{k}: {v:.4g}" for k, v in zip(keys, value, strict=False))
    elif isinstance(value, list):
        shown = f"[{', '.join(f'{v:.4g}' for v in value[:6])}{', …' if len(value) > 6 else ''}] ({len(value)} values)"
    else:
        shown = f"{value:.6g}"
    out.print(f"value: [bold green]{shown}[/bold green]")
    if answer.get("accuracy"):
        out.print(f"accuracy: {accuracy_text(answer['accuracy'], keys)}")
    _print_guarantee_and_budget(out, answer)


def _print_guarantee_and_budget(out: Console, answer: dict[str, Any]) -> None:
    out.print(f"guarantee: {guarantee_text(answer['guarantee'])}")
    out.print(f"remaining: {remaining_text(answer['remaining'])}")
    meaning = record_bound_meaning(answer["remaining"])
    if meaning:
        out.print(f"[dim]{meaning}[/dim]")


def record_bound_meaning(r: dict[str, Any]) -> str:
    """One line saying what a Fisher record bound means, in the unit of the data ("" when the owner declared no
    Fisher floor: a DP answer then carries no Fisher figure).

    >>> record_bound_meaning({"fisher": {"kwh": {"record_bound": 290.9, "floor": 4.0}}})[:71]
    'record bound: the smallest variance, in the square of the unit of kwh, '
    >>> record_bound_meaning({"epsilon": {}})
    ''
    """
    columns = list(r.get("fisher", {}))
    if not columns:
        return ""
    named = ", ".join(columns)
    return (f"record bound: the smallest variance, in the square of the unit of {named}, with which anyone who "
            "knows every other record can estimate one record's value without bias from all answers so far "
            "(Cramér–Rao); the owner's floor keeps it above the floor")


def accuracy_text(a: dict[str, Any], keys: list[Any] | None = None) -> str:
    """The stated accuracy of an answer: its interval (per key) or rank radius, the level, and its meaning."""
    level = f"{a['level']:.0%}"
    if "rank_radius" in a:
        radius = a["rank_radius"]
        radii = ", ".join(f"±{r:.4g}" for r in radius) if isinstance(radius, list) else f"±{radius:.4g}"
        return f"rank within {radii} rows at {level} ({a['meaning']})"
    if "low" not in a:
        return a["meaning"]
    low, high = a["low"], a["high"]
    if isinstance(low, list):
        labels = keys if keys is not None and len(keys) == len(low) else list(range(len(low)))
        cells = [f"{k}: [{lo:.4g}, {hi:.4g}]" for k, lo, hi in zip(labels, low, high, strict=False)]
        shown = ", ".join(cells[:6]) + (", …" if len(cells) > 6 else "")
        return f"{level} intervals {shown} ({a['meaning']})"
    return f"{level} interval [{low:.6g}, {high:.6g}] ({a['meaning']})"


def _shown(v: Any) -> str:
    return "—" if v is None else f"{v:.6g}" if isinstance(v, float) else str(v)


def guarantee_text(g: dict[str, Any]) -> str:
    if g["notion"] == "differential-privacy":
        delta = "" if g["delta"] == 0 else f", δ = {_amount(g['delta_exact'])}"
        return f"(ε = {_amount(g['epsilon_exact'])}{delta})-DP, hardened"
    after = g.get("record_bound_after", {})
    bounds = ", ".join(f"{c}: {b:.4g}" for c, b in after.items() if b is not None)
    return f"Fisher information; record bound after it: {bounds}"


def _amount(exact: str) -> str:
    """A budget the server states as an exact rational, as a decimal (exact with ``privnoise --exact``)."""
    from fractions import Fraction

    from .ledger_values import amount

    return amount(Fraction(exact))


def remaining_text(r: dict[str, Any]) -> str:
    text = f"ε {_amount(r['epsilon']['remaining'])} of {_amount(r['epsilon']['budget'])}"
    if r["delta"]["budget"] != "0":
        text += f", δ {r['delta']['remaining_float']:.3g}"
    for col, f in r.get("fisher", {}).items():
        bound = "∞" if f["record_bound"] is None else f"{f['record_bound']:.4g}"
        text += f"; {col} record bound {bound} (floor {f['floor']:g})"
    return text
