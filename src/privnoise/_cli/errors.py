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
    "one_line",
    "use_flags",
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


#: The longest error line printed (a longer message is cut, with "…").
MAX_MESSAGE = 2000


def one_line(message: str) -> str:
    r"""``message`` as one printable line: control characters (newlines, escapes) shown as escapes, cut at
    :data:`MAX_MESSAGE` characters.

    >>> print(one_line("a\nb\x1b[31m"))
    a\nb\x1b[31m
    """
    if not message.isprintable():
        message = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in message)
    return message if len(message) <= MAX_MESSAGE else message[: MAX_MESSAGE - 1] + "…"


def fail(message: str) -> typer.Exit:
    """Print ``message`` as one error line (:func:`one_line`) and return the exit to raise."""
    from rich.markup import escape

    err_console().print(f"[bold red]error:[/bold red] [red]{escape(one_line(message))}[/red]")
    return typer.Exit(code=2)


#: Parameter name → flag of the command running without a click context (:mod:`.quick`), for its messages.
_PLAIN_FLAGS: dict[str, str] = {}


def use_flags(flags: Mapping[str, str]) -> None:
    """Name the flags of the command that runs without a click context (:mod:`.quick`), for its messages."""
    _PLAIN_FLAGS.clear()
    _PLAIN_FLAGS.update(flags)


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
        flags = _flags(ctx) if ctx is not None else dict(_PLAIN_FLAGS)
    return _PARAMETER.sub(lambda m: flags.get(m.group(1), m.group(0)), message)


def flag_aliases(**aliases: str) -> None:
    """Declare, for the running command, library parameter names that a differently named flag sets.

    ``flag_aliases(a="--matrix")`` makes "`a` of `optimal_response` …" read "--matrix …".
    """
    ctx = current_context()
    if ctx is not None:
        ctx.meta.setdefault("privnoise.flag_aliases", {}).update(aliases)
    else:
        _PLAIN_FLAGS.update(aliases)


#: Errors of the libraries that read files, by module: their text may quote the file, so only their kind is shown.
_READER_ERRORS = ("pyarrow", "csv", "_csv", "tomllib", "json", "sqlite3", "pandas", "polars", "fastparquet")


def errors_exit_2(func: F) -> F:
    """Turn privnoise errors (a missing extra included) and file errors raised by a command into :func:`fail`.

    The last line of defence: an error of a file reader that no command turned into a message of its own
    (:mod:`privnoise._cli.inputs` does, naming the file) still prints one line without a traceback, and without
    the library's text, which may quote the file.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except PrivnoiseError as exc:
            raise fail(cli_message(str(exc))) from None
        except OSError as exc:
            if type(exc).__module__.split(".")[0] in _READER_ERRORS:  # pyarrow's IO errors subclass OSError
                raise fail(f"an input file could not be read ({type(exc).__name__}).") from None
            where = f"{exc.filename}: " if exc.filename else ""
            raise fail(f"{where}{exc.strerror or exc}") from None
        except UnicodeError:
            raise fail("an input file is not UTF-8 text.") from None
        except MemoryError:
            raise fail("out of memory while reading the input (see the limits of PRIVNOISE_MAX_*).") from None
        except Exception as exc:
            if type(exc).__module__.split(".")[0] in _READER_ERRORS:
                raise fail(f"an input file could not be read ({type(exc).__name__}).") from None
            raise

    return wrapper  # type: ignore[return-value]
