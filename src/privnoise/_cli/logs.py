"""Logging of the ``privnoise`` command: everything goes to stderr, stdout carries results only.

``-v``/``--verbose`` and ``-q``/``--quiet`` set one verbosity for privnoise's own messages and for the libraries
it drives (uvicorn, SQLAlchemy):

=========  ===================  ==================
verbosity  privnoise messages   other libraries
=========  ===================  ==================
``-qq``    errors               errors
``-q``     warnings             warnings
(none)     information          warnings
``-v``     debug                information
``-vv``    debug                debug
=========  ===================  ==================
"""

from __future__ import annotations

import logging
import sys

__all__ = ["configure", "library_level", "own_level"]

_MARK = "_privnoise_cli_handler"


def own_level(verbosity: int) -> int:
    """The level of privnoise's own loggers at ``verbosity`` (−2 … 2)."""
    return {-2: logging.ERROR, -1: logging.WARNING, 0: logging.INFO}.get(max(verbosity, -2), logging.DEBUG)


def library_level(verbosity: int) -> int:
    """The level of other libraries' loggers (uvicorn, SQLAlchemy) at ``verbosity``."""
    if verbosity <= -2:
        return logging.ERROR
    return {1: logging.INFO}.get(verbosity, logging.WARNING if verbosity < 1 else logging.DEBUG)


class _Formatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.exc_info:
            message += "\n" + self.formatException(record.exc_info)
        if not record.name.startswith("privnoise"):
            message = f"[{record.name}] {message}"
        if record.levelno >= logging.ERROR:
            return f"error: {message}"
        if record.levelno >= logging.WARNING:
            return f"warning: {message}"
        return message


class _StderrHandler(logging.Handler):
    """Writes to whatever ``sys.stderr`` is when a record arrives (never to a stream that has been replaced)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:  # pragma: no cover - a closed or broken stderr
            self.handleError(record)


def configure(verbosity: int) -> None:
    """Send log records to stderr at the levels of ``verbosity`` (replacing an earlier set-up)."""
    root = logging.getLogger()
    for handler in [h for h in root.handlers if getattr(h, _MARK, False)]:
        root.removeHandler(handler)
    handler = _StderrHandler()
    handler.setFormatter(_Formatter())
    setattr(handler, _MARK, True)
    root.addHandler(handler)
    root.setLevel(library_level(verbosity))
    logging.getLogger("privnoise").setLevel(own_level(verbosity))
