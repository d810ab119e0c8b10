"""The ``privnoise`` command: design optimal noise, release noisy answers from a CSV, demo, reproduce papers.

::

    privnoise design --query mean --n 500 --support -0.1,0.1
    privnoise design --query identity --n 3 --quality-budget 0.3 --json
    privnoise release data.csv --column kwh --query mean --bounds 0,5 --support -0.01,0.01
    privnoise budget data.csv
    privnoise demo --output privnoise-demo
    privnoise reproduce farokhi-sandberg

Every command is a thin layer over ``design → sample → Release``. Errors (privnoise errors, unreadable files,
malformed options) print one red line on stderr and exit with status 2. ``release`` never prints the true
value; its ``--seed`` is for research reproducibility only. Releases from a file are charged to the privacy ledger
first (:mod:`privnoise._cli.ledger`); ``budget`` reads it.
"""

from __future__ import annotations

import json
import logging
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ._cli import logs
from ._cli.budget import DatasetOption, LedgerOption, LedgerRequest, TotalDeltaOption, TotalEpsilonOption
from ._cli.errors import CliInputError, errors_exit_2
from ._version import __version__
from .reproduce import available as _papers

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["app", "main"]

log = logging.getLogger("privnoise.cli")

#: Settings of every command: ``-h`` as well as ``--help``; plain help text (no type column, so no <bool>).
CONTEXT_SETTINGS: dict[str, Any] = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

app = typer.Typer(
    name="privnoise",
    help="Design, apply and check privacy-preserving additive noise (Fisher-information, differential, "
    "recoverability and dynamical-system privacy).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings=CONTEXT_SETTINGS,
)


class QueryKind(StrEnum):
    mean = "mean"
    sum = "sum"
    variance = "variance"
    identity = "identity"


class ReleaseQuery(StrEnum):
    mean = "mean"
    sum = "sum"
    variance = "variance"
    row_count = "count"  # (not `count`: that name is str.count)
    histogram = "histogram"
    quantile = "quantile"
    top_k = "top-k"


class Variant(StrEnum):
    corrected = "corrected"
    printed = "printed"


#: The papers ``privnoise reproduce`` knows, listed in its help.
Paper = StrEnum("Paper", {name: name for name in _papers()})  # type: ignore[misc]


# Options shared by several commands.
Support = Annotated[
    str | None,
    typer.Option(
        "--support",
        metavar="LO,HI",
        help="Bounded noise support: cos² (Problem 2); or KIND:POINTS (box, polygon, ellipse, ball, polyhedron; "
        "points separated by ';') for a 2- or 3-output query, solved by finite elements (Theorem 2).",
    ),
]
Budget = Annotated[
    float | None, typer.Option("--quality-budget", metavar="T", help="Min Tr I s.t. Q <= T (Problem 4).")
]
Weight = Annotated[
    float | None, typer.Option("--quality-weight", metavar="RHO", help="Min Tr I + RHO*Q (Problem 3).")
]
Bounds = Annotated[
    str | None, typer.Option("--bounds", metavar="LO,HI", help="Declared bounds of each record.")
]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]


def _out() -> Console:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


def _print_json(payload: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"privnoise {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
    verbose: Annotated[
        int,
        typer.Option(
            "--verbose", "-v", count=True, help="More messages on stderr (-vv: debug, libraries included)."
        ),
    ] = 0,
    quiet: Annotated[
        int, typer.Option("--quiet", "-q", count=True, help="Fewer messages on stderr (-qq: errors only).")
    ] = 0,
) -> None:
    """privnoise: optimal privacy-preserving additive noise (Farokhi & Sandberg and four more papers).

    Results go to stdout, messages and logs to stderr. Errors print one line and exit with status 2.
    """
    verbosity = max(-2, min(2, verbose - quiet))
    ctx.obj = {"verbosity": verbosity}
    logs.configure(verbosity)


# -- design -----------------------------------------------------------------------------------------------

_POLICY_NOTE = (
    "The noise is cos² on Y − f(x), so the release is cos² on Y whatever the data: it carries zero Fisher "
    "information about x. Its quality Q = Var + ‖centre(Y) − f(x)‖² depends on the data."
)
_AT_DATA_NOTE = (
    "The guarantee of a nonlinear query depends on the data: declare --bounds for one that holds for every "
    "database in the declared domain."
)
_NO_EPSILON_NOTE = "Bounded-support noise gives no pure ε-differential privacy; no ε is reported."


@app.command()
@errors_exit_2
def design(
    query: Annotated[QueryKind, typer.Option("--query", help="The query to answer.")],
    n: Annotated[int | None, typer.Option("--n", min=1, help="Number of records.")] = None,
    weights: Annotated[
        str | None, typer.Option("--weights", metavar="W1,W2,...", help="Weights of a weighted mean or sum.")
    ] = None,
    support: Support = None,
    matrix: Annotated[
        str | None,
        typer.Option(
            "--matrix",
            metavar="R1;R2[;R3]",
            help="With a KIND:POINTS --support: the linear query's C, rows separated by ';' (default: identity).",
        ),
    ] = None,
    quality_budget: Budget = None,
    quality_weight: Weight = None,
    output_range: Annotated[
        str | None,
        typer.Option("--output-range", metavar="LO,HI", help="Keep the release in [LO, HI]."),
    ] = None,
    bounds: Bounds = None,
    variant: Annotated[
        Variant, typer.Option("--variant", help="Problem 3: the corrected or the printed Corollary 6.")
    ] = Variant.corrected,
    as_json: AsJson = False,
) -> None:
    """Print the optimal noise for a query and a goal, with its Fisher-information guarantee."""
    from rich.markup import escape

    from ._cli import render
    from ._cli.parsing import build_query, choose_goal, parse_list, parse_pair
    from ._cli.supports import is_named_support, parse_matrix_query, parse_support
    from .fisher import Policy, fisher_guarantee, optimal_noise
    from .mechanisms import Mechanism

    region = (
        parse_support(support, "--support") if support is not None and is_named_support(support) else None
    )
    goal = choose_goal(
        support=region if region is not None else parse_pair(support, "--support"),
        quality_budget=quality_budget,
        quality_weight=quality_weight,
        output_range=parse_pair(output_range, "--output-range"),
    )
    declared = parse_pair(bounds, "--bounds")
    if region is not None:
        q = parse_matrix_query(matrix, region.dim, "--matrix", bounds=declared)
    else:
        if matrix is not None:
            raise CliInputError("--matrix goes with a KIND:POINTS --support.")
        q = build_query(query.value, n, weights=parse_list(weights, "--weights"), bounds=declared)
    noise: Mechanism | Policy
    if variant is Variant.printed and "quality_weight" in goal:  # Corollary 6 as printed (ERRATA 4)
        from .reproduce.farokhi_sandberg.unbounded_support import printed_corollary6_noise

        noise = printed_corollary6_noise(q, quality_weight=goal["quality_weight"])
    else:
        noise = optimal_noise(q, **goal)
    payload: dict[str, Any] = {"query": q.describe(), "goal": render.goal_text(goal, variant.value)}
    notes: list[str] = []
    guarantee = None
    if not isinstance(noise, Mechanism):  # the output-range policy: its law depends on f(x)
        payload |= {"mechanism": noise.describe(), "data_dependent": True}
        notes.append(_POLICY_NOTE)
    else:
        payload["mechanism"] = render.mechanism_summary(noise)
        if q.is_linear or q.sup_jacobian() is not None:
            guarantee = fisher_guarantee(q, noise)
            payload["guarantee"] = guarantee.as_dict()
        else:
            notes.append(_AT_DATA_NOTE)
        if payload["mechanism"]["family"] == "raised-cosine":
            notes.append(_NO_EPSILON_NOTE)
    if notes:
        payload["notes"] = notes
    if as_json:
        _print_json(payload)
        return
    out = _out()
    out.print(f"[bold]Optimal noise for {q.name}[/bold] (n = {q.n}, m = {q.m} output(s))")
    out.print(f"goal: {payload['goal']}")
    if isinstance(noise, Mechanism):
        out.print(render.table("Mechanism", render.mechanism_rows(noise)))
    else:
        lo, hi = goal["output_range"]
        family = render.family_text(payload["mechanism"]["family"])
        out.print(render.table("Policy", [("noise family", family), ("output range Y", f"[{lo:g}, {hi:g}]")]))
    if guarantee is not None:
        out.print(render.table("Release guarantee", render.guarantee_rows(guarantee)))
    for note in notes:
        out.print(f"[dim]note: {escape(note)}[/dim]")


# -- release ----------------------------------------------------------------------------------------------


@app.command("release")
@errors_exit_2
def release_command(
    data: Annotated[
        Path, typer.Argument(metavar="DATA", help="CSV or Parquet file (with --scheduler: Parquet files, a glob).")
    ],
    column: Annotated[str, typer.Option("--column", help="Numeric column holding the records.")],
    query: Annotated[ReleaseQuery, typer.Option("--query", help="The query to answer.")],
    support: Support = None,
    quality_budget: Budget = None,
    quality_weight: Weight = None,
    bounds: Bounds = None,
    clamp: Annotated[bool, typer.Option("--clamp", help="Clamp records outside --bounds.")] = False,
    as_json: AsJson = False,
    seed: Annotated[
        int | None,
        typer.Option("--seed", min=0, help="RESEARCH ONLY: seeded noise is predictable."),
    ] = None,
    epsilon: Annotated[
        float | None,
        typer.Option("--epsilon", help="Differential privacy: the budget ε of this release (instead of a Fisher goal)."),
    ] = None,
    delta: Annotated[float, typer.Option("--delta", help="With --epsilon: the δ of the budget.")] = 0.0,
    unit: Annotated[str | None, typer.Option("--unit", help="With --epsilon: the privacy-unit column.")] = None,
    max_contributions: Annotated[
        int, typer.Option("--max-contributions", min=1, help="With --epsilon: rows used per unit (at random).")
    ] = 1,
    accountant: Annotated[
        str | None, typer.Option("--accountant", help="pure, approximate, advanced, pld, rdp or zcdp.")
    ] = None,
    missing: Annotated[
        str, typer.Option("--missing", help="Missing values: error, drop, or a number to impute.")
    ] = "error",
    quantiles: Annotated[str | None, typer.Option("--q", metavar="LEVELS", help="Quantile levels, e.g. 0.5,0.9.")] = None,
    bins: Annotated[str | None, typer.Option("--bins", metavar="EDGES", help="Histogram bin edges.")] = None,
    categories: Annotated[
        str | None, typer.Option("--categories", metavar="A,B", help="Declared categories (histogram, top-k).")
    ] = None,
    group_by: Annotated[str | None, typer.Option("--group-by", metavar="COLUMN", help="Group-by key column.")] = None,
    keys: Annotated[
        str | None, typer.Option("--keys", metavar="A,B", help="Public group keys (else partition selection).")
    ] = None,
    top: Annotated[int, typer.Option("--top", min=1, help="How many categories top-k selects.")] = 1,
    level: Annotated[float, typer.Option("--level", min=0.0, max=1.0, help="Confidence level.")] = 0.95,
    scheduler: Annotated[
        str | None, typer.Option("--scheduler", help="With --epsilon: aggregate on Dask, 'local' or tcp://HOST:PORT.")
    ] = None,
    ledger_path: LedgerOption = None,
    dataset: DatasetOption = None,
    total_epsilon: TotalEpsilonOption = None,
    total_delta: TotalDeltaOption = None,
) -> None:
    """Release a noisy answer to a query on one column of a CSV or Parquet file, with the guarantee that holds.

    With --epsilon the release is differentially private for a privacy unit (--unit, --max-contributions) and
    comes with its accuracy; otherwise the noise is Fisher-optimal for --support, --quality-budget or
    --quality-weight. Every release is recorded in the ledger before it is printed: its (ε, δ) is charged to the
    dataset's total (refused beyond it); a Fisher release is recorded with its information.
    """
    ledger = LedgerRequest.from_options(ledger_path, dataset, total_epsilon, total_delta)
    if epsilon is not None:
        from ._cli.analyst import dp_release

        if support is not None or quality_budget is not None or quality_weight is not None or clamp:
            raise CliInputError("--epsilon is a DP release: drop --support, --quality-budget, --quality-weight, --clamp.")
        if seed is not None:
            log.warning("--seed makes the noise predictable; use it for research only, never for a real release.")
        payload, text = dp_release(
            data, scheduler=scheduler, column=column, query=query.value, epsilon=epsilon, delta=delta, bounds=bounds, unit=unit,
            max_contributions=max_contributions, accountant=accountant, missing=missing, quantiles=quantiles,
            bins=bins, categories=categories, group_by=group_by, keys=keys, top=top, level=level, seed=seed,
            ledger=ledger,
        )
        if as_json:
            _print_json(payload)
        else:
            _out().print(text, markup=False)
        return
    if query.value not in ("mean", "sum", "variance"):
        raise CliInputError(f"--query {query.value} is a differentially private release: give --epsilon.")
    if scheduler is not None:
        raise CliInputError("--scheduler computes differentially private releases: give --epsilon.")
    from ._cli.fisher_release import fisher_release

    fisher_release(
        data, column=column, query=query.value, support=support, quality_budget=quality_budget,
        quality_weight=quality_weight, bounds=bounds, clamp=clamp, seed=seed, as_json=as_json, ledger=ledger,
    )  # fmt: skip


# -- demo -------------------------------------------------------------------------------------------------


@app.command()
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
    from ._optional import check

    check("fastapi", "uvicorn", "sqlalchemy", "httpx", "matplotlib", feature="privnoise demo")
    from rich.markup import escape
    from rich.table import Table

    from ._cli.demo import ANALYST_EPSILON, ANALYST_FISHER_FLOOR, CONSOLE_URL, DAYS, run_demo
    from ._cli.server import guarantee_text, remaining_text

    out = _out()
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


# -- reproduce --------------------------------------------------------------------------------------------


@app.command()
@errors_exit_2
def reproduce(
    name: Annotated[Paper, typer.Argument(metavar="PAPER", help="The paper to reproduce.")],
    output: Annotated[
        Path | None, typer.Option("--output", help="Directory for report.md (default: reproduce/PAPER).")
    ] = None,
) -> None:
    """Recompute a paper's numbers and figures; write report.md and list the errata.

    PAPER is one of: farokhi-sandberg (Fisher information, Automatica 2019), liu-kawano-cao (statistical-input
    privacy of LTI systems), koufogiannis (Laplace optimality, Lipschitz privacy), nageswaran (recoverability),
    farokhi-optimization (private quadratic optimisation).
    """
    from rich.markup import escape
    from rich.table import Table

    from . import reproduce as _reproduce
    from ._cli import render
    from ._optional import check

    check("matplotlib", feature=f"privnoise reproduce {name.value} (its figures)")
    directory = output if output is not None else Path("reproduce") / name.value
    log.info("reproducing %s into %s", name.value, directory)
    report = _reproduce.run(name.value, directory)
    out = _out()
    summary = Table(title=report.title, title_justify="left")
    summary.add_column("status")
    summary.add_column("rows", justify="right")
    for status, count in report.counts().items():
        summary.add_row(status, str(count))
    summary.add_row("[bold]total[/bold]", f"[bold]{len(report.rows)}[/bold]")
    out.print(summary)
    errata = [r for r in report.rows if r.status == "erratum"]
    if errata:
        table = Table(title="Errata: printed values that do not hold", title_justify="left")
        for header in ("key", "claim", "printed", "computed", "reason"):
            table.add_column(header, overflow="fold", no_wrap=header in ("printed", "computed"))
        for r in errata:
            printed, computed = (v if isinstance(v, str) else render.num(v) for v in (r.printed, r.computed))
            table.add_row(escape(r.key), escape(r.claim), escape(printed), escape(computed), escape(r.reason))
        out.print(table)
    out.print(f"report: {escape(str(directory / 'report.md'))}")


def _register_commands() -> None:
    """Add the commands of the other areas, each defined in its own module (none imports numpy at load)."""
    from ._cli.budget import register as register_budget
    from ._cli.optimization import register as register_optimization
    from ._cli.recoverability import register as register_recoverability
    from ._cli.server import register as register_server
    from ._cli.systems import register as register_systems

    register_optimization(app)
    register_recoverability(app)
    register_systems(app)
    register_server(app)
    register_budget(app)


_register_commands()


def main() -> None:
    """Entry point of the ``privnoise`` console script."""
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
