"""SECURITY.md requirement 15 and issue findings 2, 3, 5 and 8: the gate in front of the API.

Authentication before the body is read, a small body limit answered with 413 before the body is read whole,
throttling of failed keys per address and per key id, strict JSON (NaN, Infinity, 1e400, lone surrogates get
400/422, never 500), the API description off by default, and ``Allow`` on 405.
"""

from __future__ import annotations

import contextlib
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi")

from tests.server._harness import ServerProcess, running_server, write_config  # noqa: E402
from tests.server._lab import DatasetDef, Lab  # noqa: E402

SUM = {"query": "sum(x)", "dataset": "d"}
POLICIES = '[policies.sum]\nmechanism = "laplace"\nepsilon = "1/10"\n[policies.count]\nmechanism = "laplace"\nepsilon = "1/10"'


def _dataset() -> DatasetDef:
    rows = [{"x": 10.0 + i, "region": "north"} for i in range(8)]
    return DatasetDef("d", rows, {"x": (10.0, 60.0)}, POLICIES, "laplace")


@contextlib.contextmanager
def _lab(tmp_path: Path, server: str = "") -> Iterator[Lab]:
    with Lab(tmp_path, [_dataset()], server=server) as lab:
        lab.add_querier("alice")
        yield lab


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


# --- 2: authentication before the body; 413 ---------------------------------------------------------------------


def _rss_kib(pid: int) -> int:
    """Resident memory of a process and its children (the workers), in KiB."""
    total = 0
    pids = [pid]
    with contextlib.suppress(OSError):
        for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
            pids.append(int(child))
    for p in pids:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
    return total


def _big_upload(url: str, headers: dict[str, str], size: int, sent: list[int], answers: list[bytes]) -> None:
    """POST a body announced as ``size`` bytes, streamed until the server answers or closes."""
    host, port = url.removeprefix("http://").split(":")
    head = f"POST /v1/queries HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {size}\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    chunk = b"[" + b"1," * (1 << 19)  # 1 MiB of a valid-looking JSON array
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(head.encode())
        total = 0
        try:
            while total < size:
                s.sendall(chunk)
                total += len(chunk)
        except OSError:  # the server answered and closed the connection: the rest is never read
            pass
        sent.append(total)
        with contextlib.suppress(OSError):
            answers.append(s.recv(200))


@pytest.mark.parametrize("authenticated", [False, True])
def test_large_bodies_are_refused_before_they_are_read(tmp_path: Path, authenticated: bool) -> None:
    path, keys = write_config(tmp_path)
    with running_server(path) as server:
        with httpx.Client(base_url=server.url, timeout=30) as c:
            assert (
                c.post(
                    "/v1/queries", json={"query": "count() from meters"}, headers=_bearer(keys["alice"])
                ).status_code
                == 200
            )
        before = _rss_kib(server.process.pid)
        headers = _bearer(keys["alice"]) if authenticated else {}
        sent: list[int] = []
        answers: list[bytes] = []
        threads = [
            threading.Thread(target=_big_upload, args=(server.url, headers, 256 << 20, sent, answers))
            for _ in range(4)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        after = _rss_kib(server.process.pid)
    expected = b"HTTP/1.1 413" if authenticated else b"HTTP/1.1 401"
    assert len(answers) == 4 and all(a.startswith(expected) for a in answers), answers
    assert max(sent) < 256 << 20  # no upload went through: the server stopped reading
    assert after - before < 64 * 1024, (before, after)  # four 256 MiB bodies left no trace in memory


def test_body_limit_is_configurable_and_checked_while_streaming(tmp_path: Path) -> None:
    with _lab(tmp_path, server="max_body_bytes = 1024") as lab:
        headers = _bearer(lab.keys["alice"]) | {"Content-Type": "application/json"}
        padding = " " * 900
        ok = ('{"query": "sum(x)", "dataset": "d"}' + padding).encode()
        assert lab.http.post("/v1/queries", content=ok, headers=headers).status_code == 200
        big = ('{"query": "sum(x)", "dataset": "d"}' + padding * 2).encode()
        assert lab.http.post("/v1/queries", content=big, headers=headers).status_code == 413

        def chunks() -> Iterator[bytes]:  # no Content-Length: the limit is found while the body streams in
            yield big[:600]
            yield big[600:]

        r = lab.http.post("/v1/queries", content=chunks(), headers=headers)
        assert r.status_code == 413 and r.json() == {"error": "request body too large"}
        assert lab.get("alice", "/v1/budget").json()["datasets"]["d"]["epsilon"]["spent"] == "1/10"


# --- 5 and 8: strict JSON, unauthenticated garbage, the API description, 405 ---------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b'{"query": "sum(x)", "dataset": "d", "x": NaN}',
        b'{"kind": "linear", "coefficients": {"x": Infinity}, "dataset": "d"}',
        b'{"kind": "linear", "coefficients": {"x": -Infinity}, "dataset": "d"}',
        b'{"kind": "linear", "coefficients": {"x": 1e400}, "dataset": "d"}',
        b'{"kind": "count", "where": [{"column": "x", "op": "<", "value": 1e400}], "dataset": "d"}',
        b'{"query": "\\ud800", "dataset": "d"}',
        b'{"query": "sum(x) where region = \'\\udfff\'", "dataset": "d"}',
        b'{"query": "sum(x)"',
        b"\xff\xfe{}",
        b'{"kind": "linear", "coefficients": {"x": 1' + b"0" * 400 + b"}}",
        b"[]",
        b"null",
    ],
)
def test_non_standard_json_gets_4xx_never_5xx(tmp_path: Path, body: bytes) -> None:
    with _lab(tmp_path) as lab:
        headers = _bearer(lab.keys["alice"]) | {"Content-Type": "application/json"}
        r = lab.http.post("/v1/queries", content=body, headers=headers)
        assert r.status_code in (400, 422), (r.status_code, r.text)
        admin = _bearer(lab.keys["admin"]) | {"Content-Type": "application/json"}
        admin_body = body.replace(b'"query"', b'"name"').replace(b'"kind"', b'"epsilon"')
        for payload in (admin_body, b'{"name": "x", "epsilon": NaN}', b'{"name": "x", "epsilon": 1e400}'):
            r = lab.http.post("/v1/admin/queriers", content=payload, headers=admin)
            assert r.status_code in (400, 422), (payload, r.status_code, r.text)
        assert lab.get("alice", "/v1/budget").json()["datasets"]["d"]["epsilon"]["spent"] == "0"


def test_unauthenticated_requests_get_401_before_the_body_is_parsed(tmp_path: Path) -> None:
    with _lab(tmp_path) as lab:
        for body in (b"{not json", b'{"query": NaN}', b'{"query": "sum(x)"}'):
            r = lab.http.post("/v1/queries", content=body, headers={"Content-Type": "application/json"})
            assert (r.status_code, r.content) == (401, b'{"error":"unauthorized"}')
            assert r.headers["www-authenticate"] == "Bearer"


def test_api_description_is_off_by_default_and_on_when_the_owner_says_so(tmp_path: Path) -> None:
    paths = ("/openapi.json", "/docs", "/redoc", "/docs/oauth2-redirect")
    with _lab(tmp_path / "default") as lab:
        for p in paths:
            assert lab.http.get(p).status_code == 401  # no key: nothing but 401
            assert lab.get("alice", p).status_code == 404  # a key: still not there
    with _lab(tmp_path / "on", server="api_docs = true") as lab:
        for p in paths:
            assert lab.http.get(p).status_code == 200, p
        assert "/v1/queries" in lab.http.get("/openapi.json").json()["paths"]


def test_405_carries_an_allow_header(tmp_path: Path) -> None:
    with _lab(tmp_path) as lab:
        r = lab.http.get("/v1/queries", headers=_bearer(lab.keys["alice"]))
        assert r.status_code == 405 and r.headers["allow"] == "POST"
        r = lab.http.delete("/v1/budget", headers=_bearer(lab.keys["alice"]))
        assert r.status_code == 405 and r.headers["allow"] == "GET"


# --- 3: throttling of failed authentications ---------------------------------------------------------------------


def test_failed_keys_are_throttled_per_address_and_per_key_id(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    with _lab(
        tmp_path, server="auth_failures = 3\nauth_window_seconds = 600\nauth_tarpit_seconds = 0"
    ) as lab:
        alice = lab.keys["alice"]
        assert lab.post("alice", SUM).status_code == 200  # alice's key is now verified and cached
        wrong_secret = alice[: alice.rindex("_") + 1] + "x" * 43

        def attempt(client: Any, key: str) -> int:
            return int(client.get("/v1/budget", headers=_bearer(key)).status_code)

        # per address: three failures from one address, then that address is throttled...
        unknown = [f"pn_{i:016x}_{'y' * 43}" for i in range(5)]
        assert [attempt(lab.http, k) for k in unknown] == [401, 401, 401, 429, 429]
        r = lab.http.get("/v1/budget", headers=_bearer(unknown[0]))
        assert r.status_code == 429 and int(r.headers["retry-after"]) > 0
        # ... except for a key verified before, which never waits; a new key from that address does.
        assert attempt(lab.http, alice) == 200
        bob = lab.add_querier("bob")
        assert attempt(lab.http, bob) == 429
        # per key id: failures against one key id from many addresses throttle that key id everywhere ...
        for i in range(3):
            with TestClient(lab.app, client=(f"10.0.0.{i}", 1)) as other:
                assert attempt(other, wrong_secret) == 401
        with TestClient(lab.app, client=("10.0.1.1", 1)) as fresh:
            assert attempt(fresh, wrong_secret) == 429
            assert attempt(fresh, bob) == 200  # another key from another address is not affected
            assert attempt(fresh, alice) == 200  # and alice, cached, is never locked out by wrong secrets


def _latencies(server: ServerProcess, key: str, n: int) -> list[float]:
    out = []
    with server.client(key) as c:
        for _ in range(n):
            t0 = time.perf_counter()
            r = c.get("/v1/budget")
            out.append(time.perf_counter() - t0)
            assert r.status_code == 200
    return out


ATTACKER = """
import sys, threading, httpx
url, keys = sys.argv[1], sys.argv[2:]
go, throttled = threading.Event(), threading.Event()
def attack(key):
    with httpx.Client(base_url=url, headers={"Authorization": "Bearer " + key}, timeout=60) as c:
        while go.wait():
            code = c.get("/v1/budget").status_code
            assert code in (401, 429), code
            if code == 429:
                throttled.set()
for key in keys:
    threading.Thread(target=attack, args=(key,), daemon=True).start()
for line in sys.stdin:  # "go": attack (answered "on" once the server throttles), "pause": stop sending
    if line.strip() == "go":
        go.set()
        throttled.wait()
        print("on", flush=True)
    else:
        go.clear()
"""


class _Attack:
    """40 clients sending wrong keys as fast as they are answered, from another process (so that they do not
    compete with the measuring thread for this process's interpreter lock), switched on and off."""

    def __init__(self, url: str, keys: list[str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", ATTACKER, url, *keys],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def _say(self, word: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(word + "\n")
        self.process.stdin.flush()

    @contextlib.contextmanager
    def on(self) -> Iterator[None]:
        """Attacking, and throttled by the server, for the duration of the block."""
        self._say("go")
        assert self.process.stdout is not None and self.process.stdout.readline().strip() == "on"
        try:
            yield
        finally:
            self._say("pause")

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


def test_wrong_keys_do_not_starve_a_legitimate_querier(tmp_path: Path) -> None:
    # 40 clients send wrong keys (half unknown key ids, half alice's key id with a wrong secret) as fast as the
    # server answers them; alice's median latency stays within twice its median without them. The two kinds of
    # measurement alternate in short blocks, so that a change of background load affects both alike.
    path, keys = write_config(tmp_path)
    alice = keys["alice"]
    wrong = [f"pn_{os.urandom(8).hex()}_{'z' * 43}" for _ in range(20)]
    wrong += [alice[: alice.rindex("_") + 1] + f"{i:02d}" + "w" * 41 for i in range(20)]
    with running_server(path) as server:
        _latencies(server, alice, 20)  # warm: alice's key verified and cached
        attack = _Attack(server.url, wrong)
        normal: list[float] = []
        attacked: list[float] = []
        try:
            for _round in range(10):
                normal += _latencies(server, alice, 25)
                with attack.on():
                    attacked += _latencies(server, alice, 25)
        finally:
            attack.close()
    ratio = statistics.median(attacked) / statistics.median(normal)
    assert ratio <= 2.0, (ratio, statistics.median(normal), statistics.median(attacked))


def test_the_client_tells_throttling_from_a_budget_refusal(tmp_path: Path) -> None:
    from privnoise.client import BudgetRefused, Client, ServerError

    server = "auth_failures = 1\nauth_window_seconds = 600\nauth_tarpit_seconds = 0"
    with _lab(tmp_path, server=server) as lab:
        transport = lab.http._transport  # the in-process app, no socket
        with Client("http://testserver", "pn_0123456789abcdef_" + "y" * 43, transport=transport) as wrong:
            with pytest.raises(ServerError) as first:
                wrong.budget()
            with pytest.raises(ServerError) as throttled:
                wrong.budget()
        assert (first.value.status, throttled.value.status) == (401, 429)
        assert not isinstance(throttled.value, BudgetRefused)
        small = lab.add_querier("small", epsilon="1/10")
        from fastapi.testclient import TestClient

        with TestClient(lab.app, client=("10.9.9.9", 1)) as elsewhere:  # an address without failures
            with Client("http://testserver", small, transport=elsewhere._transport) as c:
                c.query(SUM)
                with pytest.raises(BudgetRefused):
                    c.query(SUM)
