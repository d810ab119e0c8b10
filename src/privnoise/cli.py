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
modules of their own, the other areas' commands beside their helpers); :mod:`privnoise._cli.application` makes the
application, its root options (``--version``, ``-v``, ``-q``) and adds the commands in the order ``privnoise --help``
lists them. This module is the entry point: a plain ``release`` or ``stream`` command line is answered without
building the application (no other command's module is imported), and ``app`` is built on first access.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["app", "main"]  # noqa: F822 (app: module __getattr__, built on first access)


def main() -> None:
    """Entry point of the ``privnoise`` console script (a plain ``release`` or ``stream`` command line is parsed
    without typer's per-option converters, and without the other commands: :mod:`privnoise._cli.quick`)."""
    from ._cli.quick import run_plain

    if not run_plain(sys.argv[1:]):
        from ._cli.application import app

        app()


def __getattr__(name: str) -> Any:
    """``app``, the Typer application (built on first access: :mod:`privnoise._cli.application`)."""
    if name == "app":
        from ._cli.application import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":  # pragma: no cover
    main()
