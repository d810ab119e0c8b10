"""SECURITY.md requirement 21: proxy headers are trusted only from proxies the owner names.

By default the server ignores ``X-Forwarded-For`` (uvicorn's proxy headers are off) and the failed-key throttle
keys on the peer address: wrong keys sent with a new forwarded address each are throttled as one client, and
failures sent under a spoofed address do not lock that address out. With ``trusted_proxies`` naming the peer, the
header gives the client's address. Each 401 below is one scrypt verification; a 429 is answered without one.
"""

from __future__ import annotations

import secrets
from pathlib import Path

import httpx
import pytest

pytest.importorskip("fastapi")

from privnoise.server.config import ConfigError, load_config  # noqa: E402
from tests.server._harness import running_server, write_config  # noqa: E402

SERVER = "auth_failures = 10\nauth_tarpit_seconds = 0"


def _wrong_key() -> str:
    return f"pn_{secrets.token_hex(8)}_{secrets.token_urlsafe(24)}"


def _statuses(url: str, n: int, forwarded: list[str]) -> list[int]:
    out = []
    with httpx.Client(base_url=url, timeout=30) as c:
        for i in range(n):
            r = c.get("/v1/budget", headers={"Authorization": f"Bearer {_wrong_key()}",
                                             "X-Forwarded-For": forwarded[i % len(forwarded)]})
            out.append(r.status_code)
    return out


def test_forwarded_addresses_are_ignored_by_default(tmp_path: Path) -> None:
    path, keys = write_config(tmp_path, server=SERVER)
    with running_server(path) as server:
        statuses = _statuses(server.url, 25, [f"10.0.{i}.{i}" for i in range(25)])
        # one client: ten verifications (401), then throttled without any (429)
        assert statuses.count(401) == 10 and statuses[10:] == [429] * 15, statuses
        # the failures named 127.0.0.2 in their header: a querier really at 127.0.0.2 is not locked out
        spoofed = _statuses(server.url, 25, ["127.0.0.2"])
        assert set(spoofed) == {429}
        transport = httpx.HTTPTransport(local_address="127.0.0.2")
        with httpx.Client(base_url=server.url, transport=transport, timeout=30) as c:
            r = c.get("/v1/budget", headers={"Authorization": f"Bearer {keys['alice']}"})
            assert r.status_code == 200, r.text


def test_forwarded_addresses_are_honoured_from_trusted_proxies(tmp_path: Path) -> None:
    path, keys = write_config(tmp_path, server=SERVER + '\ntrusted_proxies = ["127.0.0.1", "10.7.0.0/16"]')
    with running_server(path) as server:
        # each failure comes from another client behind the proxy: each is verified, none throttled
        statuses = _statuses(server.url, 25, [f"192.0.2.{i}" for i in range(25)])
        assert statuses == [401] * 25, statuses
        # one forwarded client failing: throttled as that client
        again = _statuses(server.url, 12, ["198.51.100.7"])
        assert again[:10] == [401] * 10 and again[10:] == [429, 429], again
        with httpx.Client(base_url=server.url, timeout=30) as c:
            r = c.get("/v1/budget", headers={"Authorization": f"Bearer {keys['alice']}",
                                             "X-Forwarded-For": "198.51.100.8"})
            assert r.status_code == 200, r.text


@pytest.mark.parametrize("value", ['["localhost"]', '["10.0.0.300"]', '"10.0.0.1"', '[1]', '["10.0.0.0/33"]'])
def test_trusted_proxies_are_validated(tmp_path: Path, value: str) -> None:
    path, _keys = write_config(tmp_path)
    text = path.read_text(encoding="utf-8").replace("[server]\n", f"[server]\ntrusted_proxies = {value}\n", 1)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match="trusted_proxies"):
        load_config(path)


def test_trusted_proxies_default_to_none(tmp_path: Path) -> None:
    path, _keys = write_config(tmp_path, server='trusted_proxies = ["::1", "10.0.0.0/8"]')
    assert load_config(path).trusted_proxies == ("::1", "10.0.0.0/8")
    path, _keys = write_config(tmp_path / "b")
    assert load_config(path).trusted_proxies == ()
