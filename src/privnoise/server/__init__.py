"""The trusted query server (Farokhi & Sandberg, Section 2): noisy answers under exact, durable budgets.

Needs the ``server`` extra (FastAPI, uvicorn, SQLAlchemy, httpx, psycopg). Never imported by
``import privnoise``. See ``docs/server.md``.

Modules: :mod:`.config` (owner.toml; its sections in :mod:`.settings`, :mod:`.datasets`, :mod:`.policies`),
:mod:`.db` (tables, engines), :mod:`.store` (set-up and import; :mod:`.datafiles`, :mod:`.queriers`,
:mod:`.ledger`), :mod:`.keys` (hashed API keys), :mod:`.budgets` (exact DP and Fisher budgets), :mod:`.querylang`
(the query language; :mod:`.queryspec`, :mod:`.querychecks`, :mod:`.queryjson`), :mod:`.mechanisms` (policy →
hardened noise), :mod:`.service` (charge-then-release), :mod:`.app` (the HTTP API).
"""

from .app import create_app
from .config import ServerConfig, load_config

__all__ = ["ServerConfig", "create_app", "load_config"]
