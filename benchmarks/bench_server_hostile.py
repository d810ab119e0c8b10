"""A legitimate querier's latency while exhausted queriers flood the server with distinct maximal bodies.

Run: ``python benchmarks/bench_server_hostile.py [--requests 400] [--hostile 2] [--src PATH]``.

Starts the real server (``python -m privnoise.server``, SQLite, one process) on loopback with a dataset whose
``histogram`` policy makes large plans, a legitimate querier with a large budget and ``--hostile`` queriers whose
budget is spent by their first histogram. It then measures the legitimate querier's ``count()`` (one keep-alive
connection, ``--requests`` queries) alone, and again while each hostile querier sends, as fast as it can over
its own connection, histograms of 64 edges with 5 ``where`` conditions (just under the parameter limit), each
body distinct so that no plan cache helps. Prints p50 and p99 of both runs and their ratio (the target is at most
1.5), and how many hostile requests were answered and with which status. ``--src`` runs another checkout's
``src`` (to compare with the code before a change).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

OWNER = """[server]
database = "sqlite"
host = "127.0.0.1"
[datasets.meters]
source = "meters.csv"
epsilon = 1000000
[datasets.meters.columns.kwh]
bounds = [0.0, 60.0]
[datasets.meters.columns.region]
type = "text"
categories = ["north", "south", "east", "west"]
[datasets.meters.policies.count]
mechanism = "laplace"
epsilon = "1/100"
[datasets.meters.policies.histogram]
mechanism = "laplace"
epsilon = "1/20"
"""


def _percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def _post(conn: http.client.HTTPConnection, key: str, body: dict) -> tuple[int, float]:
    data = json.dumps(body).encode()
    t = time.perf_counter()
    conn.request("POST", "/v1/queries", body=data,
                 headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    response = conn.getresponse()
    response.read()
    return response.status, time.perf_counter() - t


def _hostile_body(i: int) -> dict:
    return {
        "kind": "histogram", "column": "kwh", "dataset": "meters", "bins": [0.9 * k for k in range(64)],
        "where": [{"column": "kwh", "op": ">", "value": 1e-6 * i + 0.001 * k} for k in range(5)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--hostile", type=int, default=2)
    parser.add_argument("--src", default=str(ROOT / "src"))
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=args.src)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "meters.csv").write_text(
            "kwh,region\n" + "".join(f"{(i * 7) % 60}.5,{['north', 'south', 'east', 'west'][i % 4]}\n"
                                      for i in range(1000)), encoding="utf-8")
        (root / "owner.toml").write_text(OWNER, encoding="utf-8")
        setup = (
            "import sys, json; from privnoise.server import store; from privnoise.server.config import load_config\n"
            f"c = load_config({str(root / 'owner.toml')!r}); e = store.init_database(c)\n"
            f"keys = {{'legit': store.create_querier(e, c, 'legit', epsilon=1000000, delta=0)}}\n"
            f"keys |= {{f'h{{i}}': store.create_querier(e, c, f'h{{i}}', epsilon='1/20', delta=0) for i in range({args.hostile})}}\n"
            "print(json.dumps(keys))\n"
        )
        made = subprocess.run([sys.executable, "-c", setup], env=env, check=False, capture_output=True, text=True)
        if made.returncode != 0:
            raise SystemExit(made.stderr)
        keys = json.loads(made.stdout)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = subprocess.Popen(
            [sys.executable, "-m", "privnoise.server", "--config", str(root / "owner.toml"), "--host", "127.0.0.1",
             "--port", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(300):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.1)
            legit = http.client.HTTPConnection("127.0.0.1", port)
            count = {"query": "count()", "dataset": "meters"}
            for _ in range(50):
                _post(legit, keys["legit"], count)
            alone = [_post(legit, keys["legit"], count)[1] for _ in range(args.requests)]
            stop = threading.Event()
            statuses: Counter[int] = Counter()

            def flood(key: str, offset: int) -> None:
                conn = http.client.HTTPConnection("127.0.0.1", port)
                i = offset
                while not stop.is_set():
                    status, _ = _post(conn, key, _hostile_body(i))
                    statuses[status] += 1
                    i += 1000003

            threads = [threading.Thread(target=flood, args=(keys[f"h{i}"], i), daemon=True)
                       for i in range(args.hostile)]
            for t in threads:
                t.start()
            time.sleep(1.0)
            attacked = [_post(legit, keys["legit"], count)[1] for _ in range(args.requests)]
            stop.set()
            for t in threads:
                t.join(timeout=30)
        finally:
            server.terminate()
            server.wait(timeout=30)
    a50, a99 = 1e3 * _percentile(alone, 0.5), 1e3 * _percentile(alone, 0.99)
    b50, b99 = 1e3 * _percentile(attacked, 0.5), 1e3 * _percentile(attacked, 0.99)
    print(f"load average {os.getloadavg()}; {args.hostile} exhausted queriers; src {args.src}")
    print(f"count() alone:          p50 {a50:8.2f} ms  p99 {a99:8.2f} ms")
    print(f"count() under flood:    p50 {b50:8.2f} ms  p99 {b99:8.2f} ms")
    print(f"ratio (flood / alone):  p50 {b50 / a50:8.2f}     p99 {b99 / a99:8.2f}   (target ≤ 1.5)")
    print(f"hostile answers: {dict(sorted(statuses.items()))}")


if __name__ == "__main__":
    main()
