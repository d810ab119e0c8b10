"""The server's settings: the ``[server]`` and ``[console]`` tables of ``owner.toml``.

:class:`ServerConfig` is the whole validated configuration (with its datasets, :mod:`.datasets`) as
:func:`~privnoise.server.config.load_config` returns it; :class:`ServerSection` and :class:`ConsoleSection` are
the schemas of the two tables. :func:`sqlalchemy_url` maps a database URL to its driver and :func:`is_loopback`
says whether the server listens on this machine only (the console's default).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, Field, field_validator

from .config_rules import STRICT
from .datasets import DatasetSpec

__all__ = [
    "ConsoleConfig",
    "ConsoleSection",
    "ServerConfig",
    "ServerSection",
    "is_loopback",
    "sqlalchemy_url",
]


@dataclass(frozen=True, slots=True)
class ConsoleConfig:
    """``[console]``: the web console for the owner and the queriers (see ``docs/server.md``)."""

    enabled: bool = True
    session_minutes: float = 30.0
    secure_cookies: bool = False  # Secure cookies even when a request did not come over TLS (behind a proxy)
    page_size: int = 25


@dataclass(frozen=True, slots=True)
class ServerConfig:
    path: Path
    database_url: str
    host: str = "127.0.0.1"
    port: int = 8000
    datasets: dict[str, DatasetSpec] = field(default_factory=dict)
    workers: int = 1
    max_body_bytes: int = 16384
    api_docs: bool = False
    admin_key_hash: str | None = None
    key_cache_seconds: float = 300.0
    auth_failures: int = 10
    auth_window_seconds: float = 60.0
    auth_tarpit_seconds: float = 1.0
    trusted_proxies: tuple[str, ...] = ()  # peers whose X-Forwarded-For is believed (addresses or networks)
    console: ConsoleConfig = field(default_factory=ConsoleConfig)


def sqlalchemy_url(url: str) -> str:
    """Map ``postgresql://`` to the psycopg 3 driver; other URLs unchanged."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


class ServerSection(BaseModel):
    model_config = STRICT
    database: str = "sqlite"
    host: str = "127.0.0.1"
    port: Annotated[int, Field(ge=0, le=65535, strict=True)] = 8000
    workers: Annotated[int, Field(ge=1, le=64, strict=True)] = 1
    max_body_bytes: Annotated[int, Field(ge=256, le=16 * 2**20, strict=True)] = 16384
    api_docs: Annotated[bool, Field(strict=True)] = False
    admin_key_hash: str | None = None
    key_cache_seconds: Annotated[float, Field(ge=0, le=86400, allow_inf_nan=False)] = 300.0
    auth_failures: Annotated[int, Field(ge=1, le=10**6, strict=True)] = 10
    auth_window_seconds: Annotated[float, Field(gt=0, le=86400, allow_inf_nan=False)] = 60.0
    auth_tarpit_seconds: Annotated[float, Field(ge=0, le=60, allow_inf_nan=False)] = 1.0
    trusted_proxies: Annotated[list[str], Field(max_length=256)] = []

    @field_validator("trusted_proxies")
    @classmethod
    def _proxies(cls, v: list[str]) -> list[str]:
        import ipaddress

        for entry in v:
            try:
                ipaddress.ip_network(entry, strict=False)
            except ValueError:
                raise ValueError(f"must be IP addresses or CIDR networks like '10.0.0.0/8'; got {entry!r}") from None
        return v

    @field_validator("database")
    @classmethod
    def _database(cls, v: str) -> str:
        if not v or not (
            v == "sqlite" or v.startswith(("sqlite:", "postgresql:", "postgres:", "postgresql+psycopg:"))
        ):
            raise ValueError(f"must be 'sqlite', a sqlite:/// URL or a postgresql:// URL; got {v!r}")
        return v

    @field_validator("admin_key_hash")
    @classmethod
    def _admin_hash(cls, v: str | None) -> str | None:
        from .keys import parse_admin_key_hash

        if v is not None and parse_admin_key_hash(v) is None:
            raise ValueError(
                "must be the output of `python -m privnoise.server hash-key` (<key id>:scrypt$...)"
            )
        return v


class ConsoleSection(BaseModel):
    model_config = STRICT
    enabled: Annotated[bool, Field(strict=True)] | None = None
    session_minutes: Annotated[float, Field(gt=0, le=24 * 60, allow_inf_nan=False)] = 30.0
    secure_cookies: Annotated[bool, Field(strict=True)] = False
    page_size: Annotated[int, Field(ge=5, le=500, strict=True)] = 25


def is_loopback(host: str) -> bool:
    """Whether ``host`` names a loopback address (127.0.0.0/8, ::1, localhost)."""
    import ipaddress

    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
