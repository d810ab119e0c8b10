"""Reuse of computed reports: ``PRIVNOISE_REPRODUCE_CACHE`` names a directory where each report is kept.

A report is a pure function of privnoise's code and of the numerical libraries it runs on, so the entry's name
holds a hash of every source file of the installed package and the versions of numpy, scipy and scikit-fem: a
change to any of them computes the report again. An entry holds the report's rows as JSON (no pickle: a cache
directory is data, never code) and the files the report writes with its figures (where matplotlib is installed),
which are copied to the output of a caller that asks for them. A lock file per entry lets concurrent processes (parallel
test workers, a documentation build) compute each report once; the others wait and read it.

Without the variable, :func:`~privnoise.reproduce.run` computes every time.
"""

from __future__ import annotations

import dataclasses
import fcntl
import functools
import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from ._report import CACHE_VARIABLE, Report, Row

__all__ = ["CACHE_VARIABLE", "cached_report"]

_LIBRARIES = ("numpy", "scipy", "scikit-fem", "matplotlib")


@functools.lru_cache(maxsize=1)
def _code_key() -> str:
    """A hash of every source file of the privnoise package and of the numerical libraries' versions."""
    from importlib import metadata  # loaded here: the command line starts without it

    digest = hashlib.sha256()
    package = Path(__file__).resolve().parents[1]
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode())
        digest.update(path.read_bytes())
    for library in _LIBRARIES:
        try:
            version = metadata.version(library)
        except metadata.PackageNotFoundError:
            version = "absent"
        digest.update(f"{library}={version}".encode())
    return digest.hexdigest()[:20]


def _dump(report: Report, path: Path) -> None:
    data = {"title": report.title, "source": report.source, "notes": report.notes, "figures": report.figures,
            "rows": [dataclasses.asdict(row) for row in report.rows]}
    with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, encoding="utf-8") as handle:
        json.dump(data, handle)
    os.replace(handle.name, path)


def _load(path: Path) -> Report:
    data = json.loads(path.read_text(encoding="utf-8"))
    return Report(title=data["title"], source=data["source"], rows=[Row(**row) for row in data["rows"]],
                  figures=[tuple(f) for f in data["figures"]], notes=list(data["notes"]))


def cached_report(directory: Path, name: str, output: Path | None, figures: bool,
                  build: Callable[[Path | None, bool], Report]) -> Report:
    """The report ``name`` from the cache ``directory``, computed by ``build(output, figures)`` on a miss.

    Every entry is computed with its files and figures where matplotlib is installed, so that one computation
    serves both kinds of request: the rows alone (the figures' captions dropped, as a run without figures gives
    them) and the files, copied into ``output``."""
    directory.mkdir(parents=True, exist_ok=True)
    drawn = importlib.util.find_spec("matplotlib") is not None
    entry = directory / f"{name}-{'files' if drawn else 'rows'}-{_code_key()}"
    with open(entry.with_suffix(".lock"), "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (entry / "report.json").is_file():
            report = _load(entry / "report.json")
        else:
            entry.mkdir(exist_ok=True)
            report = build(entry / "files" if drawn else None, drawn)
            _dump(report, entry / "report.json")
    if output is not None and figures and drawn:
        _copy(entry / "files", output)
        return report
    report.figures = []
    if output is not None:
        report.write(output)
    return report


def _copy(source: Path, output: Path) -> None:
    shutil.copytree(source, output, dirs_exist_ok=True)
