"""The web console: pages for the data owner and the queriers, served by the query server's own application.

Mounted by :func:`privnoise.server.app.create_app` under ``/console`` when ``[console] enabled`` (by default when
the server listens on loopback). Server-rendered Jinja2 templates with a small script of the server's own (no
build step, no third-party script); every page works without it.

* The owner (admin key): datasets with columns, bounds, policies and global budgets; for each Fisher policy the
  privacy/quality trade-off and each column's per-record Cramér–Rao bound after the releases so far; queriers with
  their budgets (bars per dataset, beside the datasets' global budgets); adding a querier (its key shown once) and
  revoking one; the ledger, filtered, sorted, paged and exported as CSV. (:mod:`.owner`)
* A querier (their key): a query composed by a form built from the query language (:mod:`.queryform`) or written as
  text, answered by the API's own path; the answer with its guarantee, whatever else the API says of it and the
  remaining budget; a history of their answers (:mod:`.querier`), exported as CSV or JSON (:mod:`.exports`).
* Security: keys exchanged once for a server-side session (:mod:`.signin`, :mod:`.sessions`), a CSRF token on every
  form, a strict Content-Security-Policy, autoescaped templates, cross-site posts refused, bodies limited and
  authenticated before they are read (:mod:`.guard`).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .guard import PREFIX

if TYPE_CHECKING:
    from fastapi import FastAPI
    from jinja2 import Environment
    from sqlalchemy.engine import Engine

    from ..config import ServerConfig
    from ..gate import Authenticator
    from ..service import Service
    from .sessions import SessionStore

__all__ = ["PREFIX", "Console", "mount"]


@dataclass(frozen=True)
class Console:
    """What the console's routes use (``app.state.console``)."""

    config: ServerConfig
    service: Service
    engine: Engine
    authenticator: Authenticator
    sessions: SessionStore
    env: Environment


def mount(app: FastAPI, *, config: ServerConfig, service: Service, authenticator: Authenticator) -> None:
    """Add the console's routes, static files and guard to ``app`` (the API's gate lets ``/console`` through)."""
    from fastapi.staticfiles import StaticFiles

    from . import exports, owner, querier, signin
    from .guard import ConsoleGuard
    from .render import STATIC, environment, refusal_page
    from .sessions import SessionStore

    env = environment()
    sessions = SessionStore(
        service.engine, service.reader, lifetime=_dt.timedelta(minutes=config.console.session_minutes)
    )
    app.state.console = Console(config, service, service.engine, authenticator, sessions, env)
    for router in (signin.router, owner.router, querier.router, exports.router):
        app.include_router(router)
    app.mount(f"{PREFIX}/static", StaticFiles(directory=STATIC), name="console-static")

    def refuse(scope: Any, status: int, message: str) -> tuple[int, bytes]:
        return refusal_page(env, scope, status, message)

    app.add_middleware(ConsoleGuard, sessions=sessions, max_body=config.max_body_bytes, refuse=refuse)
