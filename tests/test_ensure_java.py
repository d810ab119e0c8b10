"""``scripts/ensure-java.sh``: a Java runtime of version 17 or later for the Spark tests, installed from Debian's
packages when missing (as root), and one line saying why the Spark tests will skip otherwise; it never fails."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "ensure-java.sh"
BASH = shutil.which("bash") or "/bin/bash"
SKIP_LINE = re.compile(r"^Java 17 unavailable: .+; the Spark tests will be skipped$")


def _run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([BASH, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60, check=False)


def _bin(tmp_path: Path, scripts: dict[str, str]) -> Path:
    folder = tmp_path / "bin"
    folder.mkdir()
    for name, body in scripts.items():
        (folder / name).write_text("#!" + BASH + "\n" + body)
        (folder / name).chmod(0o755)
    for tool in ("awk", "mkdir", "tail"):
        if found := shutil.which(tool):
            (folder / tool).symlink_to(found)
    return folder


def test_a_recent_java_is_found() -> None:
    java = shutil.which("java")
    if java is None:
        pytest.skip("no java on PATH: the 'found' branch cannot be exercised")
    result = _run({**os.environ})
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(("Java found: ", "Java 17 unavailable: ")), result.stdout


def test_an_old_java_without_apt_get_skips_in_one_line(tmp_path: Path) -> None:
    folder = _bin(tmp_path, {"java": "echo 'java version \"1.8.0_392\"' >&2\n"})
    result = _run({"PATH": str(folder)})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 1 and SKIP_LINE.match(lines[0]), result.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="the install branch runs only as root")
def test_a_failed_install_is_reported_and_exits_0(tmp_path: Path) -> None:
    calls = tmp_path / "apt-calls.log"
    folder = _bin(tmp_path, {"apt-get": f'echo "$DEBIAN_FRONTEND $*" >> {calls}\n'
                                        'case " $* " in *" install "*) echo "E: no package"; exit 100 ;; esac\n'})
    result = _run({"PATH": str(folder), "PRIVNOISE_JAVA_APT_LOG": str(tmp_path / "apt.log")})
    assert result.returncode == 0, result.stderr
    last = result.stdout.splitlines()[-1]
    assert SKIP_LINE.match(last) and "apt-get install openjdk-17-jre-headless failed (E: no package)" in last
    recorded = calls.read_text().splitlines()
    assert recorded[0].endswith(" update") and recorded[1].startswith("noninteractive ")
    assert recorded[1].endswith("install -y --no-install-recommends openjdk-17-jre-headless")
