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

The commands are defined in :mod:`privnoise._cli` (``design``, ``release``, ``demo`` and ``reproduce`` in
modules of their own, the other areas' commands beside their helpers); this module makes the application, its
root options (``--version``, ``-v``, ``-q``) and adds the commands in the order ``privnoise --help`` lists them.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from ._cli import logs
from ._cli.demo_command import demo
from ._cli.design import design
from ._cli.release import release_command
from ._cli.reproduce_command import reproduce
from ._cli.sql_command import sql_command
from ._version import __version__

__all__ = ["app", "main"]

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
    exact: Annotated[
        bool, typer.Option("--exact", help="Budgets as exact rationals (1/3) instead of decimals (0.333333).")
    ] = False,
) -> None:
    """privnoise: optimal privacy-preserving additive noise (Farokhi & Sandberg and four more papers).

    Results go to stdout, messages and logs to stderr. Errors print one line and exit with status 2.
    """
    verbosity = max(-2, min(2, verbose - quiet))
    ctx.obj = {"verbosity": verbosity, "exact": exact}
    logs.configure(verbosity)


def _register_commands() -> None:
    """Add the commands, each defined in its own module (none imports numpy at load)."""
    from ._cli.budget import register as register_budget
    from ._cli.optimization import register as register_optimization
    from ._cli.recoverability import register as register_recoverability
    from ._cli.server import register as register_server
    from ._cli.systems import register as register_systems

    app.command()(design)
    app.command("release")(release_command)
    app.command("sql")(sql_command)
    app.command()(demo)
    app.command()(reproduce)
    register_optimization(app)
    register_recoverability(app)
    register_systems(app)
    register_server(app)
    register_budget(app)


_register_commands()


def main() -> None:
    """Entry point of the ``privnoise`` console script (a plain ``release`` command line is parsed without
    typer's per-option converters: :mod:`privnoise._cli.quick`)."""
    from ._cli.quick import run_plain_release

    if not run_plain_release(sys.argv[1:]):
        app()


if __name__ == "__main__":  # pragma: no cover
    main()
