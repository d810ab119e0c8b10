"""The plain command lines of ``privnoise release`` and ``privnoise stream``, parsed without the framework's
per-option converters.

typer converts every option of a command through a pydantic ``TypeAdapter`` that it builds when the command runs:
for the 35 options of ``release`` that costs about 0.1 s with pydantic's import, more than the whole release of a
small file. A command line of the plain form ``privnoise release DATA --option VALUE ...`` (or ``privnoise stream
--option VALUE ...``) is parsed here from the command's own declarations (the flags, types, bounds and defaults of
its type hints) and the command runs directly, with the same root set-up as ``privnoise`` without root options
(verbosity 0, decimal amounts); the other commands' modules are not imported.

Anything else goes to typer, which parses it and prints its own messages: a root option, a short option, ``--``,
an option given twice, an unknown option, a value that is not a plain number where a number is expected, a number
outside an option's bounds, an unknown choice, a missing required option, a second argument. So the plain path
accepts a subset of what typer accepts and gives those command lines the same values.
"""

from __future__ import annotations

import enum
import inspect
import re
import sys
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["PLAIN_COMMANDS", "Declared", "declared_options", "parse_plain", "run_plain"]

#: The commands a plain command line may run directly: name → (module of :mod:`privnoise._cli`, function).
PLAIN_COMMANDS = {"release": ("release", "release_command"), "stream": ("systems", "stream_command")}

#: A decimal number as a command line writes it (no "nan", "inf", "1_000" or hexadecimal: those go to typer).
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\Z")
_INTEGER = re.compile(r"[+-]?\d+\Z")


class Declared(typing.NamedTuple):
    """One parameter of a command: its Python name, its value type, its bounds, its default and, for one flag of
    an on/off pair (``--header/--no-header``), the value that flag sets."""

    name: str
    kind: Any
    low: float | None
    high: float | None
    default: Any
    sets: bool = True


def _value_type(annotation: Any) -> Any:
    """``str`` of ``str | None``; the annotation itself otherwise."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        kinds = [a for a in typing.get_args(annotation) if a is not type(None)]
        return kinds[0] if len(kinds) == 1 else None
    return annotation


def _plain_info(info: Any) -> bool:
    """Whether an option's declaration leaves its value as written (no callback, prompt, environment variable,
    custom parser or type, count, and no check of a path on the file system)."""
    plain = not any(getattr(info, attribute, None) for attribute in (
        "callback", "prompt", "envvar", "parser", "click_type", "count", "flag_value", "is_eager", "exists",
        "writable", "resolve_path", "allow_dash", "path_type"))
    return plain and all(getattr(info, attribute, True) is not False for attribute in (
        "file_okay", "dir_okay", "readable", "case_sensitive"))


def declared_options(command: Callable[..., Any]) -> tuple[dict[str, Declared], Declared | None] | None:
    """(long flag → its parameter, the one positional argument or None) of a typer command, or None when the
    command declares something this parser does not read (another type, a callback, a prompt, several
    arguments)."""
    from typer.models import ArgumentInfo, OptionInfo

    func = inspect.unwrap(command)
    hints = typing.get_type_hints(func, include_extras=True)
    options: dict[str, Declared] = {}
    arguments: list[Declared] = []
    for name, parameter in inspect.signature(func).parameters.items():
        hint = hints.get(name)
        if hint is None or typing.get_origin(hint) is not typing.Annotated:
            return None
        info = next((m for m in hint.__metadata__ if isinstance(m, OptionInfo | ArgumentInfo)), None)
        kind = _value_type(typing.get_args(hint)[0])
        plain = kind in (str, int, float, bool, Path) or (isinstance(kind, type) and issubclass(kind, enum.Enum))
        if info is None or not plain or not _plain_info(info):
            return None
        default = None if parameter.default is inspect.Parameter.empty else parameter.default
        if default is None and parameter.default is inspect.Parameter.empty:
            default = inspect.Parameter.empty
        declared = Declared(name, kind, info.min, info.max, default)
        if isinstance(info, ArgumentInfo):
            arguments.append(declared)
            continue
        # in an Annotated declaration typer takes a first string that is not a default for the first flag
        first = (info.default,) if isinstance(info.default, str) else ()
        flags = [d for d in (*first, *(info.param_decls or ())) if d.startswith("--")]
        if len(flags) != 1:
            return None
        on, slash, off = flags[0].partition("/")
        if slash:  # an on/off pair: both long, of a bool
            if kind is not bool or not off.startswith("--") or "/" in off:
                return None
            options[on], options[off] = declared, Declared(name, kind, info.min, info.max, default, sets=False)
            continue
        options[on] = declared
    if len(arguments) > 1:
        return None
    return options, (arguments[0] if arguments else None)


def _converted(declared: Declared, text: str) -> Any:
    """The value of ``text`` for ``declared``, or None when typer should judge it."""
    kind = declared.kind
    if kind is str:
        return text
    if kind is Path:
        return Path(text) if text else None
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return next((member for member in kind if member.value == text), None)
    if not (_INTEGER if kind is int else _NUMBER).match(text):
        return None
    value = int(text) if kind is int else float(text)
    if (declared.low is not None and value < declared.low) or (declared.high is not None and value > declared.high):
        return None
    return value


def parse_plain(
    args: list[str], options: dict[str, Declared], argument: Declared | None
) -> tuple[dict[str, Any], dict[str, str]] | None:
    """(keyword arguments of the command, parameter name → flag of every option with a value) of the arguments
    after the command's name, or None when typer should parse them (see the module docstring)."""
    given: dict[str, Any] = {}
    flags: dict[str, str] = {}
    position = 0
    while position < len(args):
        token = args[position]
        position += 1
        if not token.startswith("-"):
            if argument is None or argument.name in given:
                return None
            value = _converted(argument, token)
            if value is None:
                return None
            given[argument.name] = value
            continue
        flag, equals, text = token.partition("=")
        declared = options.get(flag)
        if declared is None or declared.name in given:
            return None
        if declared.kind is bool:
            if equals:
                return None
            given[declared.name] = declared.sets
            flags[declared.name] = flag
            continue
        if not equals:
            if position == len(args):
                return None
            text = args[position]
            position += 1
            if text.startswith("-") and not _NUMBER.match(text):
                return None
        value = _converted(declared, text)
        if value is None:
            return None
        given[declared.name] = value
        flags[declared.name] = flag
    for declared in (*([] if argument is None else [argument]), *options.values()):
        if declared.name in given:
            continue
        if declared.default is inspect.Parameter.empty:
            return None
        given[declared.name] = declared.default
        if declared.default is not None and declared is not argument:  # as typer names them: options with a value
            flags[declared.name] = next(f for f, d in options.items() if d is declared)
    return given, flags


def run_plain(argv: list[str]) -> bool:
    """Run ``privnoise release`` or ``privnoise stream`` (:data:`PLAIN_COMMANDS`) from ``argv`` (without the
    program's name) when its command line is plain; False (nothing done) when typer should parse it."""
    if not argv or argv[0] not in PLAIN_COMMANDS:
        return False
    import importlib

    module, function = PLAIN_COMMANDS[argv[0]]
    command = getattr(importlib.import_module(f"{__package__}.{module}"), function)
    found = declared_options(command)
    if found is None:
        return False
    parsed = parse_plain(argv[1:], *found)
    if parsed is None:
        return False
    import typer

    from . import logs
    from .errors import use_flags

    kwargs, flags = parsed
    logs.configure(0)
    use_flags(flags)
    try:
        command(**kwargs)
    except typer.Exit as exc:  # the command's one-line error was printed
        sys.exit(exc.exit_code)
    return True
