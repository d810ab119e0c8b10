"""The options and the output shared by the commands of ``privnoise`` (``design``, ``release``): a Fisher goal
(``--support``, ``--quality-budget``, ``--quality-weight``), the declared ``--bounds`` and ``--json``; results are
printed on stdout by :func:`stdout_console` or as JSON by :func:`print_json`.
"""

from __future__ import annotations

import json
import re
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["AsJson", "Bounds", "Budget", "Support", "Weight", "print_json", "print_text", "stdout_console"]


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
#: The accountant of a differentially private release (``release``, ``sql``).
Accountant = Annotated[str | None, typer.Option("--accountant", help="pure, approximate, advanced, pld, rdp or zcdp.")]
#: The missing-value policy of a differentially private release (``release``, ``sql``).
MissingValues = Annotated[str, typer.Option("--missing", help="Missing values: error, drop, or a number to impute.")]


def stdout_console() -> Console:
    """The console of the results (stdout), without highlighting, its lines never cut."""
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


#: What the results console would change in a text: a tab (expanded) or an emoji code such as ``:smile:``.
_CONSOLE_WORK = re.compile(r"\t|:\S+?:")


def print_text(text: str) -> None:
    """Print ``text`` on stdout as :func:`stdout_console` prints it without markup: written as it is, unless it
    holds something the console would change (a tab, an emoji code), which the console then prints (the rich
    console's import costs more than a small release)."""
    if _CONSOLE_WORK.search(text):
        stdout_console().print(text, markup=False)
        return
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def print_json(payload: dict[str, Any]) -> None:
    """Print ``payload`` on stdout as indented JSON."""
    sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")

