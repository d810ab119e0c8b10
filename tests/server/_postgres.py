"""A throwaway PostgreSQL cluster for the server tests.

``with throwaway_postgres() as url:`` runs ``initdb`` in a fresh temporary directory, starts the server on
127.0.0.1 and a free port (its unix socket inside the same directory, trust authentication on loopback only),
creates a database, waits until it accepts connections and yields a SQLAlchemy URL
``postgresql+psycopg://postgres@127.0.0.1:<port>/privnoise_test``. On exit the server is stopped
(``pg_ctl stop -m immediate``) and the directory removed, whatever happened in between.

The binaries come from PATH or from ``/usr/lib/postgresql/<version>/bin`` (Debian's layout; the newest version
wins); ``PRIVNOISE_PG_BINDIR`` names a directory explicitly. ``scripts/ensure-postgres.sh`` (run by
``make test``) installs them on a fresh Debian machine.

PostgreSQL refuses to run as root. When the tests run as root, the server binaries run as the ``postgres``
system user (created by Debian's package) through ``runuser -u postgres --`` (or ``su``), with the temporary
directory handed to that user; if there is no ``postgres`` user, ``nobody`` is used instead, since creating a
user would change the machine for good. The data are throwaway and the server listens on loopback only.

Whatever is missing (binaries, an unprivileged user, psycopg) or fails to start makes the calling test skip with
the precise reason, so that a machine without PostgreSQL still runs every other test. Set
``PRIVNOISE_REQUIRE_POSTGRES=1`` (as a CI job dedicated to PostgreSQL would) to turn those skips into failures.

The cluster runs with PostgreSQL's durable defaults (``fsync=on``, ``synchronous_commit=on``,
``full_page_writes=on``), so a commit returns only once it is on disk, as in production: the durability tests
crash PostgreSQL itself (``throwaway_cluster()`` yields a :class:`PostgresCluster` with ``crash()``, an
immediate stop that skips the shutdown checkpoint, and ``start()``). Only ``initdb`` itself skips its final
sync (``--no-sync``): nothing of the tests is written yet.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import re
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["PostgresCluster", "find_postgres_bindir", "throwaway_cluster", "throwaway_postgres"]

_BINARIES = ("initdb", "pg_ctl", "postgres")
_SUPERUSER = "postgres"
_DATABASE = "privnoise_test"
_START_TIMEOUT = 60  # seconds; pg_ctl -w waits at most this long
_START_ATTEMPTS = 3  # a free port can be taken by someone else between choosing it and binding it


class _Unavailable(Exception):
    """PostgreSQL cannot run here; the message is the reason."""


def _unavailable(reason: str) -> None:
    message = f"PostgreSQL tests skipped: {reason}"
    if os.environ.get("PRIVNOISE_REQUIRE_POSTGRES", "") not in ("", "0"):
        pytest.fail(message + " (PRIVNOISE_REQUIRE_POSTGRES is set)", pytrace=False)
    pytest.skip(message)


def _version_key(path: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", path)) or (0,)


def _has_binaries(directory: Path) -> bool:
    return all(os.access(directory / name, os.X_OK) and (directory / name).is_file() for name in _BINARIES)


def find_postgres_bindir() -> Path | None:
    """The directory holding ``initdb``, ``pg_ctl`` and ``postgres``, or None.

    pg_ctl starts the ``postgres`` next to itself, so all three must sit in one directory: a PATH entry that is
    a symbolic link (``/usr/local/bin/initdb -> /usr/lib/postgresql/15/bin/initdb``) is resolved first.
    """
    explicit = os.environ.get("PRIVNOISE_PG_BINDIR")
    if explicit:
        return Path(explicit) if _has_binaries(Path(explicit)) else None
    candidates: list[Path] = []
    found = shutil.which("initdb")
    if found:
        candidates += [Path(found).resolve().parent, Path(found).parent]
    candidates += [
        Path(d) for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_version_key, reverse=True)
    ]
    for directory in candidates:
        if _has_binaries(directory):
            return directory
    return None


def _unprivileged_user() -> pwd.struct_passwd | None:
    for name in ("postgres", "nobody"):
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        if entry.pw_uid != 0:
            return entry
    return None


class _Runner:
    """Runs commands as the current user, or, when that is root, as an unprivileged one."""

    def __init__(self, user: pwd.struct_passwd | None) -> None:
        self.user = user
        self._runuser = shutil.which("runuser") or (
            "/usr/sbin/runuser" if os.access("/usr/sbin/runuser", os.X_OK) else None
        )
        self._su = shutil.which("su")
        if user is not None and self._runuser is None and self._su is None:
            raise _Unavailable(
                f"running as root and neither runuser nor su is available to switch to {user.pw_name!r}"
            )

    def command(self, argv: list[str]) -> list[str]:
        if self.user is None:
            return argv
        if self._runuser is not None:
            return [self._runuser, "-u", self.user.pw_name, "--", *argv]
        assert self._su is not None
        return [self._su, "-s", "/bin/sh", self.user.pw_name, "-c", shlex.join(argv)]

    def run(self, argv: list[str], *, cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(argv),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _tail(text: str, lines: int = 8) -> str:
    return " | ".join(line.strip() for line in text.strip().splitlines()[-lines:] if line.strip())


def _make_workdir(runner: _Runner) -> Path:
    """A fresh directory owned by the user that runs PostgreSQL, on a path that user can reach."""
    bases = [tempfile.gettempdir()]
    if runner.user is not None and "/tmp" not in bases:
        bases.append("/tmp")  # TMPDIR may sit under root's private home
    reasons = []
    for base in bases:
        workdir = Path(tempfile.mkdtemp(prefix="pnpg-", dir=base))
        if runner.user is None:
            return workdir
        os.chown(workdir, runner.user.pw_uid, runner.user.pw_gid)
        probe = runner.run(["test", "-w", str(workdir)], cwd=Path("/"), timeout=30)
        if probe.returncode == 0:
            return workdir
        reasons.append(f"{workdir} is not writable by {runner.user.pw_name!r}")
        shutil.rmtree(workdir, ignore_errors=True)
    raise _Unavailable("; ".join(reasons))


def _wait_until_ready(url_kwargs: dict[str, object], deadline: float) -> None:
    import psycopg

    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            with psycopg.connect(**url_kwargs, connect_timeout=5, autocommit=True) as conn:  # type: ignore[arg-type]
                conn.execute("SELECT 1")
                return
        except psycopg.OperationalError as exc:
            last = exc
            time.sleep(0.1)
    raise _Unavailable(f"the server did not accept connections in time ({last})")


class PostgresCluster:
    """A running throwaway cluster: ``url`` of its test database; ``crash()`` and ``start()`` for durability."""

    def __init__(
        self,
        url: str,
        runner: _Runner,
        bindir: Path,
        data: Path,
        workdir: Path,
        log: Path,
        options: str,
        admin: dict[str, object],
    ) -> None:
        self.url, self._runner, self._bindir, self._data = url, runner, bindir, data
        self._workdir, self._log, self._options, self._admin = workdir, log, options, admin

    def crash(self) -> None:
        """Stop at once, as a power cut would from PostgreSQL's point of view: no shutdown checkpoint; only what
        reached the WAL on disk survives."""
        self._runner.run(
            [str(self._bindir / "pg_ctl"), "-D", str(self._data), "-m", "immediate", "-w", "stop"],
            cwd=self._workdir,
            timeout=120,
        )

    def start(self) -> None:
        """Start again on the same port (crash recovery replays the WAL) and wait until it accepts connections."""
        result = self._runner.run(
            [
                str(self._bindir / "pg_ctl"),
                "-D",
                str(self._data),
                "-l",
                str(self._log),
                "-w",
                "-t",
                str(_START_TIMEOUT),
                "-o",
                self._options,
                "start",
            ],
            cwd=self._workdir,
            timeout=_START_TIMEOUT + 30,
        )
        if result.returncode != 0:
            raise RuntimeError(f"pg_ctl start failed: {_tail(result.stdout + result.stderr)}")
        _wait_until_ready(self._admin, time.monotonic() + _START_TIMEOUT)


@contextlib.contextmanager
def _cluster() -> Iterator[PostgresCluster]:
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        raise _Unavailable(f"psycopg is not installed ({exc})") from exc

    bindir = find_postgres_bindir()
    if bindir is None:
        raise _Unavailable(
            "initdb/pg_ctl/postgres not found on PATH or in /usr/lib/postgresql/*/bin "
            "(run scripts/ensure-postgres.sh, or set PRIVNOISE_PG_BINDIR)"
        )

    user = None
    if os.geteuid() == 0:
        user = _unprivileged_user()
        if user is None:
            raise _Unavailable(
                "running as root and there is neither a 'postgres' nor a 'nobody' user to run it as"
            )
    runner = _Runner(user)

    workdir = _make_workdir(runner)
    data = workdir / "data"
    log = workdir / "server.log"
    started = False
    try:
        initdb = runner.run(
            [
                str(bindir / "initdb"),
                "-D",
                str(data),
                "-U",
                _SUPERUSER,
                "--auth=trust",
                "--no-sync",
                "--encoding=UTF8",
                "--locale=C",
            ],
            cwd=workdir,
            timeout=120,
        )
        if initdb.returncode != 0:
            raise _Unavailable(
                f"initdb failed (exit {initdb.returncode}): {_tail(initdb.stdout + initdb.stderr)}"
            )
        # Trust, but only over the unix socket in the private directory and on IPv4 loopback.
        hba = "local all all trust\nhost all all 127.0.0.1/32 trust\n"
        (data / "pg_hba.conf").write_text(hba)  # an existing file: owner and mode are kept

        port = 0
        options = ""
        for _attempt in range(_START_ATTEMPTS):
            port = _free_port()
            log.unlink(missing_ok=True)  # judge each attempt by its own log
            options = " ".join(
                [
                    "-c listen_addresses=127.0.0.1",
                    f"-p {port}",
                    f"-k {shlex.quote(str(workdir))}",
                    "-c fsync=on",
                    "-c synchronous_commit=on",
                    "-c full_page_writes=on",
                    "-c max_connections=200",
                ]
            )
            start = runner.run(
                [
                    str(bindir / "pg_ctl"),
                    "-D",
                    str(data),
                    "-l",
                    str(log),
                    "-w",
                    "-t",
                    str(_START_TIMEOUT),
                    "-o",
                    options,
                    "start",
                ],
                cwd=workdir,
                timeout=_START_TIMEOUT + 30,
            )
            started = True  # even a failed start may leave a postmaster behind: always try to stop it
            if start.returncode == 0:
                break
            server_log = log.read_text(errors="replace") if log.exists() else ""
            if "could not bind" not in server_log and "Address already in use" not in server_log:
                raise _Unavailable(
                    f"pg_ctl start failed (exit {start.returncode}): {_tail(start.stdout + start.stderr + server_log)}"
                )
        else:
            raise _Unavailable(f"pg_ctl start failed {_START_ATTEMPTS} times: no free port on 127.0.0.1")

        import psycopg

        admin = {"host": "127.0.0.1", "port": port, "user": _SUPERUSER, "dbname": "postgres"}
        _wait_until_ready(admin, time.monotonic() + _START_TIMEOUT)
        with psycopg.connect(**admin, autocommit=True) as conn:  # type: ignore[arg-type]
            conn.execute(f"CREATE DATABASE {_DATABASE}")
        yield PostgresCluster(
            f"postgresql+psycopg://{_SUPERUSER}@127.0.0.1:{port}/{_DATABASE}",
            runner,
            bindir,
            data,
            workdir,
            log,
            options,
            admin,
        )
    finally:
        if started:
            _stop(runner, bindir, data, workdir)
        shutil.rmtree(workdir, ignore_errors=True)


def _stop(runner: _Runner, bindir: Path, data: Path, workdir: Path) -> None:
    try:
        runner.run(
            [str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "-t", "30", "stop"],
            cwd=workdir,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        pass
    # If pg_ctl could not stop it, kill the postmaster named in its pid file (its children follow it).
    pidfile = data / "postmaster.pid"
    if pidfile.exists():
        with contextlib.suppress(OSError, ValueError, IndexError):
            os.kill(int(pidfile.read_text().split()[0]), 9)


@contextlib.contextmanager
def throwaway_cluster() -> Iterator[PostgresCluster]:
    """Yield a fresh cluster (its ``url``, ``crash()``, ``start()``); skip the test if that is impossible."""
    with contextlib.ExitStack() as stack:
        try:
            cluster = stack.enter_context(_cluster())
        except _Unavailable as exc:
            _unavailable(str(exc))
            raise  # not reached: pytest.skip and pytest.fail raise
        yield cluster


@contextlib.contextmanager
def throwaway_postgres() -> Iterator[str]:
    """Yield the SQLAlchemy URL of a fresh, empty PostgreSQL database; skip the test if that is impossible."""
    with throwaway_cluster() as cluster:
        yield cluster.url
