"""The console on a dataset whose budgets compose by the Rényi filter (``composition = "renyi"``): the budget shows the
ε the filter states beside the sum of the charged ε, the dry run says what the charges compose to instead of a
"remaining" of the sum (which reaches 0 while queries are still answered), and a refusal says why in the same terms.
"""

from __future__ import annotations

import re
from fractions import Fraction as F
from html import unescape
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("jinja2")

from fastapi.testclient import TestClient  # noqa: E402

from privnoise.server.app import create_app  # noqa: E402
from privnoise.server.config import load_config  # noqa: E402
from tests.server.console.test_experience import ASK, Site  # noqa: E402
from tests.server.test_renyi_budgets import CHARGE, QUERIER, QUERY, _config, _provision  # noqa: E402


def _text(html: str, selector: str) -> str:
    found = re.search(rf"<[^>]*{selector}[^>]*>(.*?)</(p|div)>", html, flags=re.S)
    assert found is not None, selector
    return unescape(re.sub(r"<[^>]+>", "", found.group(1)))


@pytest.fixture
def site(tmp_path: Path) -> Any:
    path = _config(tmp_path, "sqlite")
    keys = _provision(path)
    app = create_app(load_config(path))
    with TestClient(app):
        yield Site(app, keys)


def _spend(site: Site, client: TestClient, answers: int) -> None:
    for _ in range(answers):
        assert site.api(client, "alice", "POST", "/v1/queries", json=QUERY).status_code == 200


def test_past_the_sum_of_epsilon_the_console_shows_the_composed_epsilon_and_keeps_ask_enabled(site: Site) -> None:
    past_sum = int(QUERIER[0] / CHARGE) + 50  # Σε = 1.5 > ε_B = 1: basic composition would have refused
    with site.client("alice") as client:
        _spend(site, client, past_sum)
        view = site.api(client, "alice", "GET", "/v1/budget").json()["datasets"]["meters"]
        assert F(view["epsilon"]["spent"]) > QUERIER[0] and view["epsilon"]["remaining"] == "0"
        composed = view["composition"]["epsilon"]
        assert 0 < composed < float(QUERIER[0]) and view["composition"]["within_budget"] is True

        html = client.get("/console/query", params={"dataset": "meters", "kind": "count"}).text
        bar = _text(html, 'data-composition="renyi"')
        assert "ε composed by the Rényi filter" in bar and "within the budget" in bar
        assert f'data-value="{composed}"' in html  # the API's own figure, unrounded
        assert "ε charged (sum)" in html
        assert not re.search(r"\bdisabled\b", ASK.search(html).group(0))  # type: ignore[union-attr]

        preview = site.ask(client, "count() from meters", action="preview").text
        after = _text(preview, 'data-field="after"')
        assert "your charges compose to ε" in after and "(Rényi filter)" in after
        assert "left after it" not in after  # not the summed ε's "remaining", which is 0 here


def test_a_refusal_under_the_filter_is_worded_by_the_composed_epsilon(site: Site) -> None:
    with site.client("alice") as client:
        headers = {"Authorization": f"Bearer {site.keys['alice']}"}
        while client.post("/v1/queries", json=QUERY, headers=headers).status_code == 200:
            pass
        view = site.api(client, "alice", "GET", "/v1/budget").json()["datasets"]["meters"]
        assert view["composition"]["within_budget"] is True  # what was answered stays within the budget
        preview = site.ask(client, "count() from meters", action="preview").text
        refusal = _text(preview, 'data-field="refusal"')
        assert refusal.startswith("Not enough budget left for this query: your charges so far compose to ε ")
        assert "(Rényi filter)" in refusal and "left)" not in refusal


def test_a_dataset_on_basic_composition_keeps_its_remaining_wording(tmp_path: Path) -> None:
    path = _config(tmp_path, "sqlite", composition="basic")
    keys = _provision(path)
    app = create_app(load_config(path))
    with TestClient(app):
        site = Site(app, keys)
        with site.client("alice") as client:
            _spend(site, client, 10)
            html = client.get("/console/query", params={"dataset": "meters", "kind": "count"}).text
            assert "data-composition" not in html and "ε charged (sum)" not in html
            after = _text(site.ask(client, "count() from meters", action="preview").text, 'data-field="after"')
            assert "left after it: ε 0.89" in after
