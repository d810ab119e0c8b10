"""The PostgreSQL test harness: the throwaway cluster and ``scripts/ensure-postgres.sh``."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.server._postgres import find_postgres_bindir, throwaway_postgres

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "ensure-postgres.sh"
BASH = "/bin/bash"
SKIP_LINE = re.compile(r"^PostgreSQL unavailable: .+; PostgreSQL tests will be skipped$")


def test_throwaway_postgres_yields_a_working_database() -> None:
    sa = pytest.importorskip("sqlalchemy")
    with throwaway_postgres() as url:
        match = re.fullmatch(r"postgresql\+psycopg://(\w+)@127\.0\.0\.1:(\d+)/(\w+)", url)
        assert match, url
        engine = sa.create_engine(url)
        try:
            with engine.begin() as conn:
                conn.execute(sa.text("CREATE TABLE readings (id integer PRIMARY KEY, kwh double precision)"))
                conn.execute(sa.text("INSERT INTO readings VALUES (1, 0.5), (2, 1.25)"))
            with engine.connect() as conn:
                rows = conn.execute(sa.text("SELECT id, kwh FROM readings ORDER BY id")).all()
                listen = conn.execute(sa.text("SHOW listen_addresses")).scalar_one()
                database = conn.execute(sa.text("SELECT current_database()")).scalar_one()
        finally:
            engine.dispose()
        assert [tuple(r) for r in rows] == [(1, 0.5), (2, 1.25)]
        assert listen == "127.0.0.1"
        assert database == match.group(3)

    # Stopped and gone: nothing listens on the port any more.
    import psycopg

    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(host="127.0.0.1", port=int(match.group(2)), user=match.group(1), connect_timeout=3)


def test_each_cluster_is_fresh() -> None:
    sa = pytest.importorskip("sqlalchemy")
    with throwaway_postgres() as first, throwaway_postgres() as second:
        assert first != second
        engine = sa.create_engine(second)
        try:
            with engine.connect() as conn:
                tables = conn.execute(
                    sa.text("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'")
                ).scalar_one()
        finally:
            engine.dispose()
        assert tables == 0


def test_missing_binaries_skip_with_the_reason(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PRIVNOISE_PG_BINDIR", str(tmp_path))
    monkeypatch.delenv("PRIVNOISE_REQUIRE_POSTGRES", raising=False)
    with pytest.raises(
        pytest.skip.Exception, match="PostgreSQL tests skipped: initdb/pg_ctl/postgres not found"
    ):
        with throwaway_postgres():
            pass  # pragma: no cover


# --- scripts/ensure-postgres.sh -------------------------------------------------------------------------------


def _run_script(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [BASH, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_ensure_script_does_nothing_when_postgres_is_present() -> None:
    if find_postgres_bindir() is None:
        pytest.skip("PostgreSQL is not installed here: the 'present' branch cannot be exercised")
    result = _run_script(dict(os.environ))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("PostgreSQL found in "), result.stdout


def test_ensure_script_unavailable_branch_prints_one_line_and_exits_0(tmp_path: Path) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    env = {"PATH": str(empty), "PRIVNOISE_PG_BINDIRS": str(tmp_path / "nowhere" / "*" / "bin")}
    result = _run_script(env)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 1 and SKIP_LINE.match(lines[0]), result.stdout
    assert result.stderr == ""


def _fake_apt(tmp_path: Path, install_body: str) -> tuple[dict[str, str], Path, Path]:
    """A PATH holding only a fake apt-get (which records its calls), chmod and rm."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "apt-calls.log"
    policy = tmp_path / "policy-rc.d"
    (bin_dir / "apt-get").write_text(
        "#!/bin/bash\n"
        f'echo "$DEBIAN_FRONTEND policy=$([[ -x {policy} ]] && echo on || echo off) $*" >> {calls}\n'
        'case " $* " in *" install "*) ;; *) exit 0 ;; esac\n' + install_body
    )
    (bin_dir / "apt-get").chmod(0o755)
    for tool in ("chmod", "rm"):
        (bin_dir / tool).symlink_to(
            next(p for p in (f"/bin/{tool}", f"/usr/bin/{tool}") if os.path.exists(p))
        )
    env = {
        "PATH": str(bin_dir),
        "PRIVNOISE_PG_BINDIRS": str(tmp_path / "pg" / "*" / "bin"),
        "PRIVNOISE_PG_POLICY_RC_D": str(policy),
        "PRIVNOISE_PG_APT_LOG": str(tmp_path / "apt.log"),
    }
    return env, calls, policy


@pytest.mark.skipif(os.geteuid() != 0, reason="the install branch runs only as root")
def test_ensure_script_reports_a_failed_install_and_exits_0(tmp_path: Path) -> None:
    env, calls, policy = _fake_apt(tmp_path, 'echo "E: Unable to locate package postgresql"\nexit 100\n')
    result = _run_script(env)
    assert result.returncode == 0, result.stderr
    last = result.stdout.splitlines()[-1]
    assert SKIP_LINE.match(last), result.stdout
    assert "apt-get install postgresql failed (E: Unable to locate package postgresql)" in last
    recorded = calls.read_text().splitlines()
    assert len(recorded) == 2  # one update, one install
    assert recorded[0].startswith("noninteractive ") and recorded[0].endswith(" update")
    assert recorded[1] == (
        "noninteractive policy=on -q -o Acquire::Retries=2 -o Acquire::http::Timeout=30 -o Dpkg::Use-Pty=0 "
        "install -y --no-install-recommends postgresql"
    )
    assert not policy.exists()  # the temporary policy-rc.d is removed again


@pytest.mark.skipif(os.geteuid() != 0, reason="the install branch runs only as root")
def test_ensure_script_installs_when_absent(tmp_path: Path) -> None:
    fake_bin = tmp_path / "pg" / "16" / "bin"
    install = (
        f"mkdir -p {fake_bin}\n"
        f"for b in initdb pg_ctl postgres; do printf '#!/bin/sh\\n' > {fake_bin}/$b; chmod 755 {fake_bin}/$b; done\n"
    )
    env, calls, policy = _fake_apt(tmp_path, install.replace("mkdir", "/bin/mkdir"))
    result = _run_script(env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == f"PostgreSQL installed in {fake_bin}", result.stdout
    assert len(calls.read_text().splitlines()) == 2
    assert not policy.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="the install branch runs only as root")
def test_ensure_script_accepts_binaries_unpacked_by_a_failing_install(tmp_path: Path) -> None:
    # e.g. the package's maintainer script fails to create Debian's default cluster after unpacking
    fake_bin = tmp_path / "pg" / "15" / "bin"
    install = (
        f"/bin/mkdir -p {fake_bin}\n"
        f"for b in initdb pg_ctl postgres; do printf '#!/bin/sh\\n' > {fake_bin}/$b; chmod 755 {fake_bin}/$b; done\n"
        "echo 'E: Sub-process /usr/bin/dpkg returned an error code (1)'\nexit 100\n"
    )
    env, _calls, policy = _fake_apt(tmp_path, install)
    result = _run_script(env)
    assert result.returncode == 0, result.stderr
    last = result.stdout.splitlines()[-1]
    assert last.startswith(f"PostgreSQL installed in {fake_bin} (apt-get reported an error"), result.stdout
    assert not policy.exists()
