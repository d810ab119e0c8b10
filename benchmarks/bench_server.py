"""Load test of the query server on loopback: throughput and latency of ``POST /v1/queries``.

Run: ``python benchmarks/bench_server.py [--clients 1,8,50] [--database sqlite,postgresql] [--workers 2]
[--requests 2000] [--rounds 4] [--max-seconds 120] [--json PATH]``.

For each database, starts the real server (``tests/server/_harness.py``: an ``owner.toml`` on SQLite, or on a
throwaway PostgreSQL cluster with fsync on, then ``python -m privnoise.server`` in a subprocess on 127.0.0.1
with ``--workers`` processes), makes a querier through the admin API whose budget covers the run, and drives the
server with each number of concurrent keep-alive clients (one thread and one ``http.client`` connection each;
httpx's async pool spends more CPU per request than the bare server does) sending ``--requests`` queries
(``mean(kwh) where region = 'north'`` on the ``meters`` dataset: one SQL aggregate, one durable budget charge,
two hardened Laplace releases each). Every answer waits for its charge to be on disk (SQLite in WAL mode with
``synchronous=FULL``; PostgreSQL with ``fsync=on`` and ``synchronous_commit=on``).

The reference, in the same run: the same load on a bare endpoint of the same framework, a FastAPI app whose
``POST /v1/queries`` parses the JSON body and returns a constant, served exactly as the server is (uvicorn on
the same address, with the same number of worker processes, log level and HTTP implementation). The two servers
run side by side and the load alternates between them in ``--rounds`` rounds, so that a change of background
load on the machine affects both; the printed ratios privnoise/bare (throughput, p99 latency) are the numbers
to compare across machines. The load generator is a Python process on the same machine, so the bare figures are
bounded by the generator as much as by the framework. The load average is printed with each row.

``--max-seconds`` bounds each measurement (both servers); rounds stop early when it is spent. Only loopback
addresses are used.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.server._harness

LOOPBACK = "127.0.0.1"
QUERY = {"query": "mean(kwh) where region = 'north'", "dataset": "meters"}
BODY = json.dumps(QUERY).encode()
QUERY_EPSILON = 0.1  # the `mean` policy of tests/server/_harness.py
WARMUP = 64  # requests per server before the measurement (connections, caches, first-call imports)


@dataclass
class Target:
    name: str
    url: str
    headers: dict[str, str]
    latencies: list[float] = field(default_factory=list)
    seconds: float = 0.0
    statuses: dict[str, int] = field(default_factory=dict)

    def summary(self, clients: int) -> dict[str, Any]:
        values = sorted(self.latencies)
        done = len(values)
        return {
            "name": self.name,
            "clients": clients,
            "requests": done,
            "errors": sum(n for status, n in self.statuses.items() if not status.startswith("2")),
            "seconds": self.seconds,
            "queries_per_second": done / self.seconds if self.seconds > 0 else float("nan"),
            "p50_ms": 1e3 * _percentile(values, 0.50),
            "p99_ms": 1e3 * _percentile(values, 0.99),
            "statuses": dict(self.statuses),
        }


def _percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))]


class _Client:
    """One keep-alive HTTP/1.1 connection (``http.client``: the lightest client in the standard library)."""

    def __init__(self, target: Target) -> None:
        parts = urlsplit(target.url)
        self.host, self.port = parts.hostname or LOOPBACK, parts.port or 80
        self.headers = {"Content-Type": "application/json", **target.headers}
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30.0)

    def post(self) -> int:
        for attempt in (1, 2):
            try:
                self.conn.request("POST", "/v1/queries", body=BODY, headers=self.headers)
                response = self.conn.getresponse()
                response.read()
                return response.status
            except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
                # uvicorn closes connections idle for 5 s (while the other server had its round): reconnect once.
                self.conn.close()
                if attempt == 2:
                    raise
            except (OSError, http.client.HTTPException):
                self.conn.close()
                raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        self.conn.close()


def _round(clients: list[_Client], target: Target, *, requests: int, deadline: float) -> None:
    """``requests`` queries from one thread per client; latencies and wall time go into ``target``."""
    tickets = iter(range(requests))
    lock = threading.Lock()

    def worker(client: _Client) -> None:
        while time.perf_counter() < deadline:
            with lock:
                if next(tickets, None) is None:
                    return
            t0 = time.perf_counter()
            try:
                key = str(client.post())
            except (OSError, http.client.HTTPException) as exc:
                key = type(exc).__name__
            elapsed = time.perf_counter() - t0
            with lock:
                target.latencies.append(elapsed)
                target.statuses[key] = target.statuses.get(key, 0) + 1

    threads = [threading.Thread(target=worker, args=(c,)) for c in clients]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    target.seconds += time.perf_counter() - start


def _measure(targets: list[Target], *, clients: int, requests: int, rounds: int, max_seconds: float) -> None:
    pools = {t.name: [_Client(t) for _ in range(clients)] for t in targets}
    try:
        for target in targets:
            for client in pools[target.name]:  # open every connection; warm caches and first-call imports
                for _ in range(max(1, WARMUP // clients)):
                    status = client.post()
                    if status != 200:
                        raise RuntimeError(f"{target.name} answered the warm-up query with {status}")
        deadline = time.perf_counter() + max_seconds
        per_round = [requests // rounds + (1 if r < requests % rounds else 0) for r in range(rounds)]
        for share in per_round:
            for target in targets:
                _round(pools[target.name], target, requests=share, deadline=deadline)
    finally:
        for pool in pools.values():
            for client in pool:
                client.close()


# --- the bare reference --------------------------------------------------------------------------------------

BARE_APP = textwrap.dedent(
    """
    import sys

    from fastapi import FastAPI, Request

    app = FastAPI()
    ANSWER = {"dataset": "meters", "value": 21.5, "guarantee": {"notion": "epsilon-delta", "epsilon": "1/10"}}


    @app.post("/v1/queries")
    async def queries(request: Request) -> dict:
        await request.json()
        return ANSWER


    if __name__ == "__main__":
        # served exactly as `python -m privnoise.server` serves
        from privnoise.server.run import serve_asgi

        workers = int(sys.argv[3])
        target = app if workers == 1 else "bare_app:app"
        serve_asgi(target, host=sys.argv[1], port=int(sys.argv[2]), workers=workers)
    """
)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def bare_server(workers: int = 1) -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="privnoise-bench-") as tmp:
        script = Path(tmp, "bare_app.py")
        script.write_text(BARE_APP)
        port = _free_port()
        process = subprocess.Popen(
            [sys.executable, str(script), LOOPBACK, str(port), str(workers)],
            cwd=tmp,
            env=dict(os.environ, PYTHONPATH=tmp),
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 30.0
            while True:
                if process.poll() is not None:
                    raise RuntimeError(f"the bare server exited with {process.returncode}")
                with contextlib.suppress(OSError), socket.create_connection((LOOPBACK, port), timeout=0.5):
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the bare server did not listen on {LOOPBACK}:{port} in 30 s")
                time.sleep(0.05)
            yield f"http://{LOOPBACK}:{port}"
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)  # and its worker processes
            process.wait()


# --- the privnoise server ------------------------------------------------------------------------------------


@contextlib.contextmanager
def privnoise_server(requests: int, database: str, workers: int = 1) -> Iterator[tuple[str, str]]:
    """(base URL, querier key) of a running privnoise server whose budgets cover ``requests`` queries.

    ``database`` is "sqlite" (the embedded default) or "postgresql" (a throwaway cluster on loopback from
    ``tests/server/_postgres.py``, fsync on).
    """
    from tests.server._harness import running_server, write_config

    budget = int((requests + WARMUP) * QUERY_EPSILON) + 100
    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="privnoise-bench-"))
        database_url = None
        if database == "postgresql":
            import pytest
            from tests.server._postgres import throwaway_postgres

            try:
                database_url = stack.enter_context(throwaway_postgres())
            except pytest.skip.Exception as exc:
                raise SystemExit(str(exc)) from None
        config_path, keys = write_config(
            Path(tmp), database_url=database_url, global_epsilon=float(budget), server=f"workers = {workers}"
        )
        with running_server(config_path) as server:
            assert server.url.startswith(f"http://{LOOPBACK}:"), server.url
            # alice and bob hold ε = 1 each; a querier made through the admin API holds enough for the run.
            response = httpx.post(
                server.url + "/v1/admin/queriers",
                headers={"Authorization": f"Bearer {keys['admin']}"},
                json={"name": "bench", "epsilon": str(budget), "delta": "0"},
                timeout=30.0,
            )
            response.raise_for_status()
            yield server.url, response.json()["key"]


def run(
    *,
    clients: list[int],
    requests: int,
    rounds: int,
    max_seconds: float,
    database: str = "sqlite",
    workers: int = 1,
) -> list[dict[str, Any]]:
    """One result per number of clients; the two servers measured side by side."""
    results = []
    with (
        privnoise_server(requests * len(clients), database, workers) as (url, key),
        bare_server(workers) as bare_url,
    ):
        for n in clients:
            ours = Target("privnoise", url, {"Authorization": f"Bearer {key}"})
            bare = Target("bare", bare_url, {"Authorization": "Bearer pn_0000000000000000_unused"})
            _measure([ours, bare], clients=n, requests=requests, rounds=rounds, max_seconds=max_seconds)
            a, b = ours.summary(n), bare.summary(n)
            results.append(
                {
                    "privnoise": a,
                    "bare": b,
                    "throughput_ratio": a["queries_per_second"] / b["queries_per_second"],
                    "p99_ratio": a["p99_ms"] / b["p99_ms"],
                    "rounds": rounds,
                    "database": database,
                    "workers": workers,
                    "cpu_count": os.cpu_count(),
                    "load_average": os.getloadavg(),
                    "python": sys.version.split()[0],
                }
            )
    return results


def _print(results: list[dict[str, Any]]) -> None:
    print(
        f"{'database':<10} {'clients':>7} | {'privnoise q/s':>13} {'p50 ms':>7} {'p99 ms':>7} {'errors':>6} | "
        f"{'bare q/s':>8} {'p50 ms':>7} {'p99 ms':>7} | {'q/s ratio':>9} {'p99 ratio':>9} | load average"
    )
    for r in results:
        a, b = r["privnoise"], r["bare"]
        load = " ".join(f"{x:.2f}" for x in r["load_average"])
        print(
            f"{r['database']:<10} {a['clients']:>7} | {a['queries_per_second']:>13.0f} {a['p50_ms']:>7.2f} "
            f"{a['p99_ms']:>7.2f} {a['errors']:>6} | {b['queries_per_second']:>8.0f} {b['p50_ms']:>7.2f} "
            f"{b['p99_ms']:>7.2f} | {r['throughput_ratio']:>9.3f} {r['p99_ratio']:>9.2f} | {load}"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="1,8,50", help="numbers of concurrent clients (default 1,8,50)")
    parser.add_argument(
        "--requests", type=int, default=2000, help="queries per server and number of clients (default 2000)"
    )
    parser.add_argument("--rounds", type=int, default=4, help="alternations between the servers (default 4)")
    parser.add_argument(
        "--max-seconds", type=float, default=120.0, help="time limit of each measurement (default 120)"
    )
    parser.add_argument("--workers", type=int, default=1, help="processes of each server (default 1)")
    parser.add_argument(
        "--database", default="sqlite,postgresql", help="sqlite, postgresql or both (default)"
    )
    parser.add_argument(
        "--json", type=Path, default=None, metavar="PATH", help="also write the results as JSON"
    )
    args = parser.parse_args(argv)
    try:
        clients = [int(c) for c in args.clients.split(",")]
    except ValueError:
        parser.error("--clients must be a comma-separated list of integers")
    databases = args.database.split(",")
    if min(clients) < 1 or min(args.requests, args.rounds, args.workers) < 1 or args.max_seconds <= 0:
        parser.error("clients, --requests, --rounds and --workers must be >= 1, --max-seconds > 0")
    if not set(databases) <= {"sqlite", "postgresql"}:
        parser.error("--database must name sqlite and/or postgresql")
    print(f"{os.cpu_count()} CPUs; {args.workers} process(es) per server; load average {os.getloadavg()}")
    results = []
    for database in databases:
        results += run(
            clients=clients,
            requests=args.requests,
            rounds=args.rounds,
            max_seconds=args.max_seconds,
            database=database,
            workers=args.workers,
        )
    _print(results)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
