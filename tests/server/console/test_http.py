"""The console over HTTP (no browser; SECURITY.md, requirement 18): cookies, headers, CSRF, sessions, throttled sign-in, the API's own path.

Runs the application in process (FastAPI's test client) on SQLite and PostgreSQL, except the logging test, which
runs ``privnoise serve`` with its access log and debug logging and reads what it wrote.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("jinja2")

from fastapi.testclient import TestClient  # noqa: E402
from sqlalchemy import update  # noqa: E402

from privnoise.server import db  # noqa: E402
from privnoise.server.app import create_app  # noqa: E402
from privnoise.server.config import load_config  # noqa: E402
from privnoise.server.console.guard import CONTENT_SECURITY_POLICY, SESSION_COOKIE  # noqa: E402
from privnoise.server.service import FAILURE_BODY  # noqa: E402
from tests.server._harness import running_server, write_config  # noqa: E402

PAGES_OWNER = ("/console/datasets", "/console/datasets/meters", "/console/queriers", "/console/ledger")
PAGES_QUERIER = ("/console/query", "/console/history")


class Console:
    """An in-process server and a helper to sign in and post forms like a browser."""

    def __init__(self, app: Any, keys: dict[str, str], base_url: str = "http://127.0.0.1") -> None:
        self.app, self.keys, self.base_url = app, keys, base_url

    def client(self) -> TestClient:
        return TestClient(self.app, base_url=self.base_url, follow_redirects=False)

    @staticmethod
    def csrf(html: str) -> str:
        found = re.search(r'name="csrf" value="([^"]+)"', html)
        assert found is not None
        return found.group(1)

    def sign_in(self, client: TestClient, who: str) -> httpx.Response:
        form = client.get("/console/sign-in")
        response = client.post("/console/sign-in", data={"csrf": self.csrf(form.text), "key": self.keys[who]})
        assert response.status_code == 303, response.text
        return response

    def post(self, client: TestClient, path: str, data: dict[str, str], page: str) -> httpx.Response:
        token = self.csrf(client.get(page).text)
        return client.post(path, data={"csrf": token} | data)


@pytest.fixture
def console(tmp_path: Path, database_url: str) -> Iterator[Console]:
    path, keys = write_config(tmp_path, database_url=database_url)
    app = create_app(load_config(path))
    with TestClient(app):  # runs the lifespan (closes the service at the end)
        yield Console(app, keys)


def test_the_session_cookie_is_httponly_strict_short_lived_and_secure_over_tls(tmp_path: Path) -> None:
    path, keys = write_config(tmp_path)
    app = create_app(load_config(path))
    for base, secure in (("http://127.0.0.1", False), ("https://127.0.0.1", True)):
        console = Console(app, keys, base)
        with console.client() as client:
            cookie = console.sign_in(client, "alice").headers["set-cookie"]
        session = next(c for c in cookie.split(", pn_") if c.startswith(SESSION_COOKIE))
        assert "HttpOnly" in session and "SameSite=strict" in session and "Path=/console" in session
        assert "Max-Age=1800" in session  # [console] session_minutes = 30
        assert ("Secure" in session) is secure
        assert keys["alice"] not in cookie


def test_every_page_has_a_strict_csp_no_inline_script_or_style_and_no_caching(console: Console) -> None:
    for who, pages in (("admin", PAGES_OWNER), ("alice", PAGES_QUERIER)):
        with console.client() as client:
            console.sign_in(client, who)
            for path in (*pages, "/console/sign-in"):
                response = client.get(path)
                assert response.status_code == 200, path
                headers = response.headers
                assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY
                assert (
                    "'unsafe-inline'" not in CONTENT_SECURITY_POLICY
                    and "script-src 'self'" in CONTENT_SECURITY_POLICY
                )
                assert headers["cache-control"] == "no-store"
                assert headers["x-frame-options"] == "DENY" and headers["x-content-type-options"] == "nosniff"
                html = response.text
                assert re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", html) == []  # no inline script
                assert not re.search(r"\sstyle=|<style", html)  # no inline style (figures included)
                assert not re.search(r"\son[a-z]+=", html)  # no inline event handler


def test_every_form_post_without_the_session_token_is_refused(console: Console) -> None:
    with console.client() as client:
        console.sign_in(client, "admin")
        for path, data in (
            ("/console/queriers", {"name": "mallory", "epsilon": "1"}),
            ("/console/queriers/alice/revoke", {"confirm": "1"}),
            ("/console/sign-out", {"confirm": "1"}),
        ):
            for token in (None, "wrong"):
                form = data | ({} if token is None else {"csrf": token})
                assert client.post(path, data=form).status_code == 403
        names = [
            q["name"]
            for q in client.get("/v1/admin/queriers", headers=_bearer(console, "admin")).json()["queriers"]
        ]
        assert (
            "mallory" not in names and client.get("/console/queriers").status_code == 200
        )  # still signed in
    with console.client() as client:
        console.sign_in(client, "alice")
        assert (
            client.post("/console/query", data={"mode": "text", "query": "count() from meters"}).status_code
            == 403
        )
        assert client.post("/console/sign-in", data={"key": console.keys["alice"]}).status_code == 403
        ledger = client.get("/v1/admin/ledger", headers=_bearer(console, "admin")).json()["ledger"]
        assert ledger == []  # nothing was charged, and no query was refused: no query was read


def _bearer(console: Console, who: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {console.keys[who]}"}


def test_other_origins_content_types_and_large_bodies_are_refused_before_use(console: Console) -> None:
    with console.client() as client:
        console.sign_in(client, "alice")
        token = console.csrf(client.get("/console/query").text)
        form = {"csrf": token, "mode": "text", "query": "count() from meters"}
        assert (
            client.post("/console/query", data=form, headers={"Origin": "http://evil.test"}).status_code
            == 403
        )
        assert client.post("/console/query", data=form, headers={"Origin": "null"}).status_code == 403
        assert (
            client.post("/console/query", data=form, headers={"Sec-Fetch-Site": "cross-site"}).status_code
            == 403
        )
        assert client.post("/console/query", json=form).status_code == 415
        big = form | {"padding": "x" * 20000}  # max_body_bytes = 16384
        assert client.post("/console/query", data=big).status_code == 413
        assert client.post("/console/query", data=form | {"mode": "text\x00"}).status_code == 400
        assert client.put("/console/query", data=form).status_code == 405
        # refused before the query was read: no charged row and no refused row (those are for queries)
        assert client.get("/v1/admin/ledger", headers=_bearer(console, "admin")).json()["ledger"] == []
        assert client.post("/console/query", data=form).status_code == 303  # the same form, as it should be


def test_sign_out_revocation_and_expiry_end_the_session_on_the_server(console: Console) -> None:
    app = console.app
    for end in ("sign-out", "revoke", "expiry"):
        with console.client() as client:
            console.sign_in(client, "bob" if end == "revoke" else "alice")
            stolen = client.cookies.get(SESSION_COOKIE)
            assert client.get("/console/history").status_code == 200
            if end == "sign-out":
                console.post(client, "/console/sign-out", {}, "/console/history")
            elif end == "revoke":
                with console.client() as owner:
                    console.sign_in(owner, "admin")
                    assert (
                        console.post(
                            owner, "/console/queriers/bob/revoke", {}, "/console/queriers"
                        ).status_code
                        == 303
                    )
            else:
                with app.state.console.engine.begin() as conn:
                    conn.execute(
                        update(db.sessions).values(expires_at=db.utcnow() - _dt.timedelta(seconds=1))
                    )
        with console.client() as replay:
            replay.cookies.set(SESSION_COOKIE, stolen, path="/console")
            response = replay.get("/console/history")
            assert response.status_code == 303 and response.headers["location"] == "/console/sign-in", end
    with console.client() as client:  # a revoked key opens nothing any more
        assert client.get("/v1/budget", headers=_bearer(console, "bob")).status_code == 401
        form = client.get("/console/sign-in")
        data = {"csrf": console.csrf(form.text), "key": console.keys["bob"]}
        assert client.post("/console/sign-in", data=data).status_code == 401


def test_console_sign_in_shares_the_apis_failure_throttle(tmp_path: Path) -> None:
    path, keys = write_config(tmp_path, server="auth_failures = 3\nauth_tarpit_seconds = 0")
    console = Console(create_app(load_config(path)), keys)
    with console.client() as client:
        for _ in range(2):  # two wrong keys through the API ...
            assert (
                client.get(
                    "/v1/budget", headers={"Authorization": "Bearer pn_0123456789abcdef_wrong"}
                ).status_code
                == 401
            )
        form = client.get("/console/sign-in")
        token = console.csrf(form.text)
        wrong = client.post("/console/sign-in", data={"csrf": token, "key": "pn_0123456789abcdef_wrong"})
        assert wrong.status_code == 401 and "does not open" in wrong.text  # ... and one through the console
        for key in ("pn_0123456789abcdef_wrong", keys["alice"]):  # now even a good, uncached key waits
            refused = client.post(
                "/console/sign-in",
                data={"csrf": console.csrf(client.get("/console/sign-in").text), "key": key},
            )
            assert refused.status_code == 429 and "Too many failed sign-ins" in refused.text


def test_the_console_answers_through_the_apis_path_with_its_generic_failure(console: Console) -> None:
    with console.client() as client:
        console.sign_in(client, "alice")
        failed = console.post(
            client, "/console/query", {"mode": "text", "query": "sum(kwh) from broken"}, "/console/query"
        )
        assert failed.status_code == 422
        assert FAILURE_BODY["error"] in failed.text and "SECRET" not in failed.text
        api = client.post(
            "/v1/queries", json={"query": "sum(kwh) from broken"}, headers=_bearer(console, "alice")
        )
        assert api.status_code == 422 and api.json() == FAILURE_BODY
        ledger = client.get("/v1/admin/ledger", headers=_bearer(console, "admin")).json()["ledger"]
        assert [(r["status"], r["epsilon"]) for r in ledger] == [
            ("failed", "1/10"),
            ("failed", "1/10"),
        ]  # both charged
        # the same charge as the API's for the same query
        ok = console.post(
            client, "/console/query", {"mode": "text", "query": "mean(kwh) from meters"}, "/console/query"
        )
        assert ok.status_code == 303
        client.post("/v1/queries", json={"query": "mean(kwh) from meters"}, headers=_bearer(console, "alice"))
        rows = client.get("/v1/admin/ledger", params={"limit": 2}, headers=_bearer(console, "admin")).json()[
            "ledger"
        ]
        drop = ("id", "created_at")
        assert [{k: v for k, v in r.items() if k not in drop} for r in rows][0] == {
            k: v for k, v in rows[1].items() if k not in drop
        }
        answer = client.get(ok.headers["location"])
        assert answer.status_code == 200 and 'data-field="value"' in answer.text
        # an answer belongs to its querier only
    with console.client() as other:
        console.sign_in(other, "bob")
        assert other.get(ok.headers["location"]).status_code == 404
        assert other.get("/console/datasets").status_code == 403
    with console.client() as owner:
        console.sign_in(owner, "admin")
        assert owner.get("/console/query").status_code == 403


def test_the_ledger_filters_sorts_and_exports_csv(console: Console) -> None:
    with console.client() as client:
        console.sign_in(client, "alice")
        for text in (
            "count() from meters",
            "=cmd() from meters",
            "mean(kwh) from meters where region = '=1+1'",
        ):
            console.post(client, "/console/query", {"mode": "text", "query": text}, "/console/query")
        client.post("/v1/queries", json={"query": "count() from meters_b"}, headers=_bearer(console, "bob"))
    with console.client() as owner:
        console.sign_in(owner, "admin")
        ledger = owner.get("/v1/admin/ledger", params={"querier": "alice"}, headers=_bearer(console, "admin"))
        ids: dict[str, list[str]] = {"charged": [], "refused": []}
        for r in sorted(ledger.json()["ledger"], key=lambda r: r["id"]):
            ids["refused" if r["status"] == "refused" else "charged"].append(str(r["id"]))
        assert len(ids["charged"]) == 2 and len(ids["refused"]) == 1  # "=cmd()" was refused: a row, no charge
        page = owner.get("/console/ledger", params={"querier": "alice", "sort": "id", "dir": "asc"}).text
        assert re.findall(r'data-ledger="(\d+)"', page) == sorted(ids["charged"] + ids["refused"], key=int)
        page = owner.get("/console/ledger", params={"querier": "alice", "status": "charged"}).text
        assert sorted(re.findall(r'data-ledger="(\d+)"', page), key=int) == ids["charged"]
        assert owner.get("/console/ledger", params={"dataset": "meters_b"}).text.count("data-ledger=") == 1
        exported = owner.get("/console/ledger.csv", params={"querier": "alice"})
        assert exported.headers["content-disposition"] == 'attachment; filename="ledger.csv"'
        rows = list(csv.DictReader(io.StringIO(exported.text)))
        assert [r["id"] for r in rows] == sorted(ids["charged"] + ids["refused"], key=int)
        charged = [r for r in rows if r["status"] == "charged"]
        (refused,) = [r for r in rows if r["status"] == "refused"]
        assert charged[1]["query"] == "mean(kwh) from meters where region = '=1+1'"
        assert refused["query"] == "'=cmd() from meters"  # the text as sent, no spreadsheet formula
        assert refused["reason"].startswith("syntax: ") and refused["repeats"] == "1"
        assert refused["epsilon"] == "0"
        assert {r["querier"] for r in rows} == {"alice"} and all(r["epsilon"] for r in rows)


def test_the_console_is_off_by_default_away_from_loopback_and_configurable(tmp_path: Path) -> None:
    for i, (host, console_toml, enabled) in enumerate(
        (
            ("0.0.0.0", "", False),
            ("0.0.0.0", "[console]\nenabled = true\n", True),
            ("127.0.0.1", "[console]\nenabled = false\n", False),
            ("localhost", "", True),
        )
    ):
        path, _keys = write_config(tmp_path / str(i))
        path.write_text(path.read_text().replace('host = "127.0.0.1"', f'host = "{host}"') + console_toml)
        config = load_config(path)
        assert config.console.enabled is enabled
        with TestClient(create_app(config)) as client:
            response = client.get("/console/sign-in")
            assert response.status_code == (200 if enabled else 401)


def test_keys_never_reach_the_logs(tmp_path: Path) -> None:
    path, keys = write_config(tmp_path)
    serve = ("-m", "privnoise.cli", "serve", "--access-log", "--log-level", "debug")
    with running_server(path, command=serve) as server:
        console = Console(None, keys)
        with httpx.Client(base_url=server.url, follow_redirects=False) as client:
            console.sign_in(client, "admin")  # type: ignore[arg-type]
            added = console.post(
                client, "/console/queriers", {"name": "carol", "epsilon": "1"}, "/console/queriers"
            )  # type: ignore[arg-type]
            new_key = re.search(r'value="(pn_[^"]+)"', added.text)
            assert added.status_code == 201 and new_key is not None
            answered = console.post(
                client, "/console/queriers", {"name": "dave", "epsilon": "1"}, "/console/queriers"
            )  # type: ignore[arg-type]
            assert answered.status_code == 201
        with httpx.Client(base_url=server.url, follow_redirects=False) as stranger:
            wrong = console.post(
                stranger, "/console/sign-in", {"key": keys["alice"] + "x"}, "/console/sign-in"
            )  # type: ignore[arg-type]
            assert wrong.status_code == 401 and keys["alice"] not in wrong.text
        written = server.log.read_text(errors="replace")
    assert "POST /console/sign-in" in written  # the access log is on
    for key in (*keys.values(), new_key.group(1)):
        assert key not in written and key.split("_", 2)[2] not in written


def test_the_text_box_takes_a_sql_statement(console: Console) -> None:
    """Text starting with SELECT is sent as ``{"sql": ...}``: one row per group with intervals, the rows as CSV, and
    a refusal with its position shown on the form."""
    sql = "SELECT region, COUNT(*) AS n, AVG(kwh) AS m FROM meters WHERE region IN ('north', 'south') GROUP BY region"
    with console.client() as client:
        console.sign_in(client, "alice")
        ok = console.post(client, "/console/query", {"mode": "text", "query": sql}, "/console/query")
        assert ok.status_code == 303, ok.text
        page = client.get(ok.headers["location"])
        assert page.status_code == 200 and 'data-field="rows"' in page.text
        assert page.text.count('data-output="') == 3 and "north" in page.text and "interval" in page.text
        exported = client.get(ok.headers["location"] + ".csv")
        rows = list(csv.DictReader(io.StringIO(exported.text)))
        assert [r["region"] for r in rows] == ["north", "south", "east", "west"]
        assert set(rows[0]) == {"region", "n", "n_low", "n_high", "m", "m_low", "m_high"}
        history = client.get("/console/history")
        assert history.status_code == 200 and "SELECT region" in history.text
        grouped = console.post(client, "/console/query", {"mode": "text", "query": "count() from meters group by "
                                                          "region"}, "/console/query")
        values = list(csv.reader(io.StringIO(client.get(grouped.headers["location"] + ".csv").text)))
        assert values[0] == ["index", "noisy value"] and len(values) == 5  # the answer's CSV, not its page
        refused = console.post(client, "/console/query", {"mode": "text", "query": "select kwh from meters"},
                               "/console/query")
        assert refused.status_code == 422 and "row-level" in refused.text and "(line 1, column 8)" in refused.text
        ledger = client.get("/v1/admin/ledger", headers=_bearer(console, "admin")).json()["ledger"]
        assert sorted(r["epsilon"] for r in ledger if r["status"] == "charged") == ["1/10", "1/20", "1/20"]
