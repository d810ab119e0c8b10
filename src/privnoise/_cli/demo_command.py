"""``privnoise demo``: the query server end to end (:mod:`.demo`), printed as a table of the analyst's queries
and the files written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .errors import errors_exit_2
from .options import stdout_console

__all__ = ["demo"]


@errors_exit_2
def demo(
    output: Annotated[Path, typer.Option("--output", help="Output directory.")] = Path("privnoise-demo"),
    households: Annotated[int, typer.Option("--households", min=4, help="Number of households.")] = 500,
    seed: Annotated[
        int, typer.Option("--seed", min=0, help="Seed of the synthetic data (the noise is never seeded).")
    ] = 2024,
) -> None:
    """The query server end to end: sample data in embedded SQLite, an in-process server, an analyst's queries
    until the budget runs out, a trade-off plot and a JSON summary."""
    from .._optional import check

    check("fastapi", "uvicorn", "sqlalchemy", "httpx", "matplotlib", feature="privnoise demo")
    from rich.markup import escape
    from rich.table import Table

    from .demo import ANALYST_EPSILON, ANALYST_FISHER_FLOOR, CONSOLE_URL, DAYS, run_demo
    from .server import guarantee_text, remaining_text

    out = stdout_console()
    result = run_demo(output, households=households, seed=seed)
    out.print(
        f"[bold]privnoise demo[/bold]: {households} households × {DAYS} days of half-hourly smart-meter "
        f"readings ({len(result.data)} readings, synthetic, seed {seed})"
    )
    out.print(
        f"owner: {escape(str(result.config))} → embedded SQLite; server on {result.url} (in-process, stopped); "
        f"analyst budget ε = {ANALYST_EPSILON:g}, Fisher floor {ANALYST_FISHER_FLOOR:g} (kWh/day)²"
    )
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
        value = item.answer["value"]
        shown = f"{len(value)} values, first {value[0]:.2f}" if isinstance(value, list) else f"{value:.4g}"
        table.add_row(
            escape(item.query),
            shown,
            escape(guarantee_text(item.answer["guarantee"])),
            escape(remaining_text(item.answer["remaining"])),
        )
    out.print(table)
    out.print(
        f"[bold]Household-level releases in the library[/bold] (pn.Session over the {len(result.data)} readings; "
        f"privacy unit: household, at most {48 * DAYS} readings each; budget ε = 2, δ = 1e-6):"
    )
    for entry in result.household:
        out.print(f"  {escape(entry['query'])}: {escape(entry['summary'])}")
    out.print(
        "[dim]DP answers are hardened (snapped to a 2^k grid) from the CSPRNG and charged exactly (rationals); "
        "a mean is noisy sum / noisy count. Fisher record bound: variance floor of any unbiased estimate of one "
        "household's consumption by someone who knows every other household (Farokhi & Sandberg, eq. 7).[/dim]"
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
        f"console:  {CONSOLE_URL} — run [bold]privnoise serve --config {escape(str(result.config))}[/bold], "
        "open the URL and sign in with a key of the keys file (admin: the owner's pages; analyst: the querier's)"
    )

