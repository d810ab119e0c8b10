"""``privnoise release`` with a Fisher goal: Fisher-optimal noise on a query of one column, recorded in the ledger.

The release carries no ε; the ledger records it as a Fisher entry with the largest information it gives about one
record (:attr:`privnoise._cli.ledger.Status.record_information`), before any noise is drawn.
"""

from __future__ import annotations

import json
import logging
import sys
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import CliInputError

if TYPE_CHECKING:
    from .budget import LedgerRequest

__all__ = ["fisher_release"]

log = logging.getLogger("privnoise.cli")


def fisher_release(
    data: Path,
    *,
    column: str,
    query: str,
    support: str | None,
    quality_budget: float | None,
    quality_weight: float | None,
    bounds: str | None,
    clamp: bool,
    seed: int | None,
    as_json: bool,
    ledger: LedgerRequest,
) -> None:
    """Release the noisy ``query`` (mean, sum or variance) of ``column`` with Fisher-optimal noise and print it."""
    import math

    from rich.console import Console
    from rich.markup import escape

    from ..fisher import fisher_guarantee, optimal_noise
    from ..io import read
    from ..mechanisms import Mechanism
    from ..release import release
    from ..sample_data import load_csv_column
    from . import render
    from .inputs import data_file
    from .parsing import build_query, choose_goal, parse_pair

    goal = choose_goal(
        support=parse_pair(support, "--support"), quality_budget=quality_budget, quality_weight=quality_weight
    )
    declared = parse_pair(bounds, "--bounds")
    if clamp and declared is None:
        raise CliInputError("--clamp needs --bounds (the declared bounds to clamp to).")
    if query == "variance" and declared is None:
        raise CliInputError(
            "--query variance needs --bounds: without declared bounds its guarantee would be computed at the "
            "data and could not be published."
        )
    if seed is not None:
        log.warning(
            "--seed makes the noise reproducible and predictable; use it for research only, never for a real "
            "release."
        )
    data_file(data)
    x = read(data, column) if data.suffix.lower() in (".parquet", ".pq") else load_csv_column(data, column)
    if declared is not None and not clamp:
        outside = int(((x < declared[0]) | (x > declared[1])).sum())
        if outside:
            raise CliInputError(
                f"{outside} record(s) of column {column!r} lie outside --bounds "
                f"[{declared[0]:g}, {declared[1]:g}]; pass --clamp to clamp them."
            )
    q = build_query(query, int(x.size), bounds=declared)
    noise = optimal_noise(q, **goal)
    assert isinstance(noise, Mechanism)  # a support or a quality goal: never the output-range policy
    top = fisher_guarantee(q, noise).information.max_diagonal()
    _, state = ledger.record(
        data, kind="fisher", command="privnoise release", query=f"{query}({column})",
        information=math.inf if math.isinf(top) else Fraction(top),
        details={"goal": render.goal_text(goal), "bounds": bounds, "clamp": clamp},
    )  # fmt: skip
    result = release(x, q, noise, rng=seed, out_of_bounds="clamp" if clamp else "error")
    if clamp:  # the count depends on the data: it goes to the owner on stderr, never into the release
        log.info(
            "owner note: %d record(s) clamped to the declared bounds (not part of the release)",
            result.clamped_records,
        )
    if as_json:
        from .budget import state_payload

        payload = result.as_dict() | {"ledger": state_payload(state)}
        sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
        return
    out = Console(highlight=False, soft_wrap=True)
    out.print(f"[bold]Noisy {q.name}[/bold] of column {column!r} ({q.n} records of {escape(str(data))})")
    out.print(f"value: [bold green]{result.value!r}[/bold green]")
    assert result.mechanism is not None  # a direct release describes its noise
    out.print(f"noise: {render.family_text(result.mechanism['family'])}; {render.goal_text(goal)}")
    out.print(render.table("Release guarantee", render.guarantee_rows(result.guarantee)))
    out.print(f"[dim]{escape(state['line'])}; Fisher entries charge no ε[/dim]")
