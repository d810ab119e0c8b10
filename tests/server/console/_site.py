"""The demo's server for the console tests, a headless Chromium, and what every page is checked for.

``demo_site(tmp_path, database_url)`` writes the demo's ``owner.toml`` (``privnoise demo``'s own text and data:
households, their regions and mean daily kWh) with the database asked for, creates the database and the admin key,
runs the server (``python -m privnoise.server``) and yields a :class:`Site`.

``launch_chromium()`` starts Debian's ``chromium`` (or ``PRIVNOISE_CHROMIUM``) headless through Playwright's
``executable_path``; nothing is downloaded. Without a browser or without Playwright the tests skip with the
reason (``PRIVNOISE_REQUIRE_BROWSER=1`` turns that into a failure, as a CI job dedicated to the console would).

:class:`Inspector` watches a page: every URL requested (no key may appear in one), every CSP violation the browser
reports, and, for each page visited, screenshots at desktop and phone widths kept in ``test-artifacts/console/``,
horizontal scrolling at both widths, form fields without a label, page weight and time to first render from the
Performance API (written to ``test-artifacts/console/metrics.json``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server._harness import REPO, ServerProcess, _fresh_postgres_database, running_server

ARTIFACTS = REPO / "test-artifacts" / "console"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@dataclass
class Site:
    url: str
    server: ServerProcess
    admin_key: str
    database: str
    config: Path

    @property
    def console(self) -> str:
        return self.url + "/console"


def _unavailable(reason: str) -> None:
    if os.environ.get("PRIVNOISE_REQUIRE_BROWSER") == "1":
        pytest.fail(f"browser tests required but {reason}")
    pytest.skip(f"browser tests skipped: {reason} (scripts/ensure-chromium.sh installs Debian's chromium)")


@contextlib.contextmanager
def launch_chromium() -> Iterator[Any]:
    executable = os.environ.get("PRIVNOISE_CHROMIUM") or shutil.which("chromium")
    if not executable:
        _unavailable("no chromium on PATH")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright for Python is not installed (the test extra)")
    with sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        except Exception as exc:  # the browser cannot start here: say why
            _unavailable(f"{executable} did not start ({str(exc).splitlines()[0]})")
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def demo_site(tmp_path: Path, database_url: str, *, console: str = "") -> Iterator[Site]:
    """The demo's owner.toml and data on ``database_url`` ("sqlite" or a PostgreSQL server), served."""
    from privnoise._cli.demo import DAYS
    from privnoise._cli.demo_setup import OWNER_TOML, write_households
    from privnoise.sample_data import smart_meter_data
    from privnoise.server import store
    from privnoise.server.config import load_config

    tmp_path.mkdir(parents=True, exist_ok=True)
    write_households(smart_meter_data(200, DAYS, rng=2024), tmp_path / "households.csv")
    database = "sqlite" if database_url == "sqlite" else _fresh_postgres_database(database_url)
    text = OWNER_TOML.replace('database = "sqlite"', f'database = "{database}"') + console
    path = tmp_path / "owner.toml"
    path.write_text(text, encoding="utf-8")
    config = load_config(path)
    engine = store.init_database(config)
    try:
        admin = store.ensure_admin(engine, config)
    finally:
        engine.dispose()
    assert admin is not None
    with running_server(path) as server:
        yield Site(server.url, server, admin, "sqlite" if database == "sqlite" else "postgresql", path)


_METRICS_SCRIPT = """() => new Promise((resolve) => {
  // waits for the first contentful paint (an event, not a timer), then reads the navigation's entries
  new PerformanceObserver((list, observer) => {
    const paint = list.getEntries().find((entry) => entry.name === "first-contentful-paint");
    if (!paint) return;
    observer.disconnect();
    const nav = performance.getEntriesByType("navigation")[0];
    const resources = performance.getEntriesByType("resource");
    resolve({
      document_bytes: nav.decodedBodySize,
      document_transferred_bytes: nav.transferSize,
      resource_bytes: resources.reduce((s, r) => s + r.decodedBodySize, 0),
      page_weight_bytes: nav.decodedBodySize + resources.reduce((s, r) => s + r.decodedBodySize, 0),
      first_contentful_paint_ms: paint.startTime,
      dom_content_loaded_ms: nav.domContentLoadedEventEnd,
    });
  }).observe({type: "paint", buffered: true});
})"""

_LAYOUT_SCRIPT = """() => {
  const unlabelled = [];
  for (const el of document.querySelectorAll("input, select, textarea")) {
    if (el.type === "hidden") continue;
    if ((el.labels && el.labels.length) || el.getAttribute("aria-label")) continue;
    unlabelled.push(el.name || el.id || el.outerHTML.slice(0, 60));
  }
  return {
    scroll_width: document.documentElement.scrollWidth,
    client_width: document.documentElement.clientWidth,
    unlabelled: unlabelled,
  };
}"""


@dataclass
class Inspector:
    """Watches the pages of one browser context (see the module docstring)."""

    label: str
    urls: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    shots: list[str] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)

    def attach(self, page: Any) -> Any:
        page.on("request", lambda request: self.urls.append(request.url))
        page.on(
            "console",
            lambda message: (
                self.violations.append(message.text)
                if "Content Security Policy" in message.text or "Refused to" in message.text
                else None
            ),
        )
        return page

    def inspect(self, page: Any, name: str) -> None:
        """Screenshots of the current page at desktop and phone widths, and its layout checks."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.metrics[name] = page.evaluate(_METRICS_SCRIPT)
        for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
            page.set_viewport_size(size)
            layout = page.evaluate(_LAYOUT_SCRIPT)
            assert layout["scroll_width"] <= layout["client_width"], (
                f"{name} scrolls horizontally at {size['width']} px: {layout}"
            )
            assert not layout["unlabelled"], f"{name}: form fields without a label: {layout['unlabelled']}"
            shot = ARTIFACTS / f"{self.label}-{name}-{label}.png"
            page.screenshot(path=str(shot), full_page=True)
            self.shots.append(shot.name)
        page.set_viewport_size(DESKTOP)

    def write_metrics(self) -> None:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"metrics-{self.label}.json"
        path.write_text(json.dumps(self.metrics, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def sign_in(page: Any, site: Site, key: str) -> None:
    page.goto(site.console + "/sign-in")
    page.fill("#key", key)
    with page.expect_navigation():
        page.click("form[action$='/sign-in'] button[type=submit]")


def api(site: Site, key: str) -> httpx.Client:
    return httpx.Client(base_url=site.url, headers={"Authorization": f"Bearer {key}"}, timeout=60.0)
