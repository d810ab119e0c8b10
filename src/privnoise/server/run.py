"""Serving: one process, or several worker processes over the same database.

``serve(config)`` creates the tables and imports the datasets once, then runs uvicorn on ``config.host`` and
``config.port``: in this process when ``workers = 1``, else with uvicorn's supervisor starting ``workers``
processes that share the listening socket; each builds its own app (:func:`worker_app`) over the same database,
whose transactions (and the row locks of PostgreSQL) keep the budgets exact across processes. A worker dies
with its supervisor (Linux: ``PR_SET_PDEATHSIG``), so a ``kill -9`` of the server leaves no process behind.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from typing import Any

from .config import ServerConfig, load_config

__all__ = ["serve", "worker_app"]

CONFIG_VARIABLE = "PRIVNOISE_SERVER_CONFIG"
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    if not sys.platform.startswith("linux"):  # pragma: no cover
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - best effort
        pass


def worker_app() -> Any:
    """The app of one worker process (uvicorn factory): the configuration named by the environment."""
    from .app import create_app

    _die_with_parent()
    return create_app(load_config(os.environ[CONFIG_VARIABLE]), init=False)


def serve(config: ServerConfig, *, host: str | None = None, port: int | None = None) -> None:
    """Run the server of ``config`` until it is stopped (see the module docstring)."""
    import uvicorn

    from . import store
    from .app import create_app

    host = host or config.host
    port = config.port if port is None else port
    options: dict[str, Any] = {"host": host, "port": port, "log_level": "warning", "access_log": False}
    if config.workers == 1:
        uvicorn.run(create_app(config), **options)
        return
    store.init_database(config).dispose()
    os.environ[CONFIG_VARIABLE] = str(config.path)
    uvicorn.run("privnoise.server.run:worker_app", factory=True, workers=config.workers, **options)
