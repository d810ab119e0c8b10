"""``privnoise reproduce``: recompute a paper's numbers and figures, write ``report.md`` and list the errata.

::

    privnoise reproduce farokhi-sandberg
"""

from __future__ import annotations

import logging
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from ..reproduce import available as _papers
from .errors import errors_exit_2
from .options import stdout_console

__all__ = ["Paper", "reproduce"]

log = logging.getLogger("privnoise.cli")

#: The papers ``privnoise reproduce`` knows, listed in its help.
Paper = StrEnum("Paper", {name: name for name in _papers()})  # type: ignore[misc]


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

    from .. import reproduce as _reproduce
    from .._optional import check
    from . import render

    check("matplotlib", feature=f"privnoise reproduce {name.value} (its figures)")
    directory = output if output is not None else Path("reproduce") / name.value
    log.info("reproducing %s into %s", name.value, directory)
    report = _reproduce.run(name.value, directory)
    out = stdout_console()
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

