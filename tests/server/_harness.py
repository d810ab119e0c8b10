"""Start real query servers for the tests: an owner.toml with sample datasets, keys, a uvicorn subprocess.

``write_config(tmp_path, database_url=None, global_epsilon=10.0)`` writes ``owner.toml`` and the sample CSVs,
creates the database (SQLite next to the config, or a fresh database on the PostgreSQL server at
``database_url``) and provisions the keys {"admin", "alice", "bob"} (each querier: ε = 1, δ = 1e-6 per dataset).

``running_server(config_path)`` runs ``python -m privnoise.server`` on a free loopback port, waits for
``/health`` and yields a :class:`ServerProcess` (``.url``, ``.process``, ``.kill9()``); it stops the server at
exit.

Datasets (each with the same declared columns kwh ∈ [0, 60], weight ∈ [0, 2], region text with its four
declared categories):
``meters`` and ``meters_b`` (differ in one record); ``broken`` and ``broken_b`` (the same two data files, with a
``sum`` policy whose mechanism raises: the failure hook of tests/server/_failing.py).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]
QUERIER_EPSILON = 1.0
QUERIER_DELTA = 1e-6

_POLICIES = """
[datasets.{name}.policies.count]
mechanism = "laplace"
epsilon = 0.05
[datasets.{name}.policies.sum]
mechanism = "laplace"
epsilon = 0.1
[datasets.{name}.policies.mean]
mechanism = "laplace"
epsilon = 0.1
[datasets.{name}.policies.weighted_mean]
mechanism = "gaussian"
epsilon = 0.1
delta = 1e-8
[datasets.{name}.policies.variance]
mechanism = "laplace"
epsilon = 0.3
[datasets.{name}.policies.linear]
mechanism = "laplace"
epsilon = 0.1
[datasets.{name}.policies.identity]
mechanism = "fisher-gaussian"
quality = 1.0
"""
_FAILING = """
[datasets.{name}.policies.sum]
mechanism = "custom"
factory = "tests.server._failing:build"
epsilon = 0.1
"""


def _dataset(name: str, source: str, global_epsilon: float, policies: str) -> str:
    return f"""
[datasets.{name}]
source = "{source}"
epsilon = {global_epsilon!r}
delta = 1e-4
[datasets.{name}.columns.kwh]
bounds = [0.0, 60.0]
fisher_floor = 0.01
[datasets.{name}.columns.weight]
bounds = [0.0, 2.0]
fisher_floor = 0.0001
[datasets.{name}.columns.region]
type = "text"
categories = ["north", "south", "east", "west"]
""" + policies.format(name=name)


def _write_data(path: Path, *, changed: bool) -> None:
    lines = ["kwh,weight,region"]
    for i in range(40):
        kwh = 5.0 + (i * 7.3) % 30.0
        if changed and i == 0:
            kwh = 59.0  # one record differs between the two files
        lines.append(f"{kwh:.3f},{1.0 + (i % 3) * 0.5:.1f},{('north', 'south', 'east', 'west')[i % 4]}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _fresh_postgres_database(url: str) -> str:
    """Create a new database on the server at ``url`` and return its URL (tests never share one)."""
    import psycopg
    from sqlalchemy.engine import make_url

    base = make_url(url.replace("postgresql+psycopg://", "postgresql://"))
    name = "pn_" + secrets.token_hex(6)
    conninfo = base.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return base.set(database=name).render_as_string(hide_password=False)


def write_config(
    tmp_path: Path, *, database_url: str | None = None, global_epsilon: float = 10.0, server: str = ""
) -> tuple[Path, dict[str, str]]:
    """Write owner.toml + sample CSVs into ``tmp_path``, create the database, return (path, keys).

    ``server`` holds more ``[server]`` settings (TOML lines), e.g. ``"workers = 2"``.
    """
    from privnoise.server import store
    from privnoise.server.config import load_config

    tmp_path.mkdir(parents=True, exist_ok=True)
    _write_data(tmp_path / "meters.csv", changed=False)
    _write_data(tmp_path / "meters_b.csv", changed=True)
    if database_url is None or database_url == "sqlite":
        database = "sqlite"
    else:
        database = _fresh_postgres_database(database_url)
    text = f'[server]\ndatabase = "{database}"\nhost = "127.0.0.1"\n{server}\n'
    text += _dataset("meters", "meters.csv", global_epsilon, _POLICIES)
    text += _dataset("meters_b", "meters_b.csv", global_epsilon, _POLICIES)
    text += _dataset("broken", "meters.csv", global_epsilon, _FAILING)
    text += _dataset("broken_b", "meters_b.csv", global_epsilon, _FAILING)
    path = tmp_path / "owner.toml"
    path.write_text(text, encoding="utf-8")
    config = load_config(path)
    engine = store.init_database(config)
    try:
        admin = store.ensure_admin(engine, config)
        assert admin is not None
        keys = {"admin": admin}
        for name in ("alice", "bob"):
            keys[name] = store.create_querier(
                engine, config, name, epsilon=QUERIER_EPSILON, delta=QUERIER_DELTA
            )
    finally:
        engine.dispose()
    return path, keys


@dataclass
class ServerProcess:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def kill9(self) -> None:
        """SIGKILL the server and its worker processes (no shutdown handler runs) and reap it."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)  # the server leads its own process group
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                pass
        self.kill9()  # whatever is left of the group

    def client(self, key: str | None = None, **kwargs: object) -> httpx.Client:
        headers = {} if key is None else {"Authorization": f"Bearer {key}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60.0, **kwargs)  # type: ignore[arg-type]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def running_server(
    config_path: Path, *, timeout: float = 60.0, command: tuple[str, ...] = ("-m", "privnoise.server")
) -> Iterator[ServerProcess]:
    """Run the server of ``config_path`` in a subprocess on a free loopback port until the block exits
    (``command``: the interpreter's arguments before ``--config``; e.g. the CLI's ``serve`` with its options)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(REPO / "src"), env.get("PYTHONPATH", "")]).rstrip(
        os.pathsep
    )
    log = config_path.parent / f"server-{secrets.token_hex(3)}.log"
    for _attempt in range(3):
        port = _free_port()
        with log.open("wb") as out:
            process = subprocess.Popen(
                [
                    sys.executable,
                    *command,
                    "--config",
                    str(config_path),
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=str(REPO),
                env=env,
                start_new_session=True,
            )
        server = ServerProcess(f"http://127.0.0.1:{port}", process, log)
        deadline = time.monotonic() + timeout
        up = False
        while time.monotonic() < deadline and process.poll() is None:
            try:
                if httpx.get(server.url + "/health", timeout=2.0).status_code == 200:
                    up = True
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        if up:
            break
        server.stop()
        if "address already in use" not in log.read_text(errors="replace").lower():
            raise RuntimeError(f"the server did not start:\n{log.read_text(errors='replace')}")
    else:  # pragma: no cover
        raise RuntimeError("no free port for the server")
    try:
        yield server
    finally:
        server.stop()
