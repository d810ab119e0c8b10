"""Code blocks of the README and the documentation pages, run as tests.

Every fenced block with a language runs, in document order, in one temporary working directory that holds a
copy of ``examples/``:

* ``python``: executed in one namespace per document (later blocks see earlier names);
* ``sh``: run by ``bash -euo pipefail`` with the ``privnoise`` command of this environment on the PATH;
* ``toml``, ``json``: parsed;
* ``text``: not code (trees, output listings); MyST directives (``{toctree}``, ``{include}``, …) are not code.

A block of any other language fails: give it one of these. An HTML comment on the line just before a block
controls it (invisible on GitHub and in the site):

* ``<!-- docs-test: skip REASON -->``: the block does not run (say why; a running server is the usual reason);
* ``<!-- docs-test: file PATH -->``: the block's text is written to PATH before the document's blocks run;
* ``<!-- docs-test: demo-server -->``: the block runs against the demo's server — ``privnoise demo``'s own
  configuration and data (:func:`privnoise._cli.demo.write_owner_files`), served in-process on a free port for
  the document — as the demo's explorer: its key is ``key`` (Python) and ``$KEY``/``$PRIVNOISE_KEY`` (sh), and
  the address ``http://127.0.0.1:8000`` in the block is the running server's.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNS = {"python", "sh", "toml", "json"}
NOT_CODE = {"text"}

_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)$")
_MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<verb>skip|file|demo-server)\s*(?P<arg>.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced block: where it starts, its language, its text and the marker before it."""

    path: Path
    line: int
    language: str
    code: str
    skip: str | None = None
    file: str | None = None
    demo_server: bool = False

    @property
    def where(self) -> str:
        shown = self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path.name
        return f"{shown}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown file (MyST directive fences excluded)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        fence, info = match["fence"], match["info"].strip()
        end = i + 1
        while end < len(lines) and not lines[end].strip().startswith(fence):
            end += 1
        if end == len(lines):
            raise AssertionError(f"{path}:{i + 1}: unclosed code fence")
        previous = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        marker = _MARKER.match(previous)
        if not info.startswith("{"):
            indent = len(match["indent"])
            code = "\n".join(line[indent:] for line in lines[i + 1 : end]) + "\n"
            verb, arg = (marker["verb"], marker["arg"]) if marker else (None, None)
            if verb == "skip" and not arg:
                raise AssertionError(f"{path}:{i + 1}: a skipped block must say why")
            found.append(
                Block(
                    path,
                    i + 1,
                    info.split()[0] if info else "",
                    code,
                    skip=arg if verb == "skip" else None,
                    file=arg if verb == "file" else None,
                    demo_server=verb == "demo-server",
                )
            )
        i = end + 1
    return found


def documents() -> list[Path]:
    """The README and every page of the documentation site."""
    pages = sorted(
        p for p in (ROOT / "docs").rglob("*.md") if "_generated" not in p.parts and "_build" not in p.parts
    )
    return [ROOT / "README.md", *pages]


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["MPLBACKEND"] = "Agg"
    env["COLUMNS"] = "120"
    return env


DEMO_ADDRESS = "http://127.0.0.1:8000"


@contextlib.contextmanager
def demo_server(workdir: Path) -> Iterator[tuple[str, str]]:
    """The demo's configuration and data (40 households) served in-process; yields (URL, the explorer's key)."""
    from privnoise._cli.demo import server_in_process
    from privnoise._cli.demo_setup import EXPLORER, create_demo_queriers, write_owner_files
    from privnoise.sample_data import smart_meter_data
    from privnoise.server import store
    from privnoise.server.app import create_app
    from privnoise.server.config import load_config

    folder = workdir / "privnoise-demo"
    folder.mkdir()
    config = load_config(write_owner_files(folder, smart_meter_data(40, 7, rng=5), seed=5))
    engine = store.init_database(config)
    try:
        key = create_demo_queriers(engine, config)[EXPLORER]
        with server_in_process(create_app(config, engine=engine)) as url:
            yield url, key
    finally:
        engine.dispose()


def run_document(path: Path, workdir: Path) -> int:
    """Run every block of ``path`` in ``workdir``; return how many ran. Raises AssertionError naming the block."""
    shutil.copytree(ROOT / "examples", workdir / "examples")
    found = blocks(path)
    for block in found:
        if block.file is not None:
            target = workdir / block.file
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.code, encoding="utf-8")
    namespace: dict[str, object] = {"__name__": "__docs__"}
    env = _environment()
    ran = 0
    previous = Path.cwd()
    os.chdir(workdir)
    servers = contextlib.ExitStack()
    url = ""
    try:
        for block in found:
            if block.language in NOT_CODE or block.skip is not None:
                continue
            if block.demo_server:
                if not url:
                    url, key = servers.enter_context(demo_server(workdir))
                    namespace["key"] = key
                    env = env | {"KEY": key, "PRIVNOISE_KEY": key}
                block = replace(block, code=block.code.replace(DEMO_ADDRESS, url))
            if block.language not in RUNS:
                raise AssertionError(
                    f"{block.where}: code block of language {block.language or '(none)'!r}: use one of "
                    f"{sorted(RUNS | NOT_CODE)}, or mark it <!-- docs-test: skip REASON -->"
                )
            try:
                if block.language == "python":
                    exec(compile(block.code, block.where, "exec"), namespace)
                elif block.language == "sh":
                    done = subprocess.run(
                        ["bash", "-euo", "pipefail", "-c", block.code],
                        cwd=workdir,
                        env=env,
                        capture_output=True,
                        text=True,
                        timeout=600,
                        check=False,
                    )
                    if done.returncode != 0:
                        raise AssertionError(
                            f"exit status {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
                        )
                elif block.language == "toml":
                    tomllib.loads(block.code)
                else:
                    json.loads(block.code)
            except AssertionError as exc:
                raise AssertionError(f"{block.where} ({block.language}) failed: {exc}") from None
            except Exception as exc:
                raise AssertionError(
                    f"{block.where} ({block.language}) failed: {type(exc).__name__}: {exc}"
                ) from exc
            ran += 1
    finally:
        servers.close()
        os.chdir(previous)
    return ran
