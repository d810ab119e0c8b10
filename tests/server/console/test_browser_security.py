"""Attacks on the console, in a real browser: scripts injected through a query text and a querier name are shown
as text and never run; form posts without the CSRF token, or from another site, are refused and change nothing;
the pages can be used with the keyboard alone."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("jinja2")

from tests.server.console._site import Inspector, Site, api, sign_in  # noqa: E402

#: Markup that would set ``window.pwned`` if a page ever rendered it instead of escaping it.
PAYLOAD = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">'
#: The same within the 64 characters the name field takes.
NAME_PAYLOAD = '<img src=x onerror="window.pwned=2"><script>pwned=1</script>'


def _add_querier(page: Any, site: Site, name: str) -> str:
    page.goto(site.console + "/queriers")
    page.fill("#q-name", name)
    page.fill("#q-epsilon", "1")
    with page.expect_navigation():
        page.click("form[action$='/queriers'] button[type=submit]")
    return str(page.input_value("#new-key"))


def _never_ran(page: Any) -> None:
    assert page.evaluate("() => window.pwned") is None
    assert page.locator("main script, main img[src=x]").count() == 0


def test_a_script_in_a_query_text_is_shown_as_text_and_never_runs(chromium: Any, site: Site) -> None:
    inspector = Inspector(f"{site.database}-injection")
    owner = inspector.attach(chromium.new_context().new_page())
    sign_in(owner, site, site.admin_key)
    key = _add_querier(owner, site, "eve")
    page = inspector.attach(chromium.new_context().new_page())
    sign_in(page, site, key)
    text = f"mean(kwh) from households where region = '{PAYLOAD}'"  # a valid query: the string is a literal
    page.fill("#t-query", text)
    with page.expect_navigation():
        page.click("section[aria-labelledby=as-text] button[data-ask]")
    assert "/console/answers/" in page.url  # answered and charged like any query
    assert page.inner_text("code.query-text") == text
    _never_ran(page)
    inspector.inspect(page, "answer")
    page.goto(site.console + "/history")
    assert PAYLOAD in page.inner_text("td.code")
    _never_ran(page)
    # the owner's ledger and its CSV show it as text too
    owner.goto(site.console + "/ledger")
    assert PAYLOAD in owner.inner_text("tr[data-ledger] td.code")
    _never_ran(owner)
    inspector.inspect(owner, "ledger")
    # a query text that does not parse comes back in the error, escaped
    page.goto(site.console + "/query")
    page.fill("#t-query", f"mean({PAYLOAD})")
    with page.expect_navigation():
        page.click("section[aria-labelledby=as-text] button[data-ask]")
    assert "expected" in page.inner_text("[data-error]")
    _never_ran(page)
    assert inspector.violations == []


def test_a_script_in_a_querier_name_is_refused_and_escaped(chromium: Any, sqlite_site: Site) -> None:
    site = sqlite_site
    inspector = Inspector("sqlite-name")
    page = inspector.attach(chromium.new_context().new_page())
    sign_in(page, site, site.admin_key)
    page.goto(site.console + "/queriers")
    page.fill("#q-name", NAME_PAYLOAD)
    page.fill("#q-epsilon", "1")
    with page.expect_navigation() as navigation:
        page.click("form[action$='/queriers'] button[type=submit]")
    assert navigation.value.status == 422
    assert "name" in page.inner_text("#add-error")
    assert page.input_value("#q-name") == NAME_PAYLOAD  # given back as the field's value, escaped
    _never_ran(page)
    inspector.inspect(page, "refused-name")
    with api(site, site.admin_key) as owner:
        assert [q["name"] for q in owner.get("/v1/admin/queriers").json()["queriers"]] == ["admin"]
    assert inspector.violations == []


def test_posts_without_the_csrf_token_or_from_another_site_are_refused(
    chromium: Any, sqlite_site: Site
) -> None:
    site = sqlite_site
    context = chromium.new_context()
    page = context.new_page()
    sign_in(page, site, site.admin_key)
    page.goto(site.console + "/queriers")
    # a script of the page itself posting without the token: the session cookie goes along, the token does not
    status = page.evaluate(
        """async (url) => (await fetch(url, {method: "POST", body: new URLSearchParams({name: "mallory",
        epsilon: "1"})})).status""",
        site.console + "/queriers",
    )
    assert status == 403
    # a form on another site posting to the console (its page served by the test, no network)
    attacker = "http://attacker.test/"
    form = (
        f'<form id="f" method="post" action="{site.console}/queriers"><input name="name" value="mallory">'
        '<input name="epsilon" value="1"><input name="csrf" value="guess"></form>'
    )
    context.route(attacker, lambda route: route.fulfill(status=200, content_type="text/html", body=form))
    page.goto(attacker)
    with page.expect_navigation() as navigation:
        page.evaluate("() => document.getElementById('f').submit()")
    assert navigation.value.status == 403
    assert "Cross-site" in page.inner_text("main")
    # and signing out with a stale token is refused too: the session lives on
    page.goto(site.console + "/datasets")
    token = page.get_attribute("form.sign-out input[name=csrf]", "value")
    assert token
    status = page.evaluate(
        """async (url) => (await fetch(url, {method: "POST", body: new URLSearchParams({csrf: "x"})})).status""",
        site.console + "/sign-out",
    )
    assert status == 403
    with api(site, site.admin_key) as owner:
        assert [q["name"] for q in owner.get("/v1/admin/queriers").json()["queriers"]] == ["admin"]
    context.close()


def test_the_console_works_with_the_keyboard_alone(chromium: Any, sqlite_site: Site) -> None:
    site = sqlite_site
    page = chromium.new_context().new_page()
    page.goto(site.console + "/sign-in")
    # the key field has the focus; type the key and press Enter
    assert page.evaluate("() => document.activeElement.id") == "key"
    page.keyboard.type(site.admin_key)
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.url.endswith("/console/datasets")
    # the first Tab reaches the skip link, which moves to the content
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.textContent") == "Skip to the content"
    # Tab on to the Ledger link and follow it
    for _ in range(10):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.textContent") == "Ledger":
            break
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.url.endswith("/console/ledger")
    # sorting by a header is a link: reachable and followed with Enter
    header = page.locator("th a", has_text="querier")
    header.focus()
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert "sort=querier" in page.url
    assert page.get_attribute("th[aria-sort=ascending] a", "href") is not None
