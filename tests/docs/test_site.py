"""The documentation site builds with warnings as errors, has every tutorial figure and every API page, and a
broken reference fails the build."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import privnoise

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

pytest.importorskip("sphinx", reason="the docs extra is not installed")
sys.path.insert(0, str(DOCS / "_ext"))
import privnoise_docs  # noqa: E402

PAPERS = ["farokhi-sandberg", "liu-kawano-cao", "koufogiannis", "nageswaran", "farokhi-optimization"]


def _sphinx(source: Path, out: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "--keep-going",
            "-b",
            "html",
            "-q",
            *options,
            str(source),
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        # the build imports the privnoise these tests import (not another copy on the interpreter's path)
        env={"MPLBACKEND": "Agg", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(Path(privnoise.__file__).parents[1]),
             "PRIVNOISE_REPRODUCE_CACHE": os.environ.get("PRIVNOISE_REPRODUCE_CACHE", "")},
    )


def _copy_sources(tmp: Path) -> Path:
    """The docs tree with the root files it includes, so the build writes nothing into the repository."""
    shutil.copytree(
        DOCS, tmp / "docs", ignore=shutil.ignore_patterns("_build", "_generated", "privnoise.*.md")
    )
    for name in ("CHANGELOG.md", "SECURITY.md"):
        shutil.copy(ROOT / name, tmp / name)
    return tmp / "docs"


def test_the_site_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    source = _copy_sources(tmp_path)
    done = _sphinx(source, tmp_path / "site")
    warnings = [line for line in done.stderr.splitlines() if "WARNING" in line or "ERROR" in line]
    assert done.returncode == 0 and not warnings, done.stderr[-5000:]
    # `-q` is quiet: no library's informational logging either
    assert not [line for line in done.stderr.splitlines() if " INFO " in line], done.stderr[-3000:]
    site = tmp_path / "site"
    for paper in PAPERS:  # each tutorial shows the figures its reproduction drew during the build
        page = (site / "tutorials" / f"{paper}.html").read_text(encoding="utf-8")
        assert page.count("<img") >= 1, paper
        assert "Reproduction" in page or "reproduction" in page
    for module in privnoise_docs.public_modules():
        page = (site / "api" / f"{module}.html").read_text(encoding="utf-8")
        assert f'id="{module}"' in page or f'id="module-{module}"' in page, module
    api = (site / "api" / "privnoise.dp.html").read_text(encoding="utf-8")
    assert 'id="privnoise.dp.PrivacyAccountant"' in api and 'id="privnoise.dp.audit"' in api
    for page in (
        "getting-started", "guarantees", "guides/dp", "guides/analyst", "guides/dask", "server", "errata", "security",
        "changelog",
    ):
        assert (site / f"{page}.html").exists(), page


def test_a_broken_reference_fails_the_build(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(DOCS / '_ext')!r})\n"
        "extensions = ['sphinx.ext.autodoc', 'numpydoc', 'myst_parser', 'privnoise_docs']\n"
        "nitpicky = True\nautodoc_typehints = 'none'\nprivnoise_reproductions = False\nexclude_patterns = ['api']\n"
    )
    (source / "index.md").write_text(
        "# Test\n\n```{eval-rst}\n.. automodule:: privnoise.dp\n   :members:\n   :imported-members:\n```\n\n"
        "{func}`privnoise.dp.audit` {func}`privnoise.dp.audits.audit` {func}`privnoise.dp.no_such_function`\n"
    )
    done = _sphinx(source, tmp_path / "out")
    assert done.returncode != 0
    unresolved = [line for line in done.stderr.splitlines() if "reference target not found" in line]
    assert any(line.endswith("privnoise.dp.no_such_function [ref.func]") for line in unresolved), done.stderr[
        -3000:
    ]
    # the module documented here resolves, also under the path of its defining submodule
    assert not any("target not found: privnoise.dp.audit" in line for line in unresolved)


def test_docstring_bars_are_escaped_and_module_sections_become_rubrics() -> None:
    lines = ["E|x − y|² ≥ 1", "| a | b |", "Examples", "--------", ">>> 1"]
    privnoise_docs.process_docstring(None, "module", "m", None, None, lines)  # type: ignore[arg-type]
    assert lines[0] == "E\\|x − y\\|² ≥ 1" and lines[1] == "| a | b |"
    assert ".. rubric:: Examples" in lines
