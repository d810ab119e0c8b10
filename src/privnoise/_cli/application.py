"""The ``privnoise`` application: its root options and every command, in the order ``privnoise --help`` lists them
(the entry point is :mod:`privnoise.cli`)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from .._version import __version__
from . import logs
from .demo_command import demo
from .design import design
from .release import release_command
from .reproduce_command import reproduce
from .sql_command import sql_command

__all__ = ["app"]

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
    from .budget import register as register_budget
    from .optimization import register as register_optimization
    from .recoverability import register as register_recoverability
    from .server import register as register_server
    from .systems import register as register_systems

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


