"""``privnoise design``: the optimal noise for a query and a goal, with its Fisher-information guarantee.

::

    privnoise design --query mean --n 500 --support -0.1,0.1
    privnoise design --query identity --n 3 --quality-budget 0.3 --json
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer

from .errors import CliInputError, errors_exit_2
from .options import AsJson, Bounds, Budget, Support, Weight, print_json, stdout_console

__all__ = ["QueryKind", "Variant", "design"]


class QueryKind(StrEnum):
    mean = "mean"
    sum = "sum"
    variance = "variance"
    identity = "identity"


class Variant(StrEnum):
    corrected = "corrected"
    printed = "printed"


_POLICY_NOTE = (
    "The noise is cos² on Y − f(x), so the release is cos² on Y whatever the data: it carries zero Fisher "
    "information about x. Its quality Q = Var + ‖centre(Y) − f(x)‖² depends on the data."
)
_AT_DATA_NOTE = (
    "The guarantee of a nonlinear query depends on the data: declare --bounds for one that holds for every "
    "database in the declared domain."
)
_NO_EPSILON_NOTE = "Bounded-support noise gives no pure ε-differential privacy; no ε is reported."


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

    from ..fisher import Policy, fisher_guarantee, optimal_noise
    from ..mechanisms import Mechanism
    from . import render
    from .parsing import build_query, choose_goal, parse_list, parse_pair
    from .supports import is_named_support, parse_matrix_query, parse_support

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
        from ..reproduce.farokhi_sandberg.unbounded_support import printed_corollary6_noise

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
        print_json(payload)
        return
    out = stdout_console()
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

