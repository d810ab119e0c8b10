"""The analyst's and the owner's experience in the console, over HTTP (no browser): the cost and expected accuracy of
a query before Ask (its dry run, nothing charged), Ask disabled when the budget cannot pay, the history in words,
budgets as decimals, the export of the analyst's answers, and the owner's chart of ε spent per querier over time.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from fractions import Fraction
from html import unescape
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("jinja2")

from fastapi.testclient import TestClient  # noqa: E402

from privnoise.server.app import create_app  # noqa: E402
from privnoise.server.config import load_config  # noqa: E402
from privnoise.server.console.figures import epsilon_spent_series  # noqa: E402
from privnoise.server.console.wording import answer_words, charge_words, decimal  # noqa: E402
from tests.server._harness import write_config  # noqa: E402

ASK = re.compile(r"<button[^>]*\bdata-ask\b[^>]*>")


class Site:
    def __init__(self, app: Any, keys: dict[str, str]) -> None:
        self.app, self.keys = app, keys

    def client(self, who: str) -> TestClient:
        client = TestClient(self.app, base_url="http://127.0.0.1", follow_redirects=False)
        token = self.csrf(client.get("/console/sign-in").text)
        assert client.post("/console/sign-in", data={"csrf": token, "key": self.keys[who]}).status_code == 303
        return client

    @staticmethod
    def csrf(html: str) -> str:
        found = re.search(r'name="csrf" value="([^"]+)"', html)
        assert found is not None
        return found.group(1)

    def api(self, client: TestClient, who: str, method: str, path: str, **kw: Any) -> httpx.Response:
        return client.request(method, path, headers={"Authorization": f"Bearer {self.keys[who]}"}, **kw)

    def ask(self, client: TestClient, text: str, action: str = "ask") -> httpx.Response:
        token = self.csrf(client.get("/console/query").text)
        return client.post("/console/query", data={"csrf": token, "mode": "text", "query": text, "action": action})


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    path, keys = write_config(tmp_path)
    app = create_app(load_config(path))
    with TestClient(app):
        yield Site(app, keys)


def _ledger(site: Site, client: TestClient) -> list[dict[str, Any]]:
    return site.api(client, "admin", "GET", "/v1/admin/ledger", params={"limit": 1000}).json()["ledger"]


def _cells(html: str, name: str) -> list[str]:
    """The text of every ``data-field=name`` table cell (its markup removed)."""
    cells = re.findall(rf'<td[^>]*data-field="{name}"[^>]*>(.*?)</td>', html, flags=re.S)
    return [unescape(re.sub(r"<[^>]+>", "", c)) for c in cells]


def _field(html: str, name: str) -> str:
    found = re.search(rf'data-field="{name}"[^>]*>([^<]*)<', html)
    assert found is not None, name
    return found.group(1)


def test_the_form_shows_cost_and_accuracy_before_ask_and_charges_nothing(site: Site) -> None:
    with site.client("alice") as client:
        budget = site.api(client, "alice", "GET", "/v1/budget").json()
        page = client.get("/console/query", params={"dataset": "meters", "kind": "sum"})
        assert page.status_code == 200
        html = page.text
        assert 'data-preview="form"' in html and 'data-fits="yes"' in html
        assert _field(html, "cost").startswith("ε 0.1, δ 0")
        # Laplace of scale Δ/ε = 60/0.1 on a sum: ±600·ln 20 ≈ 1797.44, plus the hardening grid (a power of two
        # below 2 % of the scale)
        accuracy = _field(html, "accuracy")
        radius = float(re.match(r"±([0-9.]+) units of kwh", accuracy).group(1))  # type: ignore[union-attr]
        assert 600 * 2.99573 < radius <= 600 * 2.99574 + 0.02 * 600
        assert _field(html, "after").endswith("ε 0.9, δ 1e-06.")
        assert not re.search(r"\bdisabled\b", ASK.search(html).group(0))  # type: ignore[union-attr]

        preview = site.ask(client, "mean(kwh) from meters where region = 'north'", action="preview")
        assert preview.status_code == 200 and 'data-preview="text"' in preview.text
        assert "/(n − " in _field(preview.text, "accuracy")
        assert site.api(client, "alice", "GET", "/v1/budget").json() == budget
        assert _ledger(site, client) == []  # no charge, no refusal row


def test_ask_is_disabled_with_a_message_when_the_budget_or_the_policy_refuses(site: Site) -> None:
    with site.client("alice") as client:
        for _ in range(3):  # 3 × 0.3 of alice's ε = 1
            assert site.api(client, "alice", "POST", "/v1/queries",
                            json={"query": "variance(kwh) from meters"}).status_code == 200
        rows = len(_ledger(site, client))
        html = client.get("/console/query", params={"dataset": "meters", "kind": "variance"}).text
        assert 'data-fits="no"' in html
        assert re.search(r"\bdisabled\b", ASK.search(html).group(0))  # type: ignore[union-attr]
        why = re.search(r"data-ask-why>([^<]*)<", html)
        assert why is not None and "Not enough budget left for this query (ε 0.1 left)" in why.group(1)
        cheap = client.get("/console/query", params={"dataset": "meters", "kind": "count"}).text
        assert not re.search(r"\bdisabled\b", ASK.search(cheap).group(0))  # type: ignore[union-attr]

        refused = site.ask(client, "quantile(kwh, 0.5) from meters", action="preview").text  # no such policy
        text_ask = ASK.findall(refused)[1]  # the text form's
        assert "disabled" in text_ask
        assert "The server would refuse this query:" in _field(refused, "refusal")
        assert len(_ledger(site, client)) == rows  # the previews wrote nothing


def test_history_in_words_budgets_as_decimals_and_the_export(site: Site) -> None:
    with site.client("alice") as client:
        asked = [site.ask(client, t) for t in ("identity(kwh) from meters", "mean(kwh) from meters",
                                               "count() from meters group by region")]
        assert [r.status_code for r in asked] == [303, 303, 303]
        history = client.get("/console/history").text
        charges = _cells(history, "charged")
        assert len(charges) == 3
        assert all("{" not in c and "'" not in c for c in charges)
        identity = charges[2]  # newest first
        assert re.fullmatch(r"ε 0, δ 0, Fisher information about kwh [0-9.e+-]+", identity), identity
        assert charges[1].startswith("ε 0.1, δ 0")
        answers = _cells(history, "answer")
        assert re.fullmatch(r"[0-9.e+-]+ \(between [0-9.e+-]+ and [0-9.e+-]+ at 95%\)", answers[1]), answers[1]
        assert answers[0].startswith("north: ") and "east: " in answers[0]

        page = client.get("/console/query").text  # spent 0.1 + 0.05 of ε = 1 on meters
        meters = page[page.index('<div data-dataset="meters">'):]
        spent = re.search(r'data-exact="spent" data-value="([^"]+)"[^>]*>([^<]*)<', meters)
        assert spent is not None and spent.groups() == ("3/20", "0.15")
        assert ">3/20<" not in page

        ledger = {r["id"]: r for r in _ledger(site, client)}
        exported = list(csv.DictReader(io.StringIO(client.get("/console/history.csv").text)))
        assert [int(r["id"]) for r in exported] == sorted(ledger)
        assert [r["epsilon"] for r in exported] == [ledger[i]["epsilon"] for i in sorted(ledger)]
        data = client.get("/console/history.json")
        assert data.headers["content-disposition"] == 'attachment; filename="answers.json"'
        body = data.json()
        assert body["querier"] == "alice" and [a["id"] for a in body["answers"]] == sorted(ledger)
        mean = body["answers"][1]
        assert mean["query"] == "mean(kwh) from meters"
        assert json.loads(exported[1]["value"]) == mean["answer"]["value"]
        assert float(exported[1]["low"]) == mean["answer"]["accuracy"]["low"]
        assert json.loads(exported[2]["value"]) == body["answers"][2]["answer"]["value"]
    with site.client("bob") as other:
        assert list(csv.DictReader(io.StringIO(other.get("/console/history.csv").text))) == []
        assert other.get("/console/history.json").json()["answers"] == []
    with site.client("admin") as owner:
        assert owner.get("/console/history.csv").status_code == 403


def test_the_owner_sees_epsilon_spent_per_querier_over_time(site: Site) -> None:
    with site.client("alice") as client:
        for who, text in (("alice", "mean(kwh) from meters"), ("bob", "variance(kwh) from meters"),
                          ("alice", "count() from meters")):
            assert site.api(client, who, "POST", "/v1/queries", json={"query": text}).status_code == 200
    with site.client("admin") as owner:
        html = owner.get("/console/datasets/meters").text
        figure = html[html.index('data-figure="epsilon-spent"'):]
        assert figure.index("<svg") < figure.index("</figure>")
        spent = dict(re.findall(r'<tr data-querier="([a-z]+)">.*?data-field="epsilon">([^<]*)<', html))
        assert spent == {"alice": "0.15", "bob": "0.3"}


def test_the_words_and_numbers_of_the_console() -> None:
    assert decimal("8/5") == "1.6" and decimal("3") == "3" and decimal("0") == "0" and decimal("1/3") == "0.333333"
    assert charge_words({"epsilon": "1/10", "delta": "0", "fisher_information": {"kwh": 2.75e-06}}) == (
        "ε 0.1, δ 0, Fisher information about kwh 2.75e-06"
    )
    assert answer_words({"value": 4.5, "accuracy": {"level": 0.95, "low": 4.0, "high": 5.25}}) == (
        "4.5 (between 4 and 5.25 at 95%)"
    )
    assert answer_words({"value": [1.0, 2.0], "keys": [["a", "x"], ["b", "y"]]}) == "a/x: 1, b/y: 2"
    t0 = datetime(2026, 1, 1)
    series = epsilon_spent_series([(t0, "a", 0.1), (t0 + timedelta(1), "b", 0.3), (t0 + timedelta(2), "a", 0.05)])
    assert series["a"] == ([t0, t0 + timedelta(2)], [0.1, pytest.approx(0.15)])
    assert series["\x00all"][1] == [0.1, pytest.approx(0.4), pytest.approx(0.45)]
    assert Fraction("3/20") == Fraction(15, 100)


def test_ask_stays_disabled_when_no_policy_of_the_dataset_can_be_paid(site: Site) -> None:
    with site.client("alice") as client:
        # "broken" answers sums only (ε 0.1, failing after the charge): ten of them spend alice's ε = 1 there
        for _ in range(10):
            assert site.api(client, "alice", "POST", "/v1/queries",
                            json={"query": "sum(kwh) from broken"}).status_code == 422
        html = client.get("/console/query", params={"dataset": "broken", "kind": "sum"}).text
        buttons = ASK.findall(html)
        assert len(buttons) == 2 and all("disabled" in b and "data-exhausted" in b for b in buttons)
        assert "You have no budget left on broken for any query" in html
        other = client.get("/console/query", params={"dataset": "meters", "kind": "count"}).text
        assert all("disabled" not in b for b in ASK.findall(other))


def test_a_busy_server_leaves_ask_enabled_and_a_malformed_query_disables_it(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    from privnoise.server.console import querier

    real = querier.answer_query

    async def busy(*args: Any) -> Any:
        if args[-1] == b"dry_run=true":
            return 429, b'{"error": "too many queries of this querier are being planned; try again"}', []
        return await real(*args)

    with site.client("alice") as client:
        malformed = site.ask(client, "mean(kwh from meters", action="preview").text
        assert "The query cannot be read:" in _field(malformed, "refusal")
        assert "disabled" in ASK.findall(malformed)[1]
        monkeypatch.setattr(querier, "answer_query", busy)
        html = client.get("/console/query", params={"dataset": "meters", "kind": "sum"}).text
        assert "data-preview" not in html and all("disabled" not in b for b in ASK.findall(html))
