"""Serving: one process, or several worker processes over the same database.

``serve(config)`` creates the tables and imports the datasets once, then runs uvicorn on ``config.host`` and
``config.port``: in this process when ``workers = 1``, else with uvicorn's supervisor starting ``workers``
processes that share the listening socket; each builds its own app (:func:`worker_app`) over the same database,
whose transactions (and the row locks of PostgreSQL) keep the budgets exact across processes. A worker dies
with its supervisor (Linux: ``PR_SET_PDEATHSIG``), so a ``kill -9`` of the server leaves no process behind.
Once its app is built, a process freezes the objects it holds for the garbage collector (``gc.freeze``). Each
process serves its app behind :class:`~.app.FastLane`: queries skip the framework's middleware.

Proxy headers (``X-Forwarded-For``, ``X-Forwarded-Proto``) are ignored unless ``[server] trusted_proxies`` names
the peers allowed to send them (uvicorn's ``proxy_headers`` and ``forwarded_allow_ips``; uvicorn's own default
would trust them from loopback): the failed-key throttle keys on the client address, which a forged header
must not choose (SECURITY.md, requirement 21).
"""

from __future__ import annotations

import ctypes
import gc
import os
import signal
import socket
import sys
from typing import Any

from .config import ServerConfig, load_config

__all__ = ["serve", "serve_asgi", "worker_app"]

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


def _settled(app: Any) -> Any:
    """``app``, with every object made so far moved out of the garbage collector's sight (``gc.freeze``): a
    full collection then scans only what serving allocates, instead of stalling every request for a few
    hundred milliseconds over the libraries' objects."""
    gc.collect()
    gc.freeze()
    return app


def worker_app() -> Any:
    """The app of one worker process (uvicorn factory): the configuration named by the environment."""
    from .app import FastLane, create_app

    _die_with_parent()
    return _settled(FastLane(create_app(load_config(os.environ[CONFIG_VARIABLE]), init=False)))


def proxy_options(trusted: tuple[str, ...] = ()) -> dict[str, Any]:
    """uvicorn's options for proxy headers: believed only from the ``trusted`` addresses and networks (none by
    default: the peer's address is the client's)."""
    return {"proxy_headers": bool(trusted), "forwarded_allow_ips": ",".join(trusted)}


def serve_asgi(
    app: Any, *, host: str, port: int, workers: int = 1, factory: bool = False, **logging: Any
) -> None:
    """Serve an ASGI app with uvicorn as the privnoise server is served (the benchmark's reference uses it too).

    Several workers share one listening socket made here with ``IPPROTO_TCP``, so that asyncio sets
    ``TCP_NODELAY`` on every accepted connection (uvicorn's own socket leaves it unset, and Nagle's algorithm
    then holds the body of a response for the client's delayed acknowledgement, about 40 ms). ``logging``:
    uvicorn's ``log_level``, ``access_log`` and ``log_config`` (default: warnings only, no access log).
    """
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    options: dict[str, Any] = {"host": host, "port": port, "log_level": "warning", "access_log": False}
    options |= proxy_options()
    options |= logging
    if workers == 1:
        uvicorn.run(app, factory=factory, **options)
        return
    config = uvicorn.Config(app, factory=factory, workers=workers, **options)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        raise SystemExit(f"cannot listen on {host}:{port}: {exc}") from None
    sock.set_inheritable(True)
    Multiprocess(config, sockets=[sock]).run()


def serve(config: ServerConfig, *, host: str | None = None, port: int | None = None, **logging: Any) -> None:
    """Run the server of ``config`` until it is stopped (see the module docstring); ``logging`` as for
    :func:`serve_asgi`."""
    from . import store
    from .app import FastLane, create_app

    host = host or config.host
    port = config.port if port is None else port
    if config.workers == 1:
        app = _settled(FastLane(create_app(config)))
        serve_asgi(app, host=host, port=port, **proxy_options(config.trusted_proxies), **logging)
        return
    store.init_database(config).dispose()
    os.environ[CONFIG_VARIABLE] = str(config.path)
    serve_asgi(
        "privnoise.server.run:worker_app",
        host=host,
        port=port,
        workers=config.workers,
        factory=True,
        **proxy_options(config.trusted_proxies),
        **logging,
    )
