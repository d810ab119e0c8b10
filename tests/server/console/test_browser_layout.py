"""The console's tables in a real browser (headless Chromium), at 1280 px and 390 px: no word is broken inside
itself in the ledger, the history, the budgets and the owner's tables, and no page scrolls horizontally; the query
form shows the cost and accuracy of a query before Ask and disables Ask when the budget cannot pay.

A word is broken when the browser lays it out on more than one line: for every whitespace-separated word of every
text node in those tables, the range over it must give exactly one client rectangle. The check itself is shown to
fail on a cell that breaks words (a narrow cell with ``overflow-wrap: anywhere``, as the console had before).
Chromium is started as in :mod:`tests.server.console.test_browser` (skipped with the reason without it, unless
``PRIVNOISE_REQUIRE_BROWSER=1``).
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("jinja2")

from tests.server.console._site import DESKTOP, PHONE, Site, api, sign_in  # noqa: E402

TABLES = "table th, table td, .budget .bar-text"

_BROKEN_WORDS = """(selector) => {
  const broken = [];
  let words = 0;
  for (const element of document.querySelectorAll(selector)) {
    if (!element.getClientRects().length) continue;  // not rendered
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    let node;
    while ((node = walker.nextNode())) {
      const pattern = /\\S+/g;
      let match;
      while ((match = pattern.exec(node.textContent))) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const rects = Array.from(range.getClientRects()).filter((r) => r.width > 0 && r.height > 0);
        if (!rects.length) continue;  // clipped or hidden
        words += 1;
        if (rects.length !== 1) broken.push(match[0]);
      }
    }
  }
  return {broken: [...new Set(broken)], words: words,
          scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth};
}"""

_BREAKING_CELL = """() => {
  const table = document.createElement("table");
  table.id = "breaking-probe";
  const cell = table.insertRow().insertCell();
  cell.textContent = "households charged";
  cell.style.width = "3ch";
  cell.style.maxWidth = "3ch";
  cell.style.display = "block";
  cell.style.overflowWrap = "anywhere";
  cell.style.wordBreak = "break-all";
  cell.style.whiteSpace = "normal";
  document.querySelector("main").appendChild(table);
}"""


def check_layout(page: Any, name: str, *, least_words: int) -> None:
    """At 1280 px and at 390 px: no word of ``TABLES`` broken across lines, no horizontal page scroll."""
    for size in (DESKTOP, PHONE):
        page.set_viewport_size(size)
        found = page.evaluate(_BROKEN_WORDS, TABLES)
        assert found["words"] >= least_words, (name, size, found)  # the tables are there and were checked
        assert found["broken"] == [], f"{name} at {size['width']} px breaks words: {found['broken']}"
        assert found["scrollWidth"] <= found["innerWidth"], (name, size, found)
    page.set_viewport_size(DESKTOP)


def ask_text(page: Any, site: Site, text: str) -> None:
    page.goto(site.console + "/query")
    page.fill("#t-query", text)
    with page.expect_navigation():
        page.click("section[aria-labelledby=as-text] button[data-ask]")


def test_no_word_is_broken_and_no_page_scrolls_at_1280_and_390_px(chromium: Any, sqlite_site: Site) -> None:
    site = sqlite_site
    with api(site, site.admin_key) as owner_api:
        created = owner_api.post("/v1/admin/queriers", json={"name": "household_analyst", "epsilon": "1",
                                                             "delta": "0", "fisher_floor": 10.0})
        assert created.status_code == 201, created.text
        key = created.json()["key"]
    with api(site, key) as analyst_api:  # a refused query: a ledger row with its reason
        assert analyst_api.post("/v1/queries", json={"query": "quantile(kwh, 0.5)"}).status_code == 422

    analyst_context = chromium.new_context(viewport=DESKTOP)
    page = analyst_context.new_page()
    sign_in(page, site, key)
    for text in ("mean(kwh) from households", "count() from households where region = 'north'",
                 "identity(kwh) from households", "variance(kwh) from households"):
        ask_text(page, site, text)
        assert "/console/answers/" in page.url, (text, page.inner_text("main"))
    page.goto(site.console + "/history")
    assert page.locator("table.history tbody tr").count() == 4
    check_layout(page, "history", least_words=40)
    page.goto(site.console + "/query?dataset=households&kind=mean")
    check_layout(page, "query (budgets)", least_words=10)

    # the check fails where a word is broken (the probe cell), so it can fail on the console's own tables
    page.evaluate(_BREAKING_CELL)
    probe = page.evaluate(_BROKEN_WORDS, "#breaking-probe td")
    assert probe["words"] == 2 and "households" in probe["broken"], probe

    owner_context = chromium.new_context(viewport=DESKTOP)
    owner = owner_context.new_page()
    sign_in(owner, site, site.admin_key)
    owner.goto(site.console + "/ledger")
    assert owner.locator("table.ledger tbody tr").count() == 5
    check_layout(owner, "ledger", least_words=60)
    owner.goto(site.console + "/queriers")
    check_layout(owner, "queriers", least_words=10)
    owner.goto(site.console + "/datasets/households")
    assert owner.locator("[data-figure=epsilon-spent] svg").count() == 1
    check_layout(owner, "dataset", least_words=5)
    analyst_context.close()
    owner_context.close()


def test_the_form_shows_the_cost_first_and_disables_ask_without_budget(chromium: Any, sqlite_site: Site) -> None:
    site = sqlite_site
    with api(site, site.admin_key) as owner_api:
        created = owner_api.post("/v1/admin/queriers", json={"name": "short", "epsilon": "1/4", "delta": "0"})
        assert created.status_code == 201, created.text
        key = created.json()["key"]
    context = chromium.new_context(viewport=DESKTOP)
    page = context.new_page()
    sign_in(page, site, key)
    page.goto(site.console + "/query?dataset=households&kind=mean")
    assert page.inner_text("[data-preview=form] [data-field=cost]").startswith("ε 0.2, δ 0")
    assert "/(n − " in page.inner_text("[data-preview=form] [data-field=accuracy]")
    assert page.is_enabled("section[aria-labelledby=compose] button[data-ask]")
    with page.expect_navigation():
        page.click("section[aria-labelledby=compose] button[data-ask]")
    assert "/console/answers/" in page.url
    page.goto(site.console + "/query?dataset=households&kind=mean")  # 0.05 left: the mean costs 0.2
    ask = page.locator("section[aria-labelledby=compose] button[data-ask]")
    assert ask.is_disabled()
    assert "Not enough budget left for this query (ε 0.05 left)" in page.inner_text("[data-ask-why]")
    check_layout(page, "query (refused preview)", least_words=10)
    page.select_option("#f-arg_column", "kwh")  # the query changed: it may be checked or asked again
    assert ask.is_enabled()
    context.close()
