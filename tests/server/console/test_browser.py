"""The console in a real browser (headless Chromium), on SQLite and on PostgreSQL.

The owner signs in with the admin key and adds the demo's analyst (the key is shown once); the analyst signs in
with it and runs the demo's query sequence (``privnoise demo``) through the query form until the budgets refuse;
every number the pages show is checked against the API's own answer (``/v1/budget``, ``/v1/admin/...``); the owner
reads the queriers' bars, the ledger (and its CSV export), the dataset's figures, and revokes the analyst.

Every page visited is screenshotted at 1280 px and 390 px (``test-artifacts/console/``), must not scroll
horizontally at either width, must label every form field, and must cause no Content-Security-Policy violation;
no URL requested ever holds a key, and no page after the one that first showed a key holds it again.
"""

from __future__ import annotations

import csv
import io
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("jinja2")

from privnoise._cli.demo import QUERIES  # noqa: E402
from privnoise._cli.demo_setup import ANALYST_EPSILON, ANALYST_FISHER_FLOOR  # noqa: E402
from privnoise.server.querylang import ARGUMENTS, parse_query  # noqa: E402
from tests.server.console._site import Inspector, Site, api, sign_in  # noqa: E402


def shown_budget(page: Any, scope: str) -> dict[str, dict[str, str]]:
    """The exact numbers of the budget bars under ``scope``: {field: {spent, budget, remaining, ...}}."""
    out: dict[str, dict[str, str]] = {}
    for bar in page.locator(f"{scope} [data-budget]").all():
        numbers = {}
        for span in bar.locator("[data-exact]").all():
            value = span.get_attribute("data-value")
            numbers[span.get_attribute("data-exact")] = span.text_content() if value is None else value
        out[bar.get_attribute("data-budget")] = numbers
    return out


def assert_budget_matches(shown: dict[str, dict[str, str]], view: dict[str, Any]) -> None:
    """The page's bars against an API budget view: exact rationals for (ε, δ), exact floats for Fisher."""
    for name in ("epsilon", "delta"):
        for part in ("spent", "budget", "remaining"):
            assert shown[name][part] == view[name][part], (name, part, shown[name], view[name])
    for column, entry in view.get("fisher", {}).items():
        numbers = shown[f"fisher.{column}"]
        assert numbers["information"] == entry["information"]
        expected = "" if entry["record_bound"] is None else repr(entry["record_bound"])
        assert numbers["record_bound"] == expected


def ask_by_form(page: Any, site: Site, text: str) -> int:
    """Fill the query form for ``text`` (a demo query) and submit it; return the HTTP status of the result."""
    spec = parse_query(text)
    page.goto(f"{site.console}/query?dataset=households")
    if page.input_value("#c-kind") != spec.kind:
        with page.expect_navigation():  # the chooser reloads the form for the kind (console.js)
            page.select_option("#c-kind", spec.kind)
    for argument in ARGUMENTS[spec.kind].arguments:
        page.select_option(f"#f-arg_{argument.field}", getattr(spec, argument.field))
    for i, condition in enumerate(spec.where):
        page.select_option(f"#w-col-{i}", condition.column)
        page.select_option(f"#w-op-{i}", condition.op)
        value = condition.value
        page.fill(f"#w-val-{i}", value if isinstance(value, str) else repr(value))
    with page.expect_navigation() as navigation:
        page.click("section[aria-labelledby=compose] form[method=post] button[data-ask]")
    response = navigation.value
    # a redirect to the answer's page (303) ends on a 200 page; a refusal is the form again with its status
    return 200 if "/console/answers/" in page.url else response.status


def test_demo_sequence_through_the_console(chromium: Any, site: Site) -> None:
    label = site.database
    owner, analyst = Inspector(f"{label}-owner"), Inspector(f"{label}-analyst")
    owner_context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = owner.attach(owner_context.new_page())

    page.goto(site.console + "/")
    assert page.url.endswith("/console/sign-in")
    owner.inspect(page, "sign-in")
    sign_in(page, site, site.admin_key)
    assert page.url.endswith("/console/datasets")
    owner.inspect(page, "datasets")

    # the owner adds the demo's analyst: the key is shown once
    page.goto(site.console + "/queriers")
    page.fill("#q-name", "analyst")
    page.fill("#q-epsilon", repr(ANALYST_EPSILON))
    page.fill("#q-delta", "0")
    page.fill("#q-floor", repr(ANALYST_FISHER_FLOOR))
    with page.expect_navigation():
        page.click("form[action$='/queriers'] button[type=submit]")
    key = page.input_value("#new-key")
    assert key.startswith("pn_")
    owner.inspect(page, "querier-added")

    # the analyst signs in with that key and runs the demo's queries through the form until refused
    analyst_context = chromium.new_context(viewport={"width": 1280, "height": 900})
    qpage = analyst.attach(analyst_context.new_page())
    sign_in(qpage, site, key)
    assert qpage.url.endswith("/console/query")
    analyst.inspect(qpage, "query")
    outcomes = []
    with api(site, key) as as_analyst, api(site, site.admin_key) as as_owner:
        for text in QUERIES:
            status = ask_by_form(qpage, site, text)
            outcomes.append(status)
            budget = as_analyst.get("/v1/budget").json()["datasets"]["households"]
            if status == 200:
                ledger_id = int(qpage.inner_text("h1 [data-field=ledger_id]"))
                row = next(
                    r for r in as_owner.get("/v1/admin/ledger").json()["ledger"] if r["id"] == ledger_id
                )
                assert row["querier"] == "analyst" and row["status"] == "charged"
                charged = qpage.locator("[data-section=charged] [data-field=epsilon]")
                assert charged.get_attribute("data-value") == row["epsilon"]  # shown as a decimal
                assert float(charged.inner_text()) == pytest.approx(float(Fraction(row["epsilon"])), rel=1e-5)
                assert_budget_matches(shown_budget(qpage, "[data-dataset=households]"), budget)
                if "value_shown" not in analyst.metrics and qpage.locator("p[data-field=value]").count():
                    analyst.inspect(qpage, "answer")
                    analyst.metrics["value_shown"] = True
                if qpage.locator("ol[data-field=values]").count() and "identity_shown" not in analyst.metrics:
                    assert qpage.inner_text("[data-field=count]") == "200"
                    analyst.inspect(qpage, "answer-identity")
                    analyst.metrics["identity_shown"] = True
            else:
                assert status == 429, (text, status, qpage.inner_text("main"))
                assert qpage.inner_text("[data-error]") == "budget exceeded"
                assert_budget_matches(shown_budget(qpage, ".outcome"), budget)
                if "refused_shown" not in analyst.metrics:
                    analyst.inspect(qpage, "refused")
                    analyst.metrics["refused_shown"] = True
        # the demo's sequence: answered until the budgets refuse (ε = 1 spent exactly, the Fisher floor reached)
        assert outcomes == [200, 200, 200, 200, 200, 429, 200, 200, 429, 429]
        assert budget["epsilon"]["remaining"] == "0"

        qpage.goto(site.console + "/history")
        assert qpage.inner_text("[data-total]") == str(outcomes.count(200))
        analyst.inspect(qpage, "history")

        # the owner's views against the API's
        page.goto(site.console + "/queriers")
        shown = shown_budget(page, "tr[data-querier=analyst] [data-dataset=households]")
        assert_budget_matches(
            shown, as_owner.get("/v1/admin/queriers/analyst/budget").json()["datasets"]["households"]
        )
        global_view = as_owner.get("/v1/admin/datasets").json()["datasets"]["households"]
        assert_budget_matches(shown_budget(page, "#global ~ [data-dataset=households]"), global_view)
        owner.inspect(page, "queriers")

        ledger = as_owner.get("/v1/admin/ledger", params={"limit": 1000}).json()["ledger"]
        page.goto(site.console + "/ledger?querier=analyst")
        assert page.inner_text(".pager [data-total] >> nth=0") == str(len(ledger))
        for row in ledger:  # shown as a decimal, the exact rational kept in data-value
            cell = page.locator(f"tr[data-ledger='{row['id']}'] [data-field=epsilon]")
            assert cell.get_attribute("data-value") == row["epsilon"]
            assert float(cell.inner_text()) == pytest.approx(float(Fraction(row["epsilon"])), rel=1e-5)
            assert "/" not in cell.inner_text()
        owner.inspect(page, "ledger")
        with page.expect_download() as download:
            page.click("text=Export as CSV")
        exported = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text(encoding="utf-8"))))
        assert [int(r["id"]) for r in exported] == sorted(r["id"] for r in ledger)
        assert [r["epsilon"] for r in exported] == [
            r["epsilon"] for r in sorted(ledger, key=lambda r: r["id"])
        ]

        page.goto(site.console + "/datasets/households")
        # ε spent over time, the identity policy's trade-off, kwh's bound
        assert page.locator("svg.figure").count() == 3
        assert shown_budget(page, "#bounds ~ figure")["fisher.kwh"]["record_bound"] == repr(
            global_view["fisher"]["kwh"]["record_bound"]
        )
        owner.inspect(page, "dataset")

        # keys: never in a URL, never on a page after the one that showed it
        for inspector in (owner, analyst):
            assert not [u for u in inspector.urls if key in u or site.admin_key in u or "pn_" in u]
            assert inspector.violations == []
        for path in ("/datasets", "/queriers", "/ledger", "/datasets/households"):
            page.goto(site.console + path)
            assert key not in page.content() and site.admin_key not in page.content()

        # revoking the analyst ends the key and the session at once
        page.goto(site.console + "/queriers")
        with page.expect_navigation():
            page.click("tr[data-querier=analyst] a:has-text('Revoke')")
        owner.inspect(page, "revoke")
        with page.expect_navigation():
            page.click("form[action$='/revoke'] button[type=submit]")
        assert page.locator("tr[data-querier=analyst] td[data-label=status]").inner_text() == "revoked"
        assert as_analyst.get("/v1/budget").status_code == 401
        qpage.goto(site.console + "/history")
        assert qpage.url.endswith("/console/sign-in")
    owner.write_metrics()
    analyst.write_metrics()
    owner_context.close()
    analyst_context.close()
