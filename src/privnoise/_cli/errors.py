"""How every ``privnoise`` command reports a failure: one red line on stderr and exit status 2, no traceback."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from ..exceptions import PrivnoiseError

__all__ = ["err_console", "errors_exit_2", "fail"]

F = TypeVar("F", bound=Callable[..., Any])


def err_console() -> Console:
    """A console on stderr without syntax highlighting."""
    return Console(stderr=True, highlight=False, soft_wrap=True)


def fail(message: str) -> typer.Exit:
    """Print ``message`` as an error line and return the exit to raise."""
    err_console().print(f"[bold red]error:[/bold red] [red]{escape(message)}[/red]")
    return typer.Exit(code=2)


def errors_exit_2(func: F) -> F:
    """Turn privnoise errors and file errors raised by a command into :func:`fail`."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except PrivnoiseError as exc:
            raise fail(str(exc)) from None
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            raise fail(f"{where}{exc.strerror or exc}") from None

    return wrapper  # type: ignore[return-value]
