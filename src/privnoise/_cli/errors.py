"""How every ``privnoise`` command reports a failure: one red line on stderr and exit status 2, no traceback.

The library names parameters the way the Python API does ("`quality_budget` of `optimal_noise` must be > 0");
the one reporter here rewrites each such name into the command-line flag the user typed
("--quality-budget must be > 0"), from the options of the running command. This module imports no numpy, so
that every command starts fast.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from ..exceptions import InvalidParameterError, PrivnoiseError

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "CliInputError",
    "cli_message",
    "current_context",
    "err_console",
    "errors_exit_2",
    "fail",
    "flag_aliases",
    "verbosity",
]

F = TypeVar("F", bound=Callable[..., Any])

#: "`name` of `owner`": how privnoise's messages name a parameter of a function or class.
_PARAMETER = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)` of `[^`]+`")


class CliInputError(InvalidParameterError):
    """A command-line option is malformed or options contradict each other."""


def err_console() -> Console:
    """A console on stderr without syntax highlighting."""
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def fail(message: str) -> typer.Exit:
    """Print ``message`` as an error line and return the exit to raise."""
    from rich.markup import escape

    err_console().print(f"[bold red]error:[/bold red] [red]{escape(message)}[/red]")
    return typer.Exit(code=2)


def current_context() -> Any:
    """The click context of the running command, or None outside a command."""
    try:  # recent typer versions carry their own copy of click
        from typer._click.globals import get_current_context
    except ImportError:  # pragma: no cover - typer versions that depend on click
        from click import get_current_context  # type: ignore[no-redef]
    return get_current_context(silent=True)


def verbosity() -> int:
    """The verbosity set by ``-v``/``-q`` on the root command (0 outside a command)."""
    ctx = current_context()
    obj = ctx.find_root().obj if ctx is not None else None
    return int(obj.get("verbosity", 0)) if isinstance(obj, dict) else 0


def _flags(ctx: Any) -> dict[str, str]:
    """Python parameter name → the long flag of the running command, for options that have a value."""
    flags: dict[str, str] = dict(ctx.meta.get("privnoise.flag_aliases", {}))
    for param in ctx.command.params:
        if getattr(param, "param_type_name", None) != "option" or param.name is None:
            continue
        if ctx.params.get(param.name) is None:
            continue  # not given (and no default): the value came from somewhere else, e.g. a model file
        longest = max(param.opts, key=len)
        flags.setdefault(param.name, longest)
    return flags


def cli_message(message: str, flags: Mapping[str, str] | None = None) -> str:
    """``message`` with each "`name` of `owner`" of a command-line option replaced by its flag.

    Examples
    --------
    >>> cli_message("`quality_budget` of `optimal_noise` must be > 0; got -1.0.", {"quality_budget": "--quality-budget"})
    '--quality-budget must be > 0; got -1.0.'
    >>> cli_message("`sigma` of `Gaussian` must be > 0; got -1.0.", {})
    '`sigma` of `Gaussian` must be > 0; got -1.0.'
    """
    if flags is None:
        ctx = current_context()
        flags = _flags(ctx) if ctx is not None else {}
    return _PARAMETER.sub(lambda m: flags.get(m.group(1), m.group(0)), message)


def flag_aliases(**aliases: str) -> None:
    """Declare, for the running command, library parameter names that a differently named flag sets.

    ``flag_aliases(a="--matrix")`` makes "`a` of `optimal_response` …" read "--matrix …".
    """
    ctx = current_context()
    if ctx is not None:
        ctx.meta.setdefault("privnoise.flag_aliases", {}).update(aliases)


def errors_exit_2(func: F) -> F:
    """Turn privnoise errors (a missing extra included) and file errors raised by a command into :func:`fail`."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except PrivnoiseError as exc:
            raise fail(cli_message(str(exc))) from None
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            raise fail(f"{where}{exc.strerror or exc}") from None

    return wrapper  # type: ignore[return-value]
