"""Fixtures of the server tests: ``database_url`` runs each test on SQLite and on a throwaway PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def _postgres_url() -> Iterator[str]:
    try:
        from tests.server._postgres import throwaway_postgres
    except ImportError:
        pytest.skip(
            "PostgreSQL tests skipped: tests/server/_postgres.py (throwaway_postgres) is not there yet."
        )
    with throwaway_postgres() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest) -> str:
    """``"sqlite"`` (the embedded default) or the URL of a throwaway PostgreSQL server on loopback."""
    if request.param == "sqlite":
        return "sqlite"
    return str(request.getfixturevalue("_postgres_url"))
