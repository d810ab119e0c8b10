"""``privnoise demo``: the query server end to end (:mod:`.demo`), printed as a table of the analyst's queries
and the files written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from .errors import errors_exit_2
from .options import stdout_console

__all__ = ["answer_text", "demo"]


@errors_exit_2
def demo(
    output: Annotated[Path, typer.Option("--output", help="Output directory.")] = Path("privnoise-demo"),
    households: Annotated[int, typer.Option("--households", min=4, help="Number of households.")] = 500,
    seed: Annotated[
        int, typer.Option("--seed", min=0, help="Seed of the synthetic data (the noise is never seeded).")
    ] = 2024,
    port: Annotated[
        int, typer.Option("--port", min=1, max=65535, help="The port of owner.toml (privnoise serve serves on it).")
    ] = 8000,
) -> None:
    """The query server end to end: sample data in embedded SQLite, an in-process server, an analyst's queries
    until the budget runs out, a trade-off plot, a JSON summary, and a querier left with budget to try."""
    from .._optional import check

    check("fastapi", "uvicorn", "sqlalchemy", "httpx", "matplotlib", feature="privnoise demo")
    from rich.markup import escape
    from rich.table import Table

    from .demo import DAYS, run_demo
    from .demo_analyst import BUDGET, READING_BOUNDS
    from .demo_setup import (
        ANALYST_EPSILON,
        ANALYST_FISHER_FLOOR,
        EXPLORER,
        EXPLORER_DELTA,
        EXPLORER_EPSILON,
        try_commands,
    )
    from .server_answers import guarantee_text, remaining_text

    out = stdout_console()
    result = run_demo(output, households=households, seed=seed, port=port)
    out.print(
        f"[bold]privnoise demo[/bold]: {households} households × {DAYS} days of half-hourly smart-meter "
        f"readings ({len(result.data)} readings, synthetic, seed {seed})"
    )
    out.print(
        f"owner: {escape(str(result.config))} → embedded SQLite; server on {result.url} (in-process, stopped); "
        f"analyst budget ε = {ANALYST_EPSILON:g}, Fisher floor {ANALYST_FISHER_FLOOR:g} (kWh/day)²"
    )
    out.print("[bold]The server holds each household's mean daily consumption, in kWh/day[/bold] (households.csv).")
    table = Table(
        title="The analyst's queries through the HTTP client (true values never shown)", title_justify="left"
    )
    table.add_column("query")
    table.add_column("noisy answer", justify="right", no_wrap=True)
    table.add_column("guarantee")
    table.add_column("remaining budget")
    for item in result.items:
        if item.answer is None:
            table.add_row(escape(item.query), "[red]refused[/red]", escape(item.refusal or ""), "")
            continue
        shown = answer_text(item.query, item.answer["value"])
        table.add_row(
            escape(item.query),
            shown,
            escape(guarantee_text(item.answer["guarantee"])),
            escape(remaining_text(item.answer["remaining"])),
        )
    out.print(table)
    low, high = READING_BOUNDS
    out.print(
        f"[bold]Household-level releases in the library, now in kWh per half hour[/bold]: pn.Session over the "
        f"{len(result.data)} half-hourly readings themselves (smart_meter.csv), not the daily means above; privacy "
        f"unit: household, at most {48 * DAYS} readings each; declared bounds [{low:g}, {high:g}] kWh per half "
        f"hour; budget ε = {BUDGET[0]:g}, δ = {BUDGET[1]:g}:"
    )
    for entry in result.household:
        out.print(f"  {escape(entry['query'])}: {escape(entry['summary'])}")
    out.print(
        "[dim]DP answers are hardened (snapped to a 2^k grid) from the CSPRNG and charged exactly (rationals); "
        "a mean is the bounds' centre plus noisy Σ(x − centre) / noisy count. Fisher record bound: variance "
        "floor of any unbiased estimate of one household's consumption by someone who knows every other "
        "household (Farokhi & Sandberg, eq. 7).[/dim]"
    )
    for label, path in (
        ("data", result.csv),
        ("config", result.config),
        ("plot", result.figure),
        ("summary", result.summary),
        ("keys", result.keys),
    ):
        out.print(f"{label + ':':9} {escape(str(path))}")
    out.print(
        f"console:  {result.console} — run [bold]privnoise serve --config {escape(str(result.config))}[/bold], "
        "open the URL and sign in with a key of the keys file (admin: the owner's pages; analyst and explorer: "
        "the querier's)"
    )
    out.print(
        f"[bold]Your turn[/bold]: the querier {EXPLORER} has its whole budget (ε = {EXPLORER_EPSILON:g}, "
        f"δ = {EXPLORER_DELTA:g}); every query of the README runs on this configuration:"
    )
    for command in try_commands(result.config, result.console):
        out.print(f"  {escape(command)}", soft_wrap=True)


def answer_text(query: str, value: Any) -> str:
    """A server answer for the table: a count as the integer it counts (rounding is post-processing), a vector by
    its size and first value, a number to four digits.

    >>> answer_text("count() where region = 'north'", 55.59), answer_text("mean(kwh)", 12.6712)
    ('56', '12.67')
    """
    if isinstance(value, list):
        return f"{len(value)} values, first {value[0]:.2f}"
    if query.startswith("count"):
        return f"{max(round(value), 0):d}"
    return f"{value:.4g}"

