"""Fixtures of the console's browser tests: one headless Chromium per test module, the demo's server per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.server.console._site import Site, demo_site, launch_chromium


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with launch_chromium() as browser:
        yield browser


@pytest.fixture(params=["sqlite", "postgresql"])
def site(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Site]:
    """The demo's server on SQLite and on a throwaway PostgreSQL."""
    url = "sqlite" if request.param == "sqlite" else str(request.getfixturevalue("_postgres_url"))
    with demo_site(tmp_path, url) as running:
        yield running


@pytest.fixture
def sqlite_site(tmp_path: Path) -> Iterator[Site]:
    with demo_site(tmp_path, "sqlite") as running:
        yield running
